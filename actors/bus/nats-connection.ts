// The node's one NATS connection: how it is opened (reconnecting for ever,
// to any server of NATS_URL's list) and what it tells the rest of the node
// about its state. nats.js closes a connection for good after 10 failed
// reconnects per server by default (about 20 s with its 2 s wait): a node
// then needed a restart after any longer NATS outage. Here it never gives
// up (not even after authorisation errors: a server restarted for a while
// with other credentials); one watcher per connection follows its status
// events, answers whether it is connected now, wakes the users that wait for
// a reconnect (the outbox relay, the durable consumers) and reports the
// outage to DependencyHealth. Should the client still close the connection
// without being asked, the node cannot reach NATS again: that is reported as
// an outage for good, which /healthz turns into a restart by the orchestrator.
import { errors as natsErrors, type ConnectionOptions, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { ConfigError, parseNatsServers, UnreachableServerError, withoutCredentials } from '../../src/config';
import { BusUnavailableError } from '../../src/ports/bus';
import { PublisherUnavailableError } from '../../src/ports/event-publisher';
import { withTimeout } from '../../src/with-timeout';
import type { DependencyHealth } from '../runtime/dependency-health';
import type { RuntimeLogger } from '../runtime/runtime-logger';

/**
 * Reconnect and keep-alive settings. The wait between attempts is short and
 * jittered (500-750 ms, so that the nodes of a cluster do not reconnect in
 * one wave): a node is back within a second of NATS's return. A ping every 5
 * s with 2 outstanding notices a server that stopped answering (a partition,
 * a frozen host; a crash closes the socket at once) within 10-15 s rather
 * than the client's default of 2 minutes or more.
 */
export const NATS_RECONNECT_OPTIONS = {
  maxReconnectAttempts: -1,
  reconnectTimeWait: 500,
  reconnectJitter: 250,
  reconnectJitterTLS: 250,
  pingInterval: 5000,
  maxPingOut: 2,
  // The client's default closes the connection at the second authorisation error in a row.
  ignoreAuthErrorAbort: true,
} as const satisfies Partial<ConnectionOptions>;

/**
 * The client options of a node's connection to the servers of `natsUrl`
 * (comma-separated). The client ignores credentials in a server address
 * (`nats://user:password@host`, `nats://token@host`): they are taken out of
 * the addresses and given as its user and password (or token).
 * @throws ConfigError when the servers carry different credentials (a connection has one)
 */
export function natsConnectionOptions(natsUrl: string, name: string): ConnectionOptions {
  const servers = parseNatsServers(natsUrl).map(serverCredentials);
  const credentials = new Set(servers.map((server) => server.credentials).filter((each) => each !== undefined).map((each) => JSON.stringify(each)));
  if (credentials.size > 1) throw new ConfigError('NATS_URL: every server of the list must carry the same credentials (or none)');
  const [only] = [...credentials].map((each) => JSON.parse(each) as { user?: string; pass?: string; token?: string });
  return { servers: servers.map((server) => server.address), name, ...only, ...NATS_RECONNECT_OPTIONS };
}

/** A server address without its credentials, and them (decoded). */
function serverCredentials(entry: string): { address: string; credentials?: { user: string; pass: string } | { token: string } } {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(entry);
  const absolute = withScheme ? entry : `nats://${entry}`;
  const url = new URL(absolute);
  if (url.username === '' && url.password === '') return { address: entry };
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  const hasPassword = /\/\/[^@/]*:[^@/]*@/.test(absolute);
  url.username = '';
  url.password = '';
  const address = withScheme ? url.toString().replace(/\/$/, '') : url.host;
  // A user without a password is a token (nats://token@host), as the other NATS clients read it.
  return { address, credentials: hasPassword ? { user, pass } : { token: user } };
}

/**
 * Opens the node's NATS connection.
 * @throws UnreachableServerError naming NATS_URL and its servers (without credentials) when none answers now (start-up needs NATS)
 */
export async function connectToNats(natsUrl: string, name: string): Promise<NatsConnection> {
  const options = natsConnectionOptions(natsUrl, name);
  try {
    return await connect(options);
  } catch (error) {
    const servers = natsUrl.split(',').map((server) => withoutCredentials(server.trim())).join(', ');
    throw new UnreachableServerError('NATS', 'NATS_URL', servers, error);
  }
}

/** How long a stopping node's drain may wait for the server before the connection is just closed. */
const DRAIN_TIMEOUT_MS = 5000;

/**
 * Drains the connection (subscriptions finish, publications are flushed),
 * or closes it when it is lost or the drain does not end in time: a drain
 * waits for the server, which a stop during an outage would wait for without end.
 */
export async function closeNatsConnection(connection: NatsConnection): Promise<void> {
  if (connection.isClosed()) return;
  const watch = NatsConnectionWatch.of(connection);
  watch.closeAsked();
  if (watch.connected()) {
    const drained = await withTimeout(connection.drain(), DRAIN_TIMEOUT_MS).then(() => true, () => false);
    if (drained) return;
  }
  await connection.close().catch(() => undefined);
}

/** Follows one connection's status: connected or not, and who to wake when it is back. */
export class NatsConnectionWatch {
  private connectedNow = true;
  private readonly reconnectListeners = new Set<() => void>();
  private reconnectWaiters: Array<() => void> = [];
  private health: DependencyHealth | undefined;
  private logger: RuntimeLogger | undefined;
  private closing = false;
  /** Told at the next loss of the connection (each removes itself once its call ended). */
  private readonly disconnectListeners = new Set<(error: Error) => void>();

  private constructor(private readonly connection: NatsConnection) {
    void this.follow();
  }

  /**
   * Runs `work`, rejecting at once if the connection is lost before it
   * settles: a request in flight then will not be answered (the client does
   * not fail it; it would wait out its timeout). A listener per call, removed
   * when it settles: a race against one shared promise of the next loss kept
   * a reaction per call until that loss (300 MB per million publications).
   */
  endedByDisconnect<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.disconnectListeners.add(reject);
      work.then(resolve, reject).finally(() => this.disconnectListeners.delete(reject));
    });
  }

  /** Fails the calls `endedByDisconnect` still runs: the connection is lost. */
  private failCallsInFlight(error: Error): void {
    const listeners = [...this.disconnectListeners];
    this.disconnectListeners.clear();
    for (const fail of listeners) fail(error);
  }

  /** Whether the client holds a live connection to a server now (false while reconnecting and once closed). */
  connected(): boolean {
    return this.connectedNow && !this.connection.isClosed();
  }

  /** Calls `listener` after every reconnect (the client has re-sent its subscriptions); returns its removal. */
  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  /** Resolves at the next reconnect, or when the connection closes. */
  nextReconnect(): Promise<void> {
    if (this.connection.isClosed()) return Promise.resolve();
    return new Promise((resolve) => this.reconnectWaiters.push(resolve));
  }

  /**
   * Reports the connection's outages to `health` as the dependency "nats"
   * (tracked from now on), and a close nobody asked for (see closeNatsConnection)
   * to `logger` too: the node is then dead until restarted.
   */
  reportTo(health: DependencyHealth | undefined, logger?: RuntimeLogger): void {
    this.health = health;
    this.logger = logger;
    health?.track('nats');
    if (!this.connected()) health?.down('nats', new Error('the NATS connection is lost'));
    if (this.connection.isClosed() && !this.closing) this.closedForGood();
  }

  /** The node closes the connection (closeNatsConnection): its close is no outage. */
  closeAsked(): void {
    this.closing = true;
  }

  private async follow(): Promise<void> {
    // Iterated to its end: the client's close waits for every status iterator to finish.
    for await (const status of this.connection.status()) {
      if (status.type === 'disconnect') {
        this.connectedNow = false;
        this.failCallsInFlight(new Error('the NATS connection was lost'));
        // Not status.server: a server address may carry credentials.
        this.health?.down('nats', new Error('the NATS connection is lost; reconnecting'));
      } else if (status.type === 'reconnect') {
        this.connectedNow = true;
        this.health?.up('nats');
        this.releaseWaiters();
        for (const listener of [...this.reconnectListeners]) {
          try {
            listener();
          } catch (error) {
            process.emitWarning(`NATS reconnect listener failed: ${(error as Error)?.message ?? String(error)}`);
          }
        }
      } else if (status.type === 'close') {
        this.connectedNow = false;
      }
    }
    this.connectedNow = false;
    this.failCallsInFlight(new Error('the NATS connection is closed'));
    this.releaseWaiters();
    if (!this.closing) this.closedForGood();
  }

  /** The client closed the connection on its own (it gave up reconnecting): nothing brings it back but a restart. */
  private closedForGood(): void {
    const reason = 'the NATS connection was closed by the client, which will not reconnect: the node must be restarted';
    // The client's error (an authorisation error, ...) carries no address, hence no credentials; only its message is kept.
    void this.connection.closed().then((error) => {
      const cause = error instanceof Error ? error.message : undefined;
      this.health?.down('nats', new Error(reason));
      this.health?.markDead(reason);
      this.logger?.error({ dependency: 'nats', ...(cause ? { cause } : {}) }, reason);
    });
  }

  private releaseWaiters(): void {
    const waiters = this.reconnectWaiters;
    this.reconnectWaiters = [];
    for (const wake of waiters) wake();
  }

  private static readonly watches = new WeakMap<NatsConnection, NatsConnectionWatch>();

  /** The one watch of a connection (made at the first call: create it right after connecting so that it sees every event). */
  static of(connection: NatsConnection): NatsConnectionWatch {
    let watch = NatsConnectionWatch.watches.get(connection);
    if (!watch) {
      watch = new NatsConnectionWatch(connection);
      NatsConnectionWatch.watches.set(connection, watch);
    }
    return watch;
  }
}

/**
 * Whether a failed call failed for the whole connection (lost, closed, or no
 * answer in time) rather than for what it asked: every other call fails alike
 * until the connection is back.
 */
export function isNatsConnectionFailure(error: unknown, connection: NatsConnection): boolean {
  if (!NatsConnectionWatch.of(connection).connected()) return true;
  if (error instanceof natsErrors.ClosedConnectionError || error instanceof natsErrors.ConnectionError || error instanceof natsErrors.TimeoutError) return true;
  if (error instanceof natsErrors.RequestError) return !error.isNoResponders();
  return false;
}

// nats.js's errors of a connection that is closed, draining, reconnecting or not answering (by name: the
// jetstream and kv packages may hold their own copy of nats-core's classes).
const NATS_FAILURE_NAMES = new Set([
  'ClosedConnectionError', 'DrainingConnectionError', 'ConnectionError', 'RequestError', 'TimeoutError', 'NoResponders', 'NoRespondersError',
]);
const NATS_FAILURE_MESSAGES = /closed connection|connection draining|disconnect|NATS connection closed/i;

/**
 * True when `error` is what a NATS client, our bus or our JetStream publisher
 * throws while the server is away (without a connection at hand to ask, unlike
 * isNatsConnectionFailure): the runtime's logger writes those at debug while
 * NATS is known down.
 */
export function isNatsFailure(error: unknown): boolean {
  if (error instanceof BusUnavailableError || error instanceof PublisherUnavailableError) return true;
  if (!(error instanceof Error)) return false;
  return NATS_FAILURE_NAMES.has(error.name) || NATS_FAILURE_MESSAGES.test(error.message);
}
