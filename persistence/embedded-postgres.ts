// The embedded database of the single-node default: PGlite (Postgres compiled
// to WebAssembly) with its data in `<dataDir>/pgdata`, served over the Postgres
// wire protocol on 127.0.0.1 so that the same pg/TypeORM code runs against it.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer, type PGLiteSocketHandler } from '@electric-sql/pglite-socket';
import { EmbeddedSessionQueue } from './embedded-session-queue';

/**
 * Pool size to give TypeORM against the embedded database. PGlite runs one
 * query at a time and serialises whole transactions across connections
 * (notes/actors-nats.md 5.3), so more connections only queue.
 */
export const EMBEDDED_POOL_SIZE = 4;

/** Connections the socket server accepts: the pool plus room for an operator's psql. */
export const EMBEDDED_MAX_CONNECTIONS = 8;

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
