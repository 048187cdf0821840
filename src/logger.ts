// The node's structured logger (pino). JSON lines for log collectors; on a
// terminal, pino-pretty's coloured one-line text with local times. Secrets are
// redacted here, once, so no caller has to remember: authorization headers,
// tokens, API keys, secret values and passwords never reach a log line.
import { isatty } from 'node:tty';
import pino, { type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { ConfigError, type LogFormat } from './config';

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
  /** `pretty` or `json` (LOG_FORMAT). @default pretty when `fd` is a terminal (and no destination is given), else json */
  format?: LogFormat;
}

/**
 * Creates a logger that writes synchronously to stdout or stderr: JSON lines,
 * or pretty text when `format` says so or, by default, when that output is a terminal.
 * @throws ConfigError when the level is not a pino level name
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  if (!isLogLevel(level)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${level}"`);
  const fd = options.fd ?? 1;
  const json = options.destination ?? pino.destination({ fd, sync: true });
  const pretty = (options.format ?? (options.destination === undefined && isatty(fd) ? 'pretty' : 'json')) === 'pretty';
  return pino(
    {
      name: options.name ?? 'agentrt',
      level,
      redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    },
    pretty ? prettyStream(json, options.destination === undefined && colorsWanted(fd)) : json,
  );
}

/**
 * pino-pretty's formatter run in-process on each JSON line: one line per entry
 * (an error's stack follows it), local time, no pid or host name. Written
 * synchronously, like the JSON lines, so a line logged just before an exit is
 * never lost (pino's transport would run it in a worker thread).
 */
function prettyStream(destination: pino.DestinationStream, colorize: boolean): pino.DestinationStream {
  const prettify = prettyFactory({ colorize, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name' });
  return { write: (line: string) => destination.write(prettify(readable(line))) };
}

/** A JSON log line's fields, as pino wrote them. */
type LogRecord = Record<string, unknown>;

/**
 * A log line as a person reads it: the fields a message is about folded into
 * it, so the line does not read `request {"method":…}`. Only the pretty text
 * changes; the JSON lines keep their message (`request`, `listening`) and
 * fields, which tests, chaos runs and log queries look for.
 */
function readable(line: string): LogRecord | string {
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return line;
  }
  if (record === null || typeof record !== 'object') return line;
  const fields = record as LogRecord;
  const fold = READABLE_MESSAGES[String(fields.msg)];
  return fold ? fold({ ...fields }) : fields;
}

/** Per message, how its fields read in words (each removes the fields it has used). */
const READABLE_MESSAGES: Record<string, (record: LogRecord) => LogRecord> = {
  // `GET /v1/workspaces/:workspaceId/agents 200 3.6 ms`: the route, not the path, so that no id or query string shows.
  request: ({ method, route, status, durationMs, ...rest }) => ({ ...rest, msg: `${String(method)} ${String(route)} ${String(status)} ${String(durationMs)} ms` }),
  listening: ({ url, ...rest }) => ({ ...rest, msg: `listening on ${String(url)}` }),
};

/** Colours on a terminal unless NO_COLOR is set (no-color.org) or the terminal says it has none. */
function colorsWanted(fd: number): boolean {
  return isatty(fd) && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
}
