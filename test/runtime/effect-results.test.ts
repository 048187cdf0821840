// How an effect's outcome reaches its actor, on the embedded runtime over
// Postgres: stored first as a durable command (the default), or handed
// straight to the actor's mailbox (`durableResult: false`, for effects the
// outside world de-duplicates by id): applied once either way, and the second
// way writes no command row at all.
import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import type { ActorRuntime } from '../../actors';
import type { ActorBehavior, ActorKind } from '../../src/ports/actor-behavior';
import { eventually } from '../support/cluster-harness';
import { startEmbeddedRuntimeFixture, type EmbeddedRuntimeFixture } from '../support/embedded-test-runtime';

interface TallyState {
  results: number[];
  running: number;
}
type TallyCommand = { type: 'run'; value: number; durable: boolean; transient?: string } | { type: 'get' };
type TallyEvent = { type: 'started' } | { type: 'result'; value: number };

const tallyBehavior: ActorBehavior<TallyState, TallyCommand, TallyEvent, TallyState> = {
  kind: 'tally',
  initialState: () => ({ results: [], running: 0 }),
  decide(state, command) {
    if (command.type === 'get') return { reply: state };
    return {
      events: [{ type: 'started' }],
      effects: {
        start: [{
          name: 'double', input: { value: command.value }, timeoutMs: 5000,
          ...(command.durable ? {} : { durableResult: false }), ...(command.transient ? { transientInput: command.transient } : {}),
        }],
      },
      reply: state,
    };
  },
  onEffectResult(_state, outcome) {
    return { events: outcome.ok ? [{ type: 'result', value: outcome.value as number }] : [] };
  },
  evolve: (state, event) => (event.type === 'started' ? { ...state, running: state.running + 1 } : { results: [...state.results, event.value], running: state.running - 1 }),
};

const tallyKind: ActorKind = {
  behavior: tallyBehavior,
  // With a transient input, the answer shows it reached the run: its length is added.
  effects: { double: async (input: { value: number }, context) => input.value * 2 + ((context.transientInput as string | undefined)?.length ?? 0) },
};

describe('actor runtime: effect outcomes, stored or handed over', () => {
  let fixture: EmbeddedRuntimeFixture;
  let dataSource: DataSource;
  let runtime: ActorRuntime;

  before(async () => {
    fixture = await startEmbeddedRuntimeFixture({ shardCount: 8 }, { kinds: [tallyKind] });
    ({ dataSource, runtime } = fixture);
  });

  after(() => fixture.close());

  const commandRows = async (actorId: string) =>
    (await dataSource.query("SELECT processed_at IS NOT NULL AS processed FROM actor_commands WHERE actor_id = $1 AND id LIKE 'fx:%'", [actorId])) as Array<{ processed: boolean }>;

  it('stores a durable outcome as a command, applies it once and marks it processed', async () => {
    await runtime.ask('tally', 'stored', { type: 'run', value: 21, durable: true });
    await eventually(async () => (await runtime.ask<TallyState>('tally', 'stored', { type: 'get' })).results.length === 1, 'the outcome applied');
    assert.deepEqual((await runtime.ask<TallyState>('tally', 'stored', { type: 'get' })).results, [42]);
    await eventually(async () => (await commandRows('stored')).every((row) => row.processed) && (await commandRows('stored')).length === 1, 'one processed command row');
  });

  it('hands an effect its transient input, which neither the journal nor the stored outcome keeps', async () => {
    const transient = 'TRANSIENT-INPUT-'.repeat(4);
    await runtime.ask('tally', 'transient', { type: 'run', value: 1, durable: true, transient });
    await eventually(async () => (await runtime.ask<TallyState>('tally', 'transient', { type: 'get' })).results.length === 1, 'the outcome applied');
    assert.deepEqual((await runtime.ask<TallyState>('tally', 'transient', { type: 'get' })).results, [2 + transient.length]);
    const [{ journaled }] = await dataSource.query("SELECT count(*)::int AS journaled FROM actor_journal WHERE persistence_key LIKE '%transient%'");
    assert.ok(journaled >= 2, 'the start and the outcome were journaled');
    const kept = await dataSource.query("SELECT 1 FROM actor_journal WHERE payload::text LIKE '%TRANSIENT-INPUT%' UNION ALL SELECT 1 FROM actor_commands WHERE payload::text LIKE '%TRANSIENT-INPUT%'");
    assert.deepEqual(kept, []);
  });

  it('hands a durableResult:false outcome to the actor without storing it, applied once', async () => {
    for (const value of [1, 2, 3]) await runtime.ask('tally', 'direct', { type: 'run', value, durable: false });
    await eventually(async () => (await runtime.ask<TallyState>('tally', 'direct', { type: 'get' })).results.length === 3, 'every outcome applied');
    const state = await runtime.ask<TallyState>('tally', 'direct', { type: 'get' });
    assert.deepEqual([...state.results].sort(), [2, 4, 6]);
    assert.equal(state.running, 0);
    assert.deepEqual(await commandRows('direct'), [], 'no command row was written');
  });
});
