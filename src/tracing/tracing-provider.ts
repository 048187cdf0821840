// Turns tracing on for this process (docs/operations.md "Tracing"): the SDK's
// tracer provider with a batch span processor and an OTLP/HTTP exporter
// (protobuf or JSON), the sampler the configuration names, the
// AsyncLocalStorage context manager (so the active span follows awaits), and
// the OTel diagnostics routed to the node's logger. Only the composition
// roots call it, and only when src/tracing/tracing-config.ts found an
// endpoint; the rest of the service reaches tracing through
// src/tracing/tracing.ts, which stays a no-op until this runs. Several nodes
// in one process (the tests) share one provider; the last to stop flushes it.
import { context, diag, DiagLogLevel, trace, type DiagLogger } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type Sampler,
} from '@opentelemetry/sdk-trace';
import type { Logger } from '../logger';
import { useTracer } from './tracing';
import type { TracingConfig } from './tracing-config';

/** The instrumentation scope every span of the service carries. */
export const TRACER_NAME = 'agentrt';

export interface TracingHandle {
  /** Ends the export: spans still buffered are sent (bounded by the export timeout), then tracing is off again. Idempotent. */
  shutdown(): Promise<void>;
}

interface Registration {
  provider: TracerProvider;
  contextManager: AsyncLocalStorageContextManager;
  users: number;
}

let registration: Registration | undefined;

function samplerOf(config: TracingConfig['sampler']): Sampler {
  switch (config.name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(config.ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.ratio) });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

type ExporterOptions = NonNullable<ConstructorParameters<typeof JsonTraceExporter>[0]>;

function exporterOf(config: TracingConfig): JsonTraceExporter | ProtobufTraceExporter {
  const options: ExporterOptions = {
    url: config.url,
    headers: config.headers,
    timeoutMillis: config.timeoutMs,
    // The exporter's CompressionAlgorithm enum has exactly these two string values.
    compression: config.compression as NonNullable<ExporterOptions['compression']>,
  };
  return config.protocol === 'http/json' ? new JsonTraceExporter(options) : new ProtobufTraceExporter(options);
}

/** The SDK's own complaints (an export refused, a collector unreachable), as the node's warnings. */
function diagnosticsTo(logger: Logger): DiagLogger {
  const log = (level: 'warn' | 'error') => (message: string, ...args: unknown[]) => logger[level]({ component: 'tracing', details: args.map(String) }, message);
  return { error: log('error'), warn: log('warn'), info: () => undefined, debug: () => undefined, verbose: () => undefined };
}

/**
 * Registers the provider (or joins the one another node of this process
 * registered) and turns src/tracing/tracing.ts on.
 */
export function startTracing(config: TracingConfig, options: { logger?: Logger; serviceVersion?: string } = {}): TracingHandle {
  if (!registration) {
    const provider = new TracerProvider({
      resource: defaultResource().merge(resourceFromAttributes({
        ...config.resourceAttributes,
        'service.name': config.serviceName,
        ...(options.serviceVersion ? { 'service.version': options.serviceVersion } : {}),
      })),
      sampler: samplerOf(config.sampler),
      spanProcessors: [new BatchSpanProcessor({
        exporter: exporterOf(config),
        scheduledDelayMillis: config.batch.scheduledDelayMs,
        exportTimeoutMillis: config.batch.exportTimeoutMs,
        maxQueueSize: config.batch.maxQueueSize,
        maxExportBatchSize: Math.min(config.batch.maxExportBatchSize, config.batch.maxQueueSize),
      })],
    });
    const contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
    trace.setGlobalTracerProvider(provider);
    if (options.logger) diag.setLogger(diagnosticsTo(options.logger), DiagLogLevel.WARN);
    useTracer(provider.getTracer(TRACER_NAME, options.serviceVersion));
    registration = { provider, contextManager, users: 0 };
  }
  const joined = registration;
  joined.users += 1;
  let stopped: Promise<void> | undefined;
  return {
    shutdown() {
      stopped ??= (async () => {
        joined.users -= 1;
        if (joined.users > 0 || registration !== joined) return;
        registration = undefined;
        useTracer(undefined);
        try {
          await joined.provider.shutdown();
        } finally {
          trace.disable();
          context.disable();
          diag.disable();
        }
      })();
      return stopped;
    },
  };
}
