// One agentrt node: master key, database and migrations, actor runtime, first-start
// bootstrap, HTTP, graceful shutdown. It has the composition root (composition/)
// build the services, then hands them to the actor runtime and the HTTP app. With
// cli.ts, the only src/ files reaching outside src/; no domain logic here.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { constants as fsConstants, promises as fs } from 'node:fs';
import path from 'node:path';
import { defaultRuntimeOptions, readClusterStatus, runtimeOptionsFromEnv, startActorRuntime, type RuntimeOptions } from '../actors';
import { nodeKinds, startNodeConsumers } from '../actors/kinds/node-kinds';
import { DependencyHealth, reportingLogger } from '../actors/runtime/dependency-health';
import { RuntimeObjectiveCommands } from '../actors/kinds/runtime-objective-commands';
import { RuntimeWebhookEndpointCommands } from '../actors/kinds/runtime-webhook-endpoint-commands';
import { RuntimeScheduleCommands } from '../actors/kinds/runtime-schedule-commands';
import { RuntimeErasure } from '../actors/kinds/runtime-erasure';
import { createApp } from '../http/app';
import { handleClientErrors } from '../http/client-errors';
import { createAppDependencies, createServices } from '../composition';
import { createDataSource, runMigrationsLocked } from '../persistence/data-source';
import { EMBEDDED_PGDATA, embeddedConnectionBudget, startEmbeddedPostgres, type EmbeddedConnectionBudget } from '../persistence/embedded-postgres';
import { ConfigError, UnreachableServerError, type Config } from './config';
import { DecryptionError } from './crypto/envelope';
import { createLogger, type Logger } from './logger';
import { loadMasterKey } from './master-key';
import type { Services } from './ports/services';
import { postgresAddress, startupLines, TOKEN_FILE_STATE, type TokenFileState } from './startup-summary';
import { startTracing } from './tracing/tracing-provider';
import { endpointForLogs } from './tracing/tracing-config';

type DataSource = ReturnType<typeof createDataSource>;

/** Slowest a whole request may be (node:http requestTimeout). */
export const REQUEST_TIMEOUT_MS = 30_000;
/** Longest a client may take to send the request headers (node:http headersTimeout). */
export const HEADERS_TIMEOUT_MS = 10_000;
/** How often node:http checks the two timeouts above (its default, 30 s, would let them run 30 s late). */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;
/** Longest shutdown waits for in-flight requests before cutting connections (less when the drain time leaves less). */
export const SHUTDOWN_GRACE_MS = 10_000;
/** File in the data folder receiving the first-start global key token (mode 0600). */
export const GLOBAL_KEY_TOKEN_FILE = 'global-api-key.token';
/** Account created on first start when the database holds none. */
export const FIRST_ACCOUNT = { accountName: 'default', email: 'admin@agentrt.local' } as const;

export interface NodeOptions {
  /** Logger to use. @default a pino logger on stdout at config.logLevel, in config.logFormat */
  logger?: Logger;
  /** Grace period for in-flight requests on stop(). @default SHUTDOWN_GRACE_MS */
  shutdownGraceMs?: number;
  /** Actor runtime settings (the CLI passes runtimeOptionsFromEnv()). @default the runtime's defaults */
  runtimeOptions?: Partial<RuntimeOptions>;
}

export interface NodeHandle {
  /** Base URL the API listens on (`http://host:port`). */
  url: string;
  port: number;
  /** True when the node serves its own embedded database. */
  embedded: boolean;
  /**
   * Stops accepting connections, lets in-flight requests finish (bounded by
   * the grace period and by the drain time less the handoff's reserve), then
   * stops the runtime and closes the data source and the embedded database,
   * all within the runtime's drain time from the call.
   * Idempotent: later calls return the first call's promise.
   */
  stop(): Promise<void>;
}

export interface Database {
  dataSource: DataSource;
  /** True for the embedded PGlite database. */
  embedded: boolean;
  /** Migrations this open applied (empty when the schema was current). */
  applied: string[];
  /** Closes the data source, then the embedded database. */
  close(): Promise<void>;
}

/**
 * Connects to DATABASE_URL, or starts the embedded database in the data folder
 * when it is unset, and applies pending migrations under the advisory lock.
 * @param budget how the embedded database's connections are shared out: startNode's holds the runtime's pool;
 *   the default is that of a process without an actor runtime (the one-shot commands)
 */
export async function openDatabase(config: Config, logger: Logger, budget: EmbeddedConnectionBudget = embeddedConnectionBudget(0)): Promise<Database> {
  const embedded = config.databaseUrl
    ? undefined
    : await startEmbeddedPostgres({
        dataDir: config.dataDir,
        maxConnections: budget.serverConnections,
        onHoldTimeout: (holdTimeoutMs) =>
          logger.error({ holdTimeoutMs }, 'embedded database: a connection held a transaction open while others waited; it was closed and its transaction rolled back'),
      });
  const url = config.databaseUrl ?? embedded!.url;
  const dataSource = createDataSource({ url, poolSize: embedded ? budget.apiPoolSize : undefined });
  const close = async () => {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
  };
  try {
    await dataSource.initialize().catch((error: unknown) => {
      if (!config.databaseUrl) throw error;
      throw new UnreachableServerError('Postgres', 'DATABASE_URL', postgresAddress(config.databaseUrl) ?? 'an address that is not a URL', error);
    });
    const applied = await runMigrationsLocked(dataSource);
    if (embedded) logger.info({ dataDir: config.dataDir }, 'embedded database ready');
    // A first start applies every migration: their names would make one very long line.
    if (applied.length > 0) logger.info({ count: applied.length }, `${applied.length} ${applied.length === 1 ? 'migration' : 'migrations'} applied`);
    if (applied.length > 0) logger.debug({ applied }, 'migrations applied');
    return { dataSource, embedded: embedded !== undefined, applied, close };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}

/**
 * Loads the master key (before anything starts, so a bad key fails fast) and
 * warns when a node on a shared database keeps its key in its data folder.
 * @throws ConfigError for a malformed key
 */
async function loadNodeMasterKey(config: Config, logger: Logger): Promise<Buffer> {
  const masterKey = await loadMasterKey({ configured: config.masterKey, dataDir: config.dataDir });
  if (masterKey.source === 'generated') logger.info({ file: masterKey.file }, 'master key generated');
  if (masterKey.source !== 'environment' && config.databaseUrl) {
    logger.warn({ file: masterKey.file }, 'master key read from the data folder: every node of a cluster must share AGENTRT_MASTER_KEY');
  }
  return masterKey.key;
}

/**
 * Loads the master key, opens the database and builds the services, without
 * the actor runtime or HTTP: what the one-shot CLI commands need.
 * @throws ConfigError for a malformed master key
 */
export async function openServices(config: Config, logger: Logger): Promise<{ database: Database; services: Services }> {
  const masterKey = await loadNodeMasterKey(config, logger);
  const database = await openDatabase(config, logger);
  try {
    const services = createServices({
      config, dataSource: database.dataSource, masterKey, logger,
      clusterStatus: () => readClusterStatus(database.dataSource, runtimeOptionsFromEnv()),
    });
    return { database, services };
  } catch (error) {
    await database.close().catch(() => undefined);
    throw error;
  }
}

/**
 * Starts one node and returns once it listens: master key, database and
 * migrations, actor runtime, services, first-start bootstrap, HTTP.
 * @throws ConfigError for a malformed master key or setting; any start-up
 *   failure first undoes what was already started.
 */
export async function startNode(config: Config, options: NodeOptions = {}): Promise<NodeHandle> {
  const logger = options.logger ?? createLogger({ level: config.logLevel, format: config.logFormat });
  if (config.allowPrivateNetwork) {
    logger.warn('AGENTRT_ALLOW_PRIVATE_NETWORK is on: webhook, tool, MCP and model-provider URLs may reach private, loopback and link-local addresses (this host and its network); keep it off in production');
  }
  if (config.oidc && !config.oidc.audience) {
    logger.warn('AGENTRT_OIDC_AUDIENCE is unset: tokens the issuer minted for any other application are accepted too');
  }
  const runtimeOptions = { ...defaultRuntimeOptions(), ...options.runtimeOptions };
  // Embedded: the runtime's pool must fit the database's connection budget next to the API's; checked before anything starts.
  const budget = config.databaseUrl ? undefined : embeddedConnectionBudget(runtimeOptions.databasePoolSize);
  const masterKey = await loadNodeMasterKey(config, logger);
  const database = await openDatabase(config, logger, budget);
  // Closed newest first: HTTP, then the runtime, then the database, then tracing (which flushes the spans of all that).
  const closers: Array<() => Promise<void>> = [];
  if (config.tracing) {
    const tracing = startTracing(config.tracing, { logger });
    closers.push(() => tracing.shutdown());
    logger.info({ endpoint: endpointForLogs(config.tracing.url), protocol: config.tracing.protocol, serviceName: config.tracing.serviceName }, 'tracing on: spans exported over OTLP');
  }
  closers.push(() => database.close());
  // Whether Postgres (probed with a SELECT 1 while it is down) and NATS are reachable; its probe stops before the database closes.
  const health = new DependencyHealth({ logger });
  health.track('postgres', async () => void (await database.dataSource.query('SELECT 1')));
  closers.push(async () => health.stop());
  try {
    // Services first (the objective kind's effects use them), then the
    // runtime, which the services reach through a port bound once it is up.
    const objectiveCommands = new RuntimeObjectiveCommands();
    const webhookEndpointCommands = new RuntimeWebhookEndpointCommands();
    const scheduleCommands = new RuntimeScheduleCommands();
    const erasureRuntime = new RuntimeErasure();
    let draining = false;
    // One end for the whole shutdown, set when stop() is called: the drain time from then.
    let stopEndsAt: number | undefined;
    const services = createServices({
      config, dataSource: database.dataSource, masterKey, logger, objectiveCommands, webhookEndpointCommands, scheduleCommands, erasureRuntime,
      // Called only once the node serves requests, after the runtime below has started.
      clusterStatus: () => runtime.clusterStatus(),
    });
    const app = createAppDependencies(services, {
      config, dataSource: database.dataSource, masterKey, logger,
      idempotencyClaimant: () => ({ nodeId: runtime.nodeId, leaseTimeoutMs: runtimeOptions.leaseTimeoutMs }),
      isDraining: () => draining,
      health,
    });
    closers.push(() => services.close());
    // The runtime's loops report a lost dependency through their logger: one warning per outage, not per retry.
    const runtimeLogger = reportingLogger(logger.child({ component: 'actors' }), health);
    const runtime = await startActorRuntime({
      dataSource: database.dataSource,
      databaseUrl: config.databaseUrl,
      natsUrl: config.natsUrl,
      kinds: nodeKinds(services),
      options: options.runtimeOptions,
      logger: runtimeLogger,
      health,
    });
    closers.push(() => runtime.stop(stopEndsAt));
    objectiveCommands.bind(runtime);
    webhookEndpointCommands.bind(runtime);
    scheduleCommands.bind(runtime);
    erasureRuntime.bind(runtime);
    await startNodeConsumers(runtime, services, runtimeLogger);
    await checkMasterKeyOpensStoredKeys(services);
    const firstAccountCreated = await bootstrapFirstAccount(services, database.dataSource, config.dataDir, logger);
    const modelsAdded = await services.models.reconcileCatalog();
    if (modelsAdded > 0) logger.info({ modelsAdded }, 'model catalog reconciled into existing workspaces');
    const server = await listen(createApp(app).callback(), config, logger);
    closers.push(() => {
      draining = true;
      // Requests are cut at the latest when the runtime gives up on running effects: the rest of the drain time is the handoff's.
      const effectsEndAt = (stopEndsAt ?? Date.now() + runtime.drainTimeoutMs) - runtime.handoffTimeoutMs;
      return closeServer(server, Math.max(0, Math.min(options.shutdownGraceMs ?? SHUTDOWN_GRACE_MS, effectsEndAt - Date.now())));
    });
    const port = (server.address() as AddressInfo).port;
    const url = `http://${formatHost(config.host)}:${port}`;
    // The cluster id names what this cluster owns on a shared NATS server (docs/operations.md, "Several clusters on one NATS").
    logger.info({ url, embedded: database.embedded, bus: config.natsUrl ? 'nats' : 'in-process', nodeId: runtime.nodeId, clusterId: runtime.clusterId, subjectPrefix: runtime.subjectPrefix, eventStream: runtime.eventStream }, 'listening');
    await logStartupSummary(config, firstAccountCreated, logger);
    const stop = once(() => {
      stopEndsAt = Date.now() + runtime.drainTimeoutMs;
      return closeAll(closers, logger);
    });
    return { url, port, embedded: database.embedded, stop };
  } catch (error) {
    await closeAll(closers, logger);
    throw error;
  }
}

/** Says in words the database and bus in use and where the first account's token is (the `listening` line says where the API is). */
async function logStartupSummary(config: Config, firstAccountCreated: boolean, logger: Logger): Promise<void> {
  const tokenFile = path.join(config.dataDir, GLOBAL_KEY_TOKEN_FILE);
  const present = await fs.access(tokenFile).then(() => true, () => false);
  const tokenFileState: TokenFileState = firstAccountCreated ? TOKEN_FILE_STATE.CREATED : present ? TOKEN_FILE_STATE.PRESENT : TOKEN_FILE_STATE.ABSENT;
  const lines = startupLines({
    databaseUrl: config.databaseUrl, embeddedDatabaseFolder: path.join(config.dataDir, EMBEDDED_PGDATA), natsUrl: config.natsUrl, tokenFile, tokenFileState,
  });
  for (const line of lines) logger.info(line);
}

/**
 * Fails start-up, with a message saying why, when the master key is not the one
 * that wrapped the stored service keys (a node would otherwise refuse every
 * API key token with an internal error).
 * @throws ConfigError
 */
async function checkMasterKeyOpensStoredKeys(services: Services): Promise<void> {
  try {
    await services.tokens.load();
  } catch (error) {
    if (!(error instanceof DecryptionError)) throw error;
    throw new ConfigError('the master key does not open the keys stored in this database: start the node with the master key the database was created with (AGENTRT_MASTER_KEY or master.key)');
  }
}

/**
 * Creates the first account when the database has none and writes its global
 * key token to `<dataDir>/global-api-key.token`. Nodes starting together on
 * one database take an advisory lock, so only one of them bootstraps.
 * @returns whether this node created the first account
 */
async function bootstrapFirstAccount(services: Services, dataSource: DataSource, dataDir: string, logger: Logger): Promise<boolean> {
  const created = await withAdvisoryLock(dataSource, FIRST_ACCOUNT_LOCK_KEY, async () => {
    if (await services.accounts.hasAnyAccount()) return null;
    // Fail before creating the account if its token could not be saved: an
    // account whose only token was lost could never be administered.
    await ensureWritableDir(dataDir);
    return services.accounts.bootstrap(FIRST_ACCOUNT);
  });
  if (!created) return false;
  const file = await writeSecretFile(path.join(dataDir, GLOBAL_KEY_TOKEN_FILE), `${created.globalApiKey.token}\n`);
  logger.info({ accountId: created.accountId, workspaceId: created.workspaceId, tokenFile: file }, `first account created; its global API key token is in ${file}`);
  return true;
}

// "agentrt bootstrap" as a 32-bit number; migrations use 0x61727400.
const FIRST_ACCOUNT_LOCK_KEY = 0x61727401;

/** Runs `work` while holding a session advisory lock on a dedicated connection. */
async function withAdvisoryLock<T>(dataSource: DataSource, key: number, work: () => Promise<T>): Promise<T> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [key]);
    return await work();
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [key]).catch(() => undefined);
    await runner.release();
  }
}

async function ensureWritableDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  await fs.access(dir, fsConstants.W_OK);
}

/** Writes a file readable only by its owner, atomically (temporary file, then rename). */
async function writeSecretFile(file: string, content: string): Promise<string> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  await fs.writeFile(temporary, content, { mode: 0o600 });
  await fs.rename(temporary, file);
  return file;
}

/** The node could not take its address (port in use, no permission): the message says which. */
export class ListenError extends Error {
  constructor(host: string, port: number, cause: Error) {
    super(`cannot listen on ${formatHost(host)}:${port}: ${cause.message} (set PORT or HOST)`, { cause });
    this.name = 'ListenError';
  }
}

/**
 * Starts listening with the request and header timeouts set, and refusals of
 * the HTTP parser and of the timeouts answered with Status bodies.
 * @throws ListenError when the address cannot be taken
 */
function listen(handler: http.RequestListener, config: Config, logger: Logger): Promise<http.Server> {
  const server = handleClientErrors(http.createServer({
    requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
  }, handler), logger);
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => reject(new ListenError(config.host, config.port, error));
    server.once('error', fail);
    server.listen(config.port, config.host, () => {
      server.off('error', fail);
      resolve(server);
    });
  });
}

/**
 * Stops accepting connections and waits for in-flight requests; keep-alive
 * connections are closed as soon as they are idle, and whatever is still open
 * after `graceMs` (a stuck request, an SSE stream) is cut.
 */
function closeServer(server: http.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
    const deadline = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearInterval(idleSweep);
      clearTimeout(deadline);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** Runs the closers newest first; one failing does not keep the others from running. */
async function closeAll(closers: Array<() => Promise<void>>, logger: Logger): Promise<void> {
  for (const close of [...closers].reverse()) {
    await close().catch((error: unknown) => logger.error({ err: error }, 'error during shutdown'));
  }
}

function once(work: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= work());
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
