// An activation replays its journal tail through the behaviour's evolveAll
// when it has one (one fold for the whole tail), on the embedded runtime over
// Postgres: the state is the one the turns left, and evolve is not called
// event by event. An activation from a snapshot gives the stored state to the
// behaviour's fromSnapshot first (a state that is no JSON value comes back).
import assert from 'node:assert/strict';
import type { ActorRuntime } from '../../actors';
import type { ActorBehavior, ActorKind } from '../../src/ports/actor-behavior';
import { eventually } from '../support/cluster-harness';
import { startEmbeddedTestRuntime } from '../support/embedded-test-runtime';
import { createTestDatabase, type TestDatabase } from '../support/database';

type ListCommand = { type: 'append'; items: string[] } | { type: 'get' };
type ListEvent = { type: 'appended'; item: string };

const folds = { evolve: 0, evolveAll: [] as number[] };

const listBehavior: ActorBehavior<string[], ListCommand, ListEvent, string[]> = {
  kind: 'list',
  initialState: () => [],
  decide: (state, command) =>
    command.type === 'get' ? { reply: state } : { events: command.items.map((item) => ({ type: 'appended' as const, item })), reply: [...state, ...command.items], passivate: true },
  evolve(state, event) {
    folds.evolve += 1;
    return [...state, event.item];
  },
  evolveAll(state, events) {
    folds.evolveAll.push(events.length);
    return [...state, ...events.map((event) => event.item)];
  },
};

const listKind: ActorKind = { behavior: listBehavior, effects: {} };

/** A state that is no JSON value: a Map, stored through toJSON and made a Map again by fromSnapshot. */
class Tally {
  constructor(readonly counts = new Map<string, number>()) {}

  toJSON(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }
}

type TallyCommand = { type: 'count'; word: string } | { type: 'get'; word: string };
type TallyEvent = { type: 'counted'; word: string };

const revived: unknown[] = [];

const tallyBehavior: ActorBehavior<Tally, TallyCommand, TallyEvent, number> = {
  kind: 'tally',
  initialState: () => new Tally(),
  decide: (state, command) =>
    command.type === 'get'
      ? { reply: state.counts.get(command.word) ?? 0 }
      // A snapshot after every count, then passivate: the next ask activates the actor from that snapshot alone.
      : { events: [{ type: 'counted', word: command.word }], reply: (state.counts.get(command.word) ?? 0) + 1, snapshot: true, passivate: true },
  evolve: (state, event) => new Tally(new Map(state.counts).set(event.word, (state.counts.get(event.word) ?? 0) + 1)),
  fromSnapshot(stored) {
    revived.push(stored);
    return new Tally(new Map(Object.entries(stored as Record<string, number>)));
  },
};

const tallyKind: ActorKind = { behavior: tallyBehavior, effects: {} };

describe('actor runtime: an activation replays its journal tail in one fold', () => {
  let database: TestDatabase;
  let runtime: ActorRuntime;

  before(async () => {
    database = await createTestDatabase();
    // No snapshot before the tail: the whole journal is replayed.
    ({ runtime } = await startEmbeddedTestRuntime(database.url, { shardCount: 4, snapshotEvery: 1000 }, { kinds: [listKind, tallyKind] }));
  });

  after(async () => {
    await runtime.stop();
    await database.drop();
  });

  it('folds the tail through evolveAll once, to the state the turns left', async () => {
    for (const items of [['a', 'b'], ['c'], ['d', 'e', 'f']]) {
      await runtime.ask('list', 'replayed', { type: 'append', items });
      // Each turn asks to passivate: the next ask activates the actor from its journal.
      await eventually(() => runtime.activeActors() === 0, 'the list passivated');
    }
    folds.evolve = 0;
    folds.evolveAll = [];
    assert.deepEqual(await runtime.ask('list', 'replayed', { type: 'get' }), ['a', 'b', 'c', 'd', 'e', 'f']);
    assert.deepEqual(folds.evolveAll, [6], 'one fold of the six events of the three entries');
    assert.equal(folds.evolve, 0);
  });

  it('makes a snapshot\'s state the behaviour\'s own again through fromSnapshot before the actor goes on', async () => {
    const others = runtime.activeActors();
    for (const word of ['apple', 'pear', 'apple']) {
      await runtime.ask('tally', 'words', { type: 'count', word });
      await eventually(() => runtime.activeActors() === others, 'the tally passivated');
    }
    // Each activation after the first read a snapshot: stored as toJSON made it, revived before deciding.
    assert.deepEqual(revived, [{ apple: 1 }, { apple: 1, pear: 1 }]);
    assert.equal(await runtime.ask('tally', 'words', { type: 'get', word: 'apple' }), 2);
  });
});
