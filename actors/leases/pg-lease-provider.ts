// Shard leases as Postgres session advisory locks on one dedicated connection
// per node (outside the pool). idle_session_timeout turns the session into a
// lease of `leaseTimeoutMs`; a heartbeat keeps it, and a watchdog reports the
// loss before the server can hand the locks to another node.
import { Client } from 'pg';
import type { LeaseHolder, LeaseLoss, LeaseProvider } from '../../src/ports/leases';

/** "art\x01": the advisory lock namespace of shard leases (first key of the two-int form). */
export const SHARD_LOCK_NAMESPACE = 0x61727401;

export interface PgLeaseProviderOptions {
  /** Postgres URL; must reach the server directly (no transaction-pooling proxy). */
  url: string;
  /** Lease timeout L: the session's idle_session_timeout. */
  leaseTimeoutMs: number;
  /** Heartbeat period. @default leaseTimeoutMs / 5 */
  heartbeatIntervalMs?: number;
  applicationName?: string;
}

/** Advisory-lock leases. Reusable: after a loss, `connect()` opens a new session. */
export class PgLeaseProvider implements LeaseProvider {
  private client: Client | undefined;
  private timers: NodeJS.Timeout[] = [];
  private lastHeartbeatAt = 0;
  private listeners: Array<(loss: LeaseLoss) => void> = [];
  private session = 0;
  /** Queries on the lease connection run one after another (pg deprecates overlapping queries). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: PgLeaseProviderOptions) {}

  get healthy(): boolean {
    return this.client !== undefined;
  }

  async connect(): Promise<void> {
    const client = new Client({ connectionString: this.options.url, application_name: this.options.applicationName ?? 'agentrt-lease' });
    const session = ++this.session;
    // Only a session that was established can be lost: a connect that fails (the server is away) rejects, and its
    // caller's retries must not report a lease loss each (one warning per balancing round during an outage).
    let established = false;
    client.on('error', (error) => {
      if (established) this.lose(session, `lease connection failed: ${error.message}`);
    });
    client.on('end', () => {
      if (established) this.lose(session, 'lease connection closed');
    });
    const connectedAt = Date.now();
    try {
      await client.connect();
      await client.query(`SET idle_session_timeout = ${Math.round(this.options.leaseTimeoutMs)}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (session !== this.session) {
      // Closed while connecting.
      await client.end().catch(() => undefined);
      return;
    }
    established = true;
    this.client = client;
    this.lastHeartbeatAt = connectedAt;
    this.startTimers(session);
  }

  async tryAcquire(shards: readonly number[]): Promise<number[]> {
    if (shards.length === 0) return [];
    const rows = await this.query<{ shard: number }>('SELECT s AS shard FROM unnest($1::int[]) AS s WHERE pg_try_advisory_lock($2, s)', [shards, SHARD_LOCK_NAMESPACE]);
    return rows.map((row) => row.shard);
  }

  async release(shards: readonly number[]): Promise<void> {
    if (shards.length === 0) return;
    await this.query('SELECT pg_advisory_unlock($2, s) FROM unnest($1::int[]) AS s', [shards, SHARD_LOCK_NAMESPACE]);
  }

  holder(): LeaseHolder | undefined {
    const pid = (this.client as { processID?: number | null } | undefined)?.processID;
    return pid == null ? undefined : { namespace: SHARD_LOCK_NAMESPACE, sessionPid: pid };
  }

  onLost(listener: (loss: LeaseLoss) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    const client = this.client;
    this.stopTimers();
    this.client = undefined;
    this.session++;
    // Ending the session releases every advisory lock it holds.
    if (client) await client.end().catch(() => undefined);
  }

  private query<Row>(text: string, values: unknown[] = []): Promise<Row[]> {
    const run = this.queue.then(async () => {
      if (!this.client) throw new Error('lease session lost');
      return (await this.client.query(text, values)).rows as Row[];
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private startTimers(session: number): void {
    const heartbeatMs = this.options.heartbeatIntervalMs ?? this.options.leaseTimeoutMs / 5;
    this.timers.push(setInterval(() => void this.heartbeat(session), heartbeatMs));
    this.timers.push(setInterval(() => this.watch(session), Math.max(50, this.options.leaseTimeoutMs / 10)));
  }

  private stopTimers(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
  }

  private async heartbeat(session: number): Promise<void> {
    // Postgres counts idle time from when it ran the query, not from when its answer got back here (a slow return path or
    // a busy event loop): the enqueue time is a safe lower bound (queries on this connection run one after another).
    const sentAt = Date.now();
    try {
      await this.query('SELECT 1');
      if (session === this.session) this.lastHeartbeatAt = Math.max(this.lastHeartbeatAt, sentAt);
    } catch (error) {
      this.lose(session, `lease heartbeat failed: ${(error as Error).message}`);
    }
  }

  // Self-fencing: give up at 2/3 of L without a heartbeat, before the server's
  // idle_session_timeout can free the locks for another node (also after a pause).
  private watch(session: number): void {
    const silentMs = Date.now() - this.lastHeartbeatAt;
    if (silentMs > (this.options.leaseTimeoutMs * 2) / 3) this.lose(session, `no lease heartbeat for ${silentMs} ms`);
  }

  private lose(session: number, reason: string): void {
    if (session !== this.session) return;
    const client = this.client;
    this.session++;
    this.stopTimers();
    this.client = undefined;
    client?.end().catch(() => undefined);
    for (const listener of this.listeners) listener({ reason });
  }
}
