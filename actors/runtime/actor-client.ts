// Addressing from any node: ask, tell and durable send to (kind, id) over the
// bus. While a shard is unowned or moving (no responders, a timeout, or a
// retryable reply) the call retries with jittered exponential backoff, and
// fails with UnavailableError once the time budget is spent. While the bus
// has lost its server, a call to another node's shard waits a moment for it
// and then fails at once with UnavailableError naming the message bus, rather
// than retrying for the whole budget.
import { newUlid } from '../../src/ids';
import { InternalError, InvalidArgumentError, UnavailableError } from '../../src/errors';
import { BusUnavailableError, NoRespondersError, RequestTimeoutError, type Bus } from '../../src/ports/bus';
import { actorAddress, actorSubject, type ActorAddress } from '../../src/sharding/addressing';
import type { ActorCommandRepository } from '../../persistence/runtime/actor-command.repository';
import { activeTraceparent } from '../../src/tracing/tracing';
import { runtimeMetrics } from '../metrics';
import type { RuntimeOptions } from '../runtime-options';
import type { RuntimeLogger } from './runtime-logger';
import { replyError, type WireReply, type WireRequest } from './wire';

/** Per-call options. */
export interface CallOptions {
  /** Total retry budget. @default RuntimeOptions.askTimeoutMs */
  timeoutMs?: number;
  /**
   * The command id, from the caller: a caller that retries after an
   * UNAVAILABLE (e.g. an HTTP client resending with the same
   * `Idempotency-Key`) passes the same id, and a command already applied is
   * answered with its recorded reply instead of being applied again.
   * `[A-Za-z0-9_:.-]{1,200}`. @default a new id
   */
  commandId?: string;
  /**
   * The caller made the actor's id up just now (a new objective's) and nothing
   * was stored or sent for it: its first activation need not read its journal,
   * snapshot and pending commands. Only the first attempt says so; a retry
   * may reach an actor the first attempt created, and reads. Asks only.
   */
  newActor?: boolean;
}

const COMMAND_ID = /^[A-Za-z0-9_:.-]{1,200}$/;

function commandIdOf(options: CallOptions): string {
  if (options.commandId === undefined) return newUlid();
  if (!COMMAND_ID.test(options.commandId)) throw InvalidArgumentError.forField('commandId', 'must match [A-Za-z0-9_:.-]{1,200}');
  return options.commandId;
}

export interface ActorClientDeps {
  bus: Bus;
  commands: ActorCommandRepository;
  options: RuntimeOptions;
  logger: RuntimeLogger;
  /**
   * True when the calling flow holds a request transaction. A call from there
   * is refused: the actor's turn commits on its own, so the caller's rollback
   * could not undo it, and on the embedded database (one session) the turn
   * would wait for the caller's transaction, which waits for the turn.
   */
  insideTransaction?: () => boolean;
  /**
   * Hands a request to an actor of a shard this node serves, without the bus;
   * null when the shard is served elsewhere (ShardHost.requestLocally).
   */
  local?: (shard: number, request: string, timeoutMs: number) => Promise<string> | null;
}

const BACKOFF_BASE_MS = 20;
// Small cap: a takeover completes within one rebalance interval, and callers should notice it soon.
const BACKOFF_CAP_MS = 250;

function backoffMs(attempt: number): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long a call waits for a disconnected bus to come back before answering UNAVAILABLE: a NATS restart's reconnect, not an outage. */
export const BUS_RECONNECT_WAIT_MS = 1000;
const BUS_CHECK_INTERVAL_MS = 50;

/** What a call to another node's shard answers while the bus cannot reach its server (known to the runtime's logger as a NATS outage). */
export function busUnavailableError(cause?: unknown): BusUnavailableError {
  return new BusUnavailableError({ cause });
}

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
      this.refuseInsideTransaction(kind, id);
      return (await this.call(actorAddress(kind, id, this.deps.options.shardCount), 'ask', commandIdOf(options), message, false, options)) as Reply;
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
    this.refuseInsideTransaction(kind, id);
    await this.call(actorAddress(kind, id, this.deps.options.shardCount), 'tell', commandIdOf(options), message, false, options);
  }

  /**
   * Stores a command in Postgres, then tells it. Once this resolves the command
   * is never lost: if the tell fails it is read by the actor when its owner
   * polls or when it next activates. The actor applies it once.
   * @returns the command id.
   */
  async send(kind: string, id: string, message: unknown, options: CallOptions = {}): Promise<string> {
    this.refuseInsideTransaction(kind, id);
    const address = actorAddress(kind, id, this.deps.options.shardCount);
    const cid = commandIdOf(options);
    await this.deps.commands.insert({ id: cid, shard: address.shard, kind, actorId: id, payload: message });
    await this.notifyStored(kind, id, options);
    return cid;
  }

  /**
   * Tells an actor that stored commands wait for it (written by `send` or by
   * another actor's turn). Best effort: if it fails the owner's poll finds them.
   */
  async notifyStored(kind: string, id: string, options: CallOptions = {}): Promise<void> {
    try {
      await this.call(actorAddress(kind, id, this.deps.options.shardCount), 'tell', newUlid(), null, true, options);
    } catch (error) {
      if (!(error instanceof UnavailableError)) throw error;
      // While the bus is away its outage was logged once; a line per command would only repeat it.
      if (this.busDisconnected()) this.deps.logger.debug({ kind, id }, 'durable command stored but not delivered now; the owner will pick it up');
      else this.deps.logger.warn({ kind, id }, 'durable command stored but not delivered now; the owner will pick it up');
    }
  }

  private refuseInsideTransaction(kind: string, id: string): void {
    if (this.deps.insideTransaction?.()) {
      throw new InternalError(`actor ${kind}/${id} called inside a request transaction: commit first, then call the actor`);
    }
  }

  private async call(address: ActorAddress, type: WireRequest['type'], cid: string, body: unknown, durable: boolean, options: CallOptions): Promise<unknown> {
    const subject = actorSubject(this.deps.options.subjectPrefix, address);
    // The caller's span, if any (undefined while tracing is off: JSON leaves the field out).
    const traceparent = activeTraceparent();
    const request = JSON.stringify({ type, cid, kind: address.kind, id: address.id, body, durable, traceparent } satisfies WireRequest);
    const firstRequest = options.newActor && type === 'ask'
      ? JSON.stringify({ type, cid, kind: address.kind, id: address.id, body, durable, newActor: true, traceparent } satisfies WireRequest)
      : request;
    const deadline = Date.now() + (options.timeoutMs ?? this.deps.options.askTimeoutMs);
    let lastProblem = 'no attempt made';
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      const reply = await this.attempt(address.shard, subject, attempt === 0 ? firstRequest : request, deadline).catch((error: unknown) => {
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

  private async attempt(shard: number, subject: string, request: string, deadline: number): Promise<WireReply> {
    const timeoutMs = Math.max(1, Math.min(this.deps.options.askAttemptTimeoutMs, deadline - Date.now()));
    const local = this.deps.local?.(shard, request, timeoutMs);
    if (local) return JSON.parse(await local) as WireReply;
    await this.busReconnected(deadline);
    const reply = await this.deps.bus.request(subject, request, Math.max(1, Math.min(timeoutMs, deadline - Date.now()))).catch((error: unknown) => {
      // No responders and timeouts are a shard moving (retried); anything else the bus throws is the bus failing:
      // NATS closed or draining, or the in-process bus closed by the runtime's stop.
      if (isTransient(error)) throw error;
      throw this.deps.bus.connected ? busUnavailableError(error) : new UnavailableError('this node is stopping; retry shortly', { retryAfterSeconds: 1, cause: error });
    });
    return JSON.parse(reply) as WireReply;
  }

  /** True while the bus says it has lost its server (an in-process bus never has). */
  private busDisconnected(): boolean {
    return this.deps.bus.connected?.() === false;
  }

  /**
   * Waits, at most BUS_RECONNECT_WAIT_MS and not past `deadline`, for a
   * disconnected bus to reconnect.
   * @throws UnavailableError naming the message bus when it has not
   */
  private async busReconnected(deadline: number): Promise<void> {
    if (!this.busDisconnected()) return;
    const until = Math.min(deadline, Date.now() + BUS_RECONNECT_WAIT_MS);
    while (Date.now() < until) {
      await sleep(Math.min(BUS_CHECK_INTERVAL_MS, Math.max(0, until - Date.now())));
      if (!this.busDisconnected()) return;
    }
    throw busUnavailableError();
  }
}
