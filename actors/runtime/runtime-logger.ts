// The logger the runtime writes to: the subset of pino it uses, so the server
// passes its own pino instance and tests pass a silent one.
import pino from 'pino';

/** pino-compatible logging calls used by the runtime. */
export interface RuntimeLogger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** The default logger: pino at LOG_LEVEL (default warn), named actors. */
export function defaultRuntimeLogger(): RuntimeLogger {
  return pino({ name: 'actors', level: process.env.LOG_LEVEL ?? 'warn' });
}
