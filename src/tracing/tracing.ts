// The calls the service makes to trace itself (docs/operations.md "Tracing"):
// spans opened on a parent given as a W3C traceparent (carried in commands,
// journaled in an objective's start, read from a request or a message
// header) or on the active span, and the traceparent to send on. Tracing is
// on only once src/tracing/tracing-provider.ts registered a provider: until
// then (and after its shutdown) every call here is one boolean check and
// allocates nothing, so a node without OTEL_EXPORTER_OTLP_ENDPOINT pays
// nothing measurable.
import {
  context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Link, type Span, type SpanContext, type Tracer,
} from '@opentelemetry/api';
import { isTraceparent } from './trace-context';

export { SpanKind } from '@opentelemetry/api';
export type { Attributes } from '@opentelemetry/api';

/** The tracer of the registered provider; undefined while tracing is off. */
let activeTracer: Tracer | undefined;

const NO_FIELDS: Readonly<Record<string, never>> = Object.freeze({});

/** Whether a provider is registered in this process (src/tracing/tracing-provider.ts). */
export function tracingEnabled(): boolean {
  return activeTracer !== undefined;
}

/** Sets or clears the tracer (the provider module only: at start and at shutdown). */
export function useTracer(tracer: Tracer | undefined): void {
  activeTracer = tracer;
}

function traceparentOfContext(spanContext: SpanContext): string {
  return `00-${spanContext.traceId}-${spanContext.spanId}-${spanContext.traceFlags & TraceFlags.SAMPLED ? '01' : '00'}`;
}

/** A context whose parent is the remote span a traceparent names (tracestate is not carried). */
function contextOf(traceparent: string): Context {
  const [, traceId, spanId, flags] = traceparent.split('-');
  return trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: parseInt(flags, 16) & TraceFlags.SAMPLED, isRemote: true });
}

/** The traceparent of the active span; undefined while tracing is off or when no span is active. */
export function activeTraceparent(): string | undefined {
  if (!activeTracer) return undefined;
  const spanContext = trace.getSpanContext(context.active());
  return spanContext && trace.isSpanContextValid(spanContext) ? traceparentOfContext(spanContext) : undefined;
}

/** `{traceparent}` of the active span, to keep with what it creates (an objective's start); `{}` while off or outside a span. */
export function activeTraceparentField(): { traceparent?: string } {
  const traceparent = activeTraceparent();
  return traceparent ? { traceparent } : NO_FIELDS;
}

/** The headers an outgoing request adds so its receiver joins the trace: `{traceparent}`, or none (the same empty object) while off. */
export function traceHeaders(): Readonly<Record<string, string>> {
  const traceparent = activeTraceparent();
  return traceparent ? { traceparent } : NO_FIELDS;
}

/** `headers` with the active span's `traceparent` set (over one of that name); `headers` itself while off or outside a span. */
export function withTraceHeaders(headers: Record<string, string>): Record<string, string> {
  const traceparent = activeTraceparent();
  return traceparent ? { ...headers, traceparent } : headers;
}

/**
 * Runs `run` with the span a traceparent names as the active parent, or with
 * no span at all for none (work that belongs to no trace must not inherit one
 * from whatever async context started it). While off: `run()`.
 */
export function runInTrace<T>(traceparent: string | undefined, run: () => T): T {
  if (!activeTracer) return run();
  return context.with(traceparent && isTraceparent(traceparent) ? contextOf(traceparent) : ROOT_CONTEXT, run);
}

/** One span opened by openSpan: the traceparent its children and receivers continue. */
export interface OpenSpan {
  readonly traceparent: string;
  readonly traceId: string;
  setAttributes(attributes: Attributes): void;
  rename(name: string): void;
  /** Runs `run` with this span active: spans opened inside are its children, requests sent inside carry its traceparent. */
  run<T>(run: () => T): T;
  /** Ends the span; with an error its status is ERROR, `error.type` naming the error's code (or class) and the message as the status's. */
  end(error?: unknown): void;
}

export interface OpenSpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** A traceparent: the span continues that (remote) span's trace; null: a new trace; absent: the active span's, if any. */
  parent?: string | null;
  /** Other traces this span relates to (a command sent from another trace), as traceparents. */
  links?: ReadonlyArray<string | undefined>;
  /** When the span began (ms since the epoch, fractional allowed). @default now */
  startTime?: number;
}

/** The error's code for `error.type`: an ApiError's or ModelCallError's code or type, else its class name. */
export function errorTypeOf(error: unknown): string {
  if (error && typeof error === 'object') {
    const { type, code, name } = error as { type?: unknown; code?: unknown; name?: unknown };
    if (typeof type === 'string' && type) return type;
    if (typeof code === 'string' && code) return code;
    if (typeof name === 'string' && name) return name;
  }
  return 'Error';
}

/** A failure an operation reported in its value rather than threw (the status message is its type). */
class ReportedFailure extends Error {
  constructor(readonly type: string) {
    super(type);
  }
}

class RecordingSpan implements OpenSpan {
  readonly traceparent: string;
  readonly traceId: string;
  private readonly context: Context;

  constructor(private readonly span: Span, parent: Context) {
    const spanContext = span.spanContext();
    this.traceparent = traceparentOfContext(spanContext);
    this.traceId = spanContext.traceId;
    this.context = trace.setSpan(parent, span);
  }

  setAttributes(attributes: Attributes): void {
    this.span.setAttributes(attributes);
  }

  rename(name: string): void {
    this.span.updateName(name);
  }

  run<T>(run: () => T): T {
    return context.with(this.context, run);
  }

  end(error?: unknown): void {
    if (error !== undefined) {
      this.span.setAttribute(ERROR_TYPE, errorTypeOf(error));
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    }
    this.span.end();
  }
}

/** Opens a span (close it with `end`); undefined while tracing is off. */
export function openSpan(name: string, options: OpenSpanOptions = {}): OpenSpan | undefined {
  if (!activeTracer) return undefined;
  const parent = options.parent === undefined ? context.active() : options.parent === null || !isTraceparent(options.parent) ? ROOT_CONTEXT : contextOf(options.parent);
  const links: Link[] = [];
  for (const link of options.links ?? []) {
    if (link && isTraceparent(link)) links.push({ context: trace.getSpanContext(contextOf(link))! });
  }
  const span = activeTracer.startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, ...(links.length ? { links } : {}), ...(options.startTime ? { startTime: options.startTime } : {}) },
    parent,
  );
  return new RecordingSpan(span, parent);
}

/** The attribute naming why an operation failed; a span with it has status ERROR. */
export const ERROR_TYPE = 'error.type';

/**
 * Runs `run` inside a new span, ended with its outcome: `describe` adds the
 * attributes of a value (with `error.type` among them for a value that
 * reports a failure, as a tool call's outcome does: the span is then failed
 * too), and a throw marks the span failed (and is rethrown). While off: `run()`.
 */
export async function inSpan<T>(name: string, options: OpenSpanOptions, run: () => Promise<T>, describe?: (value: T) => Attributes): Promise<T> {
  const span = openSpan(name, options);
  if (!span) return run();
  try {
    const value = await span.run(run);
    const attributes = describe?.(value);
    if (attributes) span.setAttributes(attributes);
    const failure = attributes?.[ERROR_TYPE];
    span.end(typeof failure === 'string' ? new ReportedFailure(failure) : undefined);
    return value;
  } catch (error) {
    span.end(error);
    throw error;
  }
}
