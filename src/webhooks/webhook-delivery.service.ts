// The webhook deliveries API (spec 2.16, api-decisions.md "Webhooks"): lists an
// agent's deliveries from the read model, and re-queues a FAILED or DISABLED
// one on the endpoint actor of the agent's current URL. It never writes the
// table: the endpoint actor owns every delivery and projects it in its turn.
import type { WorkspaceRef } from '../auth/workspace-access';
import type { AgentRecord } from '../agents/records';
import { inWorkspace } from '../agents/write-options';
import { FailedPreconditionError, NotFoundError } from '../errors';
import type { AgentsStore } from '../ports/agents-store';
import type { WebhookDeliveriesStore, WebhookDeliveryListFilter } from '../ports/webhook-deliveries-store';
import type { WebhookEndpointCommandPort } from '../ports/webhook-endpoint-commands';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import type { WebhookDelivery } from '../schemas/webhook-deliveries.schema';
import { toWebhookDelivery } from './webhook-delivery-mappers';
import type { WebhookDeliveryStatus } from './webhook-delivery';

/** The list's filters as the API takes them: an UNSPECIFIED status or event type lists every one. */
export interface WebhookDeliveryListQuery extends Omit<WebhookDeliveryListFilter, 'status'> {
  status?: WebhookDeliveryStatus | 'WEBHOOK_DELIVERY_STATUS_UNSPECIFIED';
}

const RETRYABLE: ReadonlySet<WebhookDeliveryStatus> = new Set(['WEBHOOK_DELIVERY_STATUS_FAILED', 'WEBHOOK_DELIVERY_STATUS_DISABLED']);

export class WebhookDeliveryService {
  constructor(
    private readonly agents: Pick<AgentsStore, 'agents'>,
    private readonly deliveries: WebhookDeliveriesStore,
    private readonly endpoints: WebhookEndpointCommandPort,
  ) {}

  /**
   * The agent's deliveries, in id (creation) order.
   * @throws NotFoundError for an agent that is not the workspace's
   */
  async list(workspace: WorkspaceRef, agentId: string, page: PageRequest, query: WebhookDeliveryListQuery): Promise<Page<WebhookDelivery>> {
    await this.agentOf(workspace, agentId);
    const filter: WebhookDeliveryListFilter = {
      ...query,
      status: query.status === 'WEBHOOK_DELIVERY_STATUS_UNSPECIFIED' ? undefined : query.status,
      eventType: query.eventType === 'OBJECTIVE_EVENT_TYPE_UNSPECIFIED' ? undefined : query.eventType,
    };
    return toPage(await this.deliveries.list(workspace.id, agentId, filter, page), page, toWebhookDelivery);
  }

  /**
   * Re-queues a FAILED or DISABLED delivery, under the same id, to the agent's
   * webhookEventsUrl as it is now; answers the delivery once PENDING again.
   * @throws NotFoundError for an agent or delivery that is not the workspace's
   * @throws FailedPreconditionError for a delivery in another status, an agent without webhookEventsUrl, or an event gone
   * @throws UnavailableError from the port when this node runs no actor runtime
   */
  async retry(workspace: WorkspaceRef, agentId: string, id: string): Promise<WebhookDelivery> {
    const agent = await this.agentOf(workspace, agentId);
    const delivery = await this.deliveries.get(workspace.id, agentId, id);
    if (!delivery) throw NotFoundError.resource('webhook delivery', id);
    if (!RETRYABLE.has(delivery.status)) {
      throw new FailedPreconditionError(`webhook delivery ${id} is ${delivery.status}; only FAILED and DISABLED deliveries can be retried`);
    }
    if (!agent.webhookEventsUrl) throw new FailedPreconditionError(`agent ${agentId} has no webhookEventsUrl to deliver to`);
    const body = await this.deliveries.eventBody(delivery.objectiveEventId);
    if (body === null) throw new FailedPreconditionError(`objective event ${delivery.objectiveEventId} of webhook delivery ${id} no longer exists`);
    return toWebhookDelivery(await this.endpoints.retry({ delivery, webhookUrl: agent.webhookEventsUrl, body }));
  }

  private async agentOf(workspace: WorkspaceRef, agentId: string): Promise<AgentRecord> {
    return inWorkspace(await this.agents.agents.findById(agentId), workspace, 'agent', agentId);
  }
}
