// W3C Trace Context values (https://www.w3.org/TR/trace-context/) as the
// domain keeps them: the `traceparent` string an objective is created in (its
// start journals it, so a replay finds the same one), and the trace id its
// events show. Plain strings and no OpenTelemetry: src/tracing/tracing.ts
// turns them into spans' parents when tracing is on.

/** `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`, ids not all zeros (version 00 only). */
const TRACEPARENT = /^00-(?!0{32})([0-9a-f]{32})-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** Whether `value` is a traceparent this service carries (anything else from outside is dropped, never journaled). */
export function isTraceparent(value: unknown): value is string {
  return typeof value === 'string' && TRACEPARENT.test(value);
}

/** The trace id of a traceparent (32 lower-case hex digits); undefined for none or a malformed one. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  return traceparent !== undefined && isTraceparent(traceparent) ? traceparent.slice(3, 35) : undefined;
}

/** `{traceparent}` when `value` is one, else `{}`: a field that is absent, not null, when there is no trace. */
export function traceparentField(value: unknown): { traceparent?: string } {
  return isTraceparent(value) ? { traceparent: value } : {};
}
