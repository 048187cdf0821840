// Durable commands an actor's turn sends to an actor of the same node, on the
// embedded runtime over Postgres: each is handed to the receiver with its
// notification (no read of the receiver's pending list, no bus round trip),
// applied once and in send order; a command whose decide failed with a
// retryable error holds the later ones behind it until it is applied (by the
// next apply of the pending list or the command poller); and
// ActorRuntime.activate readies an actor so the next message finds its
// recovery read done.
import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import type { ActorRuntime, RuntimeOptions } from '../../actors';
import { ActorClient } from '../../actors/runtime/actor-client';
import { UnavailableError } from '../../src/errors';
import type { ActorBehavior, ActorKind } from '../../src/ports/actor-behavior';
import { isRetryable } from '../../src/sharding/sharding.errors';
import { createDataSource } from '../../persistence/data-source';
import { ActorCommandRepository } from '../../persistence/runtime/actor-command.repository';
import { ActorJournalRepository } from '../../persistence/runtime/actor-journal.repository';
import { eventually } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { startEmbeddedTestRuntime } from '../support/embedded-test-runtime';

// Actors stay active through every test (the poller's retry comes 2 s after a command was written);
// the poller runs often, so a command left behind is retried as soon as it is old enough.
const OPTIONS: Partial<RuntimeOptions> = { shardCount: 8, passivateAfterMs: 30_000, reminderPollMs: 50, outboxPollMs: 50 };

/** A retryable failure (isRetryable): the runtime keeps the stored command for a later apply. */
class NotYetError extends UnavailableError {
  readonly retryable = true;
}

interface SinkState {
  applied: string[];
}
type SinkCommand = { type: 'apply'; tag: string } | { type: 'get' };

/** Every decide of a sink command, in call order: the tag and whether it succeeded. */
const decided: Array<{ receiver: string; tag: string; ok: boolean }> = [];
/** Tags whose decide fails (retryably) while they are in the set. */
const blocked = new Set<string>();
/** Tags whose decide fails (retryably) once, the first time. */
const failOnce = new Set<string>();

/** The receiver: appends each applied tag to its state. */
const sinkBehavior: ActorBehavior<SinkState, SinkCommand, { tag: string }, SinkState> = {
  kind: 'sink',
  initialState: () => ({ applied: [] }),
  decide(state, command, context) {
    if (command.type === 'get') return { reply: state };
    if (blocked.has(command.tag) || failOnce.delete(command.tag)) {
      decided.push({ receiver: context.id, tag: command.tag, ok: false });
      throw new NotYetError(`${command.tag} cannot be applied yet`);
    }
    decided.push({ receiver: context.id, tag: command.tag, ok: true });
    return { events: [{ tag: command.tag }], reply: { applied: [...state.applied, command.tag] } };
  },
  evolve: (state, event) => ({ applied: [...state.applied, event.tag] }),
};

type SourceCommand = { type: 'send'; sends: Array<{ to: string; tag: string }> };

/** The sender: one turn sends `apply` commands to sinks, in the given order. */
const sourceBehavior: ActorBehavior<Record<string, never>, SourceCommand, never, null> = {
  kind: 'source',
  initialState: () => ({}),
  decide: (_state, command) => ({ send: command.sends.map((send) => ({ kind: 'sink', id: send.to, command: { type: 'apply', tag: send.tag } })), reply: null }),
  evolve: (state) => state,
};

const KINDS: ActorKind[] = [{ behavior: sinkBehavior }, { behavior: sourceBehavior }];

/** Counts the calls of a prototype method whose arguments match, until restored. */
function spy<T extends object, K extends keyof T & string>(proto: T, name: K, matches: (args: unknown[]) => boolean): { calls: number; restore(): void } {
  const original = proto[name] as unknown as (...args: unknown[]) => unknown;
  const counter = {
    calls: 0,
    restore: () => {
      (proto as Record<string, unknown>)[name] = original;
    },
  };
  (proto as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
    if (matches(args)) counter.calls++;
    return original.apply(this, args);
  };
  return counter;
}

describe('actor runtime: commands handed over to an actor of the same node', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let runtime: ActorRuntime;
  const restores: Array<() => void> = [];

  const startRuntime = async () => (await startEmbeddedTestRuntime(database.url, OPTIONS, { kinds: KINDS })).runtime;
  const sendFrom = (source: string, sends: Array<{ to: string; tag: string }>) => runtime.ask('source', source, { type: 'send', sends });
  const to = (receiver: string, tags: string[]) => tags.map((tag) => ({ to: receiver, tag }));
  // Asked after the sender's ask returned: the hand-overs reached the receiver's mailbox first.
  const applied = async (receiver: string) => (await runtime.ask<SinkState>('sink', receiver, { type: 'get' })).applied;

  /** Counts listPending (its pending list read), readActivation (its recovery read) and bus notifications of one sink. */
  function watch(receiver: string) {
    const spies = {
      listPending: spy(ActorCommandRepository.prototype, 'listPending', ([kind, id]) => kind === 'sink' && id === receiver),
      readActivation: spy(ActorJournalRepository.prototype, 'readActivation', ([key]) => key === `sink:${receiver}`),
      notifyStored: spy(ActorClient.prototype, 'notifyStored', ([kind, id]) => kind === 'sink' && id === receiver),
    };
    for (const each of Object.values(spies)) restores.push(each.restore);
    return spies;
  }

  const journalEntries = async (receiver: string) =>
    (await dataSource.query('SELECT count(*)::int AS n FROM actor_journal WHERE persistence_key = $1', [`sink:${receiver}`]))[0].n as number;
  const unprocessed = async (receiver: string) =>
    (
      await dataSource.query("SELECT payload->>'tag' AS tag FROM actor_commands WHERE kind = 'sink' AND actor_id = $1 AND processed_at IS NULL ORDER BY position", [
        receiver,
      ])
    ).map((row: { tag: string }) => row.tag) as string[];
  const decidesOf = (receiver: string) => decided.filter((entry) => entry.receiver === receiver);

  before(async () => {
    database = await createTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 2 });
    await dataSource.initialize();
  });

  after(async () => {
    await dataSource.destroy();
    await database.drop();
  });

  beforeEach(async () => {
    runtime = await startRuntime();
  });

  afterEach(async () => {
    for (const restore of restores.splice(0).reverse()) restore();
    blocked.clear();
    failOnce.clear();
    await runtime.stop();
  });

  it('is the premise: the failure the sink throws is retryable', () => {
    assert.equal(isRetryable(new NotYetError('x')), true);
    assert.equal(isRetryable(new UnavailableError('x')), false, 'a plain UnavailableError would be consumed, not retried');
  });

  it('a. applies the commands of a sender\'s turns once each, in send order, without reading the receiver\'s pending list or using the bus', async () => {
    const receiver = 'sink-a';
    const spies = watch(receiver);
    // Round 1: the first hand-over activates the receiver; its recovery read applies the whole batch.
    await sendFrom('source-a', to(receiver, ['a1', 'a2', 'a3']));
    assert.deepEqual(await applied(receiver), ['a1', 'a2', 'a3']);
    assert.equal(spies.readActivation.calls, 1, 'one recovery read');
    const pendingReadsRound1 = spies.listPending.calls;

    // Round 2: the receiver is active; each command is handed over and applied directly.
    await sendFrom('source-a', to(receiver, ['a4', 'a5', 'a6', 'a7', 'a8']));
    assert.deepEqual(await applied(receiver), ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8']);
    assert.equal(spies.listPending.calls - pendingReadsRound1, 0, 'no read of the pending list once the receiver is active');
    assert.equal(pendingReadsRound1, 0, 'no read of the pending list when the hand-over activates the receiver either');
    assert.equal(spies.readActivation.calls, 1, 'no second recovery read');
    assert.equal(spies.notifyStored.calls, 0, 'no bus notification for a receiver of this node');

    // Once each: one decide, one journal entry and one processed mark per command.
    assert.deepEqual(
      decidesOf(receiver).map((entry) => entry.tag),
      ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8'],
    );
    assert.equal(await journalEntries(receiver), 8);
    assert.deepEqual(await unprocessed(receiver), []);
  });

  it('a. keeps each receiver\'s send order when one turn interleaves commands to several receivers', async () => {
    const spies = [watch('sink-a-x'), watch('sink-a-y')];
    await sendFrom('source-a2', [{ to: 'sink-a-x', tag: 'x0' }, { to: 'sink-a-y', tag: 'y0' }]);
    assert.deepEqual(await applied('sink-a-x'), ['x0']);
    assert.deepEqual(await applied('sink-a-y'), ['y0']);
    const interleaved = ['1', '2', '3', '4'].flatMap((n) => [{ to: 'sink-a-x', tag: `x${n}` }, { to: 'sink-a-y', tag: `y${n}` }]);
    await sendFrom('source-a2', interleaved);
    assert.deepEqual(await applied('sink-a-x'), ['x0', 'x1', 'x2', 'x3', 'x4']);
    assert.deepEqual(await applied('sink-a-y'), ['y0', 'y1', 'y2', 'y3', 'y4']);
    for (const each of spies) {
      assert.equal(each.listPending.calls, 0);
      assert.equal(each.notifyStored.calls, 0);
      assert.equal(each.readActivation.calls, 1);
    }
  });

  it('b. applies a command whose decide failed once before the later commands handed over behind it, each once', async () => {
    const receiver = 'sink-b-once';
    await sendFrom('source-b1', to(receiver, ['b0']));
    assert.deepEqual(await applied(receiver), ['b0']);
    failOnce.add('b2');
    // b2 fails when handed over; b3, handed over next, reads the pending list: b2 (now succeeding), b3 and b4.
    // b4's own hand-over then finds it applied.
    await sendFrom('source-b1', to(receiver, ['b1', 'b2', 'b3', 'b4']));
    assert.deepEqual(await applied(receiver), ['b0', 'b1', 'b2', 'b3', 'b4']);
    await sendFrom('source-b1', to(receiver, ['b5']));
    assert.deepEqual(await applied(receiver), ['b0', 'b1', 'b2', 'b3', 'b4', 'b5']);
    assert.deepEqual(
      decidesOf(receiver).map((entry) => `${entry.tag}:${entry.ok ? 'ok' : 'failed'}`),
      ['b0:ok', 'b1:ok', 'b2:failed', 'b2:ok', 'b3:ok', 'b4:ok', 'b5:ok'],
    );
    assert.equal(await journalEntries(receiver), 6);
    assert.deepEqual(await unprocessed(receiver), []);
  });

  it('b. holds later commands behind one left behind until the poller applies it, then applies them in send order', async () => {
    const receiver = 'sink-b-poll';
    const spies = watch(receiver);
    await sendFrom('source-b2', to(receiver, ['p0']));
    assert.deepEqual(await applied(receiver), ['p0']);
    blocked.add('p1');
    await sendFrom('source-b2', to(receiver, ['p1', 'p2']));
    assert.deepEqual(await applied(receiver), ['p0'], 'p2 waits behind p1');
    await sendFrom('source-b2', to(receiver, ['p3']));
    assert.deepEqual(await applied(receiver), ['p0'], 'a later turn\'s command waits behind p1 too');
    assert.deepEqual(await unprocessed(receiver), ['p1', 'p2', 'p3']);
    assert.ok(!decidesOf(receiver).some((entry) => entry.tag === 'p2' || entry.tag === 'p3'), 'nothing behind p1 was decided');

    // Only the poller retries now (it wakes actors whose commands wait for 2 s or more).
    blocked.delete('p1');
    await eventually(async () => (await unprocessed(receiver)).length === 0, 'the poller applied the commands left behind', 6000);
    assert.deepEqual(await applied(receiver), ['p0', 'p1', 'p2', 'p3']);
    const firstOk = decidesOf(receiver).findIndex((entry) => entry.tag === 'p1' && entry.ok);
    const laterFirst = decidesOf(receiver).findIndex((entry) => entry.tag === 'p2' || entry.tag === 'p3');
    assert.ok(firstOk >= 0 && laterFirst > firstOk, 'p2 and p3 were decided only after p1 succeeded');
    assert.equal(await journalEntries(receiver), 4);

    // Nothing is left behind any more: the next command is handed over and applied directly again.
    const pendingReads = spies.listPending.calls;
    await sendFrom('source-b2', to(receiver, ['p4']));
    assert.deepEqual(await applied(receiver), ['p0', 'p1', 'p2', 'p3', 'p4']);
    assert.equal(spies.listPending.calls, pendingReads, 'no read of the pending list once nothing waits');
  });

  it('b. holds later commands behind one that the activating recovery read left behind', async () => {
    const receiver = 'sink-b-activation';
    blocked.add('q1');
    // The hand-over of q1 activates the receiver: its recovery read stops at q1 (the first command), and
    // that hand-over is done with; q2, handed over next, must still wait behind q1.
    await sendFrom('source-b3', to(receiver, ['q1', 'q2']));
    assert.deepEqual(await applied(receiver), [], 'q2 waits behind q1');
    await sendFrom('source-b3', to(receiver, ['q3']));
    assert.deepEqual(await applied(receiver), [], 'a later turn\'s command waits behind q1 too');
    assert.deepEqual(await unprocessed(receiver), ['q1', 'q2', 'q3']);
    blocked.delete('q1');
    await eventually(async () => (await unprocessed(receiver)).length === 0, 'the poller applied the commands left behind', 6000);
    assert.deepEqual(await applied(receiver), ['q1', 'q2', 'q3']);
    assert.deepEqual(
      decidesOf(receiver).filter((entry) => entry.ok).map((entry) => entry.tag),
      ['q1', 'q2', 'q3'],
    );
    assert.equal(await journalEntries(receiver), 3);
  });

  it('c. activate() recovers the actor at once, so its next message finds it active with no recovery read', async () => {
    const receiver = 'sink-c';
    await sendFrom('source-c', to(receiver, ['c1', 'c2']));
    assert.deepEqual(await applied(receiver), ['c1', 'c2']);
    // A fresh node: nothing is active.
    await runtime.stop();
    runtime = await startRuntime();
    assert.equal(runtime.activeActors(), 0);
    const spies = watch(receiver);
    const control = watch('sink-c-cold');

    runtime.activate('sink', receiver);
    await eventually(() => runtime.activeActors() === 1 && spies.readActivation.calls === 1, 'actor activated by activate()', 3000);
    // The next messages (an ask, a handed-over command) find the recovered state and read nothing.
    assert.deepEqual(await applied(receiver), ['c1', 'c2']);
    await sendFrom('source-c', to(receiver, ['c3']));
    assert.deepEqual(await applied(receiver), ['c1', 'c2', 'c3']);
    runtime.activate('sink', receiver);
    assert.deepEqual(await applied(receiver), ['c1', 'c2', 'c3']);
    assert.equal(spies.readActivation.calls, 1, 'one recovery read, at activate()');
    assert.equal(spies.listPending.calls, 0);
    assert.equal(runtime.activeActors(), 2, 'the sink and the source');

    // Without activate(), the first message pays the recovery read (the spy sees it on that path too).
    assert.deepEqual(await applied('sink-c-cold'), []);
    assert.equal(control.readActivation.calls, 1);
  });
});
