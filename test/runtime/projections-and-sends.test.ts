// Projections and transactional sends on the embedded runtime over Postgres:
// a behaviour's read-model rows are written in its turn's fenced transaction
// (visible as soon as the ask is answered, never written by a refused turn),
// and durable commands sent by a turn reach their receivers once each, in
// send order per receiver.
import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import type { ActorRuntime } from '../../actors';
import type { ActorBehavior, ActorKind } from '../../src/ports/actor-behavior';
import { shardOf } from '../../src/sharding/fnv1a32';
import { createDataSource } from '../../persistence/data-source';
import { eventually } from '../support/cluster-harness';
import { startEmbeddedTestRuntime } from '../support/embedded-test-runtime';
import { createTestDatabase, type TestDatabase } from '../support/database';

interface LedgerState {
  entries: number[];
}
type LedgerCommand = { type: 'append'; amount: number } | { type: 'forward'; to: string[]; amounts: number[] } | { type: 'get' };
type LedgerChange = { amount: number; position: number };

/** A ledger: each appended amount is an event and a row of `test_ledger_rows` (its read model). */
const ledgerBehavior: ActorBehavior<LedgerState, LedgerCommand, { amount: number }, LedgerState, LedgerChange> = {
  kind: 'ledger',
  initialState: () => ({ entries: [] }),
  decide(state, command) {
    switch (command.type) {
      case 'append':
        return {
          events: [{ amount: command.amount }],
          project: [{ amount: command.amount, position: state.entries.length + 1 }],
          reply: { entries: [...state.entries, command.amount] },
        };
      case 'forward':
        return { send: command.to.flatMap((to) => command.amounts.map((amount) => ({ kind: 'ledger', id: to, command: { type: 'append', amount } }))), reply: state };
      case 'get':
        return { reply: state };
    }
  },
  evolve: (state, event) => ({ entries: [...state.entries, event.amount] }),
};

const ledgerKind: ActorKind = {
  behavior: ledgerBehavior,
  projector: async (sql, changes) => {
    await sql.query('INSERT INTO test_ledger_rows (ledger_id, position, amount) SELECT * FROM unnest($1::text[], $2::int[], $3::int[])', [
      changes.map((change) => change.actorId),
      changes.map((change) => (change.change as LedgerChange).position),
      changes.map((change) => (change.change as LedgerChange).amount),
    ]);
  },
};

describe('actor runtime: projections and transactional sends', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let runtime: ActorRuntime;

  before(async () => {
    database = await createTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 4 });
    await dataSource.initialize();
    await dataSource.query('CREATE TABLE test_ledger_rows (ledger_id text NOT NULL, position int NOT NULL, amount int NOT NULL, PRIMARY KEY (ledger_id, position))');
    ({ runtime } = await startEmbeddedTestRuntime(database.url, { shardCount: 8, reminderPollMs: 50 }, { kinds: [ledgerKind] }));
  });

  after(async () => {
    await runtime.stop();
    await dataSource.destroy();
    await database.drop();
  });

  const rows = async (id: string) =>
    (await dataSource.query('SELECT amount FROM test_ledger_rows WHERE ledger_id = $1 ORDER BY position', [id])).map((row: { amount: number }) => row.amount);

  it('writes the read-model rows in the turn\'s transaction: visible when the ask is answered', async () => {
    const replies = await Promise.all([10, 20, 30].map((amount) => runtime.ask('ledger', 'projected', { type: 'append', amount })));
    assert.equal(replies.length, 3);
    assert.deepEqual((await rows('projected')).sort(), [10, 20, 30]);
  });

  it('writes no read-model row for a turn refused by its fence', async () => {
    await runtime.ask('ledger', 'fenced-projection', { type: 'append', amount: 1 });
    await dataSource.query('UPDATE actor_shards SET epoch = epoch + 1 WHERE shard = $1', [shardOf('fenced-projection', 8)]);
    await assert.rejects(runtime.ask('ledger', 'fenced-projection', { type: 'append', amount: 2 }, { timeoutMs: 300 }));
    assert.deepEqual(await rows('fenced-projection'), [1]);
  });

  it('delivers a turn\'s sends once each, in send order per receiver', async () => {
    const amounts = Array.from({ length: 20 }, (_, i) => i + 1);
    await runtime.ask('ledger', 'sender', { type: 'forward', to: ['receiver-a', 'receiver-b'], amounts });
    for (const receiver of ['receiver-a', 'receiver-b']) {
      await eventually(async () => (await runtime.ask<LedgerState>('ledger', receiver, { type: 'get' })).entries.length === 20, `${receiver} got every command`);
      assert.deepEqual((await runtime.ask<LedgerState>('ledger', receiver, { type: 'get' })).entries, amounts);
      assert.deepEqual(await rows(receiver), amounts);
    }
    const [{ pending }] = await dataSource.query("SELECT count(*)::int AS pending FROM actor_commands WHERE actor_id LIKE 'receiver-%' AND processed_at IS NULL");
    assert.equal(pending, 0);
  });

  it('delivers stored sends whose notification was lost, in order, when the receiver activates', async () => {
    const shard = shardOf('late-receiver', 8);
    // Sends committed by a sender whose node died before it could notify the receiver: only the rows exist.
    for (const amount of [5, 6, 7]) {
      await dataSource.query("INSERT INTO actor_commands (id, shard, kind, actor_id, payload) VALUES ($1, $2, 'ledger', 'late-receiver', $3)", [
        `late-${amount}`,
        shard,
        JSON.stringify({ type: 'append', amount }),
      ]);
    }
    await eventually(async () => (await rows('late-receiver')).length === 3, 'the poll woke the receiver');
    assert.deepEqual(await rows('late-receiver'), [5, 6, 7]);
  });
});
