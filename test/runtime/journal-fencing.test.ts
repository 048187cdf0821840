// The fenced journal on real Postgres: a write under a superseded shard epoch
// is refused, a duplicate sequence number is refused, and a takeover's epoch
// bump waits for an in-flight fenced write.
import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import { createDataSource } from '../../persistence/data-source';
import { ActorClusterRepository } from '../../persistence/runtime/actor-cluster.repository';
import { ActorJournalRepository, checkFence, type JournalAppend } from '../../persistence/runtime/actor-journal.repository';
import { JournalConflictError, ShardFencedError } from '../../src/sharding/sharding.errors';
import { createTestDatabase, type TestDatabase } from '../support/database';

function entry(key: string, sequenceNr: number): JournalAppend {
  return {
    key,
    sequenceNr,
    payload: { cid: null, events: [{ type: 'added', by: 1 }], reply: null },
    tags: [],
    kind: 'counter',
    actorId: key.split(':')[1],
    outbox: [],
    remindersSet: [],
    remindersCancelled: [],
    processedCommandIds: [],
  };
}

describe('ActorJournalRepository fencing', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let journal: ActorJournalRepository;
  let cluster: ActorClusterRepository;

  before(async () => {
    database = await createTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 4 });
    await dataSource.initialize();
    journal = new ActorJournalRepository(dataSource, 5000);
    cluster = new ActorClusterRepository(dataSource);
    await cluster.ensureShardCount(8);
  });

  /** Claims without a lease holder (no lock check): always answers an epoch. */
  async function claim(shard: number, nodeId: string): Promise<number> {
    return (await cluster.claimShard(shard, nodeId))!;
  }

  after(async () => {
    await dataSource.destroy();
    await database.drop();
  });

  it('refuses a journal write and a snapshot under a stale epoch', async () => {
    const old = await claim(3, 'node_a');
    await journal.appendFenced(entry('counter:f1', 1), { shard: 3, epoch: old });
    const current = await claim(3, 'node_b');
    assert.equal(current, old + 1);
    await assert.rejects(journal.appendFenced(entry('counter:f1', 2), { shard: 3, epoch: old }), (error: ShardFencedError) => {
      return error instanceof ShardFencedError && error.code === 'ABORTED' && error.message === `shard 3 was taken over: epoch ${old} is stale`;
    });
    await assert.rejects(journal.saveSnapshotFenced({ key: 'counter:f1', sequenceNr: 1, payload: {} }, { shard: 3, epoch: old }), ShardFencedError);
    await journal.appendFenced(entry('counter:f1', 2), { shard: 3, epoch: current });
    assert.deepEqual((await journal.listAfter('counter:f1', 0)).map((row) => row.sequenceNr), [1, 2]);
  });

  it('refuses a second writer of the same sequence number', async () => {
    const epoch = await claim(4, 'node_a');
    await journal.appendFenced(entry('counter:f2', 1), { shard: 4, epoch });
    await assert.rejects(journal.appendFenced(entry('counter:f2', 1), { shard: 4, epoch }), (error: JournalConflictError) => {
      return error instanceof JournalConflictError && error.message === 'journal counter:f2 already has entry 1: another activation wrote it';
    });
  });

  it('keeps only the newest snapshot', async () => {
    const epoch = await claim(5, 'node_a');
    await journal.saveSnapshotFenced({ key: 'counter:f3', sequenceNr: 10, payload: { at: 10 } }, { shard: 5, epoch });
    await journal.saveSnapshotFenced({ key: 'counter:f3', sequenceNr: 4, payload: { at: 4 } }, { shard: 5, epoch });
    const snapshot = await journal.findSnapshot('counter:f3');
    assert.deepEqual([snapshot?.sequenceNr, snapshot?.payload], [10, { at: 10 }]);
  });

  it('makes a takeover wait for an in-flight fenced write', async () => {
    const epoch = await claim(6, 'node_a');
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const write = dataSource.transaction(async (tx) => {
      await checkFence(tx, { shard: 6, epoch }, 5000);
      await held;
      order.push('write committed');
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const takeover = claim(6, 'node_b').then(() => order.push('epoch bumped'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    await Promise.all([write, takeover]);
    assert.deepEqual(order, ['write committed', 'epoch bumped']);
  });
});
