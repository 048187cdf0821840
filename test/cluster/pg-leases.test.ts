// PgLeaseProvider on real Postgres: exclusive shard locks, release, loss of
// the session, and self-fencing before the lease timeout.
import assert from 'node:assert/strict';
import { Client } from 'pg';
import { PgLeaseProvider } from '../../actors';
import { createDataSource } from '../../persistence/data-source';
import { ActorClusterRepository } from '../../persistence/runtime/actor-cluster.repository';
import { createTestDatabase, type TestDatabase } from '../support/database';

describe('PgLeaseProvider', () => {
  let database: TestDatabase;
  let providers: PgLeaseProvider[] = [];

  function provider(name: string, leaseTimeoutMs = 2000, heartbeatIntervalMs?: number): PgLeaseProvider {
    const created = new PgLeaseProvider({ url: database.url, leaseTimeoutMs, heartbeatIntervalMs, applicationName: name });
    providers.push(created);
    return created;
  }

  before(async () => {
    database = await createTestDatabase();
  });

  afterEach(async () => {
    await Promise.all(providers.map((each) => each.close()));
    providers = [];
  });

  after(async () => {
    await database.drop();
  });

  async function terminate(applicationName: string): Promise<void> {
    const admin = new Client({ connectionString: database.url });
    await admin.connect();
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [applicationName]);
    await admin.end();
  }

  it('grants each shard to one session at a time', async () => {
    const a = provider('lease-a');
    const b = provider('lease-b');
    await Promise.all([a.connect(), b.connect()]);
    assert.deepEqual(await a.tryAcquire([1, 2, 3]), [1, 2, 3]);
    assert.deepEqual(await b.tryAcquire([2, 3, 4]), [4]);
    await a.release([2]);
    assert.deepEqual(await b.tryAcquire([2, 3]), [2]);
  });

  it('reports the loss when its session is killed, and the shards become free', async () => {
    const a = provider('lease-killed');
    const b = provider('lease-survivor');
    await Promise.all([a.connect(), b.connect()]);
    await a.tryAcquire([7]);
    const lost = new Promise<string>((resolve) => a.onLost((loss) => resolve(loss.reason)));
    await terminate('lease-killed');
    assert.match(await lost, /^lease (connection|heartbeat) (closed|failed)/);
    assert.equal(a.healthy, false);
    assert.deepEqual(await b.tryAcquire([7]), [7]);
  });

  it('issues no fencing epoch to a session that lost the lease while claiming', async () => {
    const dataSource = createDataSource({ url: database.url, poolSize: 2 });
    await dataSource.initialize();
    try {
      const cluster = new ActorClusterRepository(dataSource);
      await cluster.ensureShardCount(16);
      const a = provider('lease-stale-claimer');
      const b = provider('lease-new-owner');
      await Promise.all([a.connect(), b.connect()]);
      assert.deepEqual(await a.tryAcquire([9]), [9]);
      const staleHolder = a.holder();
      // a's session dies (a pause past L) between its try-lock and its claim; b takes the shard.
      const lost = new Promise<void>((resolve) => a.onLost(() => resolve()));
      await terminate('lease-stale-claimer');
      await lost;
      assert.deepEqual(await b.tryAcquire([9]), [9]);
      const epoch = (await cluster.claimShard(9, 'node_b', b.holder()))?.epoch;
      assert.equal(typeof epoch, 'number');
      // a resumes and runs the claim it had started: it must not supersede b's epoch.
      assert.equal(await cluster.claimShard(9, 'node_a', staleHolder), null);
      const owner = (await cluster.listShardOwners()).find((row) => row.shard === 9);
      assert.deepEqual(owner, { shard: 9, epoch, ownerNodeId: 'node_b' });
    } finally {
      await dataSource.destroy();
    }
  });

  it('counts the lease from when a heartbeat was sent, not from when its slow answer arrived', async () => {
    const leaseTimeoutMs = 1500;
    const a = provider('lease-slow-answers', leaseTimeoutMs, 100);
    await a.connect();
    // Answers come back 900 ms after the server ran the query (a slow return path or a busy event loop),
    // and the network drops every query after the second: the server's idle_session_timeout runs from then.
    const client = (a as unknown as { client: Client }).client;
    const send = client.query.bind(client) as (text: string) => Promise<unknown>;
    let calls = 0;
    let lastReachedServerAt = 0;
    (client as unknown as { query: (text: string) => Promise<unknown> }).query = async (text: string) => {
      if (++calls > 2) return new Promise(() => undefined);
      lastReachedServerAt = Date.now();
      const result = await send(text);
      await new Promise((resolve) => setTimeout(resolve, 900));
      return result;
    };
    const [reason, lostAt] = await new Promise<[string, number]>((resolve) => a.onLost((loss) => resolve([loss.reason, Date.now()])));
    // Given up by its own watchdog, before Postgres ended the idle session (which frees the locks for another node).
    assert.match(reason, /^no lease heartbeat for \d+ ms$/);
    assert.ok(lostAt - lastReachedServerAt < leaseTimeoutMs, `gave the lease up ${lostAt - lastReachedServerAt} ms after the server last heard of it`);
  });

  it('fences itself before the lease timeout when heartbeats stop succeeding', async () => {
    // Heartbeats far apart: the watchdog must give up at 2/3 of L, before Postgres would.
    const a = provider('lease-silent', 1500, 60_000);
    // The watchdog counts from the last heartbeat that succeeded, made while connecting: before the connect
    // resolves, so a start taken after it would make a loss on time look early.
    const started = Date.now();
    await a.connect();
    const reason = await new Promise<string>((resolve) => a.onLost((loss) => resolve(loss.reason)));
    const elapsed = Date.now() - started;
    assert.match(reason, /^no lease heartbeat for \d+ ms$/);
    assert.ok(elapsed >= 1000 && elapsed < 1500, `lost after ${elapsed} ms`);
  });
});
