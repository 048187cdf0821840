// A small OTLP/HTTP trace receiver for tests: a real node:http server taking
// `POST /v1/traces` as a collector would, recording every request (path,
// headers, raw body) and decoding the OTLP/JSON ones into flat spans (hex ids,
// attributes as plain values) a test can search. OTLP/protobuf bodies are kept
// raw: a test checks their content type and the bytes they must carry.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventuallyValue } from './eventually';

export interface ReceivedExport {
  path: string;
  contentType: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  links: Array<{ traceId: string; spanId: string }>;
  resource: Record<string, unknown>;
  scope: string;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: an OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  exports: ReceivedExport[];
  /** Every span of the JSON exports so far. */
  spans(): ReceivedSpan[];
  /** Waits until `find` returns something for the spans received (polling). */
  waitFor<T>(find: (spans: ReceivedSpan[]) => T | undefined | false, what: string, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

interface JsonValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: JsonValue[] };
}

function valueOf(value: JsonValue | undefined): unknown {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: Array<{ key: string; value: JsonValue }> | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((attribute) => [attribute.key, valueOf(attribute.value)]));
}

/* eslint-disable @typescript-eslint/no-explicit-any */
function spansOfJson(body: any): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((resourceSpans: any) => {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans: any) => (scopeSpans.spans ?? []).map((span: any): ReceivedSpan => ({
      traceId: span.traceId,
      spanId: span.spanId,
      parentSpanId: span.parentSpanId ?? '',
      name: span.name,
      kind: span.kind,
      attributes: attributesOf(span.attributes),
      status: span.status ?? {},
      links: (span.links ?? []).map((link: any) => ({ traceId: link.traceId, spanId: link.spanId })),
      resource,
      scope: scopeSpans.scope?.name ?? '',
    })));
  });
}
/* eslint-enable @typescript-eslint/no-explicit-any */

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const exports: ReceivedExport[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const contentType = String(request.headers['content-type'] ?? '');
      exports.push({ path: request.url ?? '', contentType, headers: request.headers, body: Buffer.concat(chunks) });
      // An empty ExportTraceServiceResponse: full success, in the request's encoding.
      if (contentType.startsWith('application/json')) response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const spans = () => exports.filter((received) => received.contentType.startsWith('application/json')).flatMap((received) => spansOfJson(JSON.parse(received.body.toString('utf8'))));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports,
    spans,
    waitFor: (find, what, timeoutMs = 15_000) => eventuallyValue(async () => find(spans()), what, timeoutMs, 50),
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
