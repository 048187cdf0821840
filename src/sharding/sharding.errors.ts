// Errors of shard ownership. Both extend the one hierarchy in src/errors.ts and
// are retryable: the caller tries again and reaches the new owner.
import { AbortedError, UnavailableError } from '../errors';

/** A state write carried an epoch older than the shard's: another node owns the shard now. */
export class ShardFencedError extends AbortedError {
  readonly retryable = true;
  constructor(shard: number, epoch: number) {
    super(`shard ${shard} was taken over: epoch ${epoch} is stale`);
    this.name = 'ShardFencedError';
  }
}

/** The shard is not (or no longer) owned by this node: it is moving or being handed off. */
export class ShardMovedError extends UnavailableError {
  readonly retryable = true;
  constructor(shard: number) {
    super(`shard ${shard} is not owned by this node`);
    this.name = 'ShardMovedError';
  }
}

/** The journal already holds this sequence number: another activation of the actor wrote it. */
export class JournalConflictError extends AbortedError {
  readonly retryable = true;
  constructor(key: string, sequenceNr: number, options: { cause?: unknown } = {}) {
    super(`journal ${key} already has entry ${sequenceNr}: another activation wrote it`, options);
    this.name = 'JournalConflictError';
  }
}

/**
 * The journal already holds an entry for this command id: the command was
 * applied before (a retry, or a duplicate delivery). Not an error for the
 * caller: it gets the reply recorded then.
 */
export class DuplicateCommandError extends AbortedError {
  constructor(
    key: string,
    readonly commandId: string,
    readonly reply: unknown,
  ) {
    super(`command ${commandId} was already applied to ${key}`);
    this.name = 'DuplicateCommandError';
  }
}

/**
 * A state write lost its database connection: it may or may not have
 * committed. Retrying the same command id is safe (a committed turn answers
 * the retry from its recorded reply), so the caller retries.
 */
export class WriteInterruptedError extends UnavailableError {
  readonly retryable = true;
  constructor(key: string, options: { cause?: unknown } = {}) {
    super(`the write of ${key} lost its database connection; retry`, options);
    this.name = 'WriteInterruptedError';
  }
}

/** True for the errors above: the caller should retry and will reach the current owner. */
export function isRetryable(error: unknown): boolean {
  return (error as { retryable?: unknown })?.retryable === true;
}
