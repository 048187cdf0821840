// Idempotency-Key claims left in progress by a request that died (issue 24
// item 11): a node with an actor runtime names itself in its claims, and a
// retry takes a claim over as soon as that node's lease has expired, not after
// a fixed minute, while the claim of a live node holds however long it runs.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createIdempotencyStore } from '../../persistence/repositories/idempotency.store';
import { startTestApi, type TestApi } from '../support/api';
import { assertStatus, Code, newAccount, type TestAccount } from '../support/fixtures';

describe('Idempotency-Key claims of a node that died', function () {
  this.timeout(60_000);
  let api: TestApi;
  let account: TestAccount;
  let number = 0;
  before(async () => {
    api = await startTestApi({ runtime: true });
    account = await newAccount(api);
  });
  after(async () => api?.close());

  const where = 'WHERE principal_key = $1 AND idempotency_key = $2';
  /** A key created once, then put back "in progress" as a request killed mid-way leaves it. */
  async function orphanedClaim(): Promise<{ headers: Record<string, string>; body: unknown; key: string }> {
    const key = `orphan-${Date.now()}-${++number}`;
    const headers = { 'x-workspace-id': account.workspaceId, 'idempotency-key': key };
    const body = { metadata: { name: `orphaned-${number}` }, spec: { permissions: ['agents:read'] } };
    const first = await api.request('POST', '/v1/api_keys', { token: account.globalToken, headers, body });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    await api.dataSource.query(`UPDATE idempotency_records SET status = NULL, body = NULL ${where}`, [account.globalKeyId, key]);
    return { headers, body, key };
  }

  it('names the node in its claim, and keeps a live node\'s claim in progress however old it is', async () => {
    const { headers, body, key } = await orphanedClaim();
    const [row] = await api.dataSource.query(`SELECT claimed_by FROM idempotency_records ${where}`, [account.globalKeyId, key]);
    assert.equal(row.claimed_by, api.runtime!.nodeId);
    // The request would have run for two minutes: its node is alive, so it still runs.
    await api.dataSource.query(`UPDATE idempotency_records SET created_at = now() - interval '2 minutes' ${where}`, [account.globalKeyId, key]);
    assertStatus(await api.request('POST', '/v1/api_keys', { token: account.globalToken, headers, body }), 409, Code.ABORTED, /still in progress/);
  });

  it('takes over at once the claim of a node whose lease has expired, or that is gone from the members', async () => {
    await api.dataSource.query(
      "INSERT INTO actor_nodes (node_id, shards, active_actors, last_heartbeat_at) VALUES ('node_silent', '{}', 0, now() - interval '1 minute')",
    );
    for (const deadNode of ['node_silent', 'node_gone']) {
      const { headers, body, key } = await orphanedClaim();
      await api.dataSource.query(`UPDATE idempotency_records SET claimed_by = $3 ${where}`, [account.globalKeyId, key, deadNode]);
      const retried = await api.request('POST', '/v1/api_keys', { token: account.globalToken, headers, body });
      assert.equal(retried.status, 200, `${deadNode}: ${JSON.stringify(retried.body)}`);
      assert.equal(retried.headers.get('idempotent-replayed'), null, 'run again, not replayed');
    }
  });

  it('drops the claims an earlier run of the same node id left, before its first claim', async () => {
    const principal = `test-principal-${Date.now()}`;
    const node = { nodeId: `node_restarted_${Date.now()}`, leaseTimeoutMs: 60_000 };
    // The node heartbeats again after its restart: the old claim's node looks alive.
    await api.dataSource.query("INSERT INTO actor_nodes (node_id, shards, active_actors) VALUES ($1, '{}', 0)", [node.nodeId]);
    const earlierRun = createIdempotencyStore(api.dataSource, randomBytes(32), () => node);
    assert.equal(await earlierRun.claim(principal, 'k', 'hash'), null, 'claimed');
    assert.equal((await earlierRun.claim(principal, 'k', 'hash'))?.status, null, 'held in progress while its run lives');
    const restarted = createIdempotencyStore(api.dataSource, randomBytes(32), () => node);
    assert.equal(await restarted.claim(principal, 'k', 'hash'), null, 'taken over by the new run');
    assert.equal((await restarted.claim(principal, 'k', 'hash'))?.status, null, 'and held by it');
  });

  it('releases a claim the database refused to release once it is back, so retries through any node run the request again', async () => {
    const principal = `test-principal-${Date.now()}`;
    const node = { nodeId: `node_alive_${Date.now()}`, leaseTimeoutMs: 60_000 };
    const other = { nodeId: `node_other_${Date.now()}`, leaseTimeoutMs: 60_000 };
    await api.dataSource.query("INSERT INTO actor_nodes (node_id, shards, active_actors) VALUES ($1, '{}', 0), ($2, '{}', 0)", [node.nodeId, other.nodeId]);
    // The database going away between the claim and its release: its DELETE fails as a lost connection does.
    let databaseAway = false;
    const flaky = new Proxy(api.dataSource, {
      get(target, property, receiver) {
        if (property !== 'query') return Reflect.get(target, property, receiver);
        return (sql: string, parameters?: unknown[]) =>
          databaseAway ? Promise.reject(new Error('Connection terminated unexpectedly')) : target.query(sql, parameters);
      },
    });
    const store = createIdempotencyStore(flaky, randomBytes(32), () => node);
    assert.equal(await store.claim(principal, 'k', 'hash'), null, 'claimed');
    databaseAway = true;
    await store.release(principal, 'k'); // does not throw: the release is kept
    databaseAway = false;
    // The live node's claim is released by the node itself, not left to answer ABORTED: another node's retry takes the key.
    const elsewhere = createIdempotencyStore(api.dataSource, randomBytes(32), () => other);
    const deadline = Date.now() + 10_000;
    let claimed: unknown = 'not yet';
    while (Date.now() < deadline && claimed !== null) {
      claimed = await elsewhere.claim(principal, 'k', 'hash');
      if (claimed !== null) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(claimed, null, 'the other node claims the key once the stranded release went through');
    // And the stranded release does not take the other node's claim away.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal((await elsewhere.claim(principal, 'k', 'hash'))?.status, null, 'the other node\'s claim holds');
  });

  it('never lets a late pass of stranded releases delete the claim this node has just made again of the same key', async () => {
    const principal = `test-principal-${Date.now()}`;
    const node = { nodeId: `node_racing_${Date.now()}`, leaseTimeoutMs: 60_000 };
    await api.dataSource.query("INSERT INTO actor_nodes (node_id, shards, active_actors) VALUES ($1, '{}', 0)", [node.nodeId]);
    let databaseAway = false;
    // The first stranded release of k1 waits at a gate: one pass stalls there while another claim runs.
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    let k1Releases = 0;
    const flaky = new Proxy(api.dataSource, {
      get(target, property, receiver) {
        if (property !== 'query') return Reflect.get(target, property, receiver);
        return async (sql: string, parameters?: unknown[]) => {
          if (databaseAway) throw new Error('Connection terminated unexpectedly');
          if (/claimed_by IS NOT DISTINCT FROM/.test(sql) && parameters?.[1] === 'k1' && ++k1Releases === 1) await gate;
          return target.query(sql, parameters);
        };
      },
    });
    const store = createIdempotencyStore(flaky, randomBytes(32), () => node);
    for (const key of ['k1', 'k2']) assert.equal(await store.claim(principal, key, 'hash'), null);
    databaseAway = true;
    await store.release(principal, 'k1');
    await store.release(principal, 'k2');
    databaseAway = false;
    const first = store.claim(principal, 'k3', 'hash'); // its pass stalls on k1
    const second = store.claim(principal, 'k2', 'hash'); // claims k2 afresh
    await new Promise((resolve) => setTimeout(resolve, 300));
    openGate();
    assert.equal(await first, null);
    assert.equal(await second, null, 'k2 claimed again');
    const rows = await api.dataSource.query('SELECT status FROM idempotency_records WHERE principal_key = $1 AND idempotency_key = $2', [principal, 'k2']);
    assert.deepEqual(rows, [{ status: null }], 'the fresh claim of k2 is still there, in progress');
  });
});
