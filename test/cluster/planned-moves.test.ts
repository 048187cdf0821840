// Planned moves of shards (issue 24, item 1), on node processes over real NATS
// and Postgres: a node joining (rebalance) and a node stopped with SIGTERM
// while slow tool calls run. A planned handoff lets the calls finish and
// records their results before the lease moves, so the tool server (a real
// HTTP server in this process, counting requests per Idempotency-Key) sees
// every key once and every actor applies its call's first attempt.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ClusterNode, clusterEnv, deleteStream, eventually, uniqueBusNames, waitForBalance } from '../support/cluster-harness';
import type { CounterCommand, CounterReply } from '../support/cluster-counter';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { shardOf } from '../../src/sharding/fnv1a32';

const SHARDS = 32;
const ACTORS = 40;
/**
 * How long the tool takes to answer each request: long enough for a node to
 * start and join, and for both moves to begin, while the calls run (the test
 * checks they did), and within the drain time below less its handoff part.
 */
const TOOL_MS = 20_000;
const DRAIN_MS = 45_000;

/** A slow tool: answers `{add: 1}` TOOL_MS after each request, counting the requests of each Idempotency-Key and those not answered yet. */
class SlowTool {
  readonly requestsByKey = new Map<string, number>();
  /** Idempotency-Keys of the requests received and not answered yet. */
  readonly inProgress = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<SlowTool> {
    const holder: { tool?: SlowTool } = {};
    const server = createServer((request, response) => {
      request.resume();
      const tool = holder.tool!;
      const key = String(request.headers['idempotency-key']);
      tool.requestsByKey.set(key, (tool.requestsByKey.get(key) ?? 0) + 1);
      tool.inProgress.add(key);
      const timer = setTimeout(() => {
        tool.timers.delete(timer);
        tool.inProgress.delete(key);
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ add: 1 }));
      }, TOOL_MS);
      tool.timers.add(timer);
    });
    holder.tool = new SlowTool(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return holder.tool;
  }

  url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/tool`;
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('cluster: planned moves of shards while slow tool calls run', function () {
  this.timeout(180_000);
  let database: TestDatabase;
  let names: { subjectPrefix: string; eventStream: string };
  let tool: SlowTool;
  const nodes: ClusterNode[] = [];

  before(async () => {
    database = await createTestDatabase();
    names = uniqueBusNames();
    tool = await SlowTool.start();
  });

  after(async () => {
    await Promise.all(nodes.map((node) => node.dispose()));
    await tool.close();
    await database.drop();
    await deleteStream(names.eventStream);
  });

  const ask = (node: ClusterNode, id: string, message: CounterCommand) => node.call<CounterReply>({ op: 'ask', kind: 'counter', id, message, timeoutMs: 30_000 });

  it('a node joining and another stopped with SIGTERM while calls run: every Idempotency-Key reaches the tool once, and every call completes with its first attempt', async () => {
    const env = clusterEnv(database.url, names, { AGENTRT_DRAIN_TIMEOUT_MS: String(DRAIN_MS) });
    nodes.push(...(await Promise.all([ClusterNode.start(env), ClusterNode.start(env)])));
    await waitForBalance(nodes, SHARDS);
    const [first, second] = nodes;
    const ids = Array.from({ length: ACTORS }, (_, index) => `planned-${index}`);
    /** The shards whose actors' calls the tool is still working on. */
    const shardsWithCallsRunning = () => new Set(ids.filter((id) => tool.inProgress.has(`call-${id}`)).map((id) => shardOf(id, SHARDS)));
    await Promise.all(ids.map((id) => ask(first, id, { type: 'work', url: tool.url(), effectId: `call-${id}` })));
    await eventually(() => tool.requestsByKey.size === ACTORS, 'every call reaches the tool', 15_000);

    // A third node joins: both others start handing shards to it, among them shards whose calls still run.
    const joiner = await ClusterNode.start(env);
    nodes.push(joiner);
    let handedOff: number[] = [];
    await eventually(async () => {
      handedOff = (await Promise.all([first.status(), second.status()])).flatMap((status) => status.handoffsStarted);
      return handedOff.length >= Math.floor(SHARDS / 3);
    }, 'the join\'s handoffs start', 15_000);
    const joinMovedWithCalls = handedOff.filter((shard) => shardsWithCallsRunning().has(shard));
    assert.ok(joinMovedWithCalls.length > 0, `the join moves shards with calls running (handed off: ${handedOff.join()}; with calls running: ${[...shardsWithCallsRunning()].join()})`);
    await eventually(async () => (await joiner.status()).owned.length > 0, 'the joiner owns shards', 15_000);

    // Then the second node is stopped while it holds shards with calls running.
    const stoppedWithCalls = (await second.status()).owned.filter((shard) => shardsWithCallsRunning().has(shard));
    assert.ok(stoppedWithCalls.length > 0, 'the stopped node holds shards with calls running');
    second.signal('SIGTERM');
    assert.equal(await second.exited, 0, 'the stopped node exits cleanly');

    const survivors = [first, joiner];
    const states = () => Promise.all(ids.map((id) => ask(first, id, { type: 'get' })));
    await eventually(async () => (await states()).every((reply, index) => reply.effects[`call-${ids[index]}`] !== 'running'), 'every call ends', 60_000);
    const replies = await states();
    const twice = [...tool.requestsByKey].filter(([, count]) => count > 1).map(([key]) => key);
    assert.deepEqual(twice, [], 'no Idempotency-Key reached the tool twice');
    assert.deepEqual(
      replies.map((reply, index) => `${ids[index]}: ${reply.value} ${reply.effects[`call-${ids[index]}`]}`),
      ids.map((id) => `${id}: 1 ok:1`),
      'each call applied once, from its first attempt',
    );
    await waitForBalance(survivors, SHARDS);
    const moved = (await joiner.status()).owned.filter((shard) => joinMovedWithCalls.includes(shard) || stoppedWithCalls.includes(shard));
    assert.ok(moved.length > 0, 'the joiner serves shards that moved with calls running');
  });
});
