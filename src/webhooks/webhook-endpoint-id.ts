// The identity of a webhook endpoint actor: one per agent and webhook URL.
// A new URL is a new endpoint, which is how "disabled until the agent's
// webhookEventsUrl changes" holds without anyone re-enabling anything.
import { createHash } from 'node:crypto';

export const WEBHOOK_ENDPOINT_KIND = 'webhook_endpoint';

/** `<agentId>:<first 16 hex of sha256(url)>`: stable, short, and no URL (which may carry a token) in actor ids or logs. */
export function webhookEndpointIdOf(agentId: string, webhookUrl: string): string {
  return `${agentId}:${createHash('sha256').update(webhookUrl).digest('hex').slice(0, 16)}`;
}

/** The agent of an endpoint id made by webhookEndpointIdOf. */
export function agentIdOfEndpoint(endpointId: string): string {
  return endpointId.slice(0, endpointId.lastIndexOf(':'));
}
