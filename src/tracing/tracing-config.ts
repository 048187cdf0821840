// Tracing's configuration, read from the standard OpenTelemetry variables
// (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/
// and the OTLP exporter's) once at start, like the rest of src/config.ts: a bad
// value fails start-up with a ConfigError naming the variable. Tracing is off
// unless an OTLP endpoint is set. Header values are credentials: a message
// never repeats them.
import { ConfigError } from '../config';

export type OtlpProtocol = 'http/protobuf' | 'http/json';
export type TraceSamplerName = 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';

export interface TracingConfig {
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`. */
  url: string;
  /** OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL. @default 'http/protobuf' (the specification's default) */
  protocol: OtlpProtocol;
  /** OTEL_EXPORTER_OTLP_HEADERS, then OTEL_EXPORTER_OTLP_TRACES_HEADERS over them (credentials: never logged). */
  headers: Record<string, string>;
  /** One export's deadline (OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT, ms). @default 10000 */
  timeoutMs: number;
  /** OTEL_EXPORTER_OTLP_(TRACES_)COMPRESSION. @default 'none' */
  compression: 'gzip' | 'none';
  /** OTEL_SERVICE_NAME. @default 'agentrt' */
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES (OTEL_SERVICE_NAME wins over a `service.name` there). */
  resourceAttributes: Record<string, string>;
  /** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (the ratio of the ratio samplers). @default parentbased_always_on */
  sampler: { name: TraceSamplerName; ratio: number };
  /** The batch span processor (OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_EXPORT_TIMEOUT, OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE). */
  batch: { scheduledDelayMs: number; exportTimeoutMs: number; maxQueueSize: number; maxExportBatchSize: number };
}

export const DEFAULT_TRACING_SERVICE_NAME = 'agentrt';
const PROTOCOLS: readonly string[] = ['http/protobuf', 'http/json'];
const SAMPLERS: readonly string[] = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];

type Env = NodeJS.ProcessEnv;

/** The first of `names` set to a non-blank value: its name and value. */
function firstSet(env: Env, ...names: string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return { name, value };
  }
  return undefined;
}

function positiveInteger(env: Env, fallback: number, ...names: string[]): number {
  const set = firstSet(env, ...names);
  if (!set) return fallback;
  const value = Number(set.value);
  if (!Number.isInteger(value) || value < 1) throw new ConfigError(`${set.name} must be a whole number >= 1, got "${set.value}"`);
  return value;
}

/** An http(s) URL without credentials (OTLP/HTTP); a message names the variable, never the URL's user or password. */
function endpointUrl(name: string, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an http or https URL such as http://collector:4318`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be an http or https URL (OTLP over HTTP; gRPC is not supported), got scheme ${url.protocol.slice(0, -1)}`);
  if (url.username || url.password) throw new ConfigError(`${name} must not carry credentials: send them with OTEL_EXPORTER_OTLP_HEADERS`);
  return url;
}

/** OTEL_EXPORTER_OTLP_ENDPOINT is a base: traces go to `<base>/v1/traces` (its path kept, one slash between). */
function tracesUrl(env: Env): string | undefined {
  const signal = firstSet(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (signal) return endpointUrl(signal.name, signal.value).href;
  const base = firstSet(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (!base) return undefined;
  const url = endpointUrl(base.name, base.value);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`;
  return url.href;
}

/**
 * A `key=value,key=value` list (W3C Baggage's format, as the OTel variables
 * use it): keys and values trimmed and percent-decoded. A malformed entry is
 * refused by its position, never its text (header values are credentials).
 */
export function parseKeyValueList(name: string, raw: string): Record<string, string> {
  const entries: Record<string, string> = {};
  raw.split(',').forEach((entry, index) => {
    if (entry.trim() === '') return;
    const invalid = (why: string) => new ConfigError(`${name} must be a comma-separated list of key=value pairs: entry ${index + 1} ${why}`);
    const equals = entry.indexOf('=');
    if (equals <= 0) throw invalid('has no key=value');
    let key: string;
    let value: string;
    try {
      key = decodeURIComponent(entry.slice(0, equals).trim());
      value = decodeURIComponent(entry.slice(equals + 1).trim());
    } catch {
      throw invalid('has a malformed percent-encoding');
    }
    if (key === '') throw invalid('has an empty key');
    entries[key] = value;
  });
  return entries;
}

/** Request headers: names must be HTTP tokens and values one line. */
function headers(env: Env, name: string): Record<string, string> {
  const raw = env[name]?.trim();
  if (!raw) return {};
  const parsed = parseKeyValueList(name, raw);
  for (const [key, value] of Object.entries(parsed)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key)) throw new ConfigError(`${name}: "${key}" is not a valid header name`);
    if (/[\r\n\0]/.test(value)) throw new ConfigError(`${name}: the value of header ${key} holds a line break or NUL`);
  }
  return parsed;
}

function protocol(env: Env): OtlpProtocol {
  const set = firstSet(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL');
  if (!set) return 'http/protobuf';
  if (!PROTOCOLS.includes(set.value)) throw new ConfigError(`${set.name} must be http/protobuf or http/json (gRPC is not supported), got "${set.value}"`);
  return set.value as OtlpProtocol;
}

function compression(env: Env): 'gzip' | 'none' {
  const set = firstSet(env, 'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION', 'OTEL_EXPORTER_OTLP_COMPRESSION');
  if (!set) return 'none';
  if (set.value !== 'gzip' && set.value !== 'none') throw new ConfigError(`${set.name} must be gzip or none, got "${set.value}"`);
  return set.value;
}

function sampler(env: Env): TracingConfig['sampler'] {
  const set = firstSet(env, 'OTEL_TRACES_SAMPLER');
  const name = set?.value ?? 'parentbased_always_on';
  if (!SAMPLERS.includes(name)) throw new ConfigError(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}, got "${name}"`);
  const arg = firstSet(env, 'OTEL_TRACES_SAMPLER_ARG');
  if (!arg || !name.endsWith('traceidratio')) return { name: name as TraceSamplerName, ratio: 1 };
  const ratio = Number(arg.value);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 for ${name}, got "${arg.value}"`);
  return { name: name as TraceSamplerName, ratio };
}

/**
 * Tracing's configuration from the OTEL_* variables, or undefined when tracing
 * is off: no OTLP endpoint set, OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
 * @throws ConfigError naming the variable whose value is malformed
 */
export function tracingConfig(env: Env = process.env): TracingConfig | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const url = tracesUrl(env);
  if (!url) return undefined;
  const exporter = (firstSet(env, 'OTEL_TRACES_EXPORTER')?.value ?? 'otlp').toLowerCase();
  if (exporter !== 'otlp' && exporter !== 'none') throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp or none, got "${exporter}"`);
  if (exporter === 'none') return undefined;
  const resourceAttributes = env.OTEL_RESOURCE_ATTRIBUTES?.trim() ? parseKeyValueList('OTEL_RESOURCE_ATTRIBUTES', env.OTEL_RESOURCE_ATTRIBUTES) : {};
  return {
    url,
    protocol: protocol(env),
    headers: { ...headers(env, 'OTEL_EXPORTER_OTLP_HEADERS'), ...headers(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS') },
    timeoutMs: positiveInteger(env, 10_000, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', 'OTEL_EXPORTER_OTLP_TIMEOUT'),
    compression: compression(env),
    serviceName: firstSet(env, 'OTEL_SERVICE_NAME')?.value ?? resourceAttributes['service.name'] ?? DEFAULT_TRACING_SERVICE_NAME,
    resourceAttributes,
    sampler: sampler(env),
    batch: {
      scheduledDelayMs: positiveInteger(env, 5000, 'OTEL_BSP_SCHEDULE_DELAY'),
      exportTimeoutMs: positiveInteger(env, 30_000, 'OTEL_BSP_EXPORT_TIMEOUT'),
      maxQueueSize: positiveInteger(env, 2048, 'OTEL_BSP_MAX_QUEUE_SIZE'),
      maxExportBatchSize: positiveInteger(env, 512, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
    },
  };
}

/**
 * The traces endpoint as logs show it: without its query, which may carry a
 * collector's token (credentials in the address itself are refused).
 */
export function endpointForLogs(url: string): string {
  const queryAt = url.indexOf('?');
  return queryAt < 0 ? url : `${url.slice(0, queryAt)}?***`;
}
