// Groups of turns (entity.actor.ts handleGroup), on the embedded runtime over
// Postgres: the asks queued behind an actor's turn while it waits for its
// commit are decided in mailbox order and written together, each with its own
// journal entry, and answered only once that write has committed. A group's
// reminders keep the last change of each, and a group whose write fails
// writes nothing and answers every ask of it with the failure.
import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import type { ActorRuntime } from '../../actors';
import { persistenceKey } from '../../src/sharding/addressing';
import type { CounterReply } from '../support/cluster-counter';
import { startEmbeddedRuntimeFixture, type EmbeddedRuntimeFixture } from '../support/embedded-test-runtime';
import type { TestDatabase } from '../support/database';
import { holdShardOf as holdShard } from '../support/shard-lock';

const SHARDS = 8;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('actor runtime: the turns of queued messages written as one group', function () {
  this.timeout(30_000);
  let fixture: EmbeddedRuntimeFixture;
  let database: TestDatabase;
  let dataSource: DataSource;
  let runtime: ActorRuntime;

  before(async () => {
    fixture = await startEmbeddedRuntimeFixture({ shardCount: SHARDS });
    ({ database, dataSource, runtime } = fixture);
  });

  after(() => fixture.close());

  const holdShardOf = (actorId: string) => holdShard(database.url, actorId, SHARDS);

  const journal = async (actorId: string) =>
    (await dataSource.query(
      "SELECT sequence_nr::int AS seq, payload->>'cid' AS cid, created_at FROM actor_journal WHERE persistence_key = $1 ORDER BY sequence_nr",
      [persistenceKey('counter', actorId)],
    )) as Array<{ seq: number; cid: string; created_at: Date }>;

  it('writes the asks queued behind a waiting turn in one statement, each with its own entry, and answers them once it commits', async () => {
    const actorId = 'grouped';
    await runtime.ask('counter', actorId, { type: 'add', by: 0 });
    const hold = await holdShardOf(actorId);
    const answered: number[] = [];
    // The first waits on the lock alone; the other 19 queue behind it meanwhile.
    const asks = Array.from({ length: 20 }, (_, index) =>
      runtime.ask<CounterReply>('counter', actorId, { type: 'add', by: 1 }, { commandId: `grouped-${index}` }).then((reply) => {
        answered.push(index);
        return reply.value;
      }),
    );
    await sleep(300);
    assert.deepEqual(answered, [], 'no ask is answered before its turn is written');
    await hold.release();
    assert.deepEqual(await Promise.all(asks), Array.from({ length: 20 }, (_, index) => index + 1), 'each ask saw the turns queued before it');
    const entries = await journal(actorId);
    assert.deepEqual(entries.map((entry) => entry.seq), Array.from({ length: 21 }, (_, index) => index + 1));
    assert.deepEqual(entries.slice(1).map((entry) => entry.cid), Array.from({ length: 20 }, (_, index) => `grouped-${index}`));
    // One statement, one transaction: the 19 queued entries share its start time; the first ask's differs.
    assert.equal(new Set(entries.slice(2).map((entry) => entry.created_at.getTime())).size, 1, 'the queued turns were written together');
    assert.notEqual(entries[1].created_at.getTime(), entries[2].created_at.getTime());
    assert.equal((await runtime.ask<CounterReply>('counter', actorId, { type: 'get' })).value, 20);
  });

  it('keeps the last change of each reminder that a group sets and cancels', async () => {
    const actorId = 'grouped-reminders';
    await runtime.ask('counter', actorId, { type: 'add', by: 0 });
    const hold = await holdShardOf(actorId);
    const asks = [
      runtime.ask('counter', actorId, { type: 'add', by: 1 }),
      runtime.ask('counter', actorId, { type: 'remind', name: 'a', inMs: 3_600_000 }),
      runtime.ask('counter', actorId, { type: 'remind', name: 'b', inMs: 3_600_000 }),
      runtime.ask('counter', actorId, { type: 'cancelReminder', name: 'a' }),
      runtime.ask('counter', actorId, { type: 'remind', name: 'b', inMs: 7_200_000 }),
    ];
    await sleep(200);
    await hold.release();
    await Promise.all(asks);
    const reminders = (await dataSource.query(
      "SELECT name, round(EXTRACT(EPOCH FROM due_at - now()) / 3600)::int AS hours FROM actor_reminders WHERE kind = 'counter' AND actor_id = $1 ORDER BY name",
      [actorId],
    )) as Array<{ name: string; hours: number }>;
    assert.deepEqual(reminders, [{ name: 'b', hours: 2 }]);
  });

  it('writes nothing of a group whose write fails, and answers each of its asks with the failure', async () => {
    const actorId = 'grouped-failing';
    await runtime.ask('counter', actorId, { type: 'add', by: 1 });
    // A journal insert that fails for one command id: the group holding it cannot be written.
    await dataSource.query(`
      CREATE FUNCTION refuse_poisoned_entry() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.payload->>'cid' = 'poisoned' THEN RAISE EXCEPTION 'poisoned entry refused'; END IF;
        RETURN NEW;
      END $$`);
    await dataSource.query('CREATE TRIGGER refuse_poisoned_entry BEFORE INSERT ON actor_journal FOR EACH ROW EXECUTE FUNCTION refuse_poisoned_entry()');
    try {
      const hold = await holdShardOf(actorId);
      const first = runtime.ask<CounterReply>('counter', actorId, { type: 'add', by: 10 }, { commandId: 'before-group' });
      await sleep(100);
      const grouped = ['grouped-a', 'poisoned', 'grouped-b'].map((commandId) =>
        runtime.ask<CounterReply>('counter', actorId, { type: 'add', by: 100 }, { commandId, timeoutMs: 2000 }).then(
          () => 'answered',
          (error: Error) => error.message,
        ),
      );
      await sleep(200);
      await hold.release();
      assert.equal((await first).value, 11, 'the turn ahead of the group is written');
      // Alone, grouped-a would have been written and answered: in the group it shares the poisoned write's fate.
      assert.deepEqual(await Promise.all(grouped), ['internal error', 'internal error', 'internal error']);
      assert.deepEqual((await journal(actorId)).map((entry) => entry.cid).filter((cid) => cid?.startsWith('grouped') || cid === 'poisoned'), []);
    } finally {
      await dataSource.query('DROP TRIGGER refuse_poisoned_entry ON actor_journal');
      await dataSource.query('DROP FUNCTION refuse_poisoned_entry()');
    }
    // The actor stopped with the failed group folded in its memory: the next activation reads the journal.
    assert.equal((await runtime.ask<CounterReply>('counter', actorId, { type: 'get' })).value, 11);
    assert.equal((await runtime.ask<CounterReply>('counter', actorId, { type: 'add', by: 1 })).value, 12);
  });
});
