// PgLeaseProvider on real Postgres: exclusive shard locks, release, loss of
// the session, and self-fencing before the lease timeout.
import assert from 'node:assert/strict';
import { Client } from 'pg';
import { PgLeaseProvider } from '../../actors';
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
    const admin = new Client({ connectionString: database.url });
    await admin.connect();
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lease-killed'");
    await admin.end();
    assert.match(await lost, /^lease (connection|heartbeat) (closed|failed)/);
    assert.equal(a.healthy, false);
    assert.deepEqual(await b.tryAcquire([7]), [7]);
  });

  it('fences itself before the lease timeout when heartbeats stop succeeding', async () => {
    // Heartbeats far apart: the watchdog must give up at 2/3 of L, before Postgres would.
    const a = provider('lease-silent', 1500, 60_000);
    await a.connect();
    const started = Date.now();
    const reason = await new Promise<string>((resolve) => a.onLost((loss) => resolve(loss.reason)));
    const elapsed = Date.now() - started;
    assert.match(reason, /^no lease heartbeat for \d+ ms$/);
    assert.ok(elapsed >= 1000 && elapsed < 1500, `lost after ${elapsed} ms`);
  });
});
