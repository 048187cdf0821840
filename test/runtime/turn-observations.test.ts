// A decision's observations (the facts the node's metrics count) reach the
// kind's `observe` once per committed turn, on a real Postgres database: in
// order, also for turns written as one group, never again when the actor
// replays its journal after a restart, and never for a turn whose write failed.
import assert from 'node:assert/strict';
import type { ActorRuntime } from '../../actors';
import type { ActorBehavior, ActorKind } from '../../src/ports/actor-behavior';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { startEmbeddedTestRuntime } from '../support/embedded-test-runtime';

type TallyCommand = { type: 'add'; by: number; failWrite?: boolean } | { type: 'get' };
type TallyEvent = { type: 'added'; by: number };

const tallyBehavior: ActorBehavior<number, TallyCommand, TallyEvent, number, { failWrite: boolean }> = {
  kind: 'tally',
  initialState: () => 0,
  decide(state, command) {
    if (command.type === 'get') return { reply: state };
    return {
      events: [{ type: 'added', by: command.by }],
      reply: state + command.by,
      project: [{ failWrite: command.failWrite === true }],
      observations: [{ added: command.by }],
    };
  },
  evolve: (state, event) => state + event.by,
};

/** What `observe` was handed, in order, across the runtimes of one test. */
const observed: unknown[] = [];

const tallyKind: ActorKind = {
  behavior: tallyBehavior,
  // A change asking for it fails the turn's write, as a database refusal would.
  projector: async (_sql, changes) => {
    if (changes.some(({ change }) => (change as { failWrite: boolean }).failWrite)) throw new Error('the write is refused');
  },
  observe: (observations) => observed.push(...observations),
};

describe('turn observations (the metrics of committed turns)', () => {
  let database: TestDatabase;
  let runtime: ActorRuntime;
  const start = async () => (await startEmbeddedTestRuntime(database.url, { shardCount: 4, passivateAfterMs: 60_000 }, { kinds: [tallyKind] })).runtime;
  const ask = (id: string, command: TallyCommand) => runtime.ask<number>('tally', id, command);

  before(async () => {
    database = await createTestDatabase();
    runtime = await start();
  });

  after(async () => {
    await runtime?.stop();
    await database?.drop();
  });

  it('hands each committed turn\'s observations to the kind once, in order, turns written as a group included', async () => {
    observed.length = 0;
    for (const by of [1, 2, 3]) await ask('ordered', { type: 'add', by });
    assert.deepEqual(observed, [{ added: 1 }, { added: 2 }, { added: 3 }]);
    // Asks queued behind one another are decided and written as one group: each turn's observation still comes once.
    observed.length = 0;
    const replies = await Promise.all(Array.from({ length: 20 }, (_, index) => ask('grouped', { type: 'add', by: index + 1 })));
    assert.equal(Math.max(...replies), 210);
    assert.deepEqual((observed as Array<{ added: number }>).map((fact) => fact.added).sort((a, b) => a - b), Array.from({ length: 20 }, (_, index) => index + 1));
  });

  it('counts nothing when an actor replays its journal after a restart', async () => {
    await ask('replayed', { type: 'add', by: 5 });
    await runtime.stop();
    observed.length = 0;
    runtime = await start();
    assert.equal(await ask('replayed', { type: 'get' }), 5, 'the state came back from the journal');
    assert.deepEqual(observed, []);
  });

  it('counts nothing for a turn whose write failed', async () => {
    observed.length = 0;
    await assert.rejects(ask('refused', { type: 'add', by: 7, failWrite: true }));
    assert.equal(await ask('refused', { type: 'get' }), 0, 'the turn left nothing');
    await ask('refused', { type: 'add', by: 1 });
    assert.deepEqual(observed, [{ added: 1 }]);
  });
});
