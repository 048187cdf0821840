// Effects, durable commands and events across node failures, on node
// processes over real NATS and Postgres. The effect target is a real HTTP
// server in this process that records every request by Idempotency-Key and
// x-attempt and answers `{add: n}` when the test says so. After a node is
// killed, tests that must show the actor resumed "with no outside message"
// watch only the effect target and the database until the work is done, and
// only then ask the actor what a user would check: its value and effects.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Pool } from 'pg';
import { decodeTime } from 'ulid';
import { shardOf } from '../../src/sharding/fnv1a32';
import { ClusterNode, TEST_NATS_URL, clusterEnv, deleteStream, eventually, uniqueBusNames, waitForBalance } from '../support/cluster-harness';
import type { CounterCommand, CounterReply } from '../support/cluster-counter';
import type { FreezeResult } from '../support/cluster-protocol';
import { createTestDatabase, type TestDatabase } from '../support/database';

const SHARDS = 32;
const LEASE_TIMEOUT_MS = 2000;
const REBALANCE_INTERVAL_MS = 200;
/** How long the outside operation behind the long effect takes. */
const LONG_EFFECT_MS = 30_000;
const HOUR_MS = 60 * 60 * 1000;

/** The state letter of a node process in /proc (T: stopped). */
function processState(node: ClusterNode): string {
  const stat = readFileSync(`/proc/${node.child.pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Prints what a run went through (which failure window a kill hit) with TEST_CLUSTER_NOTES=1. */
function note(message: string): void {
  if (process.env.TEST_CLUSTER_NOTES) console.log(`      note: ${message}`);
}

/** One request the effect target received. */
class TargetRequest {
  /** open: waiting for its answer; answered: the answer was flushed; aborted: the caller closed the connection first. */
  state: 'open' | 'answered' | 'aborted' = 'open';
  readonly receivedAt = Date.now();
  endedAt: number | undefined;

  constructor(
    readonly key: string,
    readonly attempt: number,
    readonly actorId: string,
    private readonly response: ServerResponse,
  ) {
    response.on('close', () => {
      this.endedAt ??= Date.now();
      if (!response.writableFinished) this.state = 'aborted';
    });
  }

  /** Answers `{add}`; resolves once the answer is handed to the kernel. @returns false when the caller was gone. */
  answer(add: number): Promise<boolean> {
    if (this.state !== 'open') return Promise.resolve(false);
    return new Promise((resolve) => {
      this.response.writeHead(200, { 'content-type': 'application/json' });
      this.response.end(JSON.stringify({ add }), () => {
        this.state = 'answered';
        this.endedAt = Date.now();
        resolve(true);
      });
    });
  }
}

/** What the target does with a request: answer `{add}` now, later (a promise), or hold it until the test answers it. */
type Respond = (request: TargetRequest) => number | Promise<number> | 'hold';

/** The outside world of the `post` effect: a real HTTP server counting requests per Idempotency-Key. */
class EffectTarget {
  readonly requests: TargetRequest[] = [];
  respond: Respond = () => 1;
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<EffectTarget> {
    const holder: { target?: EffectTarget } = {};
    const server = createServer((request, response) => void holder.target!.handle(request, response));
    const target = (holder.target = new EffectTarget(server));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return target;
  }

  url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/effect`;
  }

  /** Requests carrying this Idempotency-Key, in arrival order. */
  withKey(key: string): TargetRequest[] {
    return this.requests.filter((request) => request.key === key);
  }

  /** Requests made for this actor, in arrival order. */
  forActor(actorId: string): TargetRequest[] {
    return this.requests.filter((request) => request.actorId === actorId);
  }

  /** Waits for the request of `key` with this x-attempt. */
  async request(key: string, attempt: number, timeoutMs = 15_000): Promise<TargetRequest> {
    await eventually(() => this.withKey(key).some((request) => request.attempt === attempt), `the effect target to receive ${key} attempt ${attempt}`, timeoutMs);
    return this.withKey(key).find((request) => request.attempt === attempt)!;
  }

  /** A promise of `value` after `ms` (cleared on close). */
  later(ms: number, value: number): Promise<number> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve(value);
      }, ms);
      this.timers.add(timer);
    });
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async handle(incoming: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as { actorId?: string };
    const request = new TargetRequest(String(incoming.headers['idempotency-key']), Number(incoming.headers['x-attempt']), body.actorId ?? '', response);
    this.requests.push(request);
    const plan = this.respond(request);
    if (plan === 'hold') return;
    await request.answer(await plan);
  }
}

/** One test's cluster: its own database, subjects, stream, node processes and effect target. */
interface World {
  database: TestDatabase;
  names: { subjectPrefix: string; eventStream: string };
  env: Record<string, string>;
  nodes: ClusterNode[];
  sql: Pool;
  target: EffectTarget;
  /** Nodes still starting (disposed too if the test ends first). */
  starting: Array<Promise<ClusterNode>>;
}

describe('cluster: effects, durable commands and events across failures', function () {
  this.timeout(60_000);
  let world: World | undefined;

  /** The next test's world, started while the current test runs, for nodes with these environments. */
  let standby: { nodeEnv: string; world: Promise<World> } | undefined;
  const PLAIN: Array<Record<string, string>> = [{}, {}];
  const TRIPLE: Array<Record<string, string>> = [{}, {}, {}];
  const SKEWED: Array<Record<string, string>> = [{}, { AGENTRT_TEST_CLOCK_SKEW_MS: String(-HOUR_MS) }];

  /** A fresh database and `nodeEnv.length` nodes (each with its extra environment), sharing the shards. */
  async function buildWorld(nodeEnv: Array<Record<string, string>>): Promise<World> {
    const database = await createTestDatabase();
    const names = uniqueBusNames();
    const env = clusterEnv(database.url, names, { AGENTRT_LEASE_TIMEOUT_MS: String(LEASE_TIMEOUT_MS), AGENTRT_REBALANCE_INTERVAL_MS: String(REBALANCE_INTERVAL_MS) });
    const sql = new Pool({ connectionString: database.url, max: 3 });
    // An idle client ended by the server (the database dropped with FORCE while a standby world is built) emits 'error' on the pool: not a test failure.
    sql.on('error', () => undefined);
    const built: World = { database, names, env, nodes: [], sql, target: await EffectTarget.start(), starting: [] };
    built.starting = nodeEnv.map((extra) => ClusterNode.start({ ...env, ...extra }));
    try {
      built.nodes = await Promise.all(built.starting);
      built.starting = [];
      await waitForBalance(built.nodes, SHARDS);
    } catch (error) {
      await disposeWorld(built);
      throw error;
    }
    return built;
  }

  async function disposeWorld(done: World): Promise<void> {
    const late = await Promise.allSettled(done.starting);
    const all = new Set([...done.nodes, ...late.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))]);
    await Promise.all([...all].map((node) => node.dispose()));
    await done.target.close();
    await done.sql.end();
    await done.database.drop();
    await deleteStream(done.names.eventStream);
  }

  /**
   * This test's world. A node process takes seconds to start, so the world
   * of the next test (nodes with `next` environments; null: none) starts
   * while this test runs.
   */
  async function startWorld(nodeEnv = PLAIN, next: Array<Record<string, string>> | null = PLAIN): Promise<World> {
    const ready = standby?.nodeEnv === JSON.stringify(nodeEnv) ? standby.world : undefined;
    if (ready) standby = undefined;
    world = await (ready ? ready.catch(() => buildWorld(nodeEnv)) : buildWorld(nodeEnv));
    if (!standby && next) {
      standby = { nodeEnv: JSON.stringify(next), world: buildWorld(next) };
      standby.world.catch(() => undefined);
    }
    return world;
  }

  afterEach(async () => {
    if (!world) return;
    const done = world;
    world = undefined;
    await disposeWorld(done);
  });

  after(async () => {
    const spare = await standby?.world.catch(() => undefined);
    if (spare) await disposeWorld(spare);
  });

  const ask = (node: ClusterNode, id: string, message: CounterCommand, timeoutMs?: number) =>
    node.call<CounterReply>({ op: 'ask', kind: 'counter', id, message, timeoutMs });

  /**
   * `count` actor ids of the shards `node` owns now, in the lower half of the
   * shard numbers: after a kill -9 the survivor hands its highest-numbered
   * shards off once more and takes them again (the runtime bug the first test
   * shows), which would run their effects once more; these tests look at
   * other things.
   */
  async function idsOwnedBy(node: ClusterNode, prefix: string, count = 1): Promise<string[]> {
    const all = (await node.status()).owned;
    const lower = all.filter((shard) => shard < SHARDS / 2);
    const owned = new Set(lower.length ? lower : all);
    const ids: string[] = [];
    for (let i = 0; ids.length < count; i++) if (owned.has(shardOf(`${prefix}-${i}`, SHARDS))) ids.push(`${prefix}-${i}`);
    return ids;
  }

  /** An actor id of the highest-numbered shard `node` owns (a survivor hands its highest-numbered shards off first). */
  async function idOnHighestShardOf(node: ClusterNode, prefix: string): Promise<string> {
    const shard = Math.max(...(await node.status()).owned);
    for (let i = 0; ; i++) if (shardOf(`${prefix}-${i}`, SHARDS) === shard) return `${prefix}-${i}`;
  }

  async function ownerOf(nodes: ClusterNode[], id: string): Promise<ClusterNode | undefined> {
    const statuses = await Promise.all(nodes.map((node) => node.status()));
    return nodes[statuses.findIndex((status) => status.owned.includes(shardOf(id, SHARDS)))];
  }

  /** Starts one more node in the background; it joins `world.nodes` once ready. */
  function startNode(env: Record<string, string>): Promise<ClusterNode> {
    const current = world!;
    const started = ClusterNode.start(env).then((node) => {
      current.nodes.push(node);
      return node;
    });
    current.starting.push(started);
    return started;
  }

  async function kill(node: ClusterNode): Promise<void> {
    node.signal('SIGKILL');
    await node.exited;
    world!.nodes = world!.nodes.filter((other) => other !== node);
  }

  /** The stored command carrying an effect's outcome (written by the runtime under the run's fence). */
  const outcomeCommandId = (actorId: string, effectId: string, attempt: number) => `fx:counter:${actorId}:${effectId}:${attempt}`;

  async function rows<Row>(text: string, values: unknown[] = []): Promise<Row[]> {
    return (await world!.sql.query(text, values)).rows as Row[];
  }

  async function commandProcessed(id: string): Promise<boolean> {
    return (await rows<{ done: boolean }>('SELECT processed_at IS NOT NULL AS done FROM actor_commands WHERE id = $1', [id]))[0]?.done === true;
  }

  async function commandExists(id: string): Promise<boolean> {
    return (await rows('SELECT 1 FROM actor_commands WHERE id = $1', [id])).length > 0;
  }

  /** True when the actor has no effect in flight and no durable command waiting (per the database). */
  async function settled(actorId: string): Promise<boolean> {
    const work = await rows("SELECT 1 FROM actor_work WHERE kind = 'counter' AND actor_id = $1", [actorId]);
    const pending = await rows("SELECT 1 FROM actor_commands WHERE kind = 'counter' AND actor_id = $1 AND processed_at IS NULL", [actorId]);
    return work.length === 0 && pending.length === 0;
  }

  /** The actor's journal entries in order, as written. */
  async function journal(actorId: string): Promise<Array<{ commandId: string | null; events: Array<{ type: string; by?: number }>; reply: CounterReply | null }>> {
    const entries = await rows<{ command_id: string | null; payload: { events: Array<{ type: string; by?: number }>; reply: CounterReply | null } }>(
      'SELECT command_id, payload FROM actor_journal WHERE persistence_key = $1 ORDER BY sequence_nr',
      [`counter:${actorId}`],
    );
    return entries.map((entry) => ({ commandId: entry.command_id, events: entry.payload.events, reply: entry.payload.reply }));
  }

  /** Every `added` amount the actor's journal holds, in order. */
  async function addedAmounts(actorId: string): Promise<number[]> {
    return (await journal(actorId)).flatMap((entry) => entry.events.filter((event) => event.type === 'added').map((event) => event.by!));
  }

  /** Lease losses of these nodes since they started. */
  async function leaseLosses(nodes: ClusterNode[]): Promise<number> {
    return (await Promise.all(nodes.map((node) => node.status()))).reduce((sum, status) => sum + status.leaseLosses, 0);
  }

  /**
   * Checks the runs the effect target saw for an actor: every one with the
   * effect's id as Idempotency-Key, attempts 1..n, n one of `allowed`.
   * A surviving node that lost its lease (starved of CPU) lets the next owner
   * run the effect once more, so then n may exceed them. @returns n
   */
  async function checkRuns(actorId: string, effectId: string, allowed: number[], survivors: ClusterNode[]): Promise<number> {
    const requests = world!.target.forActor(actorId);
    const start = requests[0]?.receivedAt ?? 0;
    const seen = requests.map((request) => `attempt ${request.attempt} at +${request.receivedAt - start} ms, ${request.state} at +${(request.endedAt ?? NaN) - start} ms`).join('; ');
    assert.deepEqual(
      requests.map((request) => request.key),
      requests.map(() => effectId),
      `${actorId}: the effect ran under another id`,
    );
    assert.deepEqual(
      requests.map((request) => request.attempt),
      Array.from({ length: requests.length }, (_, i) => i + 1),
      `${actorId}: attempts are not 1..n`,
    );
    if ((await leaseLosses(survivors)) === 0) assert.ok(allowed.includes(requests.length), `${actorId}: the effect ran ${requests.length} times (${seen})`);
    else assert.ok(requests.length >= Math.min(...allowed), `${actorId}: the effect ran ${requests.length} times`);
    return requests.length;
  }

  it('answers asks while a 30-second effect runs; after kill -9 of its owner the other node resumes it unasked, re-runs it with the same id and applies its result once', async function () {
    this.timeout(LONG_EFFECT_MS + 45_000);
    const { nodes, target } = await startWorld();
    const [owner, other] = nodes;
    // The actor lives on the owner's highest-numbered shard: after the kill the survivor takes every orphan, then (the
    // dead node still counting as a member for a moment) hands its highest-numbered shards off and takes them again,
    // which aborts the re-run in flight and runs the effect a third time (x-attempt 3): a runtime bug, see checkRuns.
    const id = await idOnHighestShardOf(owner, 'long');
    const effectId = 'op-long';
    // An idempotent outside operation: it takes 30 s from the first request of its key; a retry with the key joins it.
    const operations = new Map<string, Promise<number>>();
    target.respond = (request) => {
      if (!operations.has(request.key)) operations.set(request.key, target.later(LONG_EFFECT_MS, 5));
      return operations.get(request.key)!;
    };

    const started = await ask(other, id, { type: 'work', url: target.url(), effectId, by: 0 });
    assert.equal(started.effects[effectId], 'running');
    const first = await target.request(effectId, 1);

    // The mailbox keeps answering while the effect runs, on the owner and from the other node.
    const asks: Array<[ClusterNode, CounterCommand, number]> = [
      [other, { type: 'add', by: 1 }, 1],
      [owner, { type: 'get' }, 1],
      [owner, { type: 'add', by: 2 }, 3],
      [other, { type: 'get' }, 3],
    ];
    for (const [node, message, value] of asks) {
      const reply = await ask(node, id, message, 10_000);
      assert.equal(reply.value, value);
      assert.equal(reply.effects[effectId], 'running');
      assert.equal(first.state, 'open', `the ${message.type} ask was answered only after the effect ended`);
    }

    const began = Date.now();
    await kill(owner);
    // From here on nobody messages the actor: only the effect target and the database are watched.
    const second = await target.request(effectId, 2, 20_000);
    note(`re-run reached the target ${Date.now() - began} ms after kill -9`);
    assert.equal(second.actorId, id);
    await eventually(() => first.state === 'aborted', 'the first run’s connection closed with its process');
    await eventually(() => target.withKey(effectId).some((request) => request.state === 'answered'), 'the target answered the re-run', LONG_EFFECT_MS + 5000);
    note(`target answered the re-run ${Date.now() - began} ms after kill -9`);
    await eventually(() => settled(id), 'the re-run’s result applied and the actor has no work left', 20_000);
    note(`re-run's result applied ${Date.now() - began} ms after kill -9`);

    const final = await ask(other, id, { type: 'get' });
    assert.equal(final.value, 3 + 5, 'the effect’s add was not applied exactly once');
    assert.deepEqual(await addedAmounts(id), [1, 2, 5]);
    const lastRun = target.forActor(id).length;
    assert.equal(final.effects[effectId], `ok:${lastRun}`, 'the state does not hold the result of the last run');
    assert.equal(await commandExists(outcomeCommandId(id, effectId, 1)), false, 'a result of the killed run was recorded');
    // Run again once, with the same id: x-attempt 2, state ok:2.
    await checkRuns(id, effectId, [2], [other]);
  });

  it('applies once an effect result whose node was killed just after the target answered (a spread of kill points across the window)', async () => {
    const { nodes, target } = await startWorld();
    const [owner, other] = nodes;
    const ids = await idsOwnedBy(owner, 'answered', 10);
    const addOf = (actorId: string) => 10 + ids.indexOf(actorId);
    target.respond = (request) => (request.attempt === 1 ? 'hold' : addOf(request.actorId));
    await Promise.all(ids.map((id) => ask(other, id, { type: 'work', url: target.url(), effectId: `op-${id}`, by: 0 })));
    const firsts = await Promise.all(ids.map((id) => target.request(`op-${id}`, 1)));

    // Actor i is answered about (9 - i) × 6 ms before the kill; the last one as its answer leaves the target.
    for (const [index, request] of firsts.entries()) {
      assert.equal(await request.answer(addOf(request.actorId)), true);
      if (index < firsts.length - 1) await delay(6);
    }
    await kill(owner);

    for (const id of ids) await eventually(() => settled(id), `${id} has no work left`, 20_000);
    const windows: string[] = [];
    for (const id of ids) {
      const effectId = `op-${id}`;
      // Killed before its result was recorded: run again once with the same id; after: not run again.
      const lastAttempt = await checkRuns(id, effectId, [1, 2], [other]);
      const reply = await ask(other, id, { type: 'get' });
      assert.equal(reply.value, addOf(id), `${id}: the result was not applied exactly once`);
      assert.equal(reply.effects[effectId], `ok:${lastAttempt}`, `${id}: the state does not hold the result of the last run`);
      assert.deepEqual(await addedAmounts(id), [addOf(id)]);
      windows.push(lastAttempt === 1 ? 'recorded before the kill' : 're-run');
    }
    note(`kill points: ${windows.join(', ')}`);
  });

  it('aborts an effect in flight: the abort is answered at once, the target sees the connection closed, the state shows aborted and no result comes later', async () => {
    const { nodes, target } = await startWorld();
    const [owner, other] = nodes;
    const [id] = await idsOwnedBy(owner, 'cancel');
    target.respond = () => 'hold';

    await ask(other, id, { type: 'work', url: target.url(), effectId: 'op-http', by: 1000 });
    const request = await target.request('op-http', 1);
    // The target never answers op-http: an abort that waited for the effect would time out.
    await ask(other, id, { type: 'abortWork', effectId: 'op-http' }, 5000);
    await eventually(() => request.state === 'aborted', 'the target saw the request aborted');
    assert.equal((await ask(other, id, { type: 'get' })).effects['op-http'], 'aborted');

    // A run that ignores the abort and returns a value afterwards: its value must not be applied.
    await owner.call({ op: 'holdEffects', effectIds: ['op-late'] });
    await ask(other, id, { type: 'work', sleepMs: 0, by: 100, effectId: 'op-late' });
    await eventually(async () => (await owner.status()).heldEffects.includes('op-late'), 'op-late has its value');
    await ask(other, id, { type: 'abortWork', effectId: 'op-late' }, 5000);
    assert.deepEqual(await owner.call({ op: 'releaseEffects', effectIds: ['op-late'] }), ['op-late']);
    await eventually(async () => (await owner.status()).effectRuns.some((run) => run.effectId === 'op-late' && run.outcome === 'ok'), 'op-late returned its value');
    // A later effect's result is recorded and applied after anything op-late could still report.
    await ask(other, id, { type: 'work', sleepMs: 0, by: 1, effectId: 'op-marker' });
    await eventually(() => commandProcessed(outcomeCommandId(id, 'op-marker', 1)), 'the marker effect applied');

    const final = await ask(other, id, { type: 'get' });
    assert.deepEqual(final.effects, { 'op-http': 'aborted', 'op-late': 'aborted', 'op-marker': 'ok:1' });
    assert.equal(final.value, 1, 'an aborted effect’s result was applied');
    assert.equal(target.withKey('op-http').length, 1);
    for (const effectId of ['op-http', 'op-late']) assert.equal(await commandExists(outcomeCommandId(id, effectId, 1)), false, `a result of aborted ${effectId} was recorded`);
    const runs = (await owner.status()).effectRuns.filter((run) => run.actorId === id);
    assert.deepEqual(
      runs.map((run) => [run.effectId, run.outcome]).sort(),
      [
        ['op-http', 'aborted'],
        ['op-late', 'ok'],
        ['op-marker', 'ok'],
      ],
    );
    assert.equal(await settled(id), true);
  });

  it('on takeover after kill -9, applies an unmessaged actor’s pending commands in order and re-runs another’s effect in flight, with no ask', async () => {
    const { nodes, target, sql } = await startWorld();
    const [owner, other] = nodes;
    const [pendingId, inflightId] = await idsOwnedBy(owner, 'unasked', 2);
    target.respond = (request) => (request.attempt === 1 ? 'hold' : 40);
    assert.equal((await ask(other, pendingId, { type: 'add', by: 5 })).value, 5);
    await ask(other, inflightId, { type: 'work', url: target.url(), effectId: 'op-q', by: 0 });
    await target.request('op-q', 1);

    // Commands stored while the owner is frozen, so it never sees them; then it dies.
    owner.signal('SIGSTOP');
    const shard = shardOf(pendingId, SHARDS);
    for (const [index, by] of [10, 100, 1000].entries()) {
      await sql.query('INSERT INTO actor_commands (id, shard, kind, actor_id, payload) VALUES ($1, $2, $3, $4, $5)', [
        `direct-${index + 1}`,
        shard,
        'counter',
        pendingId,
        JSON.stringify({ type: 'add', by }),
      ]);
    }
    await kill(owner);

    // Nobody messages either actor: the database and the effect target show the new owner at work.
    await eventually(async () => (await Promise.all(['direct-1', 'direct-2', 'direct-3'].map(commandProcessed))).every(Boolean), 'the pending commands applied', 20_000);
    await target.request('op-q', 2, 20_000);
    await eventually(async () => (await settled(pendingId)) && (await settled(inflightId)), 'the re-run’s result applied: both actors have no work left', 20_000);
    assert.ok((await other.status()).recoveries >= 2, 'the new owner did not activate the actors with unfinished work itself');

    const entries = (await journal(pendingId)).filter((entry) => entry.commandId?.startsWith('direct-'));
    assert.deepEqual(
      entries.map((entry) => [entry.commandId, entry.reply?.value]),
      [
        ['direct-1', 15],
        ['direct-2', 115],
        ['direct-3', 1115],
      ],
    );
    assert.equal((await ask(other, pendingId, { type: 'get' })).value, 1115);
    const runs = await checkRuns(inflightId, 'op-q', [2], [other]);
    const inflight = await ask(other, inflightId, { type: 'get' });
    assert.equal(inflight.value, 40);
    assert.equal(inflight.effects['op-q'], `ok:${runs}`);
  });

  it('after a pause past the lease, refuses the result the paused node’s run reports on resume, drops its unfinished run, and applies the new owner’s re-runs once', async () => {
    const { nodes, target } = await startWorld(PLAIN, TRIPLE);
    const [paused, other] = nodes;
    const [readyId, waitingId] = await idsOwnedBy(paused, 'paused', 2);
    target.respond = (request) => (request.attempt === 1 ? 'hold' : 7);
    // op-ready's first run gets its value just before the pause and reports it only after SIGCONT (a GC pause, a frozen VM).
    await paused.call({ op: 'holdEffects', effectIds: ['op-ready'] });
    await ask(other, readyId, { type: 'work', sleepMs: 0, by: 3, effectId: 'op-ready' });
    // op-waiting's first run is still waiting for the target when the node pauses; the target answers during the pause.
    await ask(other, waitingId, { type: 'work', url: target.url(), effectId: 'op-waiting', by: 0 });
    const first = await target.request('op-waiting', 1);
    await eventually(async () => (await paused.status()).heldEffects.includes('op-ready'), 'op-ready’s first run holds its value');

    const frozen = paused.call<FreezeResult>({ op: 'freeze' });
    await eventually(() => processState(paused) === 'T', 'the node stopped');
    assert.equal(await first.answer(7), true);
    // The other node takes the shard once the lease expires and re-runs both effects with their ids.
    await target.request('op-waiting', 2, 20_000);
    await eventually(async () => (await settled(readyId)) && (await settled(waitingId)), 'the new owner applied both re-runs', 20_000);
    const readyRuns = Math.max(...(await other.status()).effectRuns.filter((run) => run.effectId === 'op-ready').map((run) => run.attempt));
    if ((await leaseLosses([other])) === 0) assert.equal(readyRuns, 2);
    const waitingRuns = await checkRuns(waitingId, 'op-waiting', [2], [other]);

    paused.signal('SIGCONT');
    const resumed = await frozen;
    // The server ends the lease L after the last heartbeat, which may have run one heartbeat period (L / 5) before the pause.
    assert.ok(resumed.stoppedMs > LEASE_TIMEOUT_MS - LEASE_TIMEOUT_MS / 5, `the node was stopped only ${resumed.stoppedMs} ms`);
    assert.deepEqual(resumed.released, ['op-ready']);
    await eventually(async () => (await paused.status()).effectRuns.filter((run) => run.attempt === 1).length === 2, 'both first runs ended on the resumed node');
    const status = await paused.status();
    const firstRuns = Object.fromEntries(status.effectRuns.filter((run) => run.attempt === 1).map((run) => [run.effectId, run.outcome]));
    note(`resumed node: first runs ${JSON.stringify(firstRuns)}, stale results ${status.staleEffectResults}, lease losses ${status.leaseLosses}`);
    // op-ready reported a value after the takeover: the fence must refuse it. op-waiting was dropped with the lost lease.
    assert.deepEqual(firstRuns, { 'op-ready': 'ok', 'op-waiting': 'aborted' });
    await eventually(async () => (await paused.status()).staleEffectResults === 1, 'the stale result refused by the fence (agentrt_actor_stale_effect_results_total)');
    assert.ok(status.leaseLosses >= 1);
    for (const [id, effectId] of [
      [readyId, 'op-ready'],
      [waitingId, 'op-waiting'],
    ]) {
      assert.equal(await commandExists(outcomeCommandId(id, effectId, 1)), false, `the paused node recorded a result of ${effectId}`);
    }

    await waitForBalance(world!.nodes, SHARDS);
    for (const node of [paused, other]) {
      const ready = await ask(node, readyId, { type: 'get' });
      assert.equal(ready.value, 3, 'op-ready’s add was not applied exactly once');
      assert.equal(ready.effects['op-ready'], `ok:${readyRuns}`);
      const waiting = await ask(node, waitingId, { type: 'get' });
      assert.equal(waiting.value, 7, 'op-waiting’s add was not applied exactly once');
      assert.equal(waiting.effects['op-waiting'], `ok:${waitingRuns}`);
    }
    assert.deepEqual(await addedAmounts(readyId), [3]);
    assert.deepEqual(await addedAmounts(waitingId), [7]);
  });

  it('delivers transactional sends exactly once and in send order per receiver across kill -9 of the sender’s owner, twice', async () => {
    await startWorld(TRIPLE);
    const sender = 'sender';
    const receivers = ['receiver-a', 'receiver-b', 'receiver-c'];
    const amounts = Array.from({ length: 24 }, (_, i) => i + 1);
    // The sender's owner is killed while a sending turn is in flight (1 ms and 3 ms after the ask left the driver).
    const killAfterMs = new Map([
      [8, 1],
      [17, 3],
    ]);
    for (const by of amounts) {
      let owner: ClusterNode | undefined;
      await eventually(async () => (owner = await ownerOf(world!.nodes, sender)) !== undefined, 'the sender has an owner');
      const driver = world!.nodes.find((node) => node !== owner) ?? owner!;
      const sent = ask(driver, sender, { type: 'send', to: receivers, by }, 20_000);
      const killAfter = killAfterMs.get(by);
      if (killAfter !== undefined) {
        await delay(killAfter);
        await kill(owner!);
      }
      await sent;
    }
    assert.equal(world!.nodes.length, 1);

    for (const receiver of receivers) {
      await eventually(() => settled(receiver), `${receiver} applied every command`, 20_000);
      assert.deepEqual(await addedAmounts(receiver), amounts, `${receiver} did not apply each send once, in order`);
      assert.equal((await ask(world!.nodes[0], receiver, { type: 'get' })).value, (24 * 25) / 2);
    }
    const senderTurns = (await journal(sender)).filter((entry) => entry.commandId !== null);
    assert.equal(senderTurns.length, amounts.length, 'a send ask was applied twice');
  });

  it('lists only the survivor, with every shard, in the cluster view after kill -9 and after SIGTERM of the other node', async () => {
    const { nodes, env } = await startWorld(PLAIN, SKEWED);
    const [victim, survivor] = nodes;
    type View = { shardCount: number; nodes: Array<{ id: string; shards: number[] }> };
    const everyShard = Array.from({ length: SHARDS }, (_, i) => i);
    const onlySurvivor = async (node: ClusterNode) => {
      const view = await node.call<View>({ op: 'cluster' });
      return view.shardCount === SHARDS && view.nodes.length === 1 && view.nodes[0].id === node.nodeId && view.nodes[0].shards.join() === everyShard.join();
    };
    /** The view must keep listing only the survivor with every shard until `until` (no shard handed back and forth). */
    const staysSettled = async (node: ClusterNode, until: number, what: string) => {
      while (Date.now() < until) {
        const view = await node.call<View>({ op: 'cluster' });
        const shown = view.nodes.map((member) => `${member.id === node.nodeId ? 'survivor' : member.id}: ${member.shards.length} shards`).join(', ');
        assert.ok(await onlySurvivor(node), `${what}, the view changed again: ${shown}`);
        await delay(50);
      }
    };
    const before = await survivor.call<View>({ op: 'cluster' });
    assert.deepEqual(before.nodes.map((node) => node.id).sort(), [victim.nodeId, survivor.nodeId].sort());

    // From the kill on, how many shards the survivor owns: once it has taken them all it must keep them.
    let watching = true;
    const owned: number[] = [];
    const watch = (async () => {
      while (watching) {
        owned.push((await survivor.status()).owned.length);
        await delay(20);
      }
    })();
    await kill(victim);
    const killedAt = Date.now();
    await eventually(() => onlySurvivor(survivor), 'the view lists only the survivor with every shard after kill -9', 15_000);
    note(`view settled ${Date.now() - killedAt} ms after kill -9 (lease ${LEASE_TIMEOUT_MS} ms)`);
    // Past the time the dead node could still count as a member (a rebalance heartbeat window): nothing moves any more.
    await staysSettled(survivor, Math.max(Date.now() + 1000, killedAt + LEASE_TIMEOUT_MS + 1000), 'after kill -9');
    watching = false;
    await watch;
    const firstAll = owned.indexOf(SHARDS);
    const trace = owned.filter((count, i) => i === 0 || count !== owned[i - 1]).join(' → ');
    // Checked at the end, so that the SIGTERM case below is checked as well.
    const keptEveryShard = owned.slice(firstAll).every((count) => count === SHARDS);

    const joiner = await startNode(env);
    await waitForBalance(world!.nodes, SHARDS);
    const both = await joiner.call<View>({ op: 'cluster' });
    assert.deepEqual(both.nodes.map((node) => node.id).sort(), [survivor.nodeId, joiner.nodeId].sort());

    joiner.signal('SIGTERM');
    assert.equal(await joiner.exited, 0);
    world!.nodes = world!.nodes.filter((node) => node !== joiner);
    const stoppedAt = Date.now();
    await eventually(() => onlySurvivor(survivor), 'the view lists only the survivor with every shard after SIGTERM', 15_000);
    note(`view settled ${Date.now() - stoppedAt} ms after SIGTERM`);
    await staysSettled(survivor, Date.now() + 1000, 'after SIGTERM');

    assert.ok(keptEveryShard, `the survivor took every shard after kill -9, then gave some up and took them again (shards owned: ${trace})`);
  });

  it('publishes an actor’s events with gapless sequences in order across a failover to a node whose clock is an hour behind', async () => {
    const { nodes } = await startWorld(SKEWED, null);
    const [ontime, behind] = nodes;
    const [ontimeStatus, behindStatus] = await Promise.all([ontime.status(), behind.status()]);
    const { bus } = ontimeStatus;
    assert.ok(ontimeStatus.now - behindStatus.now > HOUR_MS - 60_000, 'the second node’s clock is not skewed');
    const [id] = await idsOwnedBy(ontime, 'emitter');
    const subject = `${bus.subjectPrefix}.events.counter.${id}`;
    const connection = await connect({ servers: TEST_NATS_URL });
    try {
      const manager = await jetstreamManager(connection);
      const published = async () => (await rows<{ n: number }>('SELECT count(*)::int AS n FROM actor_outbox WHERE persistence_key = $1 AND published_at IS NOT NULL', [`counter:${id}`]))[0].n;
      const unpublished = async () => (await rows<{ n: number }>('SELECT count(*)::int AS n FROM actor_outbox WHERE persistence_key = $1 AND published_at IS NULL', [`counter:${id}`]))[0].n;

      // 9 events published by the on-time node.
      for (let i = 0; i < 3; i++) await ask(behind, id, { type: 'emit', count: 3 });
      await eventually(async () => (await published()) === 9, 'the on-time node published its events');

      // JetStream stops taking the actor's events (the stream no longer captures them): 6 more stay in the outbox.
      await manager.streams.update(bus.eventStream, { subjects: [`${bus.subjectPrefix}.parked.>`] });
      for (let i = 0; i < 2; i++) await ask(behind, id, { type: 'emit', count: 3 });
      assert.equal(await unpublished(), 6);
      await kill(ontime);
      await manager.streams.update(bus.eventStream, { subjects: [`${bus.subjectPrefix}.events.>`] });

      // The node an hour behind takes over, publishes what was left, then its own 9.
      for (let i = 0; i < 3; i++) await ask(behind, id, { type: 'emit', count: 3 });
      await eventually(async () => (await published()) === 24, 'every event published', 20_000);

      const info = await manager.streams.info(bus.eventStream);
      assert.equal(info.state.messages, 24);
      const consumer = await jetstream(connection).consumers.get(bus.eventStream, { filter_subjects: subject });
      const events: Array<{ header: number; sequence: number; id: string; occurredAt: string }> = [];
      for await (const message of await consumer.fetch({ max_messages: 24, expires: 5000 })) {
        const payload = message.json<{ id: string; sequence: number; occurredAt: string }>();
        events.push({ header: Number(message.headers?.get('Agentrt-Actor-Sequence')), sequence: payload.sequence, id: payload.id, occurredAt: payload.occurredAt });
        if (events.length === 24) break;
      }
      const expected = Array.from({ length: 24 }, (_, i) => i + 1);
      assert.deepEqual(
        events.map((event) => event.sequence),
        expected,
        'payload sequences out of order or with a gap',
      );
      assert.deepEqual(
        events.map((event) => event.header),
        expected,
        'Agentrt-Actor-Sequence headers out of order or with a gap',
      );
      // The skew took effect: the last events' ids and times are an hour older than the first ones'.
      const timeOf = (eventId: string) => decodeTime(eventId.replace(/^evt_/, ''));
      assert.ok(timeOf(events[0].id) - timeOf(events[23].id) > HOUR_MS - 60_000, 'the taking-over node’s event ids do not carry its skewed clock');
      assert.ok(Date.parse(events[0].occurredAt) - Date.parse(events[23].occurredAt) > HOUR_MS - 60_000);
    } finally {
      await connection.close();
    }
  });
});
