// The node's service graph as one type: what the composition root
// (composition/services.ts) builds and hands to both the HTTP routes
// (http/route-table.ts) and the actor kinds (actors/kinds/node-kinds.ts), so
// neither layer imports the other nor the root. Types only, no construction.
import type { AccountService } from '../accounts/account.service';
import type { ApiKeyService } from '../accounts/api-key.service';
import type { WorkspaceService } from '../accounts/workspace.service';
import type { AgentService } from '../agents/agent.service';
import type { AssignmentService } from '../agents/assignment.service';
import type { FeedbackService } from '../agents/feedback.service';
import type { VariationService } from '../agents/variation.service';
import type { CredentialChanges } from '../auth/credential-changes';
import type { ApiKeyTokens } from '../auth/tokens';
import type { BundleService } from '../bundles/bundle.service';
import type { EpisodicMemory } from '../memory/episodic-memory';
import type { MemoryEntryService } from '../memory/memory-entry.service';
import type { MemoryLayerService } from '../memory/memory-layer.service';
import type { ModelRouter } from '../models/model-router';
import type { ModelService } from '../models/model.service';
import type { BusObjectiveLiveFeed } from '../objectives/objective-live-feed';
import type { ObjectiveService } from '../objectives/objective.service';
import type { ServiceToolRunner } from '../objectives/service-tool-runner';
import type { ClusterStatusSource } from '../schemas/cluster.schema';
import type { ScheduleService } from '../schedules/schedule.service';
import type { SearchService } from '../search/search.service';
import type { AiProviderKeyService } from '../secrets/ai-provider-key.service';
import type { WorkspaceSecretService } from '../secrets/workspace-secret.service';
import type { TenantService } from '../tenants/tenant.service';
import type { ToolExecutor } from '../tools/tool-executor';
import type { ToolSetService } from '../tools/tool-set.service';
import type { ToolService } from '../tools/tool.service';
import type { UploadService } from '../uploads/upload.service';
import type { UsageService } from '../usage/usage.service';
import type { WebhookDeliveryService } from '../webhooks/webhook-delivery.service';
import type { WebhookEndpointOptions } from '../webhooks/webhook-endpoint.behavior';
import type { WebhookConnectWarnings } from '../webhooks/webhook-connect-warnings';
import type { WebhookSender } from '../webhooks/webhook-sender';
import type { WidgetSessionService } from '../widgets/widget-session.service';
import type { WidgetService } from '../widgets/widget.service';
import type { ErasureRuntimePort } from './erasure-runtime';
import type { FoundationStore } from './foundation-store';
import type { ObjectivesStore } from './objectives-store';
import type { SchedulesStore } from './schedules-store';
import type { UsageStore } from './usage-store';
import type { WebhookDeliveriesStore } from './webhook-deliveries-store';
import type { WidgetSessionVerifier } from './widget-sessions';

/** Every area's services and what the actor kinds need of them, built once per process by createServices (composition/services.ts). */
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

/** What a webhook delivery needs beyond its endpoint's state. */
export interface WebhookEffects {
  sender: WebhookSender;
  /** The account's signing secrets, current first (memoised for a few seconds: a rotation shows within WEBHOOK_LOOKUP_TTL_MS, composition/services.ts). */
  signingSecrets(accountId: string): Promise<string[]>;
  /** An agent's webhookEventsUrl (memoised likewise). */
  webhookUrlOf(agentId: string): Promise<string | null>;
  options: WebhookEndpointOptions;
  /** Warns once per endpoint whose receiver cannot be reached. */
  connectWarnings: WebhookConnectWarnings;
}
