// The bus protocol between callers and shard owners: JSON requests naming the
// actor and a command id, JSON replies carrying a value or a Status-like error
// (code, message, details, the cause's message) with a retry flag.
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
  /** True when the command is stored in actor_commands: the actor applies its stored commands in order. */
  durable: boolean;
  /**
   * The caller made the actor's id up just now and stored nothing for it: if
   * the actor is not active, it starts from its initial state without the
   * recovery read. Only a first attempt carries it (a retry may find a turn).
   */
  newActor?: true;
  /**
   * The W3C traceparent of the span the caller sent it from (tracing on and
   * a span active): the turn it causes continues that trace. Absent
   * otherwise, so an untraced request is no larger (docs/architecture.md
   * "Where trace context travels").
   */
  traceparent?: string;
}

/** A reply. */
export type WireReply =
  | { ok: true; value: unknown }
  | { ok: false; code: StatusCode; message: string; retryable: boolean; details?: Array<Record<string, unknown>>; cause?: string };

/** The error reply for an ApiError: its details cross the bus, and the message of its cause (never a stack). */
export function errorReply(error: ApiError, retryable: boolean): WireReply {
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return {
    ok: false,
    code: error.code,
    message: error.message,
    retryable,
    ...(error.details.length ? { details: error.details } : {}),
    ...(cause && error.code !== 'INTERNAL' ? { cause } : {}),
  };
}

/** Rebuilds the caller-side error from an error reply, with its details and cause. */
export function replyError(reply: Extract<WireReply, { ok: false }>): ApiError {
  return new ApiError(reply.code, reply.message, { details: reply.details, cause: reply.cause ? new Error(reply.cause) : undefined });
}
