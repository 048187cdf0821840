// The "infrastructure" scenario (issue 29): two nodes on their own Postgres and
// NATS under a steady load of objectives (one HTTP tool call each, webhooks to
// a healthy receiver), through, with calm phases between: NATS restarted (down
// 8 s), Postgres restarted (immediate stop, down 8 s), NATS away 25 s,
// Postgres away 30 s, NATS replaced by an empty server (stopped, its store
// wiped, a fresh one started on the same port). After each return it measures
// the time back to full service per node (chaos/recovery-probe.ts) and prints
// a table. Besides the shared checks (chaos/checks.ts) it passes when:
// - both nodes survive: the same processes, never restarted, /readyz 200 at the end;
// - /healthz answers 200 throughout, and /readyz 503 naming the dependency
//   during each outage of 8 s or more (sampled every 500 ms);
// - the API answers nothing but 503 when it cannot serve during the outages;
// - every event reaches the receiver but those lost with the replaced
//   server's store: events the old server had acknowledged (their outbox row
//   marked published before the new server was started, so no other server
//   can have taken them) that the webhook intake had not yet turned into a
//   delivery when the store was wiped. They are counted and printed;
// - back to full service within 2 s of each return on every node.
import { setTimeout as sleep } from 'node:timers/promises';
import { Checks, checkApi, checkEventNumbering, checkObjectives, checkQuiescence, checkToolCalls, checkWebhooks, waitQuiet } from './checks';
import { ChaosCluster } from './cluster';
import { ObjectiveLoad } from './load';
import { say, seconds, stamp } from './log';
import { probeRecovery, watchReturn, type DependencyName, type NodeRecovery } from './recovery-probe';
import { GRACE_MS, PHASE_MS, RATE, type ChaosScenario } from './scenario';

/** How long the replaced NATS stays away between the old server's exit and the new one's start (a pod being rescheduled). */
const REPLACEMENT_GAP_MS = 2_000;
/** The target: back to full service within this long of the dependency's return. */
const TARGET_MS = 2_000;
/** Outages at least this long must show in /readyz (shorter ones may fall between two samples). */
const READYZ_MIN_OUTAGE_MS = 8_000;
const SAMPLE_EVERY_MS = 500;

interface Outage {
  name: string;
  dependency: DependencyName;
  downMs: number;
  /** NATS comes back empty (a new server without the old one's store). */
  replaced?: boolean;
}

const OUTAGES: Outage[] = [
  { name: 'NATS restarted (down 8 s)', dependency: 'nats', downMs: 8_000 },
  { name: 'Postgres restarted (immediate stop, down 8 s)', dependency: 'postgres', downMs: 8_000 },
  { name: 'NATS away 25 s', dependency: 'nats', downMs: 25_000 },
  { name: 'Postgres away 30 s', dependency: 'postgres', downMs: 30_000 },
  { name: 'NATS replaced by an empty server', dependency: 'nats', downMs: REPLACEMENT_GAP_MS, replaced: true },
];

interface OutageRecord extends Outage {
  /** The old server gone. */
  stoppedAt: number;
  /** The new server's process started (nothing could accept connections before). */
  startingAt: number;
  /** It accepts connections. */
  returnedAt: number;
  recoveries: NodeRecovery[];
}

interface Sample {
  node: string;
  path: '/readyz' | '/healthz';
  at: number;
  status: number;
  body: string;
}

/** What a /readyz answer must say of the dependency that is away. */
const NAMED: Record<DependencyName, RegExp> = { nats: /NATS/i, postgres: /Postgres|database/i };

export class InfrastructureScenario implements ChaosScenario {
  readonly name = 'infrastructure';
  readonly cluster: ChaosCluster;
  private readonly load: ObjectiveLoad;
  private readonly outages: OutageRecord[] = [];
  private readonly samples: Sample[] = [];
  private sampling = false;
  private sampler: Promise<void> | undefined;

  constructor(root: string) {
    this.cluster = new ChaosCluster(root, {
      nodes: 2,
      shardCount: 30,
      leaseTimeoutMs: 4_000,
      rebalanceIntervalMs: 500,
      webhookRetrySchedule: '1s,2s,4s,8s,8s,8s,8s,8s',
      receiverKinds: ['healthy'],
      agentsPerReceiver: 4,
      slowReceiverMs: 3_000,
      tools: { effect: '/effect' },
      // Short: the probe's objective (one tool call) counts it in its time back to full service.
      toolAnswerDelayMs: 100,
      slowToolAnswerDelayMs: 6_000,
    });
    this.load = new ObjectiveLoad(this.cluster, RATE, (index) => `CALL effect {"n": ${index}}\nSAY done`);
  }

  setUp(): Promise<void> {
    return this.cluster.setUp();
  }

  async run(): Promise<Checks> {
    this.startSampling();
    this.load.start();
    await sleep(PHASE_MS);
    for (const outage of OUTAGES) {
      await this.goThrough(outage);
      await sleep(PHASE_MS);
    }
    await this.load.stop();
    const quiet = await waitQuiet(this.cluster);
    await this.stopSampling();
    await this.printRecoveries();
    return this.runChecks(quiet);
  }

  stop(): void {
    this.load.abort();
    this.sampling = false;
  }

  // ---------------------------------------------------------------- outages

  private async goThrough(outage: Outage): Promise<void> {
    const { cluster } = this;
    const window = cluster.windows.open(outage.name);
    let stoppedAt = 0;
    let startingAt = 0;
    let back: Promise<number> | undefined;
    if (outage.replaced) {
      await cluster.nats.replaceWithEmpty(async () => {
        stoppedAt = Date.now();
        say(`NATS stopped and its store wiped; a fresh server starts in ${REPLACEMENT_GAP_MS / 1000} s on port ${cluster.nats.port}`);
        await sleep(outage.downMs);
        back = watchReturn(cluster, 'nats');
        startingAt = Date.now();
      });
    } else {
      const dependency = outage.dependency === 'nats' ? cluster.nats : cluster.postgres;
      await dependency.stop();
      stoppedAt = Date.now();
      say(`${outage.dependency} stopped; back in ${outage.downMs / 1000} s`);
      await sleep(outage.downMs);
      back = watchReturn(cluster, outage.dependency);
      startingAt = Date.now();
      await dependency.start();
    }
    const returnedAt = await back!;
    say(`${outage.dependency} accepts connections again after ${seconds(returnedAt - stoppedAt)} s down; probing each node`);
    const recoveries = await Promise.all(cluster.liveNodes().map((node, index) => probeRecovery(cluster, node, returnedAt, `o${this.outages.length + 1}-n${index}`)));
    for (const recovery of recoveries) {
      say(`  ${recovery.node}: create accepted ${describeMs(recovery.createAcceptedMs)}, objective completed ${describeMs(recovery.completedMs)} after the return (${recovery.attempts} creates: ${recovery.answers})`);
    }
    this.outages.push({ ...outage, stoppedAt, startingAt, returnedAt, recoveries });
    try {
      await cluster.waitBalanced(90_000);
    } catch (error) {
      // The checks say what this left behind; the scenario goes on to the next outage.
      say(`after "${outage.name}": ${(error as Error).message}`);
    }
    cluster.windows.close(window, GRACE_MS);
  }

  /**
   * The table of recoveries. Besides the probe's figures, per outage: when
   * the last event persisted while the dependency was away reached the
   * receiver, from the return (the outbox's backlog going out; none are
   * persisted while Postgres is away).
   */
  private async printRecoveries(): Promise<void> {
    const events = await this.cluster.query<{ id: string; created_at: Date }>('SELECT id, created_at FROM objective_events');
    const firstReceipt = new Map<string, number>();
    for (const receipt of this.cluster.receivers.receipts) {
      if (receipt.eventId && receipt.status < 300 && !firstReceipt.has(receipt.eventId)) firstReceipt.set(receipt.eventId, receipt.receivedAt);
    }
    const backlog = (outage: OutageRecord): string => {
      const during = events.filter((event) => event.created_at.getTime() >= outage.stoppedAt && event.created_at.getTime() < outage.returnedAt);
      if (!during.length) return 'none persisted';
      const last = Math.max(...during.map((event) => firstReceipt.get(event.id) ?? Number.POSITIVE_INFINITY));
      return `${Number.isFinite(last) ? `${seconds(last - outage.returnedAt)} s` : 'not all'} (${during.length} events)`;
    };
    console.log(`\nBack to full service after each outage (from the dependency accepting connections; target ${TARGET_MS / 1000} s):`);
    const rows = [['outage', 'down for', 'node', 'create accepted', 'objective completed', 'probe creates (status count)', 'events of the outage delivered']];
    for (const outage of this.outages) {
      for (const recovery of outage.recoveries) {
        rows.push([outage.name, `${seconds(outage.returnedAt - outage.stoppedAt)} s`, recovery.node, describeMs(recovery.createAcceptedMs), describeMs(recovery.completedMs), recovery.answers, backlog(outage)]);
      }
    }
    const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
    for (const row of rows) console.log(`  ${row.map((cell, column) => cell.padEnd(widths[column])).join('  ')}`);
  }

  // ---------------------------------------------------------------- readiness

  /** Samples /readyz and /healthz of every node every SAMPLE_EVERY_MS (not API traffic: kept apart from the API's records). */
  private startSampling(): void {
    this.sampling = true;
    this.sampler = (async () => {
      while (this.sampling) {
        await Promise.all(this.cluster.liveNodes().flatMap((node) => (['/readyz', '/healthz'] as const).map(async (path) => {
          const at = Date.now();
          try {
            const response = await fetch(`${node.url}${path}`, { signal: AbortSignal.timeout(5_000) });
            this.samples.push({ node: node.name, path, at, status: response.status, body: await response.text() });
          } catch (error) {
            this.samples.push({ node: node.name, path, at, status: 0, body: (error as Error).message });
          }
        })));
        await sleep(SAMPLE_EVERY_MS);
      }
    })();
  }

  private async stopSampling(): Promise<void> {
    this.sampling = false;
    await this.sampler;
  }

  // ---------------------------------------------------------------- checks

  private async runChecks(quiet: boolean): Promise<Checks> {
    const { cluster } = this;
    const checks = new Checks();
    checkQuiescence(checks, quiet);
    await this.checkNodes(checks);
    this.checkReadiness(checks);
    await checkObjectives(checks, cluster, this.load);
    await checkEventNumbering(checks, cluster);
    await checkToolCalls(checks, cluster);
    const { lost, account } = await this.lostWithStore();
    await checkWebhooks(checks, cluster, lost, account);
    checkApi(checks, cluster, { onlyUnavailableInside: true });
    this.checkTarget(checks);
    return checks;
  }

  /** Both nodes are the processes started at set-up, still running, and ready. */
  private async checkNodes(checks: Checks): Promise<void> {
    const states = await Promise.all(this.cluster.nodes.map(async (node) => {
      const running = node.process !== null && node.process.child.exitCode === null && node.process.child.signalCode === null;
      let ready = 'no answer';
      if (running) {
        try {
          const response = await fetch(`${node.url}/readyz`, { signal: AbortSignal.timeout(5_000) });
          ready = `${response.status} ${(await response.text()).slice(0, 160)}`;
        } catch (error) {
          ready = `no answer (${(error as Error).message})`;
        }
      }
      return { node, running, ready };
    }));
    checks.add('both nodes survive (the same processes, never restarted) and are ready (/readyz 200) at the end',
      states.every(({ node, running, ready }) => running && node.starts === 1 && ready.startsWith('200')),
      states.map(({ node, running, ready }) => `${node.name}: ${running ? 'running' : 'EXITED'}, started ${node.starts} time(s), /readyz ${ready}`).join('; '));
  }

  private checkReadiness(checks: Checks): void {
    const health = this.samples.filter((sample) => sample.path === '/healthz');
    const unhealthy = health.filter((sample) => sample.status !== 200);
    checks.add('/healthz answers 200 throughout (an orchestrator does not kill a node for its dependency\'s outage)', unhealthy.length === 0 && health.length > 0,
      `${health.length} samples, ${unhealthy.length} not 200${unhealthy.length ? ` (first: ${unhealthy[0].node} at ${stamp(unhealthy[0].at)}: ${unhealthy[0].status} ${unhealthy[0].body.slice(0, 120)})` : ''}`);
    const figures: string[] = [];
    let pass = true;
    for (const outage of this.outages.filter((o) => o.returnedAt - o.stoppedAt >= READYZ_MIN_OUTAGE_MS)) {
      for (const node of this.cluster.nodes.slice(0, 2)) {
        const during = this.samples.filter((sample) => sample.node === node.name && sample.path === '/readyz' && sample.at >= outage.stoppedAt && sample.at <= outage.startingAt);
        const naming = during.filter((sample) => sample.status === 503 && NAMED[outage.dependency].test(sample.body));
        const answered200 = during.filter((sample) => sample.status === 200).length;
        if (naming.length === 0) pass = false;
        figures.push(`${outage.name}, ${node.name}: ${during.length} samples, ${naming.length} 503 naming ${outage.dependency}, ${answered200} 200${naming.length === 0 && during.length ? ` (last: ${during[during.length - 1].status} ${during[during.length - 1].body.slice(0, 100)})` : ''}`);
      }
    }
    checks.add('/readyz answers 503 naming the dependency during each outage (of 8 s or more)', pass && figures.length > 0, figures.join('; '));
  }

  /**
   * The events lost with the replaced server's store: without a delivery, and
   * their outbox row marked published before the new server started (only the
   * old server can have acknowledged them). An event without a delivery
   * marked later, or never, is a loss the checks count.
   */
  private async lostWithStore(): Promise<{ lost: Map<string, string>; account: string }> {
    const replaced = this.outages.find((outage) => outage.replaced);
    const lost = new Map<string, string>();
    // Every event without a delivery, with its outbox row's state (null: no row, or not published).
    const undelivered = await this.cluster.query<{ id: string; has_row: boolean; published_at: Date | null }>(`
      SELECT e.id, o.id IS NOT NULL AS has_row, o.published_at FROM objective_events e LEFT JOIN actor_outbox o ON o.id = e.id
      WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.objective_event_id = e.id)`);
    let beforeStop = 0;
    for (const row of undelivered) {
      const publishedAt = row.published_at?.getTime();
      if (!replaced || publishedAt === undefined || publishedAt >= replaced.startingAt) continue;
      lost.set(row.id, 'acknowledged by the replaced NATS server, lost with its store');
      if (publishedAt <= replaced.stoppedAt) beforeStop += 1;
    }
    const noRow = undelivered.filter((row) => !row.has_row).length;
    const unpublished = undelivered.filter((row) => row.has_row && !row.published_at).length;
    const later = undelivered.length - lost.size - noRow - unpublished;
    const account = `events lost with the replaced NATS server's store (acknowledged by it, not yet taken in by the webhook intake): ${lost.size}`
      + ` (marked published ${beforeStop} before the old server was gone, ${lost.size - beforeStop} after it, before the new one started);`
      + ` other events without a delivery: ${later} published later, ${unpublished} never published, ${noRow} without an outbox row`;
    say(account);
    return { lost, account };
  }

  private checkTarget(checks: Checks): void {
    const figures: string[] = [];
    let pass = this.outages.length === OUTAGES.length;
    for (const outage of this.outages) {
      for (const recovery of outage.recoveries) {
        const ok = recovery.createAcceptedMs !== undefined && recovery.completedMs !== undefined && recovery.createAcceptedMs <= TARGET_MS && recovery.completedMs <= TARGET_MS;
        if (!ok) pass = false;
        figures.push(`${outage.name}, ${recovery.node}: ${describeMs(recovery.createAcceptedMs)} / ${describeMs(recovery.completedMs)}${ok ? '' : ' (over)'}`);
      }
    }
    checks.add(`back to full service (a create accepted / an objective completed) within ${TARGET_MS / 1000} s of each return, on every node`, pass, figures.join('; '));
  }
}

function describeMs(ms: number | undefined): string {
  return ms === undefined ? 'not within 60 s' : `${(ms / 1000).toFixed(2)} s`;
}
