// Reading an outbound call's failure: undici and socket errors wrap their
// cause (the system error code, our URL policy's refusal at connect time)
// several levels deep. Shared by the model client and the tool executor.
import { PermissionDeniedError } from '../errors';

const MAX_DEPTH = 8;

function* causeChain(error: unknown): Generator<unknown> {
  for (let current = error, depth = 0; current && depth < MAX_DEPTH; current = (current as { cause?: unknown }).cause, depth++) yield current;
}

/** The first string `code` along the cause chain (ECONNREFUSED, UND_ERR_CONNECT_TIMEOUT ...). */
export function errorCodeIn(error: unknown): string | undefined {
  for (const current of causeChain(error)) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** The URL policy's refusal along the cause chain, if the call was refused at connect time. */
export function refusalIn(error: unknown): PermissionDeniedError | undefined {
  for (const current of causeChain(error)) if (current instanceof PermissionDeniedError) return current;
  return undefined;
}
