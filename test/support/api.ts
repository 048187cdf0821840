// An in-process agentrt API for tests: the real Koa app on a real HTTP port,
// over the run's shared Postgres database, with a helper to call it and to
// bootstrap fresh accounts (each test isolates itself with its own account).
import http from 'node:http';
import type Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { DestinationStream } from 'pino';
import type { DataSource } from 'typeorm';
import { createApp } from '../../http/app';
import { handleClientErrors } from '../../http/client-errors';
import { createAppDependencies, createServices } from '../../composition';
import { createDataSource } from '../../persistence/data-source';
import { defaultRuntimeOptions, readClusterStatus, startActorRuntime, type ActorRuntime, type DependencyHealth, type RuntimeOptions } from '../../actors';
import { nodeKinds, startNodeConsumers } from '../../actors/kinds/node-kinds';
import { RuntimeWebhookEndpointCommands } from '../../actors/kinds/runtime-webhook-endpoint-commands';
import { RuntimeScheduleCommands } from '../../actors/kinds/runtime-schedule-commands';
import { RuntimeErasure } from '../../actors/kinds/runtime-erasure';
import type { ScheduleCommandPort } from '../../src/ports/schedule-commands';
import { RuntimeObjectiveCommands } from '../../actors/kinds/runtime-objective-commands';
import { loadConfig, type Config } from '../../src/config';
import { createLogger } from '../../src/logger';
import { startTracing } from '../../src/tracing/tracing-provider';
import { sharedTestDatabase } from './global-setup';
import type { BootstrapResult } from '../../src/accounts/account.service';
import type { Services } from '../../src/ports/services';
import type { WidgetSessionVerifier } from '../../src/ports/widget-sessions';
import type { StreamTimings } from '../../http/routes/objectives.routes';

/** One master key for the whole run: the APIs of a run share one database and its wrapped keys. */
const RUN_MASTER_KEY = randomBytes(32);

export interface ApiResponse<T = any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface TestApi {
  url: string;
  /** The Koa application under test. */
  app: Koa;
  services: Services;
  dataSource: DataSource;
  config: Config;
  /** Every log line the app wrote (to check that no secret is logged). */
  logs: string[];
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The actor runtime, when started with `runtime`. */
  runtime?: ActorRuntime;
  /** A fresh account with its workspace, admin profile and global key token. */
  bootstrap(name?: string): Promise<BootstrapResult>;
  close(): Promise<void>;
}

export interface TestApiOptions {
  env?: Record<string, string>;
  /** Whether the node is shutting down (GET /readyz). */
  isDraining?: () => boolean;
  /** The node's view of its dependencies (GET /readyz, /healthz). @default none */
  health?: DependencyHealth;
  /** Level of the captured logs. @default 'debug' */
  logLevel?: string;
  /** Where the log lines go instead of `logs` (a bench's stderr). @default `logs` */
  logDestination?: DestinationStream;
  /** Database pool size. @default 5 */
  poolSize?: number;
  /**
   * Starts an embedded-mode actor runtime with the objective kind over the
   * shared database, so objectives run. @default false (objective commands
   * then answer UNAVAILABLE)
   */
  runtime?: boolean | Partial<RuntimeOptions>;
  /** A test double reaching "schedule actors" in place of the runtime's (a suite without a runtime). */
  scheduleCommands?: ScheduleCommandPort;
  /** NATS for the runtime (cluster mode; give `runtime` a unique subjectPrefix and eventStream). @default none: embedded mode */
  natsUrl?: string;
  /** Options of the node:http server (short timeouts). @default node's defaults */
  server?: http.ServerOptions;
  /** A database of its own (createTestDatabase): another cluster next to the run's. @default the run's shared database */
  database?: { url: string };
  /** Widget sessions in place of the node's (the widget host's suite, before or beside the widgets area). */
  widgetSessions?: WidgetSessionVerifier;
  /** Event stream timings of the API and the widget host (a long pollMs shows that nudges, not polls, bring events). */
  stream?: StreamTimings;
}

/** Starts the API on an ephemeral port over the shared test database. */
export async function startTestApi(options: TestApiOptions = {}): Promise<TestApi> {
  const database = options.database ?? (await sharedTestDatabase());
  const config = loadConfig({ DATABASE_URL: database.url, PORT: '0', AGENTRT_RATE_LIMIT_PER_SECOND: '10000', AGENTRT_RATE_LIMIT_BURST: '10000', ...options.env });
  const logs: string[] = [];
  // The production logger (with its redaction), writing into `logs`.
  const logger = createLogger({
    level: options.logLevel ?? 'debug',
    destination: options.logDestination ?? new Writable({ write(chunk, _encoding, done) { logs.push(String(chunk)); done(); } }),
  });
  // OTEL_* in `env` turn tracing on for this process while the API runs (the node's start-up, src/server.ts, does the same).
  const tracing = config.tracing ? startTracing(config.tracing, { logger }) : undefined;
  const dataSource = createDataSource({ url: database.url, poolSize: options.poolSize ?? 5 });
  await dataSource.initialize();
  const objectiveCommands = new RuntimeObjectiveCommands();
  const webhookEndpointCommands = new RuntimeWebhookEndpointCommands();
  const scheduleCommands = new RuntimeScheduleCommands();
  const erasureRuntime = new RuntimeErasure();
  const masterKey = config.masterKey ?? RUN_MASTER_KEY;
  const services = createServices({
    config, dataSource, masterKey, logger,
    clusterStatus: () => readClusterStatus(dataSource, { shardCount: 256, leaseTimeoutMs: 15_000 }),
    ...(options.widgetSessions ? { widgetSessions: options.widgetSessions } : {}),
    ...(options.runtime ? { objectiveCommands, webhookEndpointCommands, scheduleCommands, erasureRuntime } : {}),
    ...(options.scheduleCommands ? { scheduleCommands: options.scheduleCommands } : {}),
  });
  const appDependencies = createAppDependencies(services, {
    config, dataSource, masterKey, logger,
    isDraining: options.isDraining,
    health: options.health,
    stream: options.stream,
    idempotencyClaimant: () => (runtime ? { nodeId: runtime.nodeId, leaseTimeoutMs: runtimeOptions.leaseTimeoutMs } : undefined),
  });
  // A suite's teardown stops the runtime with effects still running (a webhook retrying, a tool that never answers):
  // a short drain gives them up as a crash would, instead of waiting the default drain time per suite.
  const runtimeOptions = {
    ...defaultRuntimeOptions(), shardCount: 16, outboxPollMs: 50, drainTimeoutMs: 1000, handoffTimeoutMs: 500,
    ...(typeof options.runtime === 'object' ? options.runtime : {}),
  };
  let runtime: ActorRuntime | undefined;
  if (options.runtime) {
    runtime = await startActorRuntime({
      dataSource,
      databaseUrl: database.url,
      natsUrl: options.natsUrl,
      kinds: nodeKinds(services),
      options: runtimeOptions,
      logger: logger.child({ component: 'actors' }),
    });
    objectiveCommands.bind(runtime);
    webhookEndpointCommands.bind(runtime);
    scheduleCommands.bind(runtime);
    erasureRuntime.bind(runtime);
    await startNodeConsumers(runtime, services, logger.child({ component: 'actors' }));
  }
  const app = createApp(appDependencies);
  const server = handleClientErrors(http.createServer(options.server ?? {}, app.callback()), logger);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let counter = 0;
  return {
    url,
    app,
    services,
    dataSource,
    config,
    logs,
    async request(method, path, { token, body, rawBody, headers = {} } = {}) {
      const init: RequestInit = { method, headers: { ...headers } };
      if (token) (init.headers as Record<string, string>).authorization = `Bearer ${token}`;
      if (body !== undefined || rawBody !== undefined) {
        init.body = rawBody ?? JSON.stringify(body);
        (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
      }
      const response = await fetch(`${url}${path}`, init);
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON (metrics); keep the text
      }
      return { status: response.status, body: parsed as never, headers: response.headers };
    },
    bootstrap(name) {
      counter += 1;
      return services.accounts.bootstrap({ accountName: name ?? `account-${counter}`, email: `admin-${Date.now()}-${counter}-${Math.random().toString(36).slice(2)}@example.com` });
    },
    runtime,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime?.stop();
      await services.close();
      await dataSource.destroy();
      await tracing?.shutdown();
    },
  };
}
