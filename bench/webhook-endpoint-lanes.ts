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

/**
 * One endpoint's behaviour driven as the runtime would: each decision's state taken, its attempts remembered in
 * start order. Only the behaviour's calls are timed (`spentMs`), not the building of the envelopes.
 */
class SimulatedEndpoint {
  private state: WebhookEndpointState;
  private readonly sequences = new Map<string, number>();
  private readonly running: string[] = [];
  private readonly context = { kind: 'webhook_endpoint', id: 'agent_bench.lanes', now: new Date() };
  spentMs = 0;

  constructor() {
    this.state = behavior.initialState(this.context.id);
  }

  /** The objective's next event reaches the endpoint. */
  async event(objectiveId: string): Promise<void> {
    const sequence = (this.sequences.get(objectiveId) ?? 0) + 1;
    this.sequences.set(objectiveId, sequence);
    const command = { type: 'event' as const, body: envelope(objectiveId, sequence, this.context.now.toISOString()), webhookUrl: URL };
    this.take(await this.timed(() => behavior.decide(this.state, command, this.context)));
  }

  /** The attempt started first of those running answers 204. */
  async finishOldest(): Promise<void> {
    const id = this.running.shift()!;
    this.take(await this.timed(() => behavior.onEffectResult!(this.state, { id, name: 'webhook.deliver', input: null, timeoutMs: 1, attempt: 1, ok: true, value: OK }, this.context)));
  }

  private async timed<T>(call: () => T | Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await call();
    this.spentMs += performance.now() - started;
    return result;
  }

  private take(decision: { evolvedState?: WebhookEndpointState; effects?: { start?: Array<{ id?: string }> } }): void {
    this.state = decision.evolvedState ?? this.state;
    for (const effect of decision.effects?.start ?? []) this.running.push(effect.id!);
  }
}

function report(bench: string, lanes: Record<string, number>, endpoint: SimulatedEndpoint): void {
  const behaviourMicrosecondsPerDelivery = Number(((endpoint.spentMs / DELIVERIES) * 1000).toFixed(1));
  process.stdout.write(`${JSON.stringify({ bench, ...lanes, deliveries: DELIVERIES, behaviourMicrosecondsPerDelivery })}\n`);
}

/** An endpoint that delivered for `idleLanes` objectives, now idle, and delivers for one more, one event at a time. */
async function measureIdle(idleLanes: number): Promise<void> {
  const endpoint = new SimulatedEndpoint();
  for (let index = 0; index < idleLanes; index += 1) {
    await endpoint.event(`objective_idle_${index}`);
    await endpoint.finishOldest();
  }
  endpoint.spentMs = 0;
  for (let index = 0; index < DELIVERIES; index += 1) {
    await endpoint.event('objective_busy');
    await endpoint.finishOldest();
  }
  report('webhook-endpoint-lanes', { idleLanes }, endpoint);
}

/**
 * An endpoint under load: every one of `queuedLanes` lanes has its head's attempt running (up to the 64 in
 * flight) and an event waiting behind it. Each delivery: an event joins a lane, then a running attempt's
 * outcome comes back and the next head starts.
 */
async function measureQueued(queuedLanes: number): Promise<void> {
  const endpoint = new SimulatedEndpoint();
  for (let round = 0; round < 2; round += 1) for (let index = 0; index < queuedLanes; index += 1) await endpoint.event(`objective_${index}`);
  endpoint.spentMs = 0;
  for (let index = 0; index < DELIVERIES; index += 1) {
    await endpoint.event(`objective_${index % queuedLanes}`);
    await endpoint.finishOldest();
  }
  report('webhook-endpoint-lanes-queued', { queuedLanes }, endpoint);
}

void (async () => {
  for (const idleLanes of IDLE_LANES) await measureIdle(idleLanes);
  for (const queuedLanes of QUEUED_LANES) await measureQueued(queuedLanes);
})();
