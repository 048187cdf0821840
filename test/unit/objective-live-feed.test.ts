// The objectives' live feed over a bus (src/objectives/objective-live-feed.ts),
// on the in-process bus: news reaches the followers of its objective only,
// nothing is carried before the runtime binds it or after it unbinds, commit
// nudges come from the runtime's commits (embedded) or from the events' own
// subjects (cluster), and a node holds one subscription per followed
// objective, none once nobody follows.
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { MemoryBus } from '../../actors/bus/memory-bus';
import { BusObjectiveLiveFeed, type LiveFeedRuntime } from '../../src/objectives/objective-live-feed';
import type { ObjectiveLiveNews } from '../../src/ports/objective-live';

const A = 'obj_01JLIVEA000000000000000000';
const B = 'obj_01JLIVEB000000000000000000';

/** A runtime on `bus` whose commits the test makes (`commit(kind, id)`). */
function fakeRuntime(bus: MemoryBus, eventsOnBus = false) {
  const listeners = new Set<(kind: string, actorId: string) => void>();
  const runtime: LiveFeedRuntime = {
    bus, subjectPrefix: 'agentrt', eventsOnBus,
    onEventsCommitted(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
  return { runtime, listeners, commit: (kind: string, id: string) => listeners.forEach((listener) => listener(kind, id)) };
}

const delta = (objectiveId: string, offset: number, text: string): ObjectiveLiveNews => ({ type: 'delta', objectiveId, modelTurn: 1, offset, text });

describe('BusObjectiveLiveFeed', () => {
  let bus: MemoryBus;
  beforeEach(() => {
    bus = new MemoryBus();
  });
  afterEach(() => bus.close());

  it('carries nothing before it is bound: publish is a no-op, follow still ends', async () => {
    const feed = new BusObjectiveLiveFeed();
    const got: ObjectiveLiveNews[] = [];
    const unfollow = feed.follow(A, (news) => got.push(news));
    feed.publish(delta(A, 0, 'hi'));
    await tick();
    assert.deepEqual(got, []);
    assert.deepEqual(feed.holdings(), { objectives: 1, listeners: 1, subscriptions: 0, commitHook: false });
    unfollow();
    unfollow();
    assert.deepEqual(feed.holdings(), { objectives: 0, listeners: 0, subscriptions: 0, commitHook: false });
  });

  it('hands a delta to every follower of its objective and to nobody else, over one subscription per objective', async () => {
    const feed = new BusObjectiveLiveFeed();
    feed.bind(fakeRuntime(bus).runtime);
    const first: ObjectiveLiveNews[] = [];
    const second: ObjectiveLiveNews[] = [];
    const other: ObjectiveLiveNews[] = [];
    const stops = [feed.follow(A, (news) => first.push(news)), feed.follow(A, (news) => second.push(news)), feed.follow(B, (news) => other.push(news))];
    assert.deepEqual(feed.holdings(), { objectives: 2, listeners: 3, subscriptions: 2, commitHook: true });
    feed.publish(delta(A, 0, 'Hel'));
    feed.publish(delta(A, 3, 'lo'));
    await tick();
    assert.deepEqual(first, [delta(A, 0, 'Hel'), delta(A, 3, 'lo')]);
    assert.deepEqual(second, first);
    assert.deepEqual(other, []);
    stops.forEach((stop) => stop());
    assert.deepEqual(feed.holdings(), { objectives: 0, listeners: 0, subscriptions: 0, commitHook: false });
    feed.publish(delta(A, 5, '!'));
    await tick();
    assert.equal(first.length, 2, 'nothing after unfollowing');
  });

  it('nudges the followers of an objective when the runtime commits its events (embedded), listening to commits only while someone follows', async () => {
    const feed = new BusObjectiveLiveFeed();
    const { runtime, listeners, commit } = fakeRuntime(bus);
    feed.bind(runtime);
    assert.equal(listeners.size, 0, 'no stream open: the runtime tells the feed nothing');
    const got: ObjectiveLiveNews[] = [];
    const unfollow = feed.follow(A, (news) => got.push(news));
    assert.equal(listeners.size, 1);
    commit('objective', B);
    commit('schedule', A);
    commit('objective', A);
    assert.deepEqual(got, [{ type: 'committed', objectiveId: A }]);
    unfollow();
    assert.equal(listeners.size, 0);
  });

  it('nudges from the events\' own subjects in cluster mode (any account, workspace and agent), and never from the runtime\'s commits', async () => {
    const feed = new BusObjectiveLiveFeed();
    const { runtime, listeners } = fakeRuntime(bus, true);
    feed.bind(runtime);
    const got: ObjectiveLiveNews[] = [];
    const unfollow = feed.follow(A, (news) => got.push(news));
    assert.equal(listeners.size, 0);
    assert.deepEqual(feed.holdings(), { objectives: 1, listeners: 1, subscriptions: 2, commitHook: false });
    bus.publish(`objective_events.acct_1.ws_1.agent_1.${A}.assistant_message`, '{}');
    bus.publish(`objective_events.acct_1.ws_1.agent_1.${B}.assistant_message`, '{}');
    await tick();
    assert.deepEqual(got, [{ type: 'committed', objectiveId: A }]);
    unfollow();
    assert.deepEqual(feed.holdings(), { objectives: 0, listeners: 0, subscriptions: 0, commitHook: false });
  });

  it('subscribes the objectives followed before it was bound, and lets go of the bus when unbound', async () => {
    const feed = new BusObjectiveLiveFeed();
    const got: ObjectiveLiveNews[] = [];
    const unfollow = feed.follow(A, (news) => got.push(news));
    feed.bind(fakeRuntime(bus).runtime);
    assert.deepEqual(feed.holdings(), { objectives: 1, listeners: 1, subscriptions: 1, commitHook: true });
    feed.publish(delta(A, 0, 'x'));
    await tick();
    assert.equal(got.length, 1);
    feed.unbind();
    assert.deepEqual(feed.holdings(), { objectives: 1, listeners: 1, subscriptions: 0, commitHook: false });
    feed.publish(delta(A, 1, 'y'));
    await tick();
    assert.equal(got.length, 1);
    unfollow();
  });

  it('survives a throwing follower, a malformed message, a bus that is down or closed, and an id that is no subject token', async () => {
    const feed = new BusObjectiveLiveFeed();
    let connected = true;
    const down = Object.assign(bus, { connected: () => connected });
    feed.bind(fakeRuntime(down).runtime);
    const got: ObjectiveLiveNews[] = [];
    feed.follow(A, () => {
      throw new Error('a broken stream');
    });
    feed.follow(A, (news) => got.push(news));
    bus.publish(`agentrt.live.objective.${A}`, 'not json');
    bus.publish(`agentrt.live.objective.${A}`, JSON.stringify(delta(B, 0, 'someone else\'s')));
    feed.publish(delta(A, 0, 'ok'));
    await tick();
    assert.deepEqual(got, [delta(A, 0, 'ok')]);
    connected = false;
    feed.publish(delta(A, 2, 'lost'));
    await bus.close();
    feed.publish(delta(A, 2, 'lost'));
    await tick();
    assert.equal(got.length, 1);
    const unfollow = feed.follow('obj.*', () => assert.fail('no wildcard is ever followed'));
    assert.equal(feed.holdings().objectives, 1);
    feed.publish(delta('obj.>', 0, 'x'));
    unfollow();
  });
});
