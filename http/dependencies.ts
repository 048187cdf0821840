// Composition root of the API: builds stores, services and the route list from
// a data source and configuration. Later areas add their services and routes
// here, one line each.
import type { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import { AccountService } from '../src/accounts/account.service';
import { ApiKeyService } from '../src/accounts/api-key.service';
import { WorkspaceService } from '../src/accounts/workspace.service';
import { Authenticator } from '../src/auth/authenticator';
import { RateLimiter } from '../src/auth/rate-limiter';
import { ApiKeyTokens } from '../src/auth/tokens';
import type { Config } from '../src/config';
import type { FoundationStore } from '../src/ports/foundation-store';
import { createFoundationStore } from '../persistence/repositories/foundation.store';
import { createIdempotencyStore } from '../persistence/repositories/idempotency.store';
import type { AppDependencies } from './app';
import type { RouteDefinition } from './route';
import { accountRoutes } from './routes/account.routes';
import { apiKeyRoutes } from './routes/api-keys.routes';
import { workspaceRoutes } from './routes/workspaces.routes';

export interface Services {
  store: FoundationStore;
  tokens: ApiKeyTokens;
  accounts: AccountService;
  workspaces: WorkspaceService;
  apiKeys: ApiKeyService;
}

export interface CreateDependenciesOptions {
  config: Config;
  dataSource: DataSource;
  masterKey: Buffer;
  logger: Logger;
}

/** Builds the services of every area over one data source. */
export function createServices({ dataSource, masterKey }: Pick<CreateDependenciesOptions, 'dataSource' | 'masterKey'>): Services {
  const store = createFoundationStore(dataSource);
  const tokens = new ApiKeyTokens(masterKey);
  const workspaces = new WorkspaceService(store);
  const apiKeys = new ApiKeyService(store, tokens);
  const accounts = new AccountService(store, tokens, workspaces, apiKeys);
  return { store, tokens, accounts, workspaces, apiKeys };
}

/** Every API route, in the order of the spec's sections. */
export function allRoutes(services: Services): RouteDefinition[] {
  return [
    ...accountRoutes({ accounts: services.accounts, apiKeys: services.apiKeys, store: services.store }),
    ...workspaceRoutes({ workspaces: services.workspaces }),
    ...apiKeyRoutes({ apiKeys: services.apiKeys }),
  ];
}

export interface ApplicationParts {
  services: Services;
  app: AppDependencies;
}

/** Services plus everything createApp needs. */
export function createAppDependencies(options: CreateDependenciesOptions): ApplicationParts {
  const { config, dataSource, logger } = options;
  const services = createServices(options);
  const authenticator = new Authenticator(services.store, services.tokens, config.oidc);
  return {
    services,
    app: {
      logger,
      routes: allRoutes(services),
      version: '1.0',
      checkReady: async () => {
        await dataSource.query('SELECT 1');
      },
      mount: {
        authenticator,
        rateLimiter: new RateLimiter(config.rateLimit),
        idempotency: createIdempotencyStore(dataSource),
        findWorkspace: (id) => services.store.workspaces.findById(id),
        bodyLimitBytes: config.bodyLimitBytes,
        includeInfoCost: config.rateLimit.includeInfoCost,
      },
    },
  };
}
