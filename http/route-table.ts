// The API's route table: every resource area's routes, assembled from the
// services the composition root built (composition/services.ts). It builds
// no service and reads no configuration; createApp mounts what it returns.
import type { Services } from '../src/ports/services';
import type { RouteDefinition } from './route';
import { accountRoutes } from './routes/account.routes';
import { agentRoutes } from './routes/agents.routes';
import { aiProviderKeyRoutes } from './routes/ai-provider-keys.routes';
import { apiKeyRoutes } from './routes/api-keys.routes';
import { bundleRoutes } from './routes/bundles.routes';
import { clusterRoutes } from './routes/cluster.routes';
import { memoryRoutes } from './routes/memory-layers.routes';
import { modelRoutes } from './routes/models.routes';
import { objectiveRoutes, type StreamTimings } from './routes/objectives.routes';
import { scheduleRoutes } from './routes/schedules.routes';
import { searchRoutes } from './routes/search.routes';
import { tenantRoutes } from './routes/tenants.routes';
import { toolSetRoutes } from './routes/tool-sets.routes';
import { toolRoutes } from './routes/tools.routes';
import { uploadRoutes } from './routes/uploads.routes';
import { usageRoutes } from './routes/usage.routes';
import { variationRoutes } from './routes/variations.routes';
import { webhookDeliveryRoutes } from './routes/webhook-deliveries.routes';
import { widgetRoutes } from './routes/widgets.routes';
import { workspaceSecretRoutes } from './routes/workspace-secrets.routes';
import { workspaceRoutes } from './routes/workspaces.routes';

export interface RouteTableOptions {
  /** True once the node is shutting down: open event streams end. @default never */
  isDraining?: () => boolean;
  /** Event stream timings (tests). @default SSE_POLL_MS, SSE_HEARTBEAT_MS, SSE_BATCH */
  stream?: StreamTimings;
}

/** Every API route, in the order of the spec's sections. */
export function allRoutes(services: Services, options: RouteTableOptions = {}): RouteDefinition[] {
  return [
    ...accountRoutes({ accounts: services.accounts, apiKeys: services.apiKeys }),
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
