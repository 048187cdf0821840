// The embedded database of the single-node default: PGlite (Postgres compiled
// to WebAssembly) with its data in `<dataDir>/pgdata`, served over the Postgres
// wire protocol on 127.0.0.1 so that the same pg/TypeORM code runs against it.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer, type PGLiteSocketHandler } from '@electric-sql/pglite-socket';
import { ConfigError } from '../src/config';
import { EmbeddedSessionQueue } from './embedded-session-queue';

// The connection budget. The socket server (pglite-socket) refuses a
// connection past its limit by closing it at once (Node's net maxConnections
// destroys the socket: the client reads ECONNRESET; past pglite-socket's own
// count it writes "Too many connections" and hangs up: "Connection terminated
// unexpectedly"). A pool that opened one connection too many saw its query
// fail, which under a burst (every actor snapshotting on a planned stop) broke
// dozens of writes. So the pools are sized from the limit, here and nowhere
// else, and the node refuses to start with a pool that would not fit.
//
// Connections cost the embedded database almost nothing: PGlite has one
// backend session that every connection shares, running one query at a time
// and one transaction at a time (embedded-session-queue.ts); a connection is a
// socket and a small handler. More connections do not add throughput (they
// queue for the session), so the limit is set to hold both pools at their
// cluster-mode sizes rather than shrinking them, which would change how work
// queues in the runtime.

/**
 * Pool size of the API's data source (TypeORM) on the embedded database.
 * PGlite runs one query at a time and serialises whole transactions across
 * connections (notes/actors-nats.md 5.3), so more connections only queue.
 */
export const EMBEDDED_POOL_SIZE = 4;

/** Connections kept free for an operator: psql, or a backup tool, while the node runs. */
export const EMBEDDED_OPERATOR_CONNECTIONS = 2;

/**
 * Connections kept free for sockets a pool has let go of (an idle one timed
 * out, a broken one discarded) and that the server has not yet seen close: the
 * pool may open their replacement first, and the server counts both.
 */
export const EMBEDDED_CLOSING_CONNECTIONS = 2;

/** Connections the socket server accepts: both pools, the operator's room and the closing room. */
export const EMBEDDED_MAX_CONNECTIONS = 16;

/** The variable that sets the runtime's pool size (actors/runtime-options.ts), named in the budget's error. */
const RUNTIME_POOL_SIZE_VARIABLE = 'AGENTRT_RUNTIME_POOL_SIZE';

/** How the embedded database's connections are shared out; the parts add up to at most `serverConnections`. */
export interface EmbeddedConnectionBudget {
  /** The socket server's limit. */
  serverConnections: number;
  /** The API's data source pool. */
  apiPoolSize: number;
  /** The actor runtime's pool (the embedded event log uses it too; the in-process leases need none: nothing else connects). */
  runtimePoolSize: number;
  operatorConnections: number;
  closingConnections: number;
}

/** The largest runtime pool the embedded database can serve next to the API's pool and the rooms kept free. */
export function embeddedRuntimePoolLimit(serverConnections = EMBEDDED_MAX_CONNECTIONS): number {
  return serverConnections - EMBEDDED_POOL_SIZE - EMBEDDED_OPERATOR_CONNECTIONS - EMBEDDED_CLOSING_CONNECTIONS;
}

/**
 * The budget of an embedded node whose runtime asks for `runtimePoolSize`
 * connections. A size that does not fit is refused rather than lowered: an
 * explicit setting silently ignored would be harder to find than a start-up
 * error saying what to change.
 * @throws ConfigError naming AGENTRT_RUNTIME_POOL_SIZE when the runtime's pool does not fit
 */
export function embeddedConnectionBudget(runtimePoolSize: number, serverConnections = EMBEDDED_MAX_CONNECTIONS): EmbeddedConnectionBudget {
  const limit = embeddedRuntimePoolLimit(serverConnections);
  if (runtimePoolSize > limit) {
    throw new ConfigError(
      `${RUNTIME_POOL_SIZE_VARIABLE} is ${runtimePoolSize}, more than the embedded database can serve: at most ${limit} ` +
        `(it accepts ${serverConnections} connections: ${EMBEDDED_POOL_SIZE} for the API's pool, ${EMBEDDED_OPERATOR_CONNECTIONS} kept for psql, ` +
        `${EMBEDDED_CLOSING_CONNECTIONS} for connections closing). Set it to ${limit} or less, or unset it; or use DATABASE_URL`,
    );
  }
  return {
    serverConnections,
    apiPoolSize: EMBEDDED_POOL_SIZE,
    runtimePoolSize,
    operatorConnections: EMBEDDED_OPERATOR_CONNECTIONS,
    closingConnections: EMBEDDED_CLOSING_CONNECTIONS,
  };
}

/**
 * Longest time a connection holding the session (an open transaction) may stay
 * silent while other connections wait; then it is closed and its transaction
 * rolled back, so one stuck request cannot stop the node.
 */
export const EMBEDDED_HOLD_TIMEOUT_MS = 15_000;

/** Folder of the database files inside the data folder. */
export const EMBEDDED_PGDATA = 'pgdata';

/** Lock file that keeps a second process off the same database files. */
export const EMBEDDED_LOCK_FILE = 'pgdata.lock';

/** Another live process holds the data folder's embedded database. */
export class EmbeddedDatabaseLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holderPid: number,
  ) {
    super(`the embedded database in ${dataDir} is in use by process ${holderPid}; stop it first`);
    this.name = 'EmbeddedDatabaseLockedError';
  }
}

export interface EmbeddedPostgresOptions {
  /** The node's data folder; the database lives in `<dataDir>/pgdata`. */
  dataDir: string;
  /** TCP port to serve on. @default 0 (a free port chosen by the OS) */
  port?: number;
  /** Most connections served at once. @default EMBEDDED_MAX_CONNECTIONS */
  maxConnections?: number;
  /** See EMBEDDED_HOLD_TIMEOUT_MS. @default EMBEDDED_HOLD_TIMEOUT_MS */
  holdTimeoutMs?: number;
  /** Told when a connection that held the session too long was closed (for the log). */
  onHoldTimeout?(holdTimeoutMs: number): void;
}

export interface EmbeddedPostgres {
  /** `postgres://` URL of the socket server, for createDataSource. */
  url: string;
  /** The port actually listened on. */
  port: number;
  /** Stops serving, closes PGlite (flushing its files) and releases the lock. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Opens (creating on first use) the database in `<dataDir>/pgdata` and serves
 * it on 127.0.0.1. Only one process may hold a data folder's database.
 * @throws EmbeddedDatabaseLockedError when another live process holds the data folder
 * @throws Error when the port is taken
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const lockFile = await acquireLock(options.dataDir);
  let db: PGlite | undefined;
  try {
    db = await PGlite.create(path.join(options.dataDir, EMBEDDED_PGDATA));
    const server = new PGLiteSocketServer({
      db,
      host: '127.0.0.1',
      port: options.port ?? 0,
      maxConnections: options.maxConnections ?? EMBEDDED_MAX_CONNECTIONS,
    });
    useSessionQueue(server, db, options);
    await server.start();
    return handle(server, db, lockFile);
  } catch (error) {
    await db?.close().catch(() => undefined);
    await releaseLock(lockFile);
    throw error;
  }
}

/**
 * Replaces the server's message queue (before any connection takes it) with
 * one that keeps each connection's extended-protocol exchanges together; see
 * embedded-session-queue.ts. The field is private to pglite-socket (pinned
 * version): if it ever disappears, start-up fails here rather than queries
 * failing later under load.
 */
function useSessionQueue(server: PGLiteSocketServer, db: PGlite, options: EmbeddedPostgresOptions): void {
  const internals = server as unknown as { queryQueue?: unknown; handlers?: Set<PGLiteSocketHandler> };
  if (internals.queryQueue === undefined || !(internals.handlers instanceof Set)) {
    throw new Error('pglite-socket has no queryQueue or handlers; check embedded-session-queue.ts against its version');
  }
  const handlers = internals.handlers;
  internals.queryQueue = new EmbeddedSessionQueue(db, {
    holdTimeoutMs: options.holdTimeoutMs ?? EMBEDDED_HOLD_TIMEOUT_MS,
    terminate(handlerId) {
      for (const handler of handlers) {
        if (handler.handlerId !== handlerId) continue;
        // detach() drops the socket's listeners, so the server would never free this slot itself.
        handlers.delete(handler);
        void handler.detach(true);
      }
    },
    onHoldTimeout: (_handlerId, holdTimeoutMs) => options.onHoldTimeout?.(holdTimeoutMs),
  });
}

function handle(server: PGLiteSocketServer, db: PGlite, lockFile: string): EmbeddedPostgres {
  const port = Number(server.getServerConn().split(':').pop());
  let stopping: Promise<void> | undefined;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop() {
      stopping ??= (async () => {
        await server.stop();
        await db.close();
        await releaseLock(lockFile);
      })();
      return stopping;
    },
  };
}

/** Lock files taken by this process and not yet released. */
const heldHere = new Set<string>();

/**
 * Takes `<dataDir>/pgdata.lock` (holding our pid). A lock left by a process
 * that no longer runs is taken over; PGlite would corrupt files opened twice.
 */
async function acquireLock(dataDir: string): Promise<string> {
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const lockFile = path.join(dataDir, EMBEDDED_LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    if (await createLockFile(lockFile)) {
      heldHere.add(lockFile);
      return lockFile;
    }
    const holder = await readLockHolder(lockFile);
    if (holder !== null && isHeld(lockFile, holder)) throw new EmbeddedDatabaseLockedError(dataDir, holder);
    await fs.rm(lockFile, { force: true });
  }
  throw new Error(`could not take the lock ${lockFile}`);
}

async function releaseLock(lockFile: string): Promise<void> {
  heldHere.delete(lockFile);
  await fs.rm(lockFile, { force: true });
}

async function createLockFile(lockFile: string): Promise<boolean> {
  try {
    await fs.writeFile(lockFile, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

async function readLockHolder(lockFile: string): Promise<number | null> {
  const text = await fs.readFile(lockFile, 'utf8').catch(() => '');
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/**
 * Whether the pid in a lock file still holds it. Our own pid is a stale lock
 * unless this process took it (a container restarted under the same pid).
 */
function isHeld(lockFile: string, holder: number): boolean {
  return holder === process.pid ? heldHere.has(lockFile) : isRunning(holder);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
