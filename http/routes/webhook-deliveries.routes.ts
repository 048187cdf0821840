// Webhook deliveries of an agent (interface-spec 4.8 and 2.16, api-decisions.md
// "Webhooks"): the list with its status, objectiveId and eventType filters, and
// the retry of a FAILED or DISABLED delivery. Scopes are the objectives'
// (api-decisions.md: deliveries belong with objectives and their events).
import type { AgentService } from '../../src/agents/agent.service';
import type { WebhookDeliveryService } from '../../src/webhooks/webhook-delivery.service';
import { parseLabelSelector } from '../../src/resource/labels';
import { pageRequest } from '../../src/resource/pagination';
import { ListOf, PathIds, Strict, listParamProperties } from '../../src/schemas/common.schema';
import { RetryWebhookDeliveryBody, WebhookDelivery, WebhookDeliveryListFilters } from '../../src/schemas/webhook-deliveries.schema';
import { agentAccess } from '../parent-access';
import { defineRoute, type RouteDefinition } from '../route';

const AgentPath = PathIds({ workspaceId: 'workspace', agentId: 'agent' });
const DeliveryPath = PathIds({ workspaceId: 'workspace', agentId: 'agent', id: 'webhookDelivery' });
const ListQuery = Strict({ ...listParamProperties, ...WebhookDeliveryListFilters });

export function webhookDeliveryRoutes({ webhookDeliveries, agents }: { webhookDeliveries: WebhookDeliveryService; agents: AgentService }): RouteDefinition[] {
  const base = '/v1/workspaces/{workspaceId}/agents/{agentId}/webhook_deliveries';
  return [
    defineRoute({
      method: 'GET', path: base, operationId: 'listWebhookDeliveries', summary: "List the agent's webhook deliveries",
      scope: 'objectives:read', workspace: 'path', params: AgentPath, query: ListQuery, response: ListOf(WebhookDelivery),
      handler: ({ workspace, params, query }) =>
        webhookDeliveries.list(workspace, params.agentId, pageRequest(query), {
          prefix: query.prefix,
          labels: parseLabelSelector(query.labels),
          status: query.status,
          objectiveId: query.objectiveId,
          eventType: query.eventType,
        }),
    }),
    defineRoute({
      method: 'POST', path: `${base}/{id}/retry`, operationId: 'retryWebhookDelivery',
      summary: "Re-queue a FAILED or DISABLED delivery to the agent's current webhookEventsUrl, under the same webhook-id",
      scope: 'objectives:manage', workspace: 'path', params: DeliveryPath, body: RetryWebhookDeliveryBody, response: WebhookDelivery, checkAccess: agentAccess(agents),
      handler: ({ workspace, params }) => webhookDeliveries.retry(workspace, params.agentId, params.id),
    }),
  ];
}
