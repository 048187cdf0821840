// The composition root's service graph: builds every area's stores and
// services, the model router, the tool executor and the webhook sender from a
// data source, the master key and the configuration. The HTTP routes and the
// actor kinds receive what it builds; neither builds any. Later areas add
// their services here, one line each.
import type { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import { AccountService } from '../src/accounts/account.service';
import { ApiKeyService } from '../src/accounts/api-key.service';
import { ServiceSealer } from '../src/crypto/service-sealer';
import { WorkspaceService } from '../src/accounts/workspace.service';
import { CredentialChanges } from '../src/auth/credential-changes';
import { API_KEY_TOKEN_KEY_PURPOSE, ApiKeyTokens } from '../src/auth/tokens';
import type { Config } from '../src/config';
import { UnavailableError } from '../src/errors';
import type { ClusterStatusSource } from '../src/schemas/cluster.schema';
import { createFoundationStore } from '../persistence/repositories/foundation.store';
import { usePreparedReads } from '../persistence/repositories/record-table';
import { loadServiceKey } from '../persistence/repositories/service-key.store';
import { TenantService } from '../src/tenants/tenant.service';
import type { ErasureRuntimePort } from '../src/ports/erasure-runtime';
import type { ObjectiveCommandPort } from '../src/ports/objective-commands';
import { ObjectiveService } from '../src/objectives/objective.service';
import { BusObjectiveLiveFeed } from '../src/objectives/objective-live-feed';
import { createObjectivesStore } from '../persistence/repositories/objectives.store';
import { ModelRouter } from '../src/models/model-router';
import { OpenRouterClient } from '../src/models/openrouter-client';
import { ToolExecutor } from '../src/tools/tool-executor';
import { WorkspaceSecretResolver } from '../src/secrets/workspace-secret-resolver';
import type { WebhookEndpointCommandPort } from '../src/ports/webhook-endpoint-commands';
import { WebhookDeliveryService } from '../src/webhooks/webhook-delivery.service';
import { createWebhookDeliveriesStore } from '../persistence/repositories/webhook-deliveries.store';
import type { ScheduleCommandPort } from '../src/ports/schedule-commands';
import { ScheduleService } from '../src/schedules/schedule.service';
import { createSchedulesStore } from '../persistence/repositories/schedules.store';
import { WebhookSender } from '../src/webhooks/webhook-sender';
import { WebhookConnectWarnings } from '../src/webhooks/webhook-connect-warnings';
import { nextRetryDelayMs } from '../src/webhooks/webhook-retry-schedule';
import { expiringMemo } from '../src/resource/expiring-memo';
import { createTenantStore } from '../persistence/repositories/tenant.store';
import { SearchService } from '../src/search/search.service';
import { createSearchStore } from '../persistence/repositories/search.store';
import { BundleService } from '../src/bundles/bundle.service';
import { createBundleStore } from '../persistence/repositories/bundle.store';
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
import { WorkspaceKeyring } from '../src/crypto/workspace-keyring';
import { ModelService } from '../src/models/model.service';
import { AiProviderKeyService } from '../src/secrets/ai-provider-key.service';
import { WorkspaceSecretService } from '../src/secrets/workspace-secret.service';
import { createModelsStore } from '../persistence/repositories/models.store';
import { createSecretsStore } from '../persistence/repositories/secrets.store';
import { AgentService } from '../src/agents/agent.service';
import { AssignmentService } from '../src/agents/assignment.service';
import { FeedbackService } from '../src/agents/feedback.service';
import { VariationService } from '../src/agents/variation.service';
import { SdkMcpClient } from '../src/tools/mcp-sdk-client';
import { ToolService } from '../src/tools/tool.service';
import { ToolSetService } from '../src/tools/tool-set.service';
import { agentWebhookUrl, createAgentsStore } from '../persistence/repositories/agents.store';
import { createWidgetsStore } from '../persistence/repositories/widgets.store';
import { WidgetService } from '../src/widgets/widget.service';
import { WidgetSessionService } from '../src/widgets/widget-session.service';
import { WIDGET_TOKEN_KEY_PURPOSE, WidgetTokens } from '../src/widgets/widget-tokens';
import type { WidgetSessionVerifier } from '../src/ports/widget-sessions';
import type { Services, WebhookEffects } from '../src/ports/services';
import { UsageService } from '../src/usage/usage.service';
import { createUsageStore } from '../persistence/repositories/usage.store';

/** How long a node keeps an agent's webhook URL and an account's signing secrets before reading them again. */
export const WEBHOOK_LOOKUP_TTL_MS = 1000;

/** What the services are built from: the node's data source, master key and configuration, and its ways to the actor runtime. */
export interface ServicesOptions {
  config: Config;
  dataSource: DataSource;
  masterKey: Buffer;
  /** Where the tool executor logs. @default none */
  logger?: Logger;
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
  /** Replaces the node's widget sessions (tests). @default the widgets area's */
  widgetSessions?: WidgetSessionVerifier;
}

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

/** Builds the services of every area over one data source: the graph both the HTTP routes and the actor kinds receive. */
export function createServices(
  { dataSource, masterKey, config, clusterStatus, objectiveCommands, webhookEndpointCommands, scheduleCommands, erasureRuntime, logger, widgetSessions: verifierOverride }: ServicesOptions,
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
  const models = new ModelService(modelsStore, secretsStore.providerKeys);
  workspaces.onWorkspaceCreated(async (workspace) => void (await models.seedWorkspace(workspace)));
  const search = new SearchService(createSearchStore(dataSource));
  const agentsStore = createAgentsStore(dataSource);
  const schedulesStore = createSchedulesStore(dataSource);
  const schedules = new ScheduleService(agentsStore, schedulesStore, scheduleCommands ?? noScheduleRuntime);
  const agents = new AgentService(agentsStore, store, schedules, urlPolicy);
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
    models: new ModelRouter({ credentials: providerKeys, models, openRouter }),
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
    connectWarnings: new WebhookConnectWarnings(logger),
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

/** The hostname of AGENTRT_PUBLIC_URL (config.publicUrl), lowercased, without a trailing dot: the API's own, never a widget's. */
export function apiHostnameOf(config: Pick<Config, 'publicUrl'>): string | undefined {
  try {
    return new URL(config.publicUrl).hostname.toLowerCase().replace(/\.$/, '') || undefined;
  } catch {
    return undefined;
  }
}
