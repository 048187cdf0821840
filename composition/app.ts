// The composition root's HTTP side: from the services (composition/services.ts)
// it builds what createApp needs that is not a route: the authenticator, the
// rate limiters, the Idempotency-Key store, the readiness check, the widget
// host's options. The routes themselves come from http/route-table.ts.
import type { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import type { AppDependencies } from '../http/app';
import { allRoutes } from '../http/route-table';
import type { StreamTimings } from '../http/routes/objectives.routes';
import type { WidgetHostOptions } from '../http/widget-host/widget-host';
import { createIdempotencyStore, type IdempotencyClaimant } from '../persistence/repositories/idempotency.store';
import { isPostgresConnectionFailure } from '../persistence/runtime/pg-results';
import { Authenticator } from '../src/auth/authenticator';
import { RateLimiter } from '../src/auth/rate-limiter';
import type { Config } from '../src/config';
import { UnavailableError } from '../src/errors';
import { unreachableReason, type DependencyHealthPort } from '../src/ports/dependency-health';
import type { Services } from '../src/ports/services';
import { withTimeout } from '../src/with-timeout';
import { apiHostnameOf } from './services';

export interface AppOptions {
  config: Config;
  dataSource: DataSource;
  masterKey: Buffer;
  logger: Logger;
  /** True once the node is shutting down: /readyz then answers 503 so load balancers stop routing to it. */
  isDraining?: () => boolean;
  /** This node and its lease timeout once its actor runtime runs: Idempotency-Key claims name it, so a retry takes over a dead node's claim. */
  idempotencyClaimant?: () => IdempotencyClaimant | undefined;
  /** The node's view of Postgres and NATS: /readyz names what is down, requests answer 503 while it is. @default none (readiness asks the database alone) */
  health?: DependencyHealthPort;
  /** Event stream timings of the API and the widget host (tests). @default SSE_POLL_MS, SSE_HEARTBEAT_MS, SSE_BATCH */
  stream?: StreamTimings;
}

/** How long /readyz waits for the database's answer before calling it unreachable. */
const READY_QUERY_TIMEOUT_MS = 2000;

/**
 * Readiness: not while draining, nor while a tracked dependency is down (each
 * one named); otherwise the database must answer a `SELECT 1` soon, and a
 * broken connection there reports it down.
 * @throws UnavailableError saying why
 */
async function checkReady(dataSource: DataSource, { isDraining, health }: Pick<AppOptions, 'isDraining' | 'health'>): Promise<void> {
  if (isDraining?.()) throw new UnavailableError('the node is shutting down');
  const unreachable = health?.unavailableReason();
  if (unreachable) throw new UnavailableError(unreachable, { retryAfterSeconds: 1 });
  try {
    await withTimeout(dataSource.query('SELECT 1'), READY_QUERY_TIMEOUT_MS);
  } catch (error) {
    if (isPostgresConnectionFailure(error)) health?.down('postgres', error);
    throw new UnavailableError(health?.unavailableReason() ?? unreachableReason(['postgres']), { retryAfterSeconds: 1, cause: error });
  }
}

/** Everything createApp needs, over services built by createServices. */
export function createAppDependencies(services: Services, options: AppOptions): AppDependencies {
  const { config, dataSource, logger } = options;
  const authenticator = new Authenticator(services.store, services.tokens, config.oidc, services.credentialChanges);
  return {
    logger,
    routes: allRoutes(services, { isDraining: options.isDraining, stream: options.stream }),
    widgetHost: widgetHostOptions(services, config, options),
    version: '1.0',
    health: options.health,
    checkReady: () => checkReady(dataSource, options),
    openObjectiveCounts: () => services.objectivesStore.openCounts(),
    mount: {
      authenticator,
      rateLimiter: new RateLimiter(config.rateLimit),
      idempotency: createIdempotencyStore(dataSource, options.masterKey, options.idempotencyClaimant),
      findWorkspace: (id) => services.store.workspaces.findById(id),
      bodyLimitBytes: config.bodyLimitBytes,
      includeInfoCost: config.rateLimit.includeInfoCost,
    },
  };
}

/** What the widget host needs of the node (http/widget-host). */
function widgetHostOptions(services: Services, config: Config, options: Pick<AppOptions, 'isDraining' | 'stream'>): WidgetHostOptions {
  return {
    widgets: services.widgetVerifier,
    apiHostname: apiHostnameOf(config),
    objectives: services.objectives,
    rateLimiter: new RateLimiter(config.rateLimit),
    bodyLimitBytes: config.bodyLimitBytes,
    visitorLimits: config.widgetVisitors,
    isDraining: options.isDraining,
    stream: options.stream,
    live: services.objectiveLive,
  };
}
