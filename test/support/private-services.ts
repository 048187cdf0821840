// A Postgres and a NATS of our own (the chaos run, outage tests), on free ports in a temporary folder,
// so that stopping and starting them disturbs nobody else's tests. Postgres
// refuses to run as root, so as root its commands run as the `postgres` user.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, promises as fs, readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const NATS_SERVER = process.env.CHAOS_NATS_SERVER ?? '/usr/sbin/nats-server';

/** A TCP port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Resolves once something accepts TCP connections on the port. @throws after `timeoutMs` */
export async function waitForPort(port: number, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    // Often: the chaos run dates a dependency's return by this.
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${what} did not accept connections on port ${port} within ${timeoutMs} ms`);
}

/** The newest /usr/lib/postgresql/<version>/bin (or CHAOS_PG_BIN). */
function postgresBin(): string {
  if (process.env.CHAOS_PG_BIN) return process.env.CHAOS_PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((name) => existsSync(path.join(root, name, 'bin', 'initdb'))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error(`no Postgres server binaries under ${root} (set CHAOS_PG_BIN)`);
  return path.join(root, versions[0], 'bin');
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** Runs a Postgres tool to completion (as the postgres user when we are root), without blocking the event loop. @throws with its output on failure */
function runPostgresTool(tool: string, args: string[]): Promise<void> {
  const command = path.join(postgresBin(), tool);
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  return new Promise((resolve, reject) => {
    // pg_ctl start leaves the server running with our pipes open: ignore its output streams' end, wait for the exit only.
    execFile(file, argv, { encoding: 'utf8', timeout: 90_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${tool} ${args.join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`));
      else resolve();
    });
  });
}

/** A Postgres cluster of our own: initdb into `dir`, started and stopped with pg_ctl. */
export class PrivatePostgres {
  private readonly dataDir: string;
  private readonly logFile: string;
  private running = false;

  private constructor(
    private readonly dir: string,
    readonly port: number,
  ) {
    this.dataDir = path.join(dir, 'data');
    this.logFile = path.join(dir, 'postgres.log');
  }

  /** `postgres://postgres@127.0.0.1:<port>/<database>` */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Creates the cluster in `dir` (which must be empty) and starts it. */
  static async create(dir: string): Promise<PrivatePostgres> {
    await fs.mkdir(dir, { recursive: true });
    // The postgres user must be able to write its socket and log here.
    await fs.chmod(dir, 0o777);
    const postgres = new PrivatePostgres(dir, await freePort());
    await runPostgresTool('initdb', ['-D', postgres.dataDir, '-U', 'postgres', '--auth=trust', '--no-sync']);
    await postgres.start();
    return postgres;
  }

  async start(): Promise<void> {
    const options = [`-p ${this.port}`, `-k ${this.dir}`, '-c listen_addresses=127.0.0.1', '-c max_connections=300', '-c fsync=off'].join(' ');
    await runPostgresTool('pg_ctl', ['-D', this.dataDir, '-o', options, '-l', this.logFile, '-w', '-t', '60', 'start']);
    this.running = true;
  }

  /** Stops at once, as a crash would (the next start replays the WAL). */
  async stop(): Promise<void> {
    if (!this.running) return;
    await runPostgresTool('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']);
    this.running = false;
  }

  /** The server log, for a failed run. */
  log(): Promise<string> {
    return fs.readFile(this.logFile, 'utf8').catch(() => '');
  }
}

/** A JetStream-enabled nats-server of our own, a child process storing in `dir`. */
export class PrivateNats {
  private child: ChildProcess | null = null;
  private output = '';

  private constructor(
    private readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  static async create(dir: string): Promise<PrivateNats> {
    if (!existsSync(NATS_SERVER)) throw new Error(`${NATS_SERVER} is missing (set CHAOS_NATS_SERVER)`);
    await fs.mkdir(dir, { recursive: true });
    const nats = new PrivateNats(dir, await freePort());
    await nats.start();
    return nats;
  }

  /** Starts the server; with `user` and `password`, it accepts only clients that give them. */
  async start(user?: string, password?: string): Promise<void> {
    const credentials = user === undefined ? [] : ['--user', user, '--pass', password ?? ''];
    const child = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.dir, ...credentials], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    this.child = child;
    await waitForPort(this.port, 20_000, 'nats-server');
  }

  /** Stops the server (SIGTERM: a clean shutdown, as a restart would) and waits for it to exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    const forced = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(forced);
  }

  /** Deletes what the server stored (its JetStream streams and consumers), as a new server without the old one's volume. Only while stopped. */
  async wipeStore(): Promise<void> {
    if (this.child) throw new Error('stop the nats-server before wiping its store');
    await fs.rm(path.join(this.dir, 'jetstream'), { recursive: true, force: true });
  }

  /**
   * Replaces the server by an empty one on the same port, as a new pod
   * without its volume would: stops it, wipes its store (wipeStore), starts a
   * fresh one.
   * @param whileDown called once the old server is gone and its store wiped, before the new one starts
   */
  async replaceWithEmpty(whileDown?: () => void | Promise<void>): Promise<void> {
    await this.stop();
    await this.wipeStore();
    await whileDown?.();
    await this.start();
  }

  log(): string {
    return this.output;
  }
}
