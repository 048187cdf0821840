// The webhook endpoint's decisions alone, in this process (no runtime, no
// database): what one delivery costs the behaviour (its event turn and its
// attempt's outcome turn) on an endpoint that keeps many idle lanes, the
// objectives it delivered for that have not finished (they may run for days),
// and on an endpoint under load, every lane with deliveries queued. Prints one
// JSON line per number of idle lanes (IDLE_LANES, comma-separated), then per
// number of queued lanes (QUEUED_LANES); DELIVERIES per measurement. Run with
// `npm run bench:webhook-lanes`.
import { createWebhookEndpointBehavior, type DeliveryAttemptOutcome } from '../src/webhooks/webhook-endpoint.behavior';
import type { WebhookEndpointState } from '../src/webhooks/webhook-endpoint-state';

const IDLE_LANES = (process.env.IDLE_LANES ?? '40,1000,10000').split(',').map(Number);
const QUEUED_LANES = (process.env.QUEUED_LANES ?? '40,1000').split(',').map(Number);
const DELIVERIES = Number(process.env.DELIVERIES ?? 5000);
const URL = 'https://receiver.example/hooks';
const OK: DeliveryAttemptOutcome = { ok: true, httpStatusCode: 204, latencyMs: 1, responseContentLength: 0, responseHeaders: {}, gone: false };

const behavior = createWebhookEndpointBehavior({ retryDelayMs: () => 1000 });

/** An objective event envelope as the intake hands it over, numbered per objective. */
function envelope(objectiveId: string, sequence: number, at: string): string {
  const objective = { id: objectiveId, accountId: 'acct_bench', workspaceId: 'ws_bench', profileId: 'prof_bench', externalId: null, labels: {}, createdAt: at };
  return JSON.stringify({
    timestamp: at,
    type: 'objective_event.user_message',
    data: {
      agent: { id: 'agent_bench', accountId: 'acct_bench', workspaceId: 'ws_bench' },
      agentVariation: { id: 'agentvar_bench' },
      objective,
      objectiveEvent: {
        metadata: { id: `objevt_${objectiveId}_${sequence}`, accountId: 'acct_bench', workspaceId: 'ws_bench', profileId: 'prof_bench', createdAt: at },
        sequence,
        data: { type: 'OBJECTIVE_EVENT_TYPE_USER_MESSAGE' },
        info: { objective },
      },
    },
  });
}

async function measure(idleLanes: number): Promise<void> {
  let state: WebhookEndpointState = behavior.initialState('agent_bench.lanes');
  const sequences = new Map<string, number>();
  const context = { kind: 'webhook_endpoint', id: 'agent_bench.lanes', now: new Date() };
  /** One delivery: the event's turn, then its attempt's outcome (a 204). */
  const deliver = async (objectiveId: string) => {
    const sequence = (sequences.get(objectiveId) ?? 0) + 1;
    sequences.set(objectiveId, sequence);
    const accepted = await behavior.decide(state, { type: 'event', body: envelope(objectiveId, sequence, context.now.toISOString()), webhookUrl: URL }, context);
    state = accepted.evolvedState!;
    const [attempt] = accepted.effects!.start!;
    const recorded = await behavior.onEffectResult!(state, { id: attempt.id!, name: attempt.name, input: attempt.input, timeoutMs: attempt.timeoutMs, attempt: 1, ok: true, value: OK }, context);
    state = recorded.evolvedState!;
  };
  for (let index = 0; index < idleLanes; index += 1) await deliver(`objective_idle_${index}`);
  const started = performance.now();
  for (let index = 0; index < DELIVERIES; index += 1) await deliver('objective_busy');
  const perDeliveryUs = ((performance.now() - started) / DELIVERIES) * 1000;
  process.stdout.write(`${JSON.stringify({ bench: 'webhook-endpoint-lanes', idleLanes, deliveries: DELIVERIES, behaviourMicrosecondsPerDelivery: Number(perDeliveryUs.toFixed(1)) })}\n`);
}

/**
 * An endpoint under load: every one of `queuedLanes` lanes has its head's attempt running (up to the 64 in
 * flight) and an event waiting behind it. Each delivery: an event joins a lane, then a running attempt's
 * outcome comes back and the next head starts. Only the behaviour's calls are timed.
 */
async function measureQueued(queuedLanes: number): Promise<void> {
  let state: WebhookEndpointState = behavior.initialState('agent_bench.queued');
  const sequences = new Map<string, number>();
  const running: string[] = [];
  const context = { kind: 'webhook_endpoint', id: 'agent_bench.queued', now: new Date() };
  let spentMs = 0;
  const timed = async <T>(call: () => T | Promise<T>): Promise<T> => {
    const started = performance.now();
    const result = await call();
    spentMs += performance.now() - started;
    return result;
  };
  const take = (decision: { evolvedState?: WebhookEndpointState; effects?: { start?: Array<{ id?: string }> } }) => {
    state = decision.evolvedState ?? state;
    for (const effect of decision.effects?.start ?? []) running.push(effect.id!);
  };
  const event = async (objectiveId: string) => {
    const sequence = (sequences.get(objectiveId) ?? 0) + 1;
    sequences.set(objectiveId, sequence);
    take(await timed(() => behavior.decide(state, { type: 'event', body: envelope(objectiveId, sequence, context.now.toISOString()), webhookUrl: URL }, context)));
  };
  const finishOldest = async () => {
    const id = running.shift()!;
    take(await timed(() => behavior.onEffectResult!(state, { id, name: 'webhook.deliver', input: null, timeoutMs: 1, attempt: 1, ok: true, value: OK }, context)));
  };
  for (let round = 0; round < 2; round += 1) for (let index = 0; index < queuedLanes; index += 1) await event(`objective_${index}`);
  spentMs = 0;
  for (let index = 0; index < DELIVERIES; index += 1) {
    await event(`objective_${index % queuedLanes}`);
    await finishOldest();
  }
  const perDeliveryUs = (spentMs / DELIVERIES) * 1000;
  process.stdout.write(`${JSON.stringify({ bench: 'webhook-endpoint-lanes-queued', queuedLanes, deliveries: DELIVERIES, behaviourMicrosecondsPerDelivery: Number(perDeliveryUs.toFixed(1)) })}\n`);
}

void (async () => {
  for (const idleLanes of IDLE_LANES) await measure(idleLanes);
  for (const queuedLanes of QUEUED_LANES) await measureQueued(queuedLanes);
})();
