// The bus protocol between callers and shard owners: JSON requests naming the
// actor and a command id, JSON replies carrying a value or a Status-like error
// with a retry flag.
import { ApiError, type StatusCode } from '../../src/errors';

/** A request on `<prefix>.shard.<n>.<kind>.<id>`. */
export interface WireRequest {
  /** ask: reply after the turn; tell: reply once the message is in the mailbox. */
  type: 'ask' | 'tell';
  /** Command id; a retried request keeps it, so the actor applies it once. */
  cid: string;
  kind: string;
  id: string;
  body: unknown;
  /** True when the command is also stored in actor_commands. */
  durable: boolean;
}

/** A reply. */
export type WireReply = { ok: true; value: unknown } | { ok: false; code: StatusCode; message: string; retryable: boolean };

/** The error reply for an ApiError. */
export function errorReply(error: ApiError, retryable: boolean): WireReply {
  return { ok: false, code: error.code, message: error.message, retryable };
}

/** Rebuilds the caller-side error from an error reply. */
export function replyError(reply: Extract<WireReply, { ok: false }>): ApiError {
  return new ApiError(reply.code, reply.message);
}
