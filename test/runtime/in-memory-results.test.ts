// Effect outcomes handed over in memory (`durableResult: false`) and planned
// stops, on the embedded runtime over real Postgres (issue 24, items 1 and 2):
// an outcome that reaches its actor after it stopped, idle passivation while
// effects run, a failed turn write carrying an outcome, and a stop while an
// effect runs whose outcome starts another. Each effect here waits on a gate
// the test opens, and counts its runs: an outcome lost or an effect taken for
// interrupted shows as a second run.
import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import { runtimeMetrics, type ActorRuntime, type RuntimeLogger, type RuntimeOptions } from '../../actors';
import type { ActorBehavior, ActorKind } from '../../src/ports/actor-behavior';
import { createDataSource } from '../../persistence/data-source';
import { eventually, silentLogger } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { startEmbeddedTestRuntime } from '../support/embedded-test-runtime';
import { holdShardOf as holdShard } from '../support/shard-lock';

const SHARDS = 8;
const OPTIONS: Partial<RuntimeOptions> = { shardCount: SHARDS, passivateAfterMs: 150, reminderPollMs: 50, outboxPollMs: 50 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface GatedState {
  /** `<effect id>:<attempt>` of each outcome applied, in order. */
  applied: string[];
  touched: number;
}
type GatedCommand = { type: 'run'; effectId: string; then?: string } | { type: 'touch' } | { type: 'get' };
type GatedEvent = { type: 'applied'; outcome: string } | { type: 'touched' };

/** Runs per effect id in this process, and the gates the runs wait on. */
const runs = new Map<string, number>();
const gates = new Map<string, { opened: Promise<void>; open: () => void }>();

function gate(effectId: string): { opened: Promise<void>; open: () => void } {
  let entry = gates.get(effectId);
  if (!entry) {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    gates.set(effectId, (entry = { opened, open }));
  }
  return entry;
}

const gatedBehavior: ActorBehavior<GatedState, GatedCommand, GatedEvent, GatedState> = {
  kind: 'gated',
  initialState: () => ({ applied: [], touched: 0 }),
  decide(state, command) {
    if (command.type === 'get') return { reply: state };
    if (command.type === 'touch') return { events: [{ type: 'touched' }], reply: state };
    // `then`: the effect to start when this one's outcome is applied.
    return { effects: { start: [{ id: command.effectId, name: 'gated', input: { then: command.then ?? null }, timeoutMs: 60_000, durableResult: false }] }, reply: state };
  },
  onEffectResult(_state, outcome) {
    const then = (outcome.input as { then: string | null }).then;
    return {
      events: [{ type: 'applied', outcome: `${outcome.id}:${outcome.attempt}` }],
      ...(then ? { effects: { start: [{ id: then, name: 'gated', input: { then: null }, timeoutMs: 60_000, durableResult: false }] } } : {}),
    };
  },
  evolve: (state, event) => (event.type === 'applied' ? { ...state, applied: [...state.applied, event.outcome] } : { ...state, touched: state.touched + 1 }),
};

const gatedKind: ActorKind = {
  behavior: gatedBehavior,
  effects: {
    async gated(_input, context) {
      runs.set(context.effectId, (runs.get(context.effectId) ?? 0) + 1);
      await gate(context.effectId).opened;
      return null;
    },
  },
};

/** The errors of the turns that stopped an actor, as the runtime logged them (the database's message included). */
const failedTurns: string[] = [];
const crashRecorder: RuntimeLogger = {
  ...silentLogger,
  warn(fields, message) {
    const error = (fields as { err?: Error & { cause?: unknown } }).err;
    if (message === 'actor stopped after a failed turn') failedTurns.push(`${error?.message} ${String((error?.cause as Error | undefined)?.message)}`);
  },
};

/** Messages accepted by this process's actors and not yet taken by them (a gauge: compare readings). */
async function mailboxDepth(): Promise<number> {
  return (await runtimeMetrics.mailboxDepth.get()).values.reduce((sum, value) => sum + value.value, 0);
}

describe('actor runtime: outcomes handed over in memory, and planned stops (issue 24)', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  let dataSource: DataSource;
  let runtime: ActorRuntime;

  const start = async () => (await startEmbeddedTestRuntime(database.url, OPTIONS, { kinds: [gatedKind], logger: crashRecorder })).runtime;
  const ask = (id: string, command: GatedCommand, commandId?: string) => runtime.ask<GatedState>('gated', id, command, commandId ? { commandId, timeoutMs: 2000 } : undefined);
  const applied = async (id: string) => (await ask(id, { type: 'get' })).applied;

  before(async () => {
    database = await createTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 2 });
    await dataSource.initialize();
    // A journal insert that fails for command ids starting with `poisoned`: the turns written with one cannot be written.
    // Its error names the events of every turn the statement carried, so a test sees what the failed write held.
    await dataSource.query(`
      CREATE FUNCTION refuse_poisoned_entry() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM inserted WHERE payload->>'cid' LIKE 'poisoned%') THEN
          RAISE EXCEPTION 'poisoned write refused, carrying events %', (SELECT string_agg(payload->>'events', ' ') FROM inserted);
        END IF;
        RETURN NULL;
      END $$`);
    await dataSource.query('CREATE TRIGGER refuse_poisoned_entry AFTER INSERT ON actor_journal REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION refuse_poisoned_entry()');
    runtime = await start();
  });

  after(async () => {
    await runtime.stop();
    await dataSource.destroy();
    await database.drop();
  });

  const holdShardOf = (actorId: string) => holdShard(database.url, actorId, SHARDS);

  it('applies an outcome that arrives after its actor stopped, without starting a second attempt first', async () => {
    await ask('late', { type: 'run', effectId: 'late-1' });
    await eventually(() => runs.get('late-1') === 1, 'the effect runs');
    // A failed turn write stops the actor while its effect runs.
    await assert.rejects(ask('late', { type: 'touch' }, 'poisoned-late'));
    gate('late-1').open();
    await eventually(async () => (await applied('late')).length > 0, 'the outcome applied');
    assert.deepEqual(await applied('late'), ['late-1:1']);
    assert.equal(runs.get('late-1'), 1, 'run once');
  });

  it('keeps an actor active past its idle time while its effect runs, then passivates it', async () => {
    await ask('idle', { type: 'run', effectId: 'idle-1' });
    await eventually(() => runs.get('idle-1') === 1, 'the effect runs');
    // Every other actor of this suite passivates after 150 ms idle.
    await sleep(1000);
    assert.equal(runtime.activeActors(), 1, 'the actor waiting for its effect is still active');
    gate('idle-1').open();
    await eventually(() => runtime.activeActors() === 0, 'the actor passivates once its effect is done');
    assert.deepEqual(await applied('idle'), ['idle-1:1']);
    assert.equal(runs.get('idle-1'), 1);
  });

  it('applies an outcome whose turn was in a failed write, without running its effect again', async () => {
    await ask('failed-write', { type: 'run', effectId: 'failed-write-1' });
    await eventually(() => runs.get('failed-write-1') === 1, 'the effect runs');
    const hold = await holdShardOf('failed-write');
    // The actor waits on this turn's write while the outcome and a poisoned ask queue behind it: they are written as one group.
    const waiting = ask('failed-write', { type: 'touch' }, 'before-group');
    await eventually(async () => (await dataSource.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).length === 1, 'the turn waits on its write');
    // The gauge is the process's: counted from here (other suites in this process may have moved it).
    const depth = await mailboxDepth();
    gate('failed-write-1').open();
    await eventually(async () => (await mailboxDepth()) === depth + 1, 'the outcome queued behind the waiting turn');
    const poisoned = ask('failed-write', { type: 'touch' }, 'poisoned-group').then(
      () => 'answered',
      (error: Error) => error.message,
    );
    await eventually(async () => (await mailboxDepth()) === depth + 2, 'the poisoned ask queued behind the outcome');
    const failedBefore = failedTurns.length;
    await hold.release();
    await waiting;
    assert.equal(await poisoned, 'internal error', 'the group carrying the outcome failed');
    const failed = failedTurns.slice(failedBefore);
    assert.equal(failed.length, 1, 'one failed turn stopped the actor');
    assert.match(failed[0], /poisoned write refused, carrying events .*"outcome": ?"failed-write-1:1"/, 'the failed write carried the outcome');
    // No outside message: the outcome is applied by a new activation.
    await eventually(async () => (await dataSource.query("SELECT 1 FROM actor_work WHERE actor_id = 'failed-write'")).length === 0, 'the effect ended');
    assert.deepEqual(await applied('failed-write'), ['failed-write-1:1']);
    assert.equal(runs.get('failed-write-1'), 1, 'run once');
  });

  it('lets an effect running at a stop finish and applies its outcome; the effect that outcome starts is first run by the next start', async () => {
    await ask('stopped', { type: 'run', effectId: 'stopped-1', then: 'stopped-2' });
    await eventually(() => runs.get('stopped-1') === 1, 'the effect runs');
    gate('stopped-2').open();
    const stopping = runtime.stop();
    await sleep(200);
    gate('stopped-1').open();
    await stopping;
    assert.equal(runs.get('stopped-1'), 1);
    assert.equal(runs.get('stopped-2'), undefined, 'the follow-on effect was not started on the stopping node');
    runtime = await start();
    await eventually(() => runs.get('stopped-2') === 1, 'the next start runs the follow-on effect');
    await eventually(async () => (await applied('stopped')).length === 2, 'both outcomes applied');
    assert.deepEqual(await applied('stopped'), ['stopped-1:1', 'stopped-2:2']);
    assert.equal(runs.get('stopped-1'), 1, 'the first effect ran once');
    assert.equal(runs.get('stopped-2'), 1, 'the follow-on effect ran once');
  });
});
