// The "nodes" scenario (issue 10 item 5): three nodes under a steady load of
// objectives that call an HTTP tool and a slow one and emit webhooks to four
// receivers (healthy, slow, failing for a while, gone with 410), through a
// rolling deploy (a fourth node joins, a node is stopped with SIGTERM and
// started again: no fault, planned moves), kill -9 and restart of a node,
// SIGSTOP of another past its lease then SIGCONT, a NATS restart and a
// Postgres restart. Checked as chaos/checks.ts says, plus the rolling deploy:
// no tool call received twice (a planned move lets the calls in flight
// finish), the stopped node exited 0.
import { setTimeout as sleep } from 'node:timers/promises';
import { Checks, checkApi, checkEventNumbering, checkObjectives, checkQuiescence, checkToolCalls, checkWebhooks, resentCalls, waitQuiet } from './checks';
import { ChaosCluster } from './cluster';
import { ObjectiveLoad } from './load';
import { say, seconds } from './log';
import { RECEIVER_KINDS } from './receivers';
import { GRACE_MS, PHASE_MS, RATE, type ChaosScenario } from './scenario';

const NODE_COUNT = 3;
const LEASE_TIMEOUT_MS = 4_000;
const FAILING_FROM_MS = 5_000;
const FAILING_FOR_MS = 20_000;

export class NodesScenario implements ChaosScenario {
  readonly name = 'nodes';
  readonly cluster: ChaosCluster;
  private readonly load: ObjectiveLoad;
  /** The rolling deploy's span (not a fault window: nothing may be sent twice in it), and the stopped node's exit code. */
  private deploy: { start: number; end: number; exitCode: number | null } | undefined;
  private failingTimers: NodeJS.Timeout[] = [];

  constructor(root: string) {
    this.cluster = new ChaosCluster(root, {
      nodes: NODE_COUNT,
      // The node that joins in the rolling deploy.
      spareNodes: 1,
      shardCount: 30,
      leaseTimeoutMs: LEASE_TIMEOUT_MS,
      rebalanceIntervalMs: 500,
      webhookRetrySchedule: '1s,2s,4s,8s,8s,8s,8s,8s',
      receiverKinds: RECEIVER_KINDS,
      agentsPerReceiver: 2,
      slowReceiverMs: 3_000,
      tools: { effect: '/effect', slow: '/slow' },
      toolAnswerDelayMs: 300,
      // Calls still running when a node hands its shards off (below the runtime's default drain time, 25 s: actors/runtime-options.ts).
      slowToolAnswerDelayMs: 6_000,
    });
    this.load = new ObjectiveLoad(this.cluster, RATE, (index) => `CALL effect {"n": ${index}}\nCALL slow {"n": ${index}}\nSAY done`);
  }

  setUp(): Promise<void> {
    return this.cluster.setUp();
  }

  async run(): Promise<Checks> {
    this.startLoad();
    await this.runFaults();
    await this.load.stop();
    const quiet = await waitQuiet(this.cluster);
    return this.runChecks(quiet);
  }

  stop(): void {
    this.load.abort();
    for (const timer of this.failingTimers) clearTimeout(timer);
  }

  private startLoad(): void {
    this.load.start();
    const startedAt = Date.now();
    const { receivers } = this.cluster;
    this.failingTimers.push(
      setTimeout(() => {
        receivers.setFailing(true);
        say(`receiver "failing" starts answering 503 (for ${FAILING_FOR_MS / 1000} s)`);
      }, FAILING_FROM_MS),
      setTimeout(() => {
        receivers.setFailing(false);
        say(`receiver "failing" answers 200 again (${seconds(Date.now() - startedAt)} s after the load started)`);
      }, FAILING_FROM_MS + FAILING_FOR_MS),
    );
  }

  /**
   * A rolling deploy under load, with slow tool calls running: a fourth node
   * joins (the others hand it shards), a node is stopped with SIGTERM and
   * started again. Planned moves, not faults: no window opens, so a call sent
   * twice or an API failure meanwhile fails the checks.
   */
  private async rollingDeploy(): Promise<void> {
    const { cluster } = this;
    const start = Date.now();
    const joining = cluster.nodes[NODE_COUNT];
    say(`DEPLOY: ${joining.name} joins`);
    await joining.start();
    say(`${joining.name} listening as ${joining.nodeId}`);
    await cluster.waitBalanced(90_000);
    const stopped = cluster.nodes[NODE_COUNT - 1];
    say(`DEPLOY: SIGTERM ${stopped.name} (${stopped.nodeId})`);
    const exitCode = await stopped.terminate();
    say(`${stopped.name} exited with ${exitCode} after ${seconds(Date.now() - start)} s into the deploy; starting it again`);
    await stopped.start();
    say(`${stopped.name} listening again as ${stopped.nodeId}`);
    await cluster.waitBalanced(90_000);
    this.deploy = { start, end: Date.now(), exitCode };
    say(`DEPLOY done in ${seconds(Date.now() - start)} s`);
  }

  private async runFaults(): Promise<void> {
    const { cluster } = this;
    const { windows } = cluster;
    await sleep(PHASE_MS);
    await this.rollingDeploy();
    await sleep(PHASE_MS);

    const killed = cluster.nodes[0];
    const kill = windows.open(`kill -9 ${killed.name} (${killed.nodeId})`);
    await killed.kill();
    await sleep(3_000);
    say(`restarting ${killed.name}`);
    await killed.start();
    say(`${killed.name} listening again as ${killed.nodeId}`);
    await cluster.waitBalanced(90_000);
    windows.close(kill, GRACE_MS);
    await sleep(PHASE_MS);

    const paused = cluster.nodes[1];
    const stop = windows.open(`SIGSTOP ${paused.name} for ${(LEASE_TIMEOUT_MS + 4_000) / 1000} s (lease ${LEASE_TIMEOUT_MS / 1000} s)`);
    paused.pause();
    await sleep(LEASE_TIMEOUT_MS + 4_000);
    paused.resume();
    say(`SIGCONT ${paused.name}`);
    await cluster.waitBalanced(90_000);
    windows.close(stop, GRACE_MS);
    await sleep(PHASE_MS);

    const natsRestart = windows.open('restart NATS (down 5 s)');
    await cluster.nats.stop();
    await sleep(5_000);
    await cluster.nats.start();
    say('NATS up again');
    await cluster.waitBalanced(90_000);
    // Clients reconnect with a back-off: the window stays open a little longer.
    windows.close(natsRestart, 2 * GRACE_MS);
    await sleep(PHASE_MS);

    const pgRestart = windows.open('restart Postgres (immediate stop, down 5 s)');
    await cluster.postgres.stop();
    await sleep(5_000);
    await cluster.postgres.start();
    say('Postgres up again');
    await cluster.waitBalanced(120_000);
    windows.close(pgRestart, 2 * GRACE_MS);
    await sleep(PHASE_MS);
  }

  private async runChecks(quiet: boolean): Promise<Checks> {
    const { cluster } = this;
    const checks = new Checks();
    checkQuiescence(checks, quiet);
    await checkObjectives(checks, cluster, this.load);
    await checkEventNumbering(checks, cluster);
    await checkToolCalls(checks, cluster);
    this.checkDeploy(checks);
    await checkWebhooks(checks, cluster);
    checkApi(checks, cluster, { onlyUnavailableInside: false });
    return checks;
  }

  private checkDeploy(checks: Checks): void {
    const { deploy } = this;
    const resent = resentCalls(this.cluster);
    const resentInDeploy = deploy ? resent.filter((requests) => requests.slice(1).some((request) => request.receivedAt >= deploy.start && request.receivedAt <= deploy.end + GRACE_MS)).length : 0;
    const sentInDeploy = deploy ? this.cluster.tool.requests.filter((request) => request.receivedAt >= deploy.start && request.receivedAt <= deploy.end).length : 0;
    checks.add('rolling deploy (a node joins, a node SIGTERMed and restarted): no tool call received twice, the stopped node exited 0',
      deploy !== undefined && deploy.exitCode === 0 && resentInDeploy === 0 && sentInDeploy > 0,
      deploy
        ? `${seconds(deploy.end - deploy.start)} s, ${sentInDeploy} tool requests received meanwhile, ${resentInDeploy} keys received again during it (or within ${GRACE_MS / 1000} s after), exit code ${deploy.exitCode}`
        : 'the deploy did not run');
  }
}
