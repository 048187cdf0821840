// Addressing from any node: ask, tell and durable send to (kind, id) over the
// bus. While a shard is unowned or moving (no responders, a timeout, or a
// retryable reply) the call retries with jittered exponential backoff, and
// fails with UnavailableError once the time budget is spent.
import { newUlid } from '../../src/ids';
import { UnavailableError } from '../../src/errors';
import { NoRespondersError, RequestTimeoutError, type Bus } from '../../src/ports/bus';
import { actorAddress, actorSubject, type ActorAddress } from '../../src/sharding/addressing';
import type { ActorCommandRepository } from '../../persistence/runtime/actor-command.repository';
import { runtimeMetrics } from '../metrics';
import type { RuntimeOptions } from '../runtime-options';
import type { RuntimeLogger } from './runtime-logger';
import { replyError, type WireReply, type WireRequest } from './wire';

/** Per-call options. */
export interface CallOptions {
  /** Total retry budget. @default RuntimeOptions.askTimeoutMs */
  timeoutMs?: number;
}

export interface ActorClientDeps {
  bus: Bus;
  commands: ActorCommandRepository;
  options: RuntimeOptions;
  logger: RuntimeLogger;
}

const BACKOFF_BASE_MS = 20;
// Small cap: a takeover completes within one rebalance interval, and callers should notice it soon.
const BACKOFF_CAP_MS = 250;

function backoffMs(attempt: number): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function isTransient(error: unknown): boolean {
  return error instanceof NoRespondersError || error instanceof RequestTimeoutError;
}

/** Sends to actors wherever they live. */
export class ActorClient {
  constructor(private readonly deps: ActorClientDeps) {}

  /**
   * Sends a command and waits for the actor's reply (after its turn is persisted).
   * A retry reuses the command id, so the actor applies the command at most once.
   * @throws InvalidArgumentError for a malformed kind or id.
   * @throws UnavailableError when no owner answered within the time budget.
   * @throws ApiError as replied by the actor.
   */
  async ask<Reply = unknown>(kind: string, id: string, message: unknown, options: CallOptions = {}): Promise<Reply> {
    const started = process.hrtime.bigint();
    let outcome = 'ok';
    try {
      return (await this.call(actorAddress(kind, id, this.deps.options.shardCount), 'ask', newUlid(), message, false, options)) as Reply;
    } catch (error) {
      outcome = error instanceof UnavailableError ? 'unavailable' : 'error';
      throw error;
    } finally {
      runtimeMetrics.askDuration.observe({ kind, outcome }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }

  /**
   * Delivers a command to the actor's mailbox without waiting for its turn.
   * @throws UnavailableError when no owner accepted it within the time budget.
   */
  async tell(kind: string, id: string, message: unknown, options: CallOptions = {}): Promise<void> {
    await this.call(actorAddress(kind, id, this.deps.options.shardCount), 'tell', newUlid(), message, false, options);
  }

  /**
   * Stores a command in Postgres, then tells it. Once this resolves the command
   * is never lost: if the tell fails it is read by the actor when its owner
   * polls or when it next activates. The actor applies it once.
   * @returns the command id.
   */
  async send(kind: string, id: string, message: unknown, options: CallOptions = {}): Promise<string> {
    const address = actorAddress(kind, id, this.deps.options.shardCount);
    const cid = newUlid();
    await this.deps.commands.insert({ id: cid, shard: address.shard, kind, actorId: id, payload: message });
    try {
      await this.call(address, 'tell', cid, message, true, options);
    } catch (error) {
      if (!(error instanceof UnavailableError)) throw error;
      this.deps.logger.warn({ kind, id, cid }, 'durable command stored but not delivered now; the owner will pick it up');
    }
    return cid;
  }

  private async call(address: ActorAddress, type: WireRequest['type'], cid: string, body: unknown, durable: boolean, options: CallOptions): Promise<unknown> {
    const subject = actorSubject(this.deps.options.subjectPrefix, address);
    const request = JSON.stringify({ type, cid, kind: address.kind, id: address.id, body, durable } satisfies WireRequest);
    const deadline = Date.now() + (options.timeoutMs ?? this.deps.options.askTimeoutMs);
    let lastProblem = 'no attempt made';
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const reply = await this.attempt(subject, request, deadline).catch((error: unknown) => {
        if (!isTransient(error)) throw error;
        lastProblem = (error as Error).message;
        return undefined;
      });
      if (reply?.ok) return reply.value;
      if (reply && !reply.retryable) throw replyError(reply);
      if (reply) lastProblem = reply.message;
      await sleep(Math.min(backoffMs(attempt), Math.max(0, deadline - Date.now())));
    }
    throw new UnavailableError(`actor ${address.kind}/${address.id} (shard ${address.shard}) is unavailable: ${lastProblem}`, { retryAfterSeconds: 1 });
  }

  private async attempt(subject: string, request: string, deadline: number): Promise<WireReply> {
    const timeoutMs = Math.max(1, Math.min(this.deps.options.askAttemptTimeoutMs, deadline - Date.now()));
    return JSON.parse(await this.deps.bus.request(subject, request, timeoutMs)) as WireReply;
  }
}
