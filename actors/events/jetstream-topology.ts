// What a node declares on JetStream (its streams and durable consumers) and
// how it declares it again when the server has lost it: a NATS server
// replaced by an empty one (a new pod without its volume) answers "no
// responders" to publications, "stream not found" and "consumer not found"
// to consumers, for ever, since streams and consumers were only declared at
// start. The publisher and the consumers of a node share one topology; the
// first of them to meet such an answer calls `restore`, which declares
// everything again as at start (idempotently) once per incident: callers
// meanwhile wait for the same run, and a run that finds everything in place
// saves the next callers for a second. One warning per thing lost.
//
// Streams: created with a duplicate window of at least 10 minutes, the
// declared maximum age and AGENTRT_JETSTREAM_REPLICAS replicas, or an
// existing one given the subjects it lacks. On an existing stream a node only
// ever raises the maximum age and the replicas (or sets an age on a stream
// that has none): a stream may be shared by every cluster on the NATS server
// (OBJECTIVE_EVENTS is), and one configured with a shorter retention
// (staging next to production) must not cut the others'; it keeps the
// stream's and warns how to lower it on purpose.
import { AckPolicy, DeliverPolicy, jetstreamManager, JetStreamApiCodes, JetStreamApiError, type ConsumerConfig, type ConsumerInfo, type JetStreamManager, type StreamInfo } from '@nats-io/jetstream';
import { errors as natsErrors, type NatsConnection } from '@nats-io/nats-core';
import { ConfigError } from '../../src/config';
import type { ResolvedConsumerSpec } from '../../src/events/consumer-spec';
import { mergeStreamDeclarations } from '../../src/events/stream-declarations';
import { DurableConsumerConflictError, StreamNotFoundError } from '../../src/ports/event-consumer';
import type { StreamDeclaration } from '../../src/ports/event-publisher';
import type { RuntimeLogger } from '../runtime/runtime-logger';

const TEN_MINUTES_NS = 10 * 60 * 1_000_000_000;
const NS_PER_MS = 1_000_000;
/** After a restore that found everything in place, later calls within this time reuse its answer (a subject no stream takes is not a lost stream). */
export const RESTORE_QUIET_MS = 1000;

export interface JetStreamTopologyOptions {
  logger: RuntimeLogger;
  /** Timeout of JetStream API calls. @default 5000 */
  timeoutMs?: number;
  /** Replicas of every stream and durable consumer declared. @default 1 */
  replicas?: number;
}

/** What a declaration did. */
type Declared = 'created' | 'updated' | 'unchanged';

/** A maximum age as the nats CLI takes it (`--max-age=36h`, `--max-age=90m`, `--max-age=45s`). */
function natsDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${Math.ceil(ms / 1000)}s`;
}

/**
 * The stream sequence up to which a durable has every message acknowledged.
 * With nothing pending that is all it was delivered: its ack floor alone says
 * 0 for a durable that started past the beginning and has acknowledged nothing since.
 */
function acknowledgedThrough(consumer: ConsumerInfo): number {
  return consumer.num_ack_pending === 0 ? Math.max(consumer.ack_floor.stream_seq, consumer.delivered.stream_seq) : consumer.ack_floor.stream_seq;
}

const consumerKey = (spec: ResolvedConsumerSpec) => `${spec.stream}\u0000${spec.durableName}`;

/** A node's streams and durable consumers on one connection, declared at start and again after the server lost them. */
export class JetStreamTopology {
  readonly replicas: number;
  private readonly timeoutMs: number;
  private managerPromise: Promise<JetStreamManager> | undefined;
  private readonly streams = new Map<string, StreamDeclaration>();
  /** The durable consumers consumed now, with how many consumptions use each. */
  private readonly consumers = new Map<string, { spec: ResolvedConsumerSpec; users: number }>();
  private restoring: Promise<void> | undefined;
  private quietUntil = 0;

  constructor(
    private readonly connection: NatsConnection,
    private readonly options: JetStreamTopologyOptions,
  ) {
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.replicas = options.replicas ?? 1;
  }

  /** The JetStream manager (made once it could be; a failure is retried at the next call). */
  manager(): Promise<JetStreamManager> {
    this.managerPromise ??= jetstreamManager(this.connection, { timeout: this.timeoutMs }).catch((error: unknown) => {
      this.managerPromise = undefined;
      throw error;
    });
    return this.managerPromise;
  }

  /** Declares the streams and remembers them for `restore` (a stream declared again is remembered as declared last). */
  async declareStreams(streams: StreamDeclaration[]): Promise<void> {
    const merged = mergeStreamDeclarations(streams);
    for (const stream of merged) this.streams.set(stream.name, stream);
    const manager = await this.manager();
    for (const stream of merged) await this.declareStream(manager, stream);
  }

  /**
   * Declares a durable consumer and remembers it for `restore` until `release`.
   * @throws StreamNotFoundError when its stream does not exist
   * @throws DurableConsumerConflictError when it exists with another filter
   */
  async useConsumer(spec: ResolvedConsumerSpec): Promise<void> {
    await this.declareConsumer(spec);
    const entry = this.consumers.get(consumerKey(spec));
    if (entry) entry.users++;
    else this.consumers.set(consumerKey(spec), { spec, users: 1 });
  }

  /** A consumption of the durable stopped: `restore` declares it again only while someone consumes it. */
  release(spec: ResolvedConsumerSpec): void {
    const entry = this.consumers.get(consumerKey(spec));
    if (entry && --entry.users === 0) this.consumers.delete(consumerKey(spec));
  }

  /**
   * Declares every stream and durable consumer again (what the server lost
   * is created, the rest left as is), one run at a time: callers during a run
   * wait for it. Resolves once the streams are in place; a consumer that
   * cannot be declared is left to its consumption's retries.
   */
  restore(): Promise<void> {
    if (this.restoring) return this.restoring;
    if (Date.now() < this.quietUntil) return Promise.resolve();
    this.restoring = this.redeclare().finally(() => {
      this.restoring = undefined;
    });
    return this.restoring;
  }

  /** Declares one durable consumer (see useConsumer), without remembering it. @returns what it did */
  async declareConsumer(spec: ResolvedConsumerSpec): Promise<Declared> {
    const manager = await this.manager();
    const wanted = { ack_wait: spec.ackWaitMs * NS_PER_MS, max_ack_pending: spec.maxAckPending };
    const existing = await this.consumerInfo(manager, spec);
    if (!existing) {
      // After its predecessor's acknowledged messages when it takes one over, else from `notBefore` or the beginning.
      const predecessor = spec.takeOverFrom ? await this.consumerInfo(manager, { ...spec, durableName: spec.takeOverFrom }) : null;
      const start: Partial<ConsumerConfig> = predecessor
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: acknowledgedThrough(predecessor) + 1 }
        : spec.notBefore
          ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: spec.notBefore.toISOString() }
          : { deliver_policy: DeliverPolicy.All };
      const config: Partial<ConsumerConfig> = {
        durable_name: spec.durableName,
        ack_policy: AckPolicy.Explicit,
        ...start,
        ...wanted,
        num_replicas: this.replicas,
        ...(spec.filterSubject ? { filter_subject: spec.filterSubject } : {}),
      };
      await this.call(spec, () => manager.consumers.add(spec.stream, config));
      return 'created';
    }
    // The filter subject cannot change on 2.9; the ack wait, maximum pending and replicas can.
    const existingFilter = existing.config.filter_subject || undefined;
    if (existingFilter !== spec.filterSubject) throw new DurableConsumerConflictError(spec.stream, spec.durableName, existingFilter, spec.filterSubject);
    // 0 replicas: the consumer follows its stream's, which declareStreams raises.
    const replicas = existing.config.num_replicas ? Math.max(existing.config.num_replicas, this.replicas) : 0;
    const same = existing.config.ack_wait === wanted.ack_wait && existing.config.max_ack_pending === wanted.max_ack_pending && (existing.config.num_replicas ?? 0) === replicas;
    if (same) return 'unchanged';
    try {
      await this.call(spec, () => manager.consumers.update(spec.stream, spec.durableName, { ...wanted, ...(replicas ? { num_replicas: replicas } : {}) }));
    } catch (error) {
      const raisingReplicas = replicas !== (existing.config.num_replicas ?? 0);
      if (!raisingReplicas || !(error instanceof JetStreamApiError)) throw error;
      // A server that cannot change a durable's replicas: it keeps working with fewer, as it did.
      this.options.logger.warn(
        { err: error, stream: spec.stream, durable: spec.durableName, replicas: existing.config.num_replicas, configuredReplicas: replicas },
        `durable consumer ${spec.durableName} of stream ${spec.stream} keeps ${existing.config.num_replicas} replicas: the server refused ${replicas} (AGENTRT_JETSTREAM_REPLICAS)`,
      );
      const unchangedOtherwise = existing.config.ack_wait === wanted.ack_wait && existing.config.max_ack_pending === wanted.max_ack_pending;
      if (!unchangedOtherwise) await this.call(spec, () => manager.consumers.update(spec.stream, spec.durableName, wanted));
    }
    return 'updated';
  }

  private async redeclare(): Promise<void> {
    const manager = await this.manager();
    let lost = 0;
    let failure: unknown;
    for (const stream of this.streams.values()) {
      try {
        if ((await this.declareStream(manager, stream)) === 'created') {
          lost++;
          this.options.logger.warn({ stream: stream.name }, `NATS lost stream ${stream.name}; declared again`);
        }
      } catch (error) {
        failure ??= error;
      }
    }
    for (const { spec } of [...this.consumers.values()]) {
      try {
        if ((await this.declareConsumer(spec)) === 'created') {
          lost++;
          this.options.logger.warn({ stream: spec.stream, durable: spec.durableName }, `NATS lost durable consumer ${spec.durableName} of stream ${spec.stream}; declared again`);
        }
      } catch {
        // Its consumption meets the same failure and retries (a stream this node does not declare may be missing for good).
      }
    }
    if (failure) throw failure;
    if (lost === 0) this.quietUntil = Date.now() + RESTORE_QUIET_MS;
  }

  private async declareStream(manager: JetStreamManager, stream: StreamDeclaration): Promise<Declared> {
    const existing = await this.streamInfo(manager, stream.name);
    // JetStream counts in nanoseconds; 0 is "no limit". The duplicate window may not exceed the age limit.
    const declared = stream.maxAgeMs === undefined ? 0 : stream.maxAgeMs * NS_PER_MS;
    const window = (duplicateWindow: number, maxAge: number) => (maxAge > 0 ? Math.min(duplicateWindow, maxAge) : duplicateWindow);
    if (!existing) {
      try {
        await manager.streams.add({
          name: stream.name, subjects: stream.subjects, duplicate_window: window(TEN_MINUTES_NS, declared), max_age: declared, num_replicas: this.replicas,
        });
      } catch (error) {
        if (!isTooFewServers(error)) throw error;
        throw new ConfigError(
          `stream ${stream.name} cannot be created with ${this.replicas} replicas (AGENTRT_JETSTREAM_REPLICAS): the NATS server answered "${(error as Error).message}"; ` +
            'set AGENTRT_JETSTREAM_REPLICAS to at most the number of JetStream servers of the NATS cluster (1 for a single server)',
        );
      }
      return 'created';
    }
    const current = existing.config.max_age;
    // A stream without a limit (as versions before retention made OBJECTIVE_EVENTS) takes the declared one.
    const maxAge = declared > 0 && (current === 0 || declared > current) ? declared : current;
    if (declared > 0 && declared < current) this.warnRetentionKept(stream.name, current, declared);
    const missing = stream.subjects.filter((subject) => !existing.config.subjects?.includes(subject));
    const duplicateWindow = window(Math.max(existing.config.duplicate_window, TEN_MINUTES_NS), maxAge);
    const replicas = Math.max(existing.config.num_replicas || 1, this.replicas);
    const unchanged = existing.config.duplicate_window === duplicateWindow && current === maxAge && (existing.config.num_replicas || 1) === replicas;
    if (missing.length === 0 && unchanged) return 'unchanged';
    const update = { subjects: [...(existing.config.subjects ?? []), ...missing], duplicate_window: duplicateWindow, max_age: maxAge };
    try {
      await manager.streams.update(stream.name, { ...update, num_replicas: replicas });
    } catch (error) {
      const current = existing.config.num_replicas || 1;
      if (replicas === current || !(error instanceof JetStreamApiError)) throw error;
      // Too few servers for the replicas asked: the stream goes on with the ones it has, as it did.
      this.options.logger.warn(
        { err: error, stream: stream.name, replicas: current, configuredReplicas: replicas },
        `stream ${stream.name} keeps ${current} replicas: the server refused ${replicas} (AGENTRT_JETSTREAM_REPLICAS)`,
      );
      await manager.streams.update(stream.name, update);
    }
    return 'updated';
  }

  private warnRetentionKept(stream: string, currentNs: number, declaredNs: number): void {
    const declared = natsDuration(declaredNs / NS_PER_MS);
    this.options.logger.warn(
      { stream, streamMaxAge: natsDuration(currentNs / NS_PER_MS), configuredMaxAge: declared },
      `stream ${stream} keeps messages longer than this node is configured for (AGENTRT_EVENT_RETENTION): the longer retention is kept, ` +
        `since other clusters on this NATS server may rely on it. To shorten it on purpose: nats stream edit ${stream} --max-age=${declared}`,
    );
  }

  private async streamInfo(manager: JetStreamManager, name: string): Promise<StreamInfo | null> {
    try {
      return await manager.streams.info(name);
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return null;
      throw error;
    }
  }

  private async consumerInfo(manager: JetStreamManager, spec: ResolvedConsumerSpec): Promise<ConsumerInfo | null> {
    try {
      return await this.call(spec, () => manager.consumers.info(spec.stream, spec.durableName));
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound) return null;
      throw error;
    }
  }

  /** Runs a JetStream API call, turning "stream not found" into our typed error. */
  private async call<T>(spec: ResolvedConsumerSpec, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) throw new StreamNotFoundError(spec.stream, { cause: error });
      throw error;
    }
  }
}

// JetStream's answers to a stream asking for more replicas than it has servers for.
const REPLICAS_NOT_SUPPORTED = 10074; // "replicas > 1 not supported in non-clustered mode"
const INSUFFICIENT_RESOURCES = 10023; // "insufficient resources"
const NO_SUITABLE_PEERS = 10005; // "no suitable peers for placement"

/** Whether a stream's creation failed for want of servers to hold its replicas. */
function isTooFewServers(error: unknown): boolean {
  if (!(error instanceof JetStreamApiError)) return false;
  return [REPLICAS_NOT_SUPPORTED, INSUFFICIENT_RESOURCES, NO_SUITABLE_PEERS].includes(error.code) || /insufficient resources|replicas > 1 not supported|peers/i.test(error.message);
}

/** Whether a JetStream failure says the server lacks a stream or consumer this node declared (see JetStreamTopology.restore). */
export function isLostTopology(error: unknown): boolean {
  if (error instanceof StreamNotFoundError) return true;
  if (error instanceof JetStreamApiError) return error.code === JetStreamApiCodes.StreamNotFound || error.code === JetStreamApiCodes.ConsumerNotFound;
  // A JetStream publication to a subject no stream captures: the server answers "no responders", which the client
  // reports as "JetStream not enabled" (an error class it does not export) with the RequestError as cause.
  if (error instanceof natsErrors.NoRespondersError) return true;
  if (error instanceof natsErrors.RequestError && error.isNoResponders()) return true;
  return (error as Error | undefined)?.name === 'JetStreamNotEnabled';
}
