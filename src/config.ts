// Node configuration, read once from the environment. docs/operations.md lists
// every variable; a bad value fails start-up with a message naming it.
import path from 'node:path';
import { DEFAULT_OBJECTIVE_MAX_TOKENS } from './objectives/objective-budgets';
import { readDuration } from './resource/duration';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS, parseWebhookRetrySchedule, WEBHOOK_RETRY_SCHEDULE_VARIABLE } from './webhooks/webhook-retry-schedule';
import { DEFAULT_WEBHOOK_TIMEOUT_MS } from './webhooks/webhook-sender';
import { tracingConfig, type TracingConfig } from './tracing/tracing-config';

export interface RateLimitConfig {
  /** Tokens added per second to each principal's bucket. */
  ratePerSecond: number;
  /** Bucket size: the largest burst a principal may send. */
  burst: number;
  /** Cost of a list call with includeInfo=true (a plain call costs 1). */
  includeInfoCost: number;
}

export interface Config {
  port: number;
  host: string;
  /** Postgres URL; undefined means the embedded database in dataDir. */
  databaseUrl?: string;
  /**
   * NATS servers, comma-separated (NATS_URL, validated and trimmed: `nats://a:4222,nats://b:4222`); the client
   * connects to any and fails over to the others. undefined means the in-process bus.
   */
  natsUrl?: string;
  dataDir: string;
  /** 32-byte master key (base64 in AGENTRT_MASTER_KEY); undefined: generated into dataDir. */
  masterKey?: Buffer;
  allowPrivateNetwork: boolean;
  logLevel: string;
  /** LOG_FORMAT: `pretty` (coloured one-line text) or `json` (JSON lines); undefined: pretty on a terminal, JSON otherwise. */
  logFormat?: LogFormat;
  bodyLimitBytes: number;
  rateLimit: RateLimitConfig;
  oidc?: { issuer: string; jwksUrl: string; audience?: string };
  /** Public base URL of this service (used in signed upload URLs; its hostname is the API's own, never a widget's). */
  publicUrl: string;
  /**
   * The widget base URL template (AGENTRT_WIDGET_BASE_URL, e.g. `http://{hostname}:8080`):
   * an http(s) URL whose host is exactly `{hostname}`, and no path, query or fragment;
   * undefined: `https://<hostname>`.
   */
  widgetBaseUrl?: string;
  /** The widget host's visitor limits, stricter than the API keys' rate limit (docs/operations.md "Widget hosts"). */
  widgetVisitors: WidgetVisitorLimits;
  /** Largest upload accepted, in bytes (AGENTRT_UPLOAD_MAX_BYTES). */
  uploadMaxBytes: number;
  /** S3-compatible object storage for uploads; undefined: the data folder. */
  s3?: S3Config;
  /**
   * Objective limits (AGENTRT_OBJECTIVE_MAX_DEPTH, AGENTRT_MODEL_CALL_TIMEOUT_MS, AGENTRT_OBJECTIVE_TURN_TIMEOUT_MS, 0: no turn limit;
   * AGENTRT_MODEL_RETRY_BUDGET_MS, how long a model call's retryable failures are retried on reminders;
   * AGENTRT_MODEL_CALL_ATTEMPTS, attempts within one model call before it fails to the objective;
   * AGENTRT_MODEL_RETRY_TIME_SCALE, test nodes only: the retries' waits and budget run at this fraction of real time;
   * AGENTRT_OBJECTIVE_MAX_TOKENS, the token cap of objectives whose variation sets no maxTokens, 0: none).
   */
  objectives: {
    maxDepth: number; modelCallTimeoutMs: number; turnTimeoutMs: number; modelRetryBudgetMs: number; modelCallAttempts: number; modelRetryTimeScale: number;
    defaultMaxTokens: number;
  };
  /** Webhook delivery (docs/operations.md "Webhooks"). */
  webhooks: WebhookConfig;
  /** How long OBJECTIVE_EVENTS keeps an event (AGENTRT_EVENT_RETENTION, a duration: `7d`, `36h`). */
  eventRetentionMs: number;
  /** How often each node's sweeper removes expired episodic memory layers (AGENTRT_EPISODIC_SWEEP_INTERVAL_MS). */
  episodicSweepIntervalMs: number;
  /** OpenTelemetry tracing (the standard OTEL_* variables, src/tracing/tracing-config.ts); undefined: off (no OTLP endpoint set). */
  tracing?: TracingConfig;
}

export interface WidgetVisitorLimits {
  /** Objectives one widget session may create per minute (AGENTRT_WIDGET_OBJECTIVES_PER_MINUTE). */
  objectivesPerMinute: number;
  /** Objectives all the sessions of one widget may create per minute, per node (AGENTRT_WIDGET_OBJECTIVES_PER_WIDGET_PER_MINUTE). */
  objectivesPerWidgetPerMinute: number;
  /** Event streams one widget session may hold open at once, per node (AGENTRT_WIDGET_STREAMS_PER_SESSION). */
  streamsPerSession: number;
}

export interface WebhookConfig {
  /** Delays between attempts (AGENTRT_WEBHOOK_RETRY_SCHEDULE); after the last the delivery is FAILED. */
  retryScheduleMs: number[];
  /** One attempt's deadline (AGENTRT_WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** Failing this long without a success disables an endpoint (AGENTRT_WEBHOOK_DISABLE_AFTER_MS). */
  disableAfterMs: number;
  /** Attempts in flight at once per endpoint (AGENTRT_WEBHOOK_MAX_IN_FLIGHT). */
  maxInFlight: number;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * A server a setting names (DATABASE_URL, NATS_URL) does not answer at start-up: the message names the
 * setting, the address (without credentials) and the reason, and needs no stack trace.
 */
export class UnreachableServerError extends Error {
  constructor(server: string, variable: string, address: string, cause: unknown) {
    super(`cannot connect to ${server} at ${address} (${variable}): ${failureReason(cause)}`, { cause });
    this.name = 'UnreachableServerError';
  }
}

/** An error's message, else (an AggregateError of one attempt per address of a host has none) its first attempt's. */
function failureReason(error: unknown, depth = 0): string {
  if (!(error instanceof Error) || depth > 5) return String(error);
  if (error.message) return error.message;
  const inner: unknown = error instanceof AggregateError ? error.errors[0] : error.cause;
  return inner === undefined ? error.name : failureReason(inner, depth + 1);
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

/** A fraction in (0, 1]. */
function fraction(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > 1) throw new ConfigError(`${name} must be a number > 0 and <= 1, got "${raw}"`);
  return value;
}

const DEFAULT_EVENT_RETENTION_MS = 7 * 86_400_000;
/** AGENTRT_EPISODIC_SWEEP_INTERVAL_MS by default: an expired layer lasts at most about this long. */
export const DEFAULT_EPISODIC_SWEEP_INTERVAL_MS = 60_000;

/** A duration in the service's grammar (src/resource/duration.ts), at least `min` ms. */
function duration(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = readDuration(raw);
  if (typeof value !== 'number' || value < min) throw new ConfigError(`${name} must be a duration such as 7d, 36h or 90m, at least ${min / 1000} s, got "${raw}"`);
  return value;
}

function boolean(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = (env[name] ?? '').toLowerCase();
  if (raw === '' || raw === '0' || raw === 'false' || raw === 'no') return false;
  if (raw === '1' || raw === 'true' || raw === 'yes') return true;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

const NATS_SCHEMES = new Set(['nats:', 'tls:', 'ws:', 'wss:']);

/**
 * The user and password of a server address, with or without a scheme: up to its LAST `@`. A host never
 * holds an `@`, while a password may hold anything, a raw `/` or `@` included (`nats://u:p/ss@host`);
 * hiding too much of an address that has an `@` in its query only makes a message vaguer, never leaks.
 */
const CREDENTIALS = /^([a-z][a-z0-9+.-]*:\/\/)?.*@/is;

/**
 * A server address for messages and logs: its user and password (a NATS URL may carry them, with or without
 * a scheme: `nats://user:pass@host`, `token@host`) are replaced by `***`.
 */
export function withoutCredentials(entry: string): string {
  return entry.replace(CREDENTIALS, '$1***@');
}

/** A server address with its user and password removed (`postgresql://u:p@/db?host=/socket` becomes `postgresql:///db?host=/socket`). */
export function credentialsRemoved(entry: string): string {
  return entry.replace(CREDENTIALS, '$1');
}

/**
 * Splits a comma-separated list of NATS servers (NATS_URL) into its
 * addresses, each `nats://host:port` (also `tls:`, `ws:`, `wss:`) or
 * `host[:port]`, trimmed.
 * @throws ConfigError naming the variable and the malformed entry (without its credentials)
 */
export function parseNatsServers(raw: string, variable = 'NATS_URL'): string[] {
  const entries = raw.split(',').map((entry) => entry.trim());
  return entries.map((entry, index) => {
    const where = entries.length > 1 ? ` (entry ${index + 1})` : '';
    const invalid = (why: string) => new ConfigError(`${variable}${where} must be a NATS server address such as nats://host:4222: ${why}, got "${withoutCredentials(entry)}"`);
    if (entry === '') throw invalid('empty');
    let url: URL;
    try {
      url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ? entry : `nats://${entry}`);
    } catch {
      throw invalid('not a URL');
    }
    if (!NATS_SCHEMES.has(url.protocol)) throw invalid(`unknown scheme ${url.protocol.slice(0, -1)}`);
    if (url.hostname === '') throw invalid('no host');
    if ((url.pathname !== '' && url.pathname !== '/') || url.search || url.hash) throw invalid('a server address has no path');
    return entry;
  });
}

/** Decodes AGENTRT_MASTER_KEY: base64 (or base64url) of exactly 32 bytes. */
export function parseMasterKey(raw: string): Buffer {
  const key = Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new ConfigError('AGENTRT_MASTER_KEY must be the base64 of exactly 32 bytes');
  return key;
}

/** S3-compatible storage for uploads (AGENTRT_S3_*). */
export interface S3Config {
  /** Endpoint URL; undefined: the AWS endpoint of `region`. */
  endpoint?: string;
  bucket: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Path-style addressing (`endpoint/bucket/key`), needed by most S3-compatible servers. */
  forcePathStyle: boolean;
}

/** AGENTRT_S3_*: set AGENTRT_S3_BUCKET to store uploads in S3-compatible storage. */
function s3Config(env: NodeJS.ProcessEnv): S3Config | undefined {
  const bucket = env.AGENTRT_S3_BUCKET || undefined;
  const accessKeyId = env.AGENTRT_S3_ACCESS_KEY_ID || undefined;
  const secretAccessKey = env.AGENTRT_S3_SECRET_ACCESS_KEY || undefined;
  if (!bucket) {
    if (env.AGENTRT_S3_ENDPOINT) throw new ConfigError('AGENTRT_S3_ENDPOINT is set but AGENTRT_S3_BUCKET is not');
    return undefined;
  }
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError('AGENTRT_S3_ACCESS_KEY_ID and AGENTRT_S3_SECRET_ACCESS_KEY must be set together');
  }
  return {
    endpoint: env.AGENTRT_S3_ENDPOINT || undefined,
    bucket,
    region: env.AGENTRT_S3_REGION || 'us-east-1',
    accessKeyId,
    secretAccessKey,
    forcePathStyle: boolean(env, 'AGENTRT_S3_FORCE_PATH_STYLE'),
  };
}

/**
 * Checks AGENTRT_WIDGET_BASE_URL: `{hostname}` as the whole host, and with a hostname
 * filled in an http or https URL of scheme, host and port only (a trailing `/` is dropped).
 * @throws ConfigError saying what is wrong
 */
export function parseWidgetBaseUrl(raw: string): string {
  const template = raw.trim().replace(/\/$/, '');
  const invalid = (why: string) => new ConfigError(`AGENTRT_WIDGET_BASE_URL must be a URL template such as http://{hostname}:8080: ${why}`);
  if (!template.includes('{hostname}')) throw invalid('it has no {hostname}');
  let url: URL;
  try {
    url = new URL(template.replaceAll('{hostname}', 'widget.example.com'));
  } catch {
    throw invalid('not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('the scheme must be http or https');
  if (url.hostname !== 'widget.example.com') throw invalid('{hostname} must be the whole host (the widget is served on its own hostname)');
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash || /[?#]/.test(template)) throw invalid('no credentials, path, query or fragment');
  return template;
}

/** The node's data folder (AGENTRT_DATA_DIR, default `./.agentrt`), absolute. */
export function dataDirFrom(env: NodeJS.ProcessEnv): string {
  return path.resolve(env.AGENTRT_DATA_DIR || './.agentrt');
}

/** How log lines are written: `pretty` for a person at a terminal, `json` for a log collector. */
export const LOG_FORMATS = ['pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

function logFormat(env: NodeJS.ProcessEnv): LogFormat | undefined {
  const raw = env.LOG_FORMAT;
  if (raw === undefined || raw === '') return undefined;
  if (!(LOG_FORMATS as readonly string[]).includes(raw)) throw new ConfigError(`LOG_FORMAT must be ${LOG_FORMATS.join(' or ')}, got "${raw}"`);
  return raw as LogFormat;
}

/** Reads the configuration from an environment (process.env by default). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 8080);
  const host = env.HOST || '127.0.0.1';
  const oidcIssuer = env.AGENTRT_OIDC_ISSUER || undefined;
  const oidcJwks = env.AGENTRT_OIDC_JWKS_URL || undefined;
  if ((oidcIssuer === undefined) !== (oidcJwks === undefined)) {
    throw new ConfigError('AGENTRT_OIDC_ISSUER and AGENTRT_OIDC_JWKS_URL must be set together');
  }
  return {
    port,
    host,
    databaseUrl: env.DATABASE_URL || undefined,
    natsUrl: env.NATS_URL?.trim() ? parseNatsServers(env.NATS_URL).join(',') : undefined,
    dataDir: dataDirFrom(env),
    masterKey: env.AGENTRT_MASTER_KEY ? parseMasterKey(env.AGENTRT_MASTER_KEY) : undefined,
    allowPrivateNetwork: boolean(env, 'AGENTRT_ALLOW_PRIVATE_NETWORK'),
    logLevel: env.LOG_LEVEL || 'info',
    logFormat: logFormat(env),
    bodyLimitBytes: integer(env, 'AGENTRT_BODY_LIMIT_BYTES', 1024 * 1024, 1),
    rateLimit: {
      ratePerSecond: integer(env, 'AGENTRT_RATE_LIMIT_PER_SECOND', 50, 1),
      burst: integer(env, 'AGENTRT_RATE_LIMIT_BURST', 100, 1),
      includeInfoCost: integer(env, 'AGENTRT_RATE_LIMIT_INCLUDE_INFO_COST', 5, 1),
    },
    oidc: oidcIssuer && oidcJwks ? { issuer: oidcIssuer, jwksUrl: oidcJwks, audience: env.AGENTRT_OIDC_AUDIENCE || undefined } : undefined,
    publicUrl: (env.AGENTRT_PUBLIC_URL || `http://${host}:${port}`).replace(/\/$/, ''),
    widgetBaseUrl: env.AGENTRT_WIDGET_BASE_URL ? parseWidgetBaseUrl(env.AGENTRT_WIDGET_BASE_URL) : undefined,
    widgetVisitors: {
      objectivesPerMinute: integer(env, 'AGENTRT_WIDGET_OBJECTIVES_PER_MINUTE', 10, 1),
      objectivesPerWidgetPerMinute: integer(env, 'AGENTRT_WIDGET_OBJECTIVES_PER_WIDGET_PER_MINUTE', 300, 1),
      streamsPerSession: integer(env, 'AGENTRT_WIDGET_STREAMS_PER_SESSION', 2, 1),
    },
    uploadMaxBytes: integer(env, 'AGENTRT_UPLOAD_MAX_BYTES', 100 * 1024 * 1024, 0),
    s3: s3Config(env),
    objectives: {
      maxDepth: integer(env, 'AGENTRT_OBJECTIVE_MAX_DEPTH', 5, 1),
      modelCallTimeoutMs: integer(env, 'AGENTRT_MODEL_CALL_TIMEOUT_MS', 120_000, 1000),
      turnTimeoutMs: integer(env, 'AGENTRT_OBJECTIVE_TURN_TIMEOUT_MS', 0, 0),
      modelRetryBudgetMs: integer(env, 'AGENTRT_MODEL_RETRY_BUDGET_MS', 30 * 60_000, 0),
      modelCallAttempts: integer(env, 'AGENTRT_MODEL_CALL_ATTEMPTS', 4, 1),
      modelRetryTimeScale: fraction(env, 'AGENTRT_MODEL_RETRY_TIME_SCALE', 1),
      defaultMaxTokens: integer(env, 'AGENTRT_OBJECTIVE_MAX_TOKENS', DEFAULT_OBJECTIVE_MAX_TOKENS, 0),
    },
    webhooks: {
      retryScheduleMs: env[WEBHOOK_RETRY_SCHEDULE_VARIABLE] ? parseWebhookRetrySchedule(env[WEBHOOK_RETRY_SCHEDULE_VARIABLE]) : [...DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS],
      timeoutMs: integer(env, 'AGENTRT_WEBHOOK_TIMEOUT_MS', DEFAULT_WEBHOOK_TIMEOUT_MS, 100),
      disableAfterMs: integer(env, 'AGENTRT_WEBHOOK_DISABLE_AFTER_MS', 5 * 24 * 3600 * 1000, 1000),
      maxInFlight: integer(env, 'AGENTRT_WEBHOOK_MAX_IN_FLIGHT', 64, 1),
    },
    eventRetentionMs: duration(env, 'AGENTRT_EVENT_RETENTION', DEFAULT_EVENT_RETENTION_MS, 60_000),
    // At least 100 ms: a sweep is a database transaction per batch; tests run it that fast.
    episodicSweepIntervalMs: integer(env, 'AGENTRT_EPISODIC_SWEEP_INTERVAL_MS', DEFAULT_EPISODIC_SWEEP_INTERVAL_MS, 100),
    tracing: tracingConfig(env),
  };
}
