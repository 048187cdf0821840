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

const SHARDS = 32;
const ACTORS = 40;
/** How long the tool takes to answer each request: longer than a node takes to start and join, shorter than the drain time. */
const TOOL_MS = 10_000;

/** A slow tool: answers `{add: 1}` TOOL_MS after each request, counting the requests of each Idempotency-Key. */
class SlowTool {
  readonly requestsByKey = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<SlowTool> {
    const holder: { tool?: SlowTool } = {};
    const server = createServer((request, response) => {
      request.resume();
      const key = String(request.headers['idempotency-key']);
      holder.tool!.requestsByKey.set(key, (holder.tool!.requestsByKey.get(key) ?? 0) + 1);
      const timer = setTimeout(() => {
        holder.tool!.timers.delete(timer);
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ add: 1 }));
      }, TOOL_MS);
      holder.tool!.timers.add(timer);
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
  this.timeout(120_000);
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

  it('a node joining and another stopped with SIGTERM: every Idempotency-Key reaches the tool once, and every call completes with its first attempt', async () => {
    const env = clusterEnv(database.url, names);
    nodes.push(...(await Promise.all([ClusterNode.start(env), ClusterNode.start(env)])));
    await waitForBalance(nodes, SHARDS);
    const [first, second] = nodes;
    const ids = Array.from({ length: ACTORS }, (_, index) => `planned-${index}`);
    await Promise.all(ids.map((id) => ask(first, id, { type: 'work', url: tool.url(), effectId: `call-${id}` })));
    await eventually(() => tool.requestsByKey.size === ACTORS, 'every call reaches the tool', 15_000);
    // While the calls run: a third node joins (both others hand shards to it), then the second one is stopped.
    const joiner = await ClusterNode.start(env);
    nodes.push(joiner);
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
  });
});
