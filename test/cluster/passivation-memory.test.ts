// 10,000 actors activated on one node process and passivated: the node's heap
// returns to near its starting level (state stays in Postgres).
import assert from 'node:assert/strict';
import { ClusterNode, clusterEnv, deleteStream, eventually, uniqueBusNames } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';

const MB = 1024 * 1024;

describe('cluster: passivation frees memory', function () {
  this.timeout(90_000);
  let database: TestDatabase;
  let node: ClusterNode;
  const names = uniqueBusNames();

  before(async () => {
    database = await createTestDatabase();
    node = await ClusterNode.start(clusterEnv(database.url, names, { AGENTRT_PASSIVATE_AFTER_MS: '12000' }));
  });

  after(async () => {
    await node.dispose();
    await database.drop();
    await deleteStream(names.eventStream);
  });

  it('returns the heap to near its starting level after 10,000 actors passivate', async () => {
    // Warm-up: load code paths and fill pools, so the baseline (taken with these
    // 500 actors still active) is not inflated later.
    await node.call({ op: 'activate', prefix: 'warm', count: 500, concurrency: 50 });
    const baseline = await node.call<number>({ op: 'memory' });
    const activationsBefore = (await node.status()).activations;

    const active = await node.call<number>({ op: 'activate', prefix: 'mass', count: 10_000, concurrency: 100 });
    assert.equal((await node.status()).activations - activationsBefore, 10_000);
    // On a loaded machine the first actors may passivate before the last ones start.
    assert.ok(active >= 8_000, `only ${active} actors were active at once`);
    const peak = await node.call<number>({ op: 'memory' });
    await eventually(async () => (await node.status()).active === 0, '10,000 actors passivated', 45_000);
    const after = await node.call<number>({ op: 'memory' });

    const held = peak - baseline;
    const left = after - baseline;
    assert.ok(held > 5 * MB, `10,000 active actors should hold memory (held ${(held / MB).toFixed(1)} MB)`);
    assert.ok(left < Math.max(3 * MB, held * 0.15), `heap stayed ${(left / MB).toFixed(1)} MB above baseline (active actors held ${(held / MB).toFixed(1)} MB)`);
  });
});
