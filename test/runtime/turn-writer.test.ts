// The fenced turn writer on real Postgres: a write under a superseded shard
// epoch is refused, a duplicate sequence number or command id is refused,
// one refused turn does not fail its batch mates, and a takeover's epoch bump
// waits for an in-flight fenced write.
import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import { createDataSource } from '../../persistence/data-source';
import { ActorClusterRepository } from '../../persistence/runtime/actor-cluster.repository';
import { ActorJournalRepository, checkFence } from '../../persistence/runtime/actor-journal.repository';
import { RuntimeDatabase } from '../../persistence/runtime/runtime-database';
import { TurnWriter, type Fence, type TurnWrite, type TurnWriterOptions } from '../../persistence/runtime/turn-writer';
import { DuplicateCommandError, JournalConflictError, ShardFencedError } from '../../src/sharding/sharding.errors';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { turnWriteOf } from '../support/turn-writes';

function turn(key: string, sequenceNr: number, fence: Fence, commandId: string | null = null): TurnWrite {
  return turnWriteOf({
    fence,
    key,
    entry: { sequenceNr, commandId, payload: { cid: commandId, events: [{ type: 'added', by: 1 }], reply: { seq: sequenceNr } } },
    kind: 'counter',
    actorId: key.split(':')[1],
  });
}

describe('TurnWriter and journal fencing', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let runtimeDatabase: RuntimeDatabase;
  let journal: ActorJournalRepository;
  let writer: TurnWriter;
  let cluster: ActorClusterRepository;

  before(async () => {
    database = await createTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 4 });
    await dataSource.initialize();
    runtimeDatabase = new RuntimeDatabase({ url: database.url, poolSize: 4 });
    journal = new ActorJournalRepository(runtimeDatabase, 5000);
    writer = new TurnWriter(runtimeDatabase, { idleTimeoutMs: 5000, projectors: new Map() });
    cluster = new ActorClusterRepository(runtimeDatabase);
    await cluster.ensureShardCount(8);
  });

  /** Claims without a lease holder (no lock check): always answers an epoch. */
  async function claim(shard: number, nodeId: string): Promise<number> {
    return (await cluster.claimShard(shard, nodeId))!.epoch;
  }

  after(async () => {
    await runtimeDatabase.close();
    await dataSource.destroy();
    await database.drop();
  });

  it('refuses a journal write and a snapshot under a stale epoch', async () => {
    const old = await claim(3, 'node_a');
    await writer.write(turn('counter:f1', 1, { shard: 3, epoch: old }));
    const current = await claim(3, 'node_b');
    assert.equal(current, old + 1);
    await assert.rejects(writer.write(turn('counter:f1', 2, { shard: 3, epoch: old })), (error: ShardFencedError) => {
      return error instanceof ShardFencedError && error.code === 'ABORTED' && error.message === `shard 3 was taken over: epoch ${old} is stale`;
    });
    await assert.rejects(journal.saveSnapshotFenced({ key: 'counter:f1', sequenceNr: 1, payload: {} }, { shard: 3, epoch: old }), ShardFencedError);
    await writer.write(turn('counter:f1', 2, { shard: 3, epoch: current }));
    assert.deepEqual((await journal.listAfter('counter:f1', 0)).map((row) => row.sequenceNr), [1, 2]);
  });

  it('refuses a second writer of the same sequence number', async () => {
    const epoch = await claim(4, 'node_a');
    await writer.write(turn('counter:f2', 1, { shard: 4, epoch }));
    await assert.rejects(writer.write(turn('counter:f2', 1, { shard: 4, epoch })), (error: JournalConflictError) => {
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
    const write = runtimeDatabase.transaction(async (tx) => {
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

  it('refuses a command id the journal already holds, with the reply recorded then', async () => {
    const epoch = await claim(7, 'node_a');
    await writer.write(turn('counter:f4', 1, { shard: 7, epoch }, 'cmd-1'));
    await assert.rejects(writer.write(turn('counter:f4', 2, { shard: 7, epoch }, 'cmd-1')), (error: DuplicateCommandError) => {
      return error instanceof DuplicateCommandError && error.commandId === 'cmd-1' && (error.reply as { seq: number }).seq === 1;
    });
    assert.deepEqual((await journal.listAfter('counter:f4', 0)).map((row) => row.sequenceNr), [1]);
  });

  it('commits the turns of a batch whose other turns are refused', async () => {
    const stale = await claim(0, 'node_a');
    const current = await claim(0, 'node_b');
    const epoch1 = await claim(1, 'node_b');
    await writer.write(turn('counter:f5', 1, { shard: 1, epoch: epoch1 }));
    const outcomes = await Promise.allSettled([
      writer.write(turn('counter:f6', 1, { shard: 0, epoch: current })),
      writer.write(turn('counter:f7', 1, { shard: 0, epoch: stale })),
      writer.write(turn('counter:f5', 1, { shard: 1, epoch: epoch1 })),
      writer.write(turn('counter:f8', 1, { shard: 1, epoch: epoch1 })),
    ]);
    assert.deepEqual(outcomes.map((outcome) => outcome.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    assert.ok((outcomes[1] as PromiseRejectedResult).reason instanceof ShardFencedError);
    assert.ok((outcomes[2] as PromiseRejectedResult).reason instanceof JournalConflictError);
    for (const key of ['counter:f6', 'counter:f8']) assert.equal((await journal.listAfter(key, 0)).length, 1);
    assert.equal((await journal.listAfter('counter:f7', 0)).length, 0);
  });
});

describe('TurnWriter: a batch of turns as one statement', () => {
  let database: TestDatabase;
  let runtimeDatabase: RuntimeDatabase;
  let cluster: ActorClusterRepository;
  let roundTrips: { statements: number; transactions: number };
  let builderAnswers: 'statement' | 'decline';

  /** The read model of the test kind `ledger`: one row per change. */
  const ledgerProjection = (changes: Array<{ actorId: string; change: unknown }>) =>
    builderAnswers === 'decline'
      ? null
      : {
        statements: ['INSERT INTO test_ledger (actor_id, amount) SELECT * FROM unnest($1::text[], $2::int[])'],
        parameters: [changes.map((change) => change.actorId), changes.map((change) => (change.change as { amount: number }).amount)],
      };
  const ledgerProjector = async (sql: { query(text: string, parameters?: unknown[]): Promise<unknown[]> }, changes: Array<{ actorId: string; change: unknown }>) => {
    await sql.query('INSERT INTO test_ledger (actor_id, amount) SELECT * FROM unnest($1::text[], $2::int[])', [
      changes.map((change) => change.actorId), changes.map((change) => (change.change as { amount: number }).amount),
    ]);
  };

  function richTurn(actorId: string, fence: Fence, amount: number): TurnWrite {
    return {
      ...turn(`ledger:${actorId}`, 1, fence),
      kind: 'ledger',
      actorId,
      outbox: [{ id: `evt-${actorId}`, subject: `test.events.ledger.${actorId}`, payload: { amount }, headers: {}, actorSeq: 1 }],
      remindersSet: [{ name: 'later', dueAt: new Date(Date.now() + 3_600_000), payload: { amount } }],
      sends: [{ id: `cmd-${actorId}`, shard: fence.shard, kind: 'ledger', actorId: `${actorId}-peer`, payload: { amount } }],
      work: 'enter',
      changes: [{ amount }],
    };
  }

  const count = async (sql: string, parameters: unknown[]) => Number((await runtimeDatabase.query<{ n: string }>(sql, parameters))[0].n);

  before(async () => {
    database = await createTestDatabase();
    runtimeDatabase = new RuntimeDatabase({ url: database.url, poolSize: 4 });
    cluster = new ActorClusterRepository(runtimeDatabase);
    await cluster.ensureShardCount(8);
    await runtimeDatabase.query('CREATE TABLE test_ledger (actor_id text NOT NULL, amount int NOT NULL)');
  });

  beforeEach(() => {
    roundTrips = { statements: 0, transactions: 0 };
    builderAnswers = 'statement';
  });

  after(async () => {
    await runtimeDatabase.close();
    await database.drop();
  });

  /** A writer over the test database that counts its statements and transactions. */
  function countingWriter(options: Partial<TurnWriterOptions> = {}): TurnWriter {
    const counted = Object.create(runtimeDatabase) as RuntimeDatabase;
    counted.query = (...args: Parameters<RuntimeDatabase['query']>) => {
      roundTrips.statements += 1;
      return runtimeDatabase.query(...args);
    };
    counted.transaction = (work) => {
      roundTrips.transactions += 1;
      return runtimeDatabase.transaction(work);
    };
    return new TurnWriter(counted, { idleTimeoutMs: 5000, projectors: new Map([['ledger', ledgerProjector]]), projections: new Map([['ledger', ledgerProjection]]), ...options });
  }

  it('writes journal, outbox, reminder, send, work index and projection of several turns in one statement', async () => {
    const epoch = (await cluster.claimShard(2, 'node_a'))!.epoch;
    const writer = countingWriter();
    await Promise.all(['s1', 's2', 's3'].map((id, index) => writer.write(richTurn(id, { shard: 2, epoch }, index + 1))));
    assert.equal(roundTrips.transactions, 0, 'no transaction');
    // Two batches may be in flight at once, so three turns make one to three batches: one statement each.
    assert.ok(roundTrips.statements >= 1 && roundTrips.statements <= 3, `one statement per batch (${roundTrips.statements})`);
    for (const id of ['s1', 's2', 's3']) {
      assert.equal(await count('SELECT count(*) AS n FROM actor_journal WHERE persistence_key = $1', [`ledger:${id}`]), 1);
      assert.equal(await count('SELECT count(*) AS n FROM actor_outbox WHERE persistence_key = $1', [`ledger:${id}`]), 1);
      assert.equal(await count("SELECT count(*) AS n FROM actor_reminders WHERE actor_id = $1 AND name = 'later'", [id]), 1);
      assert.equal(await count('SELECT count(*) AS n FROM actor_commands WHERE id = $1', [`cmd-${id}`]), 1);
      assert.equal(await count('SELECT count(*) AS n FROM actor_work WHERE actor_id = $1', [id]), 1);
      assert.equal(await count('SELECT count(*) AS n FROM test_ledger WHERE actor_id = $1', [id]), 1);
    }
  });

  it('writes the sending turns that actors decided in one event-loop turn as one batch', async () => {
    const epoch = (await cluster.claimShard(5, 'node_a'))!.epoch;
    const writer = countingWriter();
    // As at a burst of schedule fires: each actor decides in its own callback of the same loop turn.
    const ids = ['g1', 'g2', 'g3', 'g4', 'g5'];
    const written = await Promise.all(ids.map((id, index) => new Promise<void>((resolve, reject) => setImmediate(() => writer.write(richTurn(id, { shard: 5, epoch }, index + 1)).then(resolve, reject)))));
    assert.equal(written.length, ids.length);
    // Without gathering, the first turn goes alone and the other four wait for its commit, then go in a second batch.
    assert.equal(roundTrips.statements, 1, 'one batch statement for the five sending turns');
    for (const id of ids) assert.equal(await count('SELECT count(*) AS n FROM actor_commands WHERE id = $1', [`cmd-${id}`]), 1);
  });

  it('writes sending turns decided over consecutive event-loop turns as one batch', async () => {
    const epoch = (await cluster.claimShard(5, 'node_a'))!.epoch;
    // A bound no pause of a busy test process reaches: the loop turns decide, not the clock.
    const writer = countingWriter({ sendingGatherMaxMs: 1000 });
    // As when a burst's fires reach their actors over a few hops: one decision per loop turn.
    const ids = ['c1', 'c2', 'c3', 'c4', 'c5'];
    const writes: Promise<void>[] = [];
    await new Promise<void>((resolve) => {
      const next = (index: number) => {
        writes.push(writer.write(richTurn(ids[index], { shard: 5, epoch }, index + 1)));
        if (index + 1 < ids.length) setImmediate(() => next(index + 1));
        else resolve();
      };
      setImmediate(() => next(0));
    });
    await Promise.all(writes);
    // Gathering one loop turn only, the first turn goes alone and the other four follow in a second batch.
    assert.equal(roundTrips.statements, 1, 'one batch statement for the five sending turns');
  });

  it('starts a sending batch while turns keep coming every loop turn', async () => {
    const epoch = (await cluster.claimShard(5, 'node_a'))!.epoch;
    const writer = countingWriter();
    let streaming = true;
    let firstWritten!: Promise<void>;
    const writes: Promise<void>[] = [];
    const stream = () => {
      if (!streaming) return;
      const write = writer.write(richTurn(`stream${writes.length}`, { shard: 5, epoch }, writes.length + 1));
      // Gathering without a bound never starts a batch: this never settles and the test times out.
      if (writes.length === 0) firstWritten = write.then(() => void (streaming = false));
      writes.push(write);
      setImmediate(stream);
    };
    stream();
    await firstWritten;
    await Promise.all(writes);
    assert.ok(roundTrips.statements >= 2, `the turns went out in ${roundTrips.statements} batch(es)`);
  });

  it('writes a turn that sends a command while the batches of other turns wait', async () => {
    const blockedEpoch = (await cluster.claimShard(6, 'node_a'))!.epoch;
    const epoch = (await cluster.claimShard(7, 'node_a'))!.epoch;
    const writer = countingWriter();
    // A takeover in progress holds shard 6's row: the batches of its turns wait for it.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const holding = runtimeDatabase.transaction(async (sql) => {
      await sql.query('SELECT 1 FROM actor_shards WHERE shard = 6 FOR UPDATE');
      await released;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const quiet = (id: string, fence: Fence) => ({ ...richTurn(id, fence, 1), sends: [] });
    const blocked = [writer.write(quiet('b1', { shard: 6, epoch: blockedEpoch })), writer.write(quiet('b2', { shard: 6, epoch: blockedEpoch }))];
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Both transaction batches are in flight and waiting: a turn without sends queues behind them.
    let queuedSettled = false;
    const queued = writer.write(quiet('q1', { shard: 7, epoch })).finally(() => (queuedSettled = true));
    await writer.write(richTurn('p1', { shard: 7, epoch }, 1));
    assert.equal(await count('SELECT count(*) AS n FROM actor_commands WHERE id = $1', ['cmd-p1']), 1, 'the sending turn is written');
    assert.equal(queuedSettled, false, 'the other turn still waits');
    release();
    await Promise.all([holding, ...blocked, queued]);
    for (const id of ['b1', 'b2', 'q1']) assert.equal(await count('SELECT count(*) AS n FROM actor_journal WHERE persistence_key = $1', [`ledger:${id}`]), 1);
  });

  it('refuses a stale turn of the batch alone: nothing of it is written, its batch mates are', async () => {
    const stale = (await cluster.claimShard(3, 'node_a'))!.epoch;
    const current = (await cluster.claimShard(3, 'node_b'))!.epoch;
    const writer = countingWriter();
    const outcomes = await Promise.allSettled([
      writer.write(richTurn('t-ok', { shard: 3, epoch: current }, 1)),
      writer.write(richTurn('t-stale', { shard: 3, epoch: stale }, 2)),
    ]);
    assert.deepEqual(outcomes.map((outcome) => outcome.status), ['fulfilled', 'rejected']);
    assert.ok((outcomes[1] as PromiseRejectedResult).reason instanceof ShardFencedError);
    assert.equal(await count('SELECT count(*) AS n FROM test_ledger WHERE actor_id = $1', ['t-ok']), 1);
    for (const table of ['test_ledger', 'actor_work', 'actor_reminders']) {
      assert.equal(await count(`SELECT count(*) AS n FROM ${table} WHERE actor_id = $1`, ['t-stale']), 0, `nothing of the stale turn in ${table}`);
    }
    assert.equal(await count('SELECT count(*) AS n FROM actor_outbox WHERE persistence_key = $1', ['ledger:t-stale']), 0);
  });

  it('goes through the projector in a transaction when the projection declines the changes', async () => {
    const epoch = (await cluster.claimShard(4, 'node_a'))!.epoch;
    builderAnswers = 'decline';
    const writer = countingWriter();
    await writer.write(richTurn('d1', { shard: 4, epoch }, 7));
    assert.equal(roundTrips.transactions, 1);
    assert.equal(await count('SELECT count(*) AS n FROM test_ledger WHERE actor_id = $1', ['d1']), 1);
  });
});
