// The node's structured logger (pino, JSON lines). Secrets are redacted here,
// once, so no caller has to remember: authorization headers, tokens, API keys,
// secret values and passwords never reach a log line.
import pino, { type Logger } from 'pino';
import { ConfigError } from './config';

export type { Logger };

/** Replaces every redacted value in a log line. */
export const REDACTED = '[redacted]';

/** Keys whose values are redacted wherever they appear (to REDACT_DEPTH levels down). */
export const REDACTED_KEYS: readonly string[] = [
  'authorization',
  'cookie',
  'token',
  'apiKey',
  'value',
  'password',
  'secret',
  'secrets',
  'masterKey',
  'secretAccessKey',
  'webhookSigningSecret',
  'previousWebhookSigningSecret',
  'webhookEventsHmacSecret',
  // TypeORM's QueryFailedError carries the bound values, which may be secrets.
  'parameters',
];

/** How many objects deep a redacted key is still found (`req.headers.authorization` is 2). */
export const REDACT_DEPTH = 4;

/**
 * Paths redacted from every log line. pino's `*` matches exactly one level, so
 * each key is listed once per depth: `token`, `*.token`, `*.*.token` and so on.
 */
export const REDACT_PATHS: readonly string[] = REDACTED_KEYS.flatMap((key) =>
  Array.from({ length: REDACT_DEPTH + 1 }, (_, depth) => '*.'.repeat(depth) + key),
);

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

function isLogLevel(level: string): boolean {
  return (LOG_LEVELS as readonly string[]).includes(level);
}

export interface LoggerOptions {
  /** pino level name (trace, debug, info, warn, error, fatal, silent). @default 'info' */
  level?: string;
  /**
   * File descriptor to write to. The server logs to stdout (1); the CLI's
   * one-shot commands log to stderr (2) so that their stdout stays data only.
   * @default 1
   */
  fd?: 1 | 2;
  /** Value of the `name` field on every line. @default 'agentrt' */
  name?: string;
  /** Where lines go instead of `fd` (tests capture them). */
  destination?: pino.DestinationStream;
}

/**
 * Creates a logger that writes JSON lines synchronously to stdout or stderr.
 * @throws ConfigError when the level is not a pino level name
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  if (!isLogLevel(level)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${level}"`);
  return pino(
    {
      name: options.name ?? 'agentrt',
      level,
      redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    },
    options.destination ?? pino.destination({ fd: options.fd ?? 1, sync: true }),
  );
}
