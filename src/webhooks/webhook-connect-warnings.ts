// The operator's warning for a webhook endpoint whose receiver cannot be
// reached (a refused address, DNS, a refused connection): logged once per
// endpoint on this node, not per attempt, and again only after a delivery to
// it has succeeded. It names the endpoint, its agent and the receiver's host,
// never the URL (it may carry a token) nor a secret.
import { agentIdOfEndpoint } from './webhook-endpoint-id';
import type { WebhookAttemptOutcome } from './webhook-sender';

/** Endpoints remembered as warned; past it the oldest is forgotten (and may be warned about again). */
export const WARNED_ENDPOINTS_MAX = 10_000;

/** The little of a pino logger used here. */
export interface WarningLogger {
  warn(fields: object, message: string): void;
}

/** The receiver's host (and port) of a webhook URL, without its path, query or credentials. */
function receiverHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(not a URL)';
  }
}

export class WebhookConnectWarnings {
  /** Endpoints warned about since their last success, oldest first (a Set keeps insertion order). */
  private readonly warned = new Set<string>();

  /** @param logger where the warnings go; absent (services built without a log), nothing is written */
  constructor(private readonly logger: WarningLogger | undefined, private readonly capacity = WARNED_ENDPOINTS_MAX) {}

  /**
   * Takes one attempt's outcome: the first attempt of an endpoint that could
   * not reach its receiver logs a warning; a successful one re-arms it.
   * @param endpointId the endpoint actor's id (`<agentId>:<url hash>`)
   */
  record(endpointId: string, url: string, outcome: WebhookAttemptOutcome): void {
    if (outcome.ok) {
      this.warned.delete(endpointId);
      return;
    }
    if (!outcome.connectFailed || this.warned.has(endpointId)) return;
    if (this.warned.size >= this.capacity) this.warned.delete(this.warned.values().next().value as string);
    this.warned.add(endpointId);
    this.logger?.warn(
      { endpointId, agentId: agentIdOfEndpoint(endpointId), receiverHost: receiverHost(url), reason: outcome.errorMessage },
      'webhook deliveries cannot reach the receiver; they are retried on schedule and recorded on each delivery (this warning is not repeated for the endpoint until a delivery succeeds)',
    );
  }
}
