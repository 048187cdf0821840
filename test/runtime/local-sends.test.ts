// Durable commands an actor's turn sends to an actor of the same node, on the
// embedded runtime over Postgres: the receiver is told directly (no bus
// notification) and applies ALL its stored commands by reading its pending
// list, once each and in position (send) order; so a command an earlier owner
// of the sender stored without notifying goes before a later one sent now; a
// command whose decide failed with a retryable error holds the later ones
// behind it until it is applied (by the next pending read or the command
// poller); ActorRuntime.activate readies an actor so the next message
// finds its recovery read done; and an ask for a new actor skips that read.
import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import type { ActorRuntime, RuntimeOptions } from '../../actors';
import { ActorClient } from '../../actors/runtime/actor-client';
import { UnavailableError } from '../../src/errors';
import { newUlid } from '../../src/ids';
import type { ActorBehavior, ActorKind } from '../../src/ports/actor-behavior';
import { actorAddress } from '../../src/sharding/addressing';
import { isRetryable } from '../../src/sharding/sharding.errors';
import { createDataSource } from '../../persistence/data-source';
import { ActorCommandRepository } from '../../persistence/runtime/actor-command.repository';
import { ActorJournalRepository } from '../../persistence/runtime/actor-journal.repository';
import { RuntimeDatabase } from '../../persistence/runtime/runtime-database';
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

type SourceCommand = { type: 'send'; sends: Array<{ to: string; tag: string }>; first?: boolean };

/** The sender: one turn sends `apply` commands to sinks, in the given order. */
const sourceBehavior: ActorBehavior<Record<string, never>, SourceCommand, never, null> = {
  kind: 'source',
  initialState: () => ({}),
  decide: (_state, command) => ({
    send: command.sends.map((send) => ({ kind: 'sink', id: send.to, command: { type: 'apply', tag: send.tag }, ...(command.first ? { first: true } : {}) })),
    reply: null,
  }),
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

describe('actor runtime: durable commands sent to an actor of the same node', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  /** Writes actor_commands as a turn's commit would, without any notification. */
  let runtimeDatabase: RuntimeDatabase;
  let runtime: ActorRuntime;
  const restores: Array<() => void> = [];

  const startRuntime = async () => (await startEmbeddedTestRuntime(database.url, OPTIONS, { kinds: KINDS })).runtime;
  const sendFrom = (source: string, sends: Array<{ to: string; tag: string }>) => runtime.ask('source', source, { type: 'send', sends });
  const to = (receiver: string, tags: string[]) => tags.map((tag) => ({ to: receiver, tag }));
  // Asked after the sender's ask returned: the sender's notification reached the receiver's mailbox first.
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
    runtimeDatabase = new RuntimeDatabase({ url: database.url, poolSize: 1 });
  });

  after(async () => {
    await runtimeDatabase.close();
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

  it('a. applies the commands of a sender\'s turns once each, in send order, with one pending read per turn and no bus notification', async () => {
    const receiver = 'sink-a';
    const spies = watch(receiver);
    // Round 1: the notification activates the receiver; its recovery read applies the whole batch.
    await sendFrom('source-a', to(receiver, ['a1', 'a2', 'a3']));
    assert.deepEqual(await applied(receiver), ['a1', 'a2', 'a3']);
    assert.equal(spies.readActivation.calls, 1, 'one recovery read');
    assert.equal(spies.listPending.calls, 0, 'the notification that activated the receiver is covered by its recovery read');

    // Round 2: the receiver is active; the turn's one notification makes it read its pending list once.
    await sendFrom('source-a', to(receiver, ['a4', 'a5', 'a6', 'a7', 'a8']));
    assert.deepEqual(await applied(receiver), ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8']);
    assert.equal(spies.listPending.calls, 1, 'one pending read for the turn\'s five commands (one notification per receiver, not per command)');
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

  it('a. keeps each receiver\'s send order when one turn interleaves commands to several receivers, with no bus notification', async () => {
    const spies = [watch('sink-a-x'), watch('sink-a-y')];
    await sendFrom('source-a2', [{ to: 'sink-a-x', tag: 'x0' }, { to: 'sink-a-y', tag: 'y0' }]);
    assert.deepEqual(await applied('sink-a-x'), ['x0']);
    assert.deepEqual(await applied('sink-a-y'), ['y0']);
    const interleaved = ['1', '2', '3', '4'].flatMap((n) => [{ to: 'sink-a-x', tag: `x${n}` }, { to: 'sink-a-y', tag: `y${n}` }]);
    await sendFrom('source-a2', interleaved);
    assert.deepEqual(await applied('sink-a-x'), ['x0', 'x1', 'x2', 'x3', 'x4']);
    assert.deepEqual(await applied('sink-a-y'), ['y0', 'y1', 'y2', 'y3', 'y4']);
    for (const receiver of ['sink-a-x', 'sink-a-y']) {
      assert.deepEqual(
        decidesOf(receiver).map((entry) => entry.tag),
        [0, 1, 2, 3, 4].map((n) => `${receiver.slice(-1)}${n}`),
        `${receiver}: each command decided once, in send order`,
      );
      assert.equal(await journalEntries(receiver), 5);
      assert.deepEqual(await unprocessed(receiver), []);
    }
    for (const each of spies) {
      assert.equal(each.notifyStored.calls, 0, 'no bus notification for a receiver of this node');
      assert.equal(each.readActivation.calls, 1, 'one recovery read (the first turn activated it)');
      assert.equal(each.listPending.calls, 1, 'one pending read for the second turn\'s four commands');
    }
  });

  it('d. applies a command an earlier owner of the sender stored without notifying before a later one sent now (position order)', async () => {
    const receiver = 'sink-stale';
    const spies = watch(receiver);
    await sendFrom('source-stale', to(receiver, ['s0']));
    assert.deepEqual(await applied(receiver), ['s0']);
    // As if the sender's previous owner committed a turn sending s1 and was killed before notifying:
    // the row is in actor_commands, and nobody tells the (active) receiver.
    const { shard } = actorAddress('sink', receiver, OPTIONS.shardCount!);
    await new ActorCommandRepository(runtimeDatabase).insert({ id: newUlid(), shard, kind: 'sink', actorId: receiver, payload: { type: 'apply', tag: 's1' } });
    assert.deepEqual(await applied(receiver), ['s0'], 's1 was stored without a notification');
    assert.deepEqual(await unprocessed(receiver), ['s1']);

    // The sender's turn now sends s2 (written after s1): its notification makes the receiver read
    // its pending list, which finds s1 first. A handed-over s2 applied directly would go first.
    await sendFrom('source-stale', to(receiver, ['s2']));
    assert.deepEqual(await applied(receiver), ['s0', 's1', 's2'], 's1 before s2, both applied with the notification of s2');
    assert.deepEqual(
      decidesOf(receiver).map((entry) => entry.tag),
      ['s0', 's1', 's2'],
    );
    assert.equal(await journalEntries(receiver), 3);
    assert.deepEqual(await unprocessed(receiver), []);
    // The receiver stayed active throughout: no recovery read found s1, the pending read did.
    assert.equal(spies.readActivation.calls, 1, 'only the first send activated the receiver');
    assert.equal(spies.listPending.calls, 1, 'the notification of s2 read the pending list');
    assert.equal(spies.notifyStored.calls, 0, 'no bus notification for a receiver of this node');
  });

  it('b. applies a command whose decide failed once, at the next pending read, before the later commands behind it, each once', async () => {
    const receiver = 'sink-b-once';
    const spies = watch(receiver);
    await sendFrom('source-b1', to(receiver, ['b0']));
    assert.deepEqual(await applied(receiver), ['b0']);
    failOnce.add('b2');
    // The turn's notification reads b1..b4: b1 applies, b2 fails and stops the read; b3 and b4 wait behind it.
    await sendFrom('source-b1', to(receiver, ['b1', 'b2', 'b3', 'b4']));
    assert.deepEqual(await applied(receiver), ['b0', 'b1'], 'b3 and b4 wait behind b2');
    assert.deepEqual(await unprocessed(receiver), ['b2', 'b3', 'b4']);
    // The next turn's notification reads b2 (now succeeding), b3, b4 and b5.
    await sendFrom('source-b1', to(receiver, ['b5']));
    assert.deepEqual(await applied(receiver), ['b0', 'b1', 'b2', 'b3', 'b4', 'b5']);
    assert.deepEqual(
      decidesOf(receiver).map((entry) => `${entry.tag}:${entry.ok ? 'ok' : 'failed'}`),
      ['b0:ok', 'b1:ok', 'b2:failed', 'b2:ok', 'b3:ok', 'b4:ok', 'b5:ok'],
    );
    assert.equal(await journalEntries(receiver), 6);
    assert.deepEqual(await unprocessed(receiver), []);
    assert.equal(spies.listPending.calls, 2, 'one pending read per sending turn after the activating one');
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
    assert.deepEqual(
      decidesOf(receiver).filter((entry) => entry.ok).map((entry) => entry.tag),
      ['p0', 'p1', 'p2', 'p3'],
    );
    assert.equal(await journalEntries(receiver), 4);

    // Nothing is left behind any more: the next command is applied with its own notification.
    const pendingReads = spies.listPending.calls;
    await sendFrom('source-b2', to(receiver, ['p4']));
    assert.deepEqual(await applied(receiver), ['p0', 'p1', 'p2', 'p3', 'p4']);
    assert.equal(spies.listPending.calls, pendingReads + 1, 'one pending read for the notification');
    assert.equal(spies.notifyStored.calls, 0, 'no bus notification for a receiver of this node');
  });

  it('b. holds later commands behind one that the activating recovery read left behind', async () => {
    const receiver = 'sink-b-activation';
    blocked.add('q1');
    // The notification for q1 and q2 activates the receiver: its recovery read stops at q1 (the first
    // command); q2 waits behind it.
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

  it('c. activate() recovers the actor at once, so its next messages find it active with no further recovery read', async () => {
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
    // The next messages (an ask, a sent command, another activate) find the recovered state: no recovery read.
    assert.deepEqual(await applied(receiver), ['c1', 'c2']);
    await sendFrom('source-c', to(receiver, ['c3']));
    assert.deepEqual(await applied(receiver), ['c1', 'c2', 'c3']);
    runtime.activate('sink', receiver);
    assert.deepEqual(await applied(receiver), ['c1', 'c2', 'c3']);
    assert.equal(spies.readActivation.calls, 1, 'one recovery read, at activate()');
    assert.equal(spies.listPending.calls, 1, 'c3 was applied by the pending read of its notification, not by a recovery');
    assert.equal(spies.notifyStored.calls, 0, 'no bus notification for a receiver of this node');
    assert.equal(runtime.activeActors(), 2, 'the sink and the source');
    assert.deepEqual(
      decidesOf(receiver).map((entry) => entry.tag),
      ['c1', 'c2', 'c3'],
      'recovery replayed c1 and c2 from the journal without deciding them again',
    );

    // Without activate(), the first message pays the recovery read (the spy sees it on that path too).
    assert.deepEqual(await applied('sink-c-cold'), []);
    assert.equal(control.readActivation.calls, 1);
  });

  it('f. a receiver of this node applies a first command (ActorSend.first) as handed over, without reading its pending list, once', async () => {
    const receiver = `sink-f-${newUlid()}`;
    runtime.activate('sink', receiver);
    await eventually(() => runtime.activeActors() >= 1, 'receiver active');
    const spies = watch(receiver);
    await runtime.ask('source', 'source-f', { type: 'send', sends: to(receiver, ['f1']), first: true });
    await eventually(async () => (await journalEntries(receiver)) === 1, 'f1 applied');
    assert.deepEqual(await applied(receiver), ['f1']);
    assert.equal(spies.listPending.calls, 0, 'no pending read for a first command');
    assert.equal(spies.notifyStored.calls, 0, 'no bus notification');
    assert.deepEqual(await unprocessed(receiver), [], 'the stored command is marked processed');
    // Without the flag the receiver reads its pending list (a command may wait ahead of it).
    await sendFrom('source-f', to(receiver, ['f2']));
    assert.deepEqual(await applied(receiver), ['f1', 'f2']);
    assert.equal(spies.listPending.calls, 1);
  });

  it('e. an ask for a new actor (newActor) starts it from its initial state without the recovery read, and what it wrote is recovered later', async () => {
    const receiver = `sink-d-${newUlid()}`;
    const spies = watch(receiver);
    const reply = await runtime.ask<SinkState>('sink', receiver, { type: 'apply', tag: 'd1' }, { newActor: true });
    assert.deepEqual(reply.applied, ['d1']);
    assert.equal(spies.readActivation.calls, 0, 'no recovery read for an actor its caller just made up');
    // Active now: a second ask with the flag uses the state it has.
    assert.deepEqual((await runtime.ask<SinkState>('sink', receiver, { type: 'apply', tag: 'd2' }, { newActor: true })).applied, ['d1', 'd2']);
    assert.equal(await journalEntries(receiver), 2);
    // A fresh node recovers both turns from the journal.
    await runtime.stop();
    runtime = await startRuntime();
    assert.deepEqual(await applied(receiver), ['d1', 'd2']);
    assert.equal(spies.readActivation.calls, 1);
  });
});
