// A three-server NATS cluster of our own for tests (issue 29 item 4): three
// nats-server processes with JetStream, each with its own name, client port,
// cluster port, monitoring port and store folder, routed to the other two.
// A server can be killed with -9 and started again on the same ports and
// folder, as a pod rescheduled with its volume would be. Readiness is read
// from each server's monitoring endpoint (/jsz): a JetStream meta leader that
// every running server agrees on, with every peer current.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { freePort, waitForPort } from './private-services';

const NATS_SERVER = process.env.CHAOS_NATS_SERVER ?? '/usr/sbin/nats-server';
const CLUSTER_NAME = 'agentrt-test';
const READY_TIMEOUT_MS = 30_000;

/** What a server's /jsz says of the JetStream meta group (2.9). */
interface MetaCluster {
  name?: string;
  leader?: string;
  cluster_size?: number;
  replicas?: Array<{ name: string; current: boolean; offline?: boolean }>;
}

/** One server of the cluster: its ports and folder stay the same across restarts. */
export class ClusterNatsServer {
  private child: ChildProcess | null = null;
  private output = '';
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    readonly dir: string,
    readonly port: number,
    readonly clusterPort: number,
    readonly monitorPort: number,
    private readonly routes: () => string[],
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== null;
  }

  async start(): Promise<void> {
    if (this.child) return;
    const args = [
      '-a', '127.0.0.1', '-p', String(this.port), '-m', String(this.monitorPort),
      '-n', this.name, '-js', '-sd', this.dir,
      '--cluster_name', CLUSTER_NAME, '--cluster', `nats://127.0.0.1:${this.clusterPort}`, '--routes', this.routes().join(','),
    ];
    const child = spawn(NATS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.output += `--- start ${new Date().toISOString()}\n`;
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    this.child = child;
    await waitForPort(this.port, 20_000, `nats-server ${this.name}`);
  }

  /** kill -9 (default), or another signal; resolves once the process has exited. */
  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child) return;
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await this.exited;
  }

  /** This server's view of the JetStream meta group, or null while it does not answer. */
  async meta(): Promise<MetaCluster | null> {
    if (!this.child) return null;
    try {
      const response = await fetch(`http://127.0.0.1:${this.monitorPort}/jsz`, { signal: AbortSignal.timeout(2_000) });
      if (!response.ok) return null;
      const body = (await response.json()) as { meta_cluster?: MetaCluster };
      return body.meta_cluster ?? null;
    } catch {
      return null;
    }
  }

  /** The names of the clients connected to this server now (a node names its connection after its node id). */
  async clientNames(): Promise<string[]> {
    if (!this.child) return [];
    try {
      const response = await fetch(`http://127.0.0.1:${this.monitorPort}/connz?limit=1024`, { signal: AbortSignal.timeout(2_000) });
      const body = (await response.json()) as { connections?: Array<{ name?: string }> };
      return (body.connections ?? []).map((connection) => connection.name ?? '');
    } catch {
      return [];
    }
  }

  log(): string {
    return this.output;
  }
}

export class NatsCluster {
  private constructor(readonly servers: ClusterNatsServer[]) {}

  /** Starts three servers in folders under `root` and waits until JetStream has a meta leader with every peer current. */
  static async start(root: string, size = 3): Promise<NatsCluster> {
    if (!existsSync(NATS_SERVER)) throw new Error(`${NATS_SERVER} is missing (set CHAOS_NATS_SERVER)`);
    const servers: ClusterNatsServer[] = [];
    for (let index = 0; index < size; index += 1) {
      const name = `nats-${String.fromCharCode(97 + index)}`;
      const dir = path.join(root, name);
      await fs.mkdir(dir, { recursive: true });
      const routes = () => servers.filter((server) => server.name !== name).map((server) => `nats://127.0.0.1:${server.clusterPort}`);
      // Ports taken one after the other while none is bound yet could repeat: a set keeps them distinct.
      servers.push(new ClusterNatsServer(name, dir, ...(await threeFreePorts(servers)), routes));
    }
    const cluster = new NatsCluster(servers);
    try {
      await Promise.all(servers.map((server) => server.start()));
      await cluster.waitReady();
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** `nats://127.0.0.1:a,nats://127.0.0.1:b,nats://127.0.0.1:c`, as NATS_URL takes it. */
  get urlList(): string {
    return this.servers.map((server) => server.url).join(',');
  }

  get urls(): string[] {
    return this.servers.map((server) => server.url);
  }

  byName(name: string): ClusterNatsServer {
    const server = this.servers.find((candidate) => candidate.name === name);
    if (!server) throw new Error(`no NATS server named ${name} (have ${this.servers.map((item) => item.name).join(', ')})`);
    return server;
  }

  /** The meta leader every running server names, or null while they disagree or some peer is not current. */
  async metaLeader(): Promise<string | null> {
    const running = this.servers.filter((server) => server.running);
    const views = await Promise.all(running.map((server) => server.meta()));
    if (views.some((view) => view === null)) return null;
    const leaders = new Set(views.map((view) => view!.leader));
    if (leaders.size !== 1) return null;
    const [leader] = leaders;
    if (!leader) return null;
    // The leader lists the other peers: each must be current (a restarted server caught up), and as many as are running.
    const leaderView = views[running.findIndex((server) => server.name === leader)];
    if (!leaderView) return null;
    const replicas = leaderView.replicas ?? [];
    const current = replicas.filter((replica) => replica.current && !replica.offline).length;
    return current >= running.length - 1 ? leader : null;
  }

  /** Waits until the running servers agree on a meta leader with every running peer current. @returns the leader's name */
  async waitReady(timeoutMs = READY_TIMEOUT_MS): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const leader = await this.metaLeader();
      if (leader) return leader;
      if (Date.now() > deadline) {
        const views = await Promise.all(this.servers.map(async (server) => `${server.name}: ${JSON.stringify(await server.meta())}`));
        throw new Error(`the NATS cluster has no JetStream meta leader with every peer current after ${timeoutMs} ms:\n${views.join('\n')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Stops every server (kill -9: nothing of theirs is kept). */
  async stop(): Promise<void> {
    await Promise.all(this.servers.map((server) => server.stop('SIGKILL')));
  }

  /** Every server's output, for a failed test (without the once-a-second retries of a route to a dead server). */
  logs(): string {
    const quiet = (log: string) => log.split('\n').filter((line) => !line.includes('Error trying to connect to route')).join('\n');
    return this.servers.map((server) => `=== ${server.name}\n${quiet(server.log())}`).join('\n');
  }
}

/** A client, a cluster and a monitoring port: free, none equal to another or to a port the servers already have. */
async function threeFreePorts(servers: ClusterNatsServer[]): Promise<[number, number, number]> {
  const taken = new Set(servers.flatMap((server) => [server.port, server.clusterPort, server.monitorPort]));
  const ports: number[] = [];
  while (ports.length < 3) {
    const port = await freePort();
    if (!taken.has(port)) {
      taken.add(port);
      ports.push(port);
    }
  }
  return ports as [number, number, number];
}
