// Composition root of the API: builds stores, services and the route list from
// a data source and configuration. Later areas add their services and routes
// here, one line each.
import type { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import { AccountService } from '../src/accounts/account.service';
import { ApiKeyService } from '../src/accounts/api-key.service';
import { ServiceSealer } from '../src/crypto/service-sealer';
import { WorkspaceService } from '../src/accounts/workspace.service';
import { Authenticator } from '../src/auth/authenticator';
import { CredentialChanges } from '../src/auth/credential-changes';
import { RateLimiter } from '../src/auth/rate-limiter';
import { API_KEY_TOKEN_KEY_PURPOSE, ApiKeyTokens } from '../src/auth/tokens';
import type { Config } from '../src/config';
import { UnavailableError } from '../src/errors';
import { unreachableReason, type DependencyHealthPort } from '../src/ports/dependency-health';
import { withTimeout } from '../src/with-timeout';
import { isPostgresConnectionFailure } from '../persistence/runtime/pg-results';
import type { ClusterStatusSource } from '../src/schemas/cluster.schema';
import type { FoundationStore } from '../src/ports/foundation-store';
import { createFoundationStore } from '../persistence/repositories/foundation.store';
import { usePreparedReads } from '../persistence/repositories/record-table';
import { loadServiceKey } from '../persistence/repositories/service-key.store';
import { createIdempotencyStore, type IdempotencyClaimant } from '../persistence/repositories/idempotency.store';
import { TenantService } from '../src/tenants/tenant.service';
import type { ErasureRuntimePort } from '../src/ports/erasure-runtime';
import type { ObjectiveCommandPort } from '../src/ports/objective-commands';
import { ObjectiveService } from '../src/objectives/objective.service';
import { BusObjectiveLiveFeed } from '../src/objectives/objective-live-feed';
import { createObjectivesStore } from '../persistence/repositories/objectives.store';
import type { ObjectivesStore } from '../src/ports/objectives-store';
import { ModelRouter } from '../src/models/model-router';
import { OpenRouterClient } from '../src/models/openrouter-client';
import { ToolExecutor } from '../src/tools/tool-executor';
import { WorkspaceSecretResolver } from '../src/secrets/workspace-secret-resolver';
import { objectiveRoutes, type StreamTimings } from '../http/routes/objectives.routes';
import type { WebhookEndpointCommandPort } from '../src/ports/webhook-endpoint-commands';
import type { WebhookDeliveriesStore } from '../src/ports/webhook-deliveries-store';
import { WebhookDeliveryService } from '../src/webhooks/webhook-delivery.service';
import { createWebhookDeliveriesStore } from '../persistence/repositories/webhook-deliveries.store';
import { webhookDeliveryRoutes } from '../http/routes/webhook-deliveries.routes';
import type { ScheduleCommandPort } from '../src/ports/schedule-commands';
import type { SchedulesStore } from '../src/ports/schedules-store';
import { ScheduleService } from '../src/schedules/schedule.service';
import { createSchedulesStore } from '../persistence/repositories/schedules.store';
import { scheduleRoutes } from '../http/routes/schedules.routes';
import { WebhookSender } from '../src/webhooks/webhook-sender';
import { nextRetryDelayMs } from '../src/webhooks/webhook-retry-schedule';
import type { WebhookEndpointOptions } from '../src/webhooks/webhook-endpoint.behavior';
import { expiringMemo } from '../src/resource/expiring-memo';
import { createTenantStore } from '../persistence/repositories/tenant.store';
import { tenantRoutes } from '../http/routes/tenants.routes';
import { SearchService } from '../src/search/search.service';
import { createSearchStore } from '../persistence/repositories/search.store';
import { searchRoutes } from '../http/routes/search.routes';
import { BundleService } from '../src/bundles/bundle.service';
import { createBundleStore } from '../persistence/repositories/bundle.store';
import { bundleRoutes } from '../http/routes/bundles.routes';
import { MemoryEntryService } from '../src/memory/memory-entry.service';
import { MemoryLayerService } from '../src/memory/memory-layer.service';
import { MemoryToolsService } from '../src/memory/memory-tools.service';
import { EpisodicMemory } from '../src/memory/episodic-memory';
import { ObjectiveMemoryResolver } from '../src/memory/objective-memory';
import { ToolDiscoveryService } from '../src/search/tool-discovery.service';
import { ServiceToolRunner } from '../src/objectives/service-tool-runner';
import { UploadService } from '../src/uploads/upload.service';
import { UploadUrlSigner } from '../src/uploads/upload-url-signer';
import { createMemoryStore } from '../persistence/repositories/memory.store';
import { createObjectStorage } from '../persistence/storage';
import { memoryRoutes } from '../http/routes/memory-layers.routes';
import { uploadRoutes } from '../http/routes/uploads.routes';
import { WorkspaceKeyring } from '../src/crypto/workspace-keyring';
import { ModelService } from '../src/models/model.service';
import { AiProviderKeyService } from '../src/secrets/ai-provider-key.service';
import { WorkspaceSecretService } from '../src/secrets/workspace-secret.service';
import { createModelsStore } from '../persistence/repositories/models.store';
import { createSecretsStore } from '../persistence/repositories/secrets.store';
import { aiProviderKeyRoutes } from '../http/routes/ai-provider-keys.routes';
import { modelRoutes } from '../http/routes/models.routes';
import { workspaceSecretRoutes } from '../http/routes/workspace-secrets.routes';
import { AgentService } from '../src/agents/agent.service';
import { AssignmentService } from '../src/agents/assignment.service';
import { FeedbackService } from '../src/agents/feedback.service';
import { VariationService } from '../src/agents/variation.service';
import { SdkMcpClient } from '../src/tools/mcp-sdk-client';
import { ToolService } from '../src/tools/tool.service';
import { ToolSetService } from '../src/tools/tool-set.service';
import { agentWebhookUrl, createAgentsStore } from '../persistence/repositories/agents.store';
import { agentRoutes } from '../http/routes/agents.routes';
import { variationRoutes } from '../http/routes/variations.routes';
import { toolRoutes } from '../http/routes/tools.routes';
import { toolSetRoutes } from '../http/routes/tool-sets.routes';
import type { AppDependencies } from '../http/app';
import type { RouteDefinition } from '../http/route';
import { accountRoutes } from '../http/routes/account.routes';
import { clusterRoutes } from '../http/routes/cluster.routes';
import { apiKeyRoutes } from '../http/routes/api-keys.routes';
import { workspaceRoutes } from '../http/routes/workspaces.routes';
import { widgetRoutes } from '../http/routes/widgets.routes';
import { createWidgetsStore } from '../persistence/repositories/widgets.store';
import { WidgetService } from '../src/widgets/widget.service';
import { WidgetSessionService } from '../src/widgets/widget-session.service';
import { WIDGET_TOKEN_KEY_PURPOSE, WidgetTokens } from '../src/widgets/widget-tokens';
import type { WidgetSessionVerifier } from '../src/ports/widget-sessions';
import type { WidgetHostOptions } from '../http/widget-host/widget-host';
import { UsageService } from '../src/usage/usage.service';
import { createUsageStore } from '../persistence/repositories/usage.store';
import type { UsageStore } from '../src/ports/usage-store';
import { usageRoutes } from '../http/routes/usage.routes';

export interface Services {
  store: FoundationStore;
  /** API key and workspace writes tell the authenticator, which forgets the credentials it kept. */
  credentialChanges: CredentialChanges;
  tokens: ApiKeyTokens;
  accounts: AccountService;
  workspaces: WorkspaceService;
  apiKeys: ApiKeyService;
  tenants: TenantService;
  search: SearchService;
  memoryLayers: MemoryLayerService;
  memoryEntries: MemoryEntryService;
  uploads: UploadService;
  secrets: WorkspaceSecretService;
  providerKeys: AiProviderKeyService;
  models: ModelService;
  agents: AgentService;
  variations: VariationService;
  assignments: AssignmentService;
  feedback: FeedbackService;
  tools: ToolService;
  toolSets: ToolSetService;
  bundles: BundleService;
  objectives: ObjectiveService;
  objectivesStore: ObjectivesStore;
  /** Answer deltas and commit nudges for open event streams; carries nothing until the node's runtime binds it (startNodeConsumers). */
  objectiveLive: BusObjectiveLiveFeed;
  webhookDeliveries: WebhookDeliveryService;
  /** What the webhook endpoint kind's projector writes. */
  webhookDeliveriesStore: WebhookDeliveriesStore;
  schedules: ScheduleService;
  /** The usage report; its store also takes an erased tenant's sums (the erasure kind). */
  usage: UsageService;
  usageStore: UsageStore;
  widgets: WidgetService;
  /** Mints and revokes widget sessions; the WidgetSessionVerifier the widget host asks (src/ports/widget-sessions.ts). */
  widgetSessions: WidgetSessionService;
  /** What the schedule kind's projector writes. */
  schedulesStore: SchedulesStore;
  /** What the objective actor's effects call: the model router and the tool executor. */
  objectiveEffects: { models: ModelRouter; tools: ToolExecutor; serviceTools: ServiceToolRunner };
  /** What the webhook endpoint kind and its intake use: the sender, the signing secrets, the agents' URLs, the delivery rules. */
  webhookEffects: WebhookEffects;
  clusterStatus: ClusterStatusSource;
  /** What the erasure kind's runs reach of the runtime (bound once it runs). */
  erasureRuntime: ErasureRuntimePort;
  /** How long OBJECTIVE_EVENTS keeps an event (the objective kind declares it on its stream). */
  eventRetentionMs: number;
  /** Episodic memory layers: the memory tools write them, every node's sweeper removes the expired ones. */
  episodicMemory: EpisodicMemory;
  /** How often the sweeper runs (AGENTRT_EPISODIC_SWEEP_INTERVAL_MS). */
  episodicSweepIntervalMs: number;
  /** Who a widget session token speaks for, widgets by hostname, a session's secrets (the widget host and the objective kind ask it): widgetSessions unless a test replaces it. */
  widgetVerifier: WidgetSessionVerifier;
  /** Closes the outbound connection pools (model provider, tools). */
  close(): Promise<void>;
}

export interface WebhookEffects {
  sender: WebhookSender;
  /** The account's signing secrets, current first (memoised for a few seconds: a rotation shows within WEBHOOK_LOOKUP_TTL_MS). */
  signingSecrets(accountId: string): Promise<string[]>;
  /** An agent's webhookEventsUrl (memoised likewise). */
  webhookUrlOf(agentId: string): Promise<string | null>;
  options: WebhookEndpointOptions;
}

/** How long a node keeps an agent's webhook URL and an account's signing secrets before reading them again. */
export const WEBHOOK_LOOKUP_TTL_MS = 1000;

export interface CreateDependenciesOptions {
  config: Config;
  dataSource: DataSource;
  masterKey: Buffer;
  logger: Logger;
  /** True once the node is shutting down: /readyz then answers 503 so load balancers stop routing to it. */
  isDraining?: () => boolean;
  /** The actor runtime's cluster view (GET /v1/cluster); without it the route answers UNAVAILABLE. */
  clusterStatus?: ClusterStatusSource;
  /** Reaches objective actors; without it objective commands answer UNAVAILABLE (a process with no runtime). */
  objectiveCommands?: ObjectiveCommandPort;
  /** Reaches webhook endpoint actors; without it a delivery retry answers UNAVAILABLE. */
  webhookEndpointCommands?: WebhookEndpointCommandPort;
  /** Reaches schedule actors; without it schedule writes and triggers answer UNAVAILABLE. */
  scheduleCommands?: ScheduleCommandPort;
  /** Reaches erasure jobs and what their runs need of the runtime; without it a tenant or subject erasure answers UNAVAILABLE. */
  erasureRuntime?: ErasureRuntimePort;
  /** This node and its lease timeout once its actor runtime runs: Idempotency-Key claims name it, so a retry takes over a dead node's claim. */
  idempotencyClaimant?: () => IdempotencyClaimant | undefined;
  /** The node's view of Postgres and NATS: /readyz names what is down, requests answer 503 while it is. @default none (readiness asks the database alone) */
  health?: DependencyHealthPort;
  /** Replaces the node's widget sessions (tests). @default the widgets area's */
  widgetSessions?: WidgetSessionVerifier;
  /** Event stream timings of the API and the widget host (tests). @default SSE_POLL_MS, SSE_HEARTBEAT_MS, SSE_BATCH */
  stream?: StreamTimings;
}

/** How long /readyz waits for the database's answer before calling it unreachable. */
const READY_QUERY_TIMEOUT_MS = 2000;

/** The service key that seals account-level secrets (webhook signing secrets). */
const ACCOUNT_SECRETS_KEY_PURPOSE = 'account-secrets';

async function noRuntime(): Promise<never> {
  throw new UnavailableError('this node runs no actor runtime');
}

const noObjectiveRuntime: ObjectiveCommandPort = { send: noRuntime };
const noWebhookRuntime: WebhookEndpointCommandPort = { retry: noRuntime };
const noScheduleRuntime: ScheduleCommandPort = { configure: noRuntime, trigger: noRuntime };
const noErasureRuntime: ErasureRuntimePort = {
  start: noRuntime, get: noRuntime, pendingObjectiveEvents: noRuntime, purgeObjectiveEvents: noRuntime, eraseOnWebhookEndpoint: noRuntime,
};

/** Builds the services of every area over one data source. */
export function createServices(
  { dataSource, masterKey, config, clusterStatus, objectiveCommands, webhookEndpointCommands, scheduleCommands, erasureRuntime, logger, widgetSessions: verifierOverride }:
    Pick<CreateDependenciesOptions, 'dataSource' | 'masterKey' | 'config' | 'clusterStatus' | 'objectiveCommands' | 'webhookEndpointCommands' | 'scheduleCommands' | 'erasureRuntime' | 'widgetSessions'>
      & { logger?: Logger },
): Services {
  // A Postgres server of the node's own: reads by id may be prepared once per
  // connection. Not on the embedded database (no DATABASE_URL), whose single
  // session all connections share (see usePreparedReads).
  if (config.databaseUrl) usePreparedReads(dataSource);
  const store = createFoundationStore(dataSource);
  const urlPolicy = { allowPrivateNetwork: config.allowPrivateNetwork };
  const tokens = new ApiKeyTokens(() => loadServiceKey(dataSource, masterKey, API_KEY_TOKEN_KEY_PURPOSE));
  const credentialChanges = new CredentialChanges();
  const workspaces = new WorkspaceService(store, credentialChanges);
  const apiKeys = new ApiKeyService(store, tokens, credentialChanges);
  const accountSecrets = new ServiceSealer(() => loadServiceKey(dataSource, masterKey, ACCOUNT_SECRETS_KEY_PURPOSE));
  const accounts = new AccountService(store, tokens, workspaces, apiKeys, accountSecrets);
  const erasures = erasureRuntime ?? noErasureRuntime;
  const tenants = new TenantService(createTenantStore(dataSource), erasures);
  const memoryStore = createMemoryStore(dataSource);
  const uploadSigner = new UploadUrlSigner(masterKey);
  const uploads = new UploadService(memoryStore.uploads, createObjectStorage(config, uploadSigner), uploadSigner, { maxBytes: config.uploadMaxBytes });
  const memoryLayers = new MemoryLayerService(memoryStore, store.profiles);
  const memoryEntries = new MemoryEntryService(memoryStore, memoryLayers, uploads, store.profiles);
  const episodicMemory = new EpisodicMemory(memoryStore);
  const secretsStore = createSecretsStore(dataSource);
  const modelsStore = createModelsStore(dataSource);
  const keyring = new WorkspaceKeyring(masterKey, secretsStore.dataKeys);
  const secrets = new WorkspaceSecretService(secretsStore, store, keyring);
  const providerKeys = new AiProviderKeyService(secretsStore, modelsStore, keyring, urlPolicy);
  const models = new ModelService(modelsStore);
  workspaces.onWorkspaceCreated(async (workspace) => void (await models.seedWorkspace(workspace)));
  const search = new SearchService(createSearchStore(dataSource));
  const agentsStore = createAgentsStore(dataSource);
  const schedulesStore = createSchedulesStore(dataSource);
  const schedules = new ScheduleService(agentsStore, schedulesStore, scheduleCommands ?? noScheduleRuntime);
  const agents = new AgentService(agentsStore, store, schedules);
  const feedback = new FeedbackService(agentsStore);
  const variations = new VariationService(agentsStore, store, models, feedback);
  const assignments = new AssignmentService(agentsStore, variations);
  const tools = new ToolService(agentsStore, store, urlPolicy);
  const mcpClient = new SdkMcpClient(urlPolicy);
  const toolSets = new ToolSetService(agentsStore, store, tools, mcpClient, urlPolicy);
  const bundles = new BundleService(createBundleStore(dataSource), {
    agents, variations, assignments, tools, toolSets, schedules,
    memoryOn(memory) {
      const layers = new MemoryLayerService(memory, store.profiles);
      return { layers, entries: new MemoryEntryService(memory, layers, uploads, store.profiles) };
    },
  });
  const objectivesStore = createObjectivesStore(dataSource);
  // Short in-call retries for blips; longer trouble fails the call, and its objective waits on a durable reminder.
  const openRouter = new OpenRouterClient({ urlPolicy, attribution: { url: config.publicUrl, title: 'agentrt' }, retry: { maxAttempts: config.objectives.modelCallAttempts } });
  const objectiveEffects = {
    models: new ModelRouter({ credentials: providerKeys, openRouter }),
    tools: new ToolExecutor({ secrets: new WorkspaceSecretResolver(secrets), mcp: mcpClient, urlPolicy, logger }),
    serviceTools: new ServiceToolRunner({ memory: new MemoryToolsService(memoryStore, episodicMemory), discovery: new ToolDiscoveryService(search, agentsStore.tools) }),
  };
  const objectives: ObjectiveService = new ObjectiveService(
    agentsStore, tenants, objectivesStore, objectiveCommands ?? noObjectiveRuntime, feedback, new ObjectiveMemoryResolver(memoryStore),
    { ...config.objectives, episodicMemory },
  );
  const webhookDeliveriesStore = createWebhookDeliveriesStore(dataSource);
  const { retryScheduleMs, timeoutMs, disableAfterMs, maxInFlight } = config.webhooks;
  const signingSecrets = expiringMemo(async (accountId) => {
    const secrets = await accounts.webhookSigningSecrets(accountId);
    return secrets.previous ? [secrets.current, secrets.previous] : [secrets.current];
  }, { ttlMs: WEBHOOK_LOOKUP_TTL_MS });
  // The rotating node signs with both secrets from its next delivery; other nodes within WEBHOOK_LOOKUP_TTL_MS.
  accounts.onSigningSecretRotated((accountId) => signingSecrets.forget(accountId));
  const webhookEffects: WebhookEffects = {
    sender: new WebhookSender({ urlPolicy, timeoutMs }),
    signingSecrets,
    webhookUrlOf: expiringMemo((agentId) => agentWebhookUrl(dataSource.manager, agentId), { ttlMs: WEBHOOK_LOOKUP_TTL_MS }),
    options: {
      retryDelayMs: (failedAttempts, retryAfterMs) => nextRetryDelayMs({ schedule: retryScheduleMs, failedAttempts, random: Math.random, retryAfterMs }),
      disableAfterMs,
      maxInFlight,
      // The runtime's deadline is a backstop behind the sender's own.
      attemptTimeoutMs: timeoutMs + 5000,
    },
  };
  const widgetsStore = createWidgetsStore(dataSource);
  const widgetTokens = new WidgetTokens(() => loadServiceKey(dataSource, masterKey, WIDGET_TOKEN_KEY_PURPOSE));
  const widgets: WidgetService = new WidgetService(widgetsStore, agentsStore, {
    baseUrlTemplate: config.widgetBaseUrl,
    onHostnameChanged: (hostname) => widgetSessions.forgetHostname(hostname),
    apiHostname: apiHostnameOf(config),
  });
  const widgetSessions: WidgetSessionService = new WidgetSessionService(widgetsStore, widgets, tenants, keyring, widgetTokens, { baseUrlTemplate: config.widgetBaseUrl });
  const webhookDeliveries = new WebhookDeliveryService(agentsStore, webhookDeliveriesStore, webhookEndpointCommands ?? noWebhookRuntime);
  const usageStore = createUsageStore(dataSource);
  return {
    store, credentialChanges, tokens, accounts, workspaces, apiKeys, tenants, search, memoryLayers, memoryEntries, uploads, secrets, providerKeys, models,
    agents, variations, assignments, feedback, tools, toolSets, bundles, objectives, objectivesStore, objectiveEffects, objectiveLive: new BusObjectiveLiveFeed(),
    webhookDeliveries, webhookDeliveriesStore, webhookEffects, schedules, schedulesStore, widgets, widgetSessions,
    usage: new UsageService(usageStore), usageStore,
    clusterStatus: clusterStatus ?? noRuntime,
    erasureRuntime: erasures,
    eventRetentionMs: config.eventRetentionMs,
    episodicMemory,
    episodicSweepIntervalMs: config.episodicSweepIntervalMs,
    widgetVerifier: verifierOverride ?? widgetSessions,
    async close() {
      await Promise.allSettled([openRouter.close(), objectiveEffects.tools.close(), mcpClient.close(), webhookEffects.sender.close()]);
    },
  };
}

/** Every API route, in the order of the spec's sections. */
export function allRoutes(services: Services, options: { isDraining?: () => boolean; stream?: StreamTimings } = {}): RouteDefinition[] {
  return [
    ...accountRoutes({ accounts: services.accounts, apiKeys: services.apiKeys, store: services.store }),
    ...workspaceRoutes({ workspaces: services.workspaces }),
    ...apiKeyRoutes({ apiKeys: services.apiKeys }),
    ...tenantRoutes({ tenants: services.tenants }),
    ...searchRoutes({ search: services.search }),
    ...memoryRoutes({ memoryLayers: services.memoryLayers, memoryEntries: services.memoryEntries }),
    ...uploadRoutes({ uploads: services.uploads }),
    ...workspaceSecretRoutes({ secrets: services.secrets }),
    ...aiProviderKeyRoutes({ providerKeys: services.providerKeys }),
    ...modelRoutes({ models: services.models }),
    ...agentRoutes({ agents: services.agents, feedback: services.feedback }),
    ...variationRoutes({ variations: services.variations, assignments: services.assignments, agents: services.agents }),
    ...scheduleRoutes({ schedules: services.schedules, agents: services.agents }),
    ...toolRoutes({ tools: services.tools }),
    ...toolSetRoutes({ toolSets: services.toolSets }),
    ...bundleRoutes({ bundles: services.bundles }),
    ...objectiveRoutes({ objectives: services.objectives, isDraining: options.isDraining, stream: options.stream, live: services.objectiveLive }),
    ...webhookDeliveryRoutes({ webhookDeliveries: services.webhookDeliveries, agents: services.agents }),
    ...usageRoutes({ usage: services.usage }),
    ...widgetRoutes({ widgets: services.widgets, widgetSessions: services.widgetSessions }),
    ...clusterRoutes({ clusterStatus: services.clusterStatus }),
  ];
}

export interface ApplicationParts {
  services: Services;
  app: AppDependencies;
}

/**
 * Readiness: not while draining, nor while a tracked dependency is down (each
 * one named); otherwise the database must answer a `SELECT 1` soon, and a
 * broken connection there reports it down.
 * @throws UnavailableError saying why
 */
async function checkReady(dataSource: DataSource, { isDraining, health }: Pick<CreateDependenciesOptions, 'isDraining' | 'health'>): Promise<void> {
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

/** Services plus everything createApp needs. */
export function createAppDependencies(options: CreateDependenciesOptions): ApplicationParts {
  const { config, dataSource, logger } = options;
  const services = createServices(options);
  const authenticator = new Authenticator(services.store, services.tokens, config.oidc, services.credentialChanges);
  return {
    services,
    app: {
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
    },
  };
}

/** The hostname of AGENTRT_PUBLIC_URL (config.publicUrl), lowercased, without a trailing dot: the API's own, never a widget's. */
function apiHostnameOf(config: Pick<Config, 'publicUrl'>): string | undefined {
  try {
    return new URL(config.publicUrl).hostname.toLowerCase().replace(/\.$/, '') || undefined;
  } catch {
    return undefined;
  }
}

/** What the widget host needs of the node (http/widget-host). */
function widgetHostOptions(services: Services, config: Config, options: Pick<CreateDependenciesOptions, 'isDraining' | 'stream'>): WidgetHostOptions {
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
