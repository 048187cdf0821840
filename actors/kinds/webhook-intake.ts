// Feeds the webhook endpoint actors from the OBJECTIVE_EVENTS stream: one
// durable consumer shared by every node of the cluster, and by no other
// cluster (JetStream, or the embedded event log),
// each message handed as an `event` command to the endpoint of its agent's
// webhook URL and acknowledged once that actor has created the delivery in its
// fenced turn. The ask carries the event id as its command id, so a message
// delivered twice makes one delivery. Messages are pipelined: up to
// `maxConcurrent` asks run at once per node (the consumer hands one message at
// a time), and the endpoint puts each objective's events back in order.
import type { ConsumedEvent, ConsumerHandle } from '../../src/ports/event-consumer';
import { OBJECTIVE_EVENTS_STREAM } from '../../src/objectives/objective-events';
import { ApiError } from '../../src/errors';
import type { WebhookEndpointCommand } from '../../src/webhooks/webhook-endpoint.behavior';
import { WEBHOOK_ENDPOINT_KIND, webhookEndpointIdOf } from '../../src/webhooks/webhook-endpoint-id';
import { traceparentField } from '../../src/tracing/trace-context';
import { runInTrace, tracingEnabled } from '../../src/tracing/tracing';
import type { ActorRuntime } from '../runtime/actor-runtime';
import type { RuntimeLogger } from '../runtime/runtime-logger';

const DURABLE_SUFFIX = '-webhooks';
const DURABLE_NAME_LENGTH = 64;

/**
 * The durable consumer's name: one per cluster (from the runtime's subject
 * prefix, which carries the cluster id in cluster mode), so two clusters on
 * one NATS server each see every event (a cluster acknowledges an event of an
 * agent it does not know without delivering it) and never take each other's.
 * A long prefix loses its head, not its cluster id.
 */
export function webhookIntakeDurableName(subjectPrefix: string): string {
  const stem = subjectPrefix.replace(/[^A-Za-z0-9_-]/g, '_');
  return `${stem.slice(-(DURABLE_NAME_LENGTH - DURABLE_SUFFIX.length))}${DURABLE_SUFFIX}`;
}

/** The name earlier versions gave the durable: from AGENTRT_SUBJECT_PREFIX alone, shared by every cluster configured alike. */
export function legacyWebhookIntakeDurableName(configuredSubjectPrefix: string): string {
  return `${configuredSubjectPrefix.replace(/[^A-Za-z0-9_-]/g, '_')}${DURABLE_SUFFIX}`.slice(0, DURABLE_NAME_LENGTH);
}

/**
 * How far before the cluster's first start a new durable begins reading the
 * shared stream: the database's clock (which dated that start) and the NATS
 * server's (which dates the messages) may disagree.
 */
const CLOCK_DISAGREEMENT_MARGIN_MS = 3_600_000;

/** How long a message handed to a node may stay unacknowledged before another node gets it (below DEFAULT_GAP_HOLD_MS). */
export const WEBHOOK_INTAKE_ACK_WAIT_MS = 10_000;

export interface WebhookIntakeDependencies {
  runtime: Pick<ActorRuntime, 'consume' | 'ask' | 'subjectPrefix' | 'configuredSubjectPrefix' | 'clusterCreatedAt'>;
  /** The agent's webhookEventsUrl now, or null (no URL, or no such agent): its events are not delivered. */
  webhookUrlOf(agentId: string): Promise<string | null>;
  logger: RuntimeLogger;
  /** Asks in flight at once on this node. @default 128 */
  maxConcurrent?: number;
  /** Nak delay when the endpoint could not take the event (its node is failing over). @default 1000 */
  retryDelayMs?: number;
}

/** `objective_events.<accountId>.<workspaceId>.<agentId>.<objectiveId>.<kind>` → the agent id. */
function agentIdOf(subject: string): string | undefined {
  const parts = subject.split('.');
  return parts.length === 6 ? parts[3] : undefined;
}

export async function startWebhookIntake(dependencies: WebhookIntakeDependencies): Promise<ConsumerHandle> {
  const { runtime, webhookUrlOf, logger } = dependencies;
  const maxConcurrent = dependencies.maxConcurrent ?? 128;
  const retryDelayMs = dependencies.retryDelayMs ?? 1000;
  const inFlight = new Set<Promise<void>>();

  /** Hands an event to the endpoint of its agent's URL; the event id as the command id makes a redelivered message one delivery. */
  const handTo = (agentId: string, webhookUrl: string, command: WebhookEndpointCommand & { type: 'event' }, eventId: string) =>
    runtime.ask(WEBHOOK_ENDPOINT_KIND, webhookEndpointIdOf(agentId, webhookUrl), command, { commandId: `whev:${eventId}` });

  async function handOver(event: ConsumedEvent): Promise<void> {
    const agentId = agentIdOf(event.subject);
    if (!agentId) {
      logger.warn({ subject: event.subject, id: event.id }, 'objective event with a malformed subject skipped by the webhook intake');
      return event.ack();
    }
    const webhookUrl = await webhookUrlOf(agentId);
    if (!webhookUrl) return event.ack();
    // The span that published the event (its W3C header): the endpoint's turn and the delivery's attempts continue its trace.
    // Checked first, so a node not tracing builds nothing for it.
    const traced = tracingEnabled();
    const command: WebhookEndpointCommand & { type: 'event' } = { type: 'event', body: event.data, webhookUrl, ...(traced ? traceparentField(event.headers.traceparent) : undefined) };
    try {
      await (traced ? runInTrace(command.traceparent, () => handTo(agentId, webhookUrl, command, event.id)) : handTo(agentId, webhookUrl, command, event.id));
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 'INVALID_ARGUMENT')) throw error;
      // Not an objective event envelope (the endpoint refused it): it would fail the same way every time it came back.
      logger.warn({ err: error, subject: event.subject, id: event.id }, 'objective event that is no webhook envelope skipped by the webhook intake');
    }
    await event.ack();
  }

  const legacyDurableName = legacyWebhookIntakeDurableName(runtime.configuredSubjectPrefix);
  // Embedded mode (names not scoped to the cluster) keeps the name it always had.
  const durableName = runtime.subjectPrefix === runtime.configuredSubjectPrefix ? legacyDurableName : webhookIntakeDurableName(runtime.subjectPrefix);
  const handle = await runtime.consume(
    {
      stream: OBJECTIVE_EVENTS_STREAM.name,
      durableName,
      // A cluster upgraded from a version that named the durable from the prefix alone goes on where it stood;
      // a new cluster skips the other clusters' events of before its first start (none can be its own).
      ...(legacyDurableName === durableName
        ? {}
        : { takeOverFrom: legacyDurableName, notBefore: new Date(runtime.clusterCreatedAt.getTime() - CLOCK_DISAGREEMENT_MARGIN_MS) }),
      filterSubject: 'objective_events.>',
      maxAckPending: maxConcurrent * 4,
      // Messages a stopped node pulled come back after this; the endpoint holds an objective's later events longer.
      ackWaitMs: WEBHOOK_INTAKE_ACK_WAIT_MS,
    },
    async (event) => {
      while (inFlight.size >= maxConcurrent) await Promise.race(inFlight);
      const work = handOver(event).catch(async (error: unknown) => {
        logger.warn({ err: error, id: event.id, deliveryCount: event.deliveryCount }, 'webhook intake could not hand an objective event to its endpoint; it comes back');
        await event.nak(retryDelayMs).catch(() => undefined);
      });
      const tracked = work.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
    },
  );
  return {
    async stop() {
      await handle.stop();
      // What was handed over finishes (acked) or comes back later (not acked): nothing is lost either way.
      await Promise.allSettled([...inFlight]);
    },
  };
}
