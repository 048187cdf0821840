import assert from 'node:assert/strict';
import { ApiError } from '../../../src/errors';
import type { ActorDecision, EffectRequest } from '../../../src/ports/actor-behavior';
import type { WebhookDeliveryChange, WebhookDeliveryRecord } from '../../../src/webhooks/webhook-delivery';
import { ulid } from 'ulid';
import {
  createWebhookEndpointBehavior, type DeliveryAttemptOutcome, type WebhookEndpointCommand, type WebhookEndpointOptions, type WebhookEndpointReply, type WebhookObservation,
} from '../../../src/webhooks/webhook-endpoint.behavior';
import type { WebhookEndpointEvent, WebhookEndpointState } from '../../../src/webhooks/webhook-endpoint-state';

const URL_A = 'https://receiver.example/hooks';

function envelope(objectiveId: string, sequence: number, type = 'OBJECTIVE_EVENT_TYPE_USER_MESSAGE'): string {
  return JSON.stringify({
    timestamp: '2026-11-25T10:00:00.000Z',
    type: 'objective_event.user_message',
    data: {
      agent: { id: 'agent_1' },
      agentVariation: { id: 'var_1' },
      objective: { id: objectiveId, accountId: 'acct_1', workspaceId: 'ws_1', profileId: 'prof_1', createdAt: '2026-11-25T10:00:00.000Z', labels: { team: 'a' } },
      objectiveEvent: { metadata: { id: `objevt_${objectiveId}_${sequence}` }, sequence, data: { type } },
    },
  });
}

const ok: DeliveryAttemptOutcome = { ok: true, httpStatusCode: 200, latencyMs: 12.4, responseContentLength: 2, responseHeaders: { 'content-type': 'text/plain' }, gone: false };
const serverError: DeliveryAttemptOutcome = { ok: false, httpStatusCode: 500, latencyMs: 3, responseContentLength: 0, responseHeaders: {}, gone: false, errorMessage: 'HTTP 500' };
const gone: DeliveryAttemptOutcome = { ...serverError, httpStatusCode: 410, gone: true, errorMessage: 'HTTP 410' };

/** The state as a snapshot stores it: its JSON, parsed. */
function asStored(state: WebhookEndpointState): unknown {
  return JSON.parse(JSON.stringify(state));
}

/** Runs the behaviour as the runtime would: evolve each decision's events, keep running effects, projected rows and reminders. */
class EndpointDriver {
  readonly behavior;
  state: WebhookEndpointState;
  now = new Date('2026-11-25T10:00:00.000Z');
  readonly running = new Map<string, EffectRequest>();
  readonly rows = new Map<string, WebhookDeliveryRecord>();
  readonly reminders = new Map<string, Date>();
  /** Every event decided, in order: the actor's journal. */
  readonly journal: WebhookEndpointEvent[] = [];
  /** The decisions' observations (what the node's metrics count), in order. */
  readonly observed: WebhookObservation[] = [];
  last!: ActorDecision<WebhookEndpointEvent, WebhookEndpointReply, WebhookDeliveryChange, WebhookEndpointState>;

  constructor(options: Partial<WebhookEndpointOptions> = {}) {
    // A fixed schedule without jitter: 1 s, 2 s, then give up.
    const schedule = [1000, 2000];
    this.behavior = createWebhookEndpointBehavior({ retryDelayMs: (failed, retryAfterMs) => (failed > schedule.length ? null : Math.max(schedule[failed - 1]!, retryAfterMs ?? 0)), gapHoldMs: 2000, ...options });
    this.state = this.behavior.initialState('agent_1.abcdef');
  }

  /** The state a decision is made on, as a snapshot would store it (JSON), to check the decision left it as it was. */
  private decidedOn: unknown;

  private context() {
    this.decidedOn = asStored(this.state);
    return { kind: 'webhook_endpoint', id: this.state.endpointId, now: this.now };
  }

  private absorb(decision: ActorDecision<WebhookEndpointEvent, WebhookEndpointReply, WebhookDeliveryChange, WebhookEndpointState>) {
    this.last = decision;
    this.journal.push(...(decision.events ?? []));
    this.observed.push(...((decision.observations ?? []) as WebhookObservation[]));
    // Compared as JSON (the lanes are a persistent map; its toJSON is what a snapshot stores).
    assert.deepStrictEqual(asStored(this.state), this.decidedOn, 'deciding leaves the state it decided on unchanged');
    const replayed = (decision.events ?? []).reduce((state, event) => this.behavior.evolve(state, event), this.state);
    // The runtime takes evolvedState instead of folding the events again; replay folds them: both must agree.
    if (decision.evolvedState !== undefined) assert.deepStrictEqual(asStored(decision.evolvedState), asStored(replayed), 'evolvedState is the events applied with evolve');
    else assert.equal((decision.events ?? []).length, 0, 'a decision with events gives the state it folded');
    this.state = replayed;
    for (const [objectiveId, lane] of replayed.lanes) {
      assert.ok(lane.queue.length > 0 && !replayed.idleLanes.has(objectiveId), `lanes holds ${objectiveId} only while it has deliveries queued`);
    }
    for (const change of decision.project ?? []) {
      const stored = this.rows.get(change.delivery.id);
      assert.ok(!stored || stored.revision < change.delivery.revision, 'each projected change carries a higher revision');
      this.rows.set(change.delivery.id, change.delivery);
    }
    for (const id of decision.effects?.abort ?? []) this.running.delete(id);
    for (const effect of decision.effects?.start ?? []) this.running.set(effect.id!, effect);
    for (const name of decision.reminders?.cancel ?? []) this.reminders.delete(name);
    for (const reminder of decision.reminders?.set ?? []) this.reminders.set(reminder.name, reminder.dueAt);
    return decision.reply;
  }

  async command(command: WebhookEndpointCommand) {
    return this.absorb(await this.behavior.decide(this.state, command, this.context()));
  }

  event(objectiveId: string, sequence: number, type?: string) {
    return this.command({ type: 'event', body: envelope(objectiveId, sequence, type), webhookUrl: URL_A });
  }

  async finish(effectId: string, outcome: DeliveryAttemptOutcome | { error: string }) {
    const effect = this.running.get(effectId);
    assert.ok(effect, `effect ${effectId} runs`);
    this.running.delete(effectId);
    const base = { id: effectId, name: effect.name, input: effect.input, timeoutMs: effect.timeoutMs, attempt: 1 };
    const result = 'error' in outcome ? { ...base, ok: false as const, error: { code: 'DEADLINE_EXCEEDED', message: outcome.error } } : { ...base, ok: true as const, value: outcome };
    return this.absorb(await this.behavior.onEffectResult!(this.state, result, this.context()));
  }

  async advance(ms: number) {
    this.now = new Date(this.now.getTime() + ms);
    for (const [name, dueAt] of [...this.reminders]) {
      if (dueAt.getTime() > this.now.getTime()) continue;
      this.reminders.delete(name);
      this.absorb(await this.behavior.onReminder!(this.state, { name, dueAt, payload: null }, this.context()));
    }
  }

  row(objectiveId: string, sequence: number): WebhookDeliveryRecord {
    const row = this.rows.get(`whdel_${objectiveId}_${sequence}`);
    assert.ok(row, `delivery of ${objectiveId}#${sequence} recorded`);
    return row;
  }

  runningIds(): string[] {
    return [...this.running.keys()].sort();
  }
}

/** An event of the objective whose user message says `content`. */
function said(driver: EndpointDriver, objectiveId: string, sequence: number, content: string) {
  const body = JSON.parse(envelope(objectiveId, sequence));
  body.data.objectiveEvent.data.userMessage = { content };
  return driver.command({ type: 'event', body: JSON.stringify(body), webhookUrl: URL_A });
}

describe('webhook endpoint behaviour', () => {
  it('records a delivery for an event and sends it as an effect, then records the success', async () => {
    const driver = new EndpointDriver();
    const reply = await driver.event('obj_1', 1);
    assert.deepEqual(reply, { deliveryId: 'whdel_obj_1_1', status: 'WEBHOOK_DELIVERY_STATUS_PENDING' });
    const row = driver.row('obj_1', 1);
    assert.equal(row.status, 'WEBHOOK_DELIVERY_STATUS_PENDING');
    assert.equal(row.objectiveEventId, 'objevt_obj_1_1');
    assert.equal(row.eventType, 'OBJECTIVE_EVENT_TYPE_USER_MESSAGE');
    assert.deepEqual(row.labels, { team: 'a' });
    assert.equal(row.webhookUrl, URL_A);
    const effect = driver.running.get('whdel_obj_1_1.1');
    assert.equal(effect?.name, 'webhook.deliver');
    assert.deepEqual(effect?.input, { deliveryId: 'whdel_obj_1_1', accountId: 'acct_1', url: URL_A });
    assert.deepEqual(effect?.transientInput, { body: envelope('obj_1', 1) });
    assert.equal(driver.last.passivate, undefined, 'an attempt in flight keeps the actor');

    await driver.finish('whdel_obj_1_1.1', ok);
    const done = driver.row('obj_1', 1);
    assert.equal(done.status, 'WEBHOOK_DELIVERY_STATUS_COMPLETED');
    assert.equal(done.attemptCount, 1);
    assert.equal(done.httpStatusCode, 200);
    assert.equal(done.latencyMs, 12);
    assert.equal(done.responseContentLength, 2);
    assert.deepEqual(done.responseHeaders, { 'content-type': 'text/plain' });
    assert.equal(done.lastAttemptAt, driver.now.toISOString());
    assert.equal(driver.last.passivate, undefined, 'nothing queued: the actor stays for the next event (until the idle passivation)');
  });

  it('sends the events of one objective one after the other, and different objectives side by side', async () => {
    const driver = new EndpointDriver();
    await driver.event('obj_1', 1);
    await driver.event('obj_1', 2);
    await driver.event('obj_2', 1);
    assert.deepEqual(driver.runningIds(), ['whdel_obj_1_1.1', 'whdel_obj_2_1.1']);
    assert.equal(driver.row('obj_1', 2).status, 'WEBHOOK_DELIVERY_STATUS_PENDING', 'the later event is recorded at once');
    await driver.finish('whdel_obj_1_1.1', ok);
    assert.deepEqual(driver.runningIds(), ['whdel_obj_1_2.1', 'whdel_obj_2_1.1']);
  });

  it('holds an event that arrives before an earlier one of its objective, until the gap fills or the hold runs out', async () => {
    const driver = new EndpointDriver();
    await driver.event('obj_1', 2);
    assert.deepEqual(driver.runningIds(), [], 'sequence 2 waits for sequence 1');
    assert.ok(driver.reminders.has('gap'));
    await driver.event('obj_1', 1);
    assert.deepEqual(driver.runningIds(), ['whdel_obj_1_1.1']);
    await driver.finish('whdel_obj_1_1.1', ok);
    assert.deepEqual(driver.runningIds(), ['whdel_obj_1_2.1']);

    const alone = new EndpointDriver();
    await alone.event('obj_9', 5);
    assert.deepEqual(alone.runningIds(), []);
    await alone.advance(1999);
    assert.deepEqual(alone.runningIds(), []);
    await alone.advance(1);
    assert.deepEqual(alone.runningIds(), ['whdel_obj_9_5.1'], 'the first event seen of an objective goes once the hold has passed');
  });

  it('retries a failed attempt on a durable reminder with the same delivery id, then fails it and moves on', async () => {
    const driver = new EndpointDriver();
    await driver.event('obj_1', 1);
    await driver.event('obj_1', 2);
    await driver.finish('whdel_obj_1_1.1', serverError);
    const waiting = driver.row('obj_1', 1);
    assert.equal(waiting.status, 'WEBHOOK_DELIVERY_STATUS_PENDING');
    assert.equal(waiting.attemptCount, 1);
    assert.equal(waiting.httpStatusCode, 500);
    assert.equal(waiting.errorMessage, 'HTTP 500');
    assert.equal(waiting.nextAttemptAt, new Date(driver.now.getTime() + 1000).toISOString());
    assert.deepEqual(driver.runningIds(), [], 'the later event waits for the earlier one');
    assert.equal(driver.last.passivate, true, 'waiting on a reminder holds no memory');

    await driver.advance(1000);
    assert.deepEqual(driver.runningIds(), ['whdel_obj_1_1.2']);
    assert.equal((driver.running.get('whdel_obj_1_1.2')!.input as { deliveryId: string }).deliveryId, 'whdel_obj_1_1', 'the same webhook id on every attempt');
    await driver.finish('whdel_obj_1_1.2', { error: 'deadline exceeded' });
    await driver.advance(2000);
    await driver.finish('whdel_obj_1_1.3', serverError);
    const failed = driver.row('obj_1', 1);
    assert.equal(failed.status, 'WEBHOOK_DELIVERY_STATUS_FAILED');
    assert.equal(failed.attemptCount, 3);
    assert.equal(failed.nextAttemptAt, null);
    assert.deepEqual(driver.runningIds(), ['whdel_obj_1_2.1'], 'a finally failed event lets the next one go');
  });

  it('honours Retry-After through the schedule function', async () => {
    const driver = new EndpointDriver();
    await driver.event('obj_1', 1);
    await driver.finish('whdel_obj_1_1.1', { ...serverError, httpStatusCode: 429, retryAfterMs: 1500 });
    assert.equal(driver.row('obj_1', 1).nextAttemptAt, new Date(driver.now.getTime() + 1500).toISOString());
  });

  it('disables the endpoint on 410: queued and later deliveries become DISABLED and nothing more is sent', async () => {
    const driver = new EndpointDriver();
    await driver.event('obj_1', 1);
    await driver.event('obj_1', 2);
    await driver.event('obj_2', 1);
    await driver.finish('whdel_obj_1_1.1', gone);
    assert.equal(driver.row('obj_1', 1).status, 'WEBHOOK_DELIVERY_STATUS_DISABLED');
    assert.equal(driver.row('obj_1', 1).httpStatusCode, 410);
    assert.equal(driver.row('obj_1', 2).status, 'WEBHOOK_DELIVERY_STATUS_DISABLED');
    assert.equal(driver.row('obj_2', 1).status, 'WEBHOOK_DELIVERY_STATUS_DISABLED');
    assert.deepEqual(driver.last.effects?.abort, ['whdel_obj_2_1.1'], 'the attempt in flight is aborted');
    await driver.event('obj_3', 1);
    assert.equal(driver.row('obj_3', 1).status, 'WEBHOOK_DELIVERY_STATUS_DISABLED');
    assert.match(driver.row('obj_3', 1).errorMessage ?? '', /webhookEventsUrl changes/);
    assert.deepEqual(driver.runningIds(), []);
    await assert.rejects(
      driver.command({ type: 'retry', delivery: driver.row('obj_3', 1), webhookUrl: URL_A, body: envelope('obj_3', 1) }),
      (error: unknown) => error instanceof ApiError && error.code === 'FAILED_PRECONDITION',
    );
  });

  it('disables the endpoint once every attempt has failed for the configured time', async () => {
    const driver = new EndpointDriver({ disableAfterMs: 10_000, retryDelayMs: () => 4000 });
    await driver.event('obj_1', 1);
    await driver.finish('whdel_obj_1_1.1', serverError);
    await driver.advance(4000);
    await driver.finish('whdel_obj_1_1.2', serverError);
    await driver.advance(4000);
    await driver.finish('whdel_obj_1_1.3', serverError);
    assert.equal(driver.row('obj_1', 1).status, 'WEBHOOK_DELIVERY_STATUS_PENDING', '8 s of failures: not yet');
    await driver.advance(4000);
    await driver.finish('whdel_obj_1_1.4', serverError);
    assert.equal(driver.row('obj_1', 1).status, 'WEBHOOK_DELIVERY_STATUS_DISABLED', '12 s of failures: disabled');
    assert.ok(driver.state.disabled);
  });

  it('a success resets the failure clock', async () => {
    const driver = new EndpointDriver({ disableAfterMs: 10_000, retryDelayMs: () => 6000 });
    await driver.event('obj_1', 1);
    await driver.finish('whdel_obj_1_1.1', serverError);
    await driver.advance(6000);
    await driver.finish('whdel_obj_1_1.2', ok);
    await driver.event('obj_1', 2);
    await driver.advance(6000);
    await driver.finish('whdel_obj_1_2.1', serverError);
    assert.equal(driver.row('obj_1', 2).status, 'WEBHOOK_DELIVERY_STATUS_PENDING');
    assert.equal(driver.state.disabled, null);
  });

  it('refuses a body that is no objective event envelope with INVALID_ARGUMENT, recording nothing', async () => {
    const driver = new EndpointDriver();
    await assert.rejects(
      driver.command({ type: 'event', body: JSON.stringify({ type: 'something.else', data: {} }), webhookUrl: URL_A }),
      (error: unknown) => error instanceof ApiError && error.code === 'INVALID_ARGUMENT' && /data\.objectiveEvent\.metadata\.id/.test(error.message),
    );
    assert.equal(driver.rows.size, 0);
    assert.deepEqual(driver.runningIds(), []);
  });

  it('makes one delivery of an event handed over twice while it is queued', async () => {
    const driver = new EndpointDriver();
    await driver.event('obj_1', 1);
    assert.deepEqual(await driver.event('obj_1', 1), { deliveryId: 'whdel_obj_1_1', status: 'WEBHOOK_DELIVERY_STATUS_PENDING', duplicate: true });
    assert.deepEqual(driver.runningIds(), ['whdel_obj_1_1.1']);
  });

  it('still delivers an event that arrives after later ones of its objective were sent (a stopped node gave it back late)', async () => {
    const driver = new EndpointDriver();
    await driver.event('obj_1', 1);
    await driver.finish('whdel_obj_1_1.1', ok);
    await driver.event('obj_1', 3);
    await driver.advance(2000);
    await driver.finish('whdel_obj_1_3.1', ok);
    const late = await driver.event('obj_1', 2);
    assert.deepEqual(late, { deliveryId: 'whdel_obj_1_2', status: 'WEBHOOK_DELIVERY_STATUS_PENDING' }, 'recorded, not taken for a duplicate');
    assert.deepEqual(driver.runningIds(), ['whdel_obj_1_2.1'], 'and sent at once, under its own id');
    await driver.finish('whdel_obj_1_2.1', ok);
    assert.equal(driver.row('obj_1', 2).status, 'WEBHOOK_DELIVERY_STATUS_COMPLETED');
  });

  it('re-queues a FAILED delivery on a manual retry: same id, sent at once, a new round of the schedule', async () => {
    const driver = new EndpointDriver();
    await driver.event('obj_1', 1);
    await driver.finish('whdel_obj_1_1.1', serverError);
    await driver.advance(1000);
    await driver.finish('whdel_obj_1_1.2', serverError);
    await driver.advance(2000);
    await driver.finish('whdel_obj_1_1.3', serverError);
    const failed = driver.row('obj_1', 1);
    assert.equal(failed.status, 'WEBHOOK_DELIVERY_STATUS_FAILED');
    const reply = (await driver.command({ type: 'retry', delivery: failed, webhookUrl: URL_A, body: envelope('obj_1', 1) })) as WebhookDeliveryRecord;
    assert.equal(reply.id, 'whdel_obj_1_1');
    assert.equal(reply.status, 'WEBHOOK_DELIVERY_STATUS_PENDING');
    assert.deepEqual(driver.runningIds(), ['whdel_obj_1_1.4']);
    await driver.finish('whdel_obj_1_1.4', serverError);
    assert.equal(driver.row('obj_1', 1).nextAttemptAt, new Date(driver.now.getTime() + 1000).toISOString(), 'the schedule starts over');
  });

  it('keeps at most maxInFlight attempts running', async () => {
    const driver = new EndpointDriver({ maxInFlight: 2 });
    for (const objective of ['obj_1', 'obj_2', 'obj_3']) await driver.event(objective, 1);
    assert.deepEqual(driver.runningIds(), ['whdel_obj_1_1.1', 'whdel_obj_2_1.1']);
    await driver.finish('whdel_obj_2_1.1', ok);
    assert.deepEqual(driver.runningIds(), ['whdel_obj_1_1.1', 'whdel_obj_3_1.1']);
  });

  it('replays a journal in one fold (evolveAll) to the state its turns left, leaving the state it started from untouched', async () => {
    const driver = new EndpointDriver();
    await driver.event('obj_a', 1);
    await driver.event('obj_b', 1);
    await driver.event('obj_a', 2);
    await driver.finish('whdel_obj_a_1.1', serverError);
    await driver.finish('whdel_obj_b_1.1', ok);
    await driver.advance(1000);
    await driver.finish('whdel_obj_a_1.2', ok);
    await driver.event('obj_b', 2, 'OBJECTIVE_EVENT_TYPE_FINALIZED');
    const initial = driver.behavior.initialState('agent_1.abcdef');
    const before = asStored(initial);
    assert.ok(driver.journal.length >= 10, `${driver.journal.length} events`);
    // Compared as JSON, as above.
    assert.deepStrictEqual(asStored(driver.behavior.evolveAll!(initial, driver.journal)), asStored(driver.state));
    assert.deepStrictEqual(asStored(initial), before);
  });

  it('comes back from a snapshot (its JSON) with its lanes in order, and goes on from there', async () => {
    const driver = new EndpointDriver({ maxInFlight: 1 });
    for (const objective of ['obj_c', 'obj_a', 'obj_b']) await driver.event(objective, 1);
    await driver.event('obj_a', 2);
    await driver.finish('whdel_obj_c_1.1', ok);
    const stored = asStored(driver.state) as { lanes: Record<string, { nextSequence: number; queue: unknown[] }>; idleLanes: Record<string, number> };
    // Plain objects by objective id: the queued lanes in order, the emptied one by its next sequence.
    assert.deepEqual(Object.keys(stored.lanes), ['obj_a', 'obj_b']);
    assert.deepEqual(stored.idleLanes, { obj_c: 2 });
    const restored = driver.behavior.fromSnapshot!(JSON.parse(JSON.stringify(stored)));
    assert.deepStrictEqual(asStored(restored), stored);
    assert.deepEqual([...restored.lanes.keys()], ['obj_a', 'obj_b']);
    // A snapshot from before idleLanes: every lane in `lanes`, the empty one too.
    const { idleLanes: _split, ...older } = stored;
    const olderLanes = { obj_c: { nextSequence: 2, queue: [] }, ...stored.lanes };
    assert.deepStrictEqual(asStored(driver.behavior.fromSnapshot!({ ...older, lanes: olderLanes })), stored);
    // The restored state decides as the live one: the running attempt's outcome starts the next head in lane order.
    driver.state = restored;
    assert.deepEqual(driver.runningIds(), ['whdel_obj_a_1.1']);
    await driver.finish('whdel_obj_a_1.1', ok);
    assert.deepEqual(driver.runningIds(), ['whdel_obj_a_2.1']);
    await driver.event('obj_c', 2);
    await driver.finish('whdel_obj_a_2.1', ok);
    await driver.finish('whdel_obj_b_1.1', ok);
    // obj_c's next event found its lane's sequence in idleLanes: in order, sent at once.
    assert.deepEqual(driver.runningIds(), ['whdel_obj_c_2.1']);
  });

  it('starts each attempt with the body as transient input, kept out of the journaled input', async () => {
    const driver = new EndpointDriver();
    await driver.event('obj_a', 1);
    const [attempt] = driver.last.effects!.start!;
    assert.deepEqual(attempt.input, { deliveryId: 'whdel_obj_a_1', accountId: 'acct_1', url: URL_A });
    assert.deepEqual(attempt.transientInput, { body: envelope('obj_a', 1) });
  });

  it('makes an attempt whose run was lost again under the same id, with the body from its state', async () => {
    const driver = new EndpointDriver();
    await driver.event('obj_a', 1);
    const lost = driver.running.get('whdel_obj_a_1.1')!;
    const context = { kind: 'webhook_endpoint', id: driver.state.endpointId, now: driver.now };
    const again = await driver.behavior.onEffectInterrupted!(driver.state, { id: lost.id!, name: lost.name, input: lost.input, timeoutMs: lost.timeoutMs, attempt: 1 }, context);
    assert.deepEqual(again.effects?.start?.map((effect) => [effect.id, effect.input, effect.transientInput, effect.durableResult]), [
      ['whdel_obj_a_1.1', lost.input, { body: envelope('obj_a', 1) }, false],
    ]);
    // An attempt of a delivery no longer queued is not made again.
    const gone = await driver.behavior.onEffectInterrupted!(driver.state, { id: 'whdel_obj_z_1.1', name: lost.name, input: lost.input, timeoutMs: lost.timeoutMs, attempt: 1 }, context);
    assert.equal(gone.effects, undefined);
  });

  it('erases the queued bodies of erased objectives, and of their later events, and asks for a snapshot', async () => {
    const driver = new EndpointDriver();
    const bodies = (objectiveId: string) => (driver.state.lanes.get(objectiveId)?.queue ?? []).map((queued) => queued.body).join('\n');
    await said(driver, 'obj_1', 1, 'card 4111');
    await said(driver, 'obj_1', 2, 'card 4111 again');
    await said(driver, 'obj_2', 1, 'keep me');
    await driver.finish('whdel_obj_1_1.1', serverError);
    assert.match(bodies('obj_1'), /4111/);

    const reply = await driver.command({ type: 'erase', objectiveIds: ['obj_1'] });
    assert.deepEqual(reply, { erasedObjectiveIds: ['obj_1'] });
    assert.equal(driver.last.snapshot, true, 'a snapshot lets retention purge the journal entries holding the bodies');
    assert.doesNotMatch(bodies('obj_1'), /4111/);
    assert.equal(driver.state.lanes.get('obj_1')!.queue.length, 2, 'the deliveries stay queued');
    assert.equal(JSON.parse(driver.state.lanes.get('obj_1')!.queue[0].body).data.objectiveEvent.data.userMessage.content, '[erased]');
    assert.match(bodies('obj_2'), /keep me/, 'other objectives keep theirs');

    await driver.advance(1000);
    assert.doesNotMatch(JSON.stringify(driver.running.get('whdel_obj_1_1.2')!.transientInput), /4111/, 'the next attempt sends the erased body');
    await said(driver, 'obj_1', 3, 'card 4111 late');
    assert.doesNotMatch(bodies('obj_1'), /4111/, 'an event arriving after the erasure is queued erased');
    const restored = driver.behavior.fromSnapshot!(asStored(driver.state));
    assert.deepEqual([...restored.erasedObjectives.keys()], ['obj_1'], 'the snapshot remembers the erased objectives');
    assert.doesNotMatch(JSON.stringify(asStored(driver.state)), /4111/, 'the state holds no content of theirs');
  });

  it('forgets an erased objective an hour after its erasure once it has no delivery queued, and keeps it while it has', async () => {
    // A failed attempt is retried in two hours: obj_held's delivery stays queued past the hold.
    const driver = new EndpointDriver({ retryDelayMs: () => 2 * 3_600_000 });
    await driver.event('obj_held', 1);
    await driver.finish('whdel_obj_held_1.1', serverError);
    await driver.command({ type: 'erase', objectiveIds: ['obj_held', 'obj_gone'] });
    await driver.advance(30 * 60_000);
    await driver.command({ type: 'erase', objectiveIds: ['obj_later'] });
    const marked = () => [...driver.state.erasedObjectives.keys()];
    assert.deepEqual(marked(), ['obj_held', 'obj_gone', 'obj_later']);

    await driver.advance(30 * 60_000 + 1000);
    await driver.event('obj_other', 1);
    assert.deepEqual(marked(), ['obj_later', 'obj_held'], 'past the hold: kept while a delivery of it is queued (dated anew), else forgotten');
    assert.equal(JSON.stringify(asStored(driver.state)).includes('obj_gone'), false, 'the snapshot holds no mark of it either');
    await said(driver, 'obj_held', 2, 'card 4111');
    assert.match(driver.state.lanes.get('obj_held')!.queue[1].body, /\[erased\]/, 'a late event of a kept one is still erased');

    await driver.advance(3 * 3_600_000);
    await driver.event('obj_other', 2);
    assert.deepEqual(marked(), ['obj_held'], 'the hold ran out for the other one too');
  });

  it('takes the erased objectives of a snapshot from before the dated marks, and dates them at the next event', async () => {
    const driver = new EndpointDriver();
    const { erasedObjectives: _dated, ...older } = asStored(driver.state) as Record<string, unknown>;
    driver.state = driver.behavior.fromSnapshot!({ ...older, erasedObjectiveIds: ['obj_9'] });
    await said(driver, 'obj_9', 1, 'card 4111');
    assert.match(driver.state.lanes.get('obj_9')!.queue[0].body, /\[erased\]/, 'an event of an objective the older snapshot named is erased');
    assert.deepEqual(Object.entries((asStored(driver.state) as { erasedObjectives: Record<string, string> }).erasedObjectives), [['obj_9', driver.now.toISOString()]]);
    await driver.finish('whdel_obj_9_1.1', ok);
    await driver.advance(3_600_000 + 1000);
    await driver.event('obj_other', 1);
    assert.equal(driver.state.erasedObjectives.size, 0, 'forgotten an hour after that');
  });

  it('forgets an objective once its FINALIZED event has left', async () => {
    const driver = new EndpointDriver();
    await driver.event('obj_1', 1);
    await driver.finish('whdel_obj_1_1.1', ok);
    await driver.event('obj_1', 2, 'OBJECTIVE_EVENT_TYPE_FINALIZED');
    await driver.finish('whdel_obj_1_2.1', ok);
    assert.equal(driver.state.lanes.size, 0);
    assert.equal(driver.state.idleLanes.size, 0);
  });
});

describe('webhook endpoint observations (the metrics a decision carries)', () => {
  /** An event whose id is a real ULID made `ageMs` before the driver's clock, as the objective actor makes them. */
  async function eventMade(driver: EndpointDriver, objectiveId: string, sequence: number, ageMs: number): Promise<{ effectId: string }> {
    const eventUlid = ulid(driver.now.getTime() - ageMs);
    const body = JSON.parse(envelope(objectiveId, sequence));
    body.data.objectiveEvent.metadata.id = `objevt_${eventUlid}`;
    await driver.command({ type: 'event', body: JSON.stringify(body), webhookUrl: URL_A });
    return { effectId: `whdel_${eventUlid}.1` };
  }

  it('a delivered event: the attempt, and the delivery with its lag from the event\'s creation', async () => {
    const driver = new EndpointDriver();
    const { effectId } = await eventMade(driver, 'obj_1', 1, 1500);
    await driver.advance(250);
    await driver.finish(effectId, ok);
    assert.deepEqual(driver.observed, [{ type: 'attempt', result: 'delivered' }, { type: 'delivery_finished', result: 'delivered', lagMs: 1750 }]);
  });

  it('failed attempts count as http_error or no_response; the delivery counts once, failed, when its retries are spent', async () => {
    const driver = new EndpointDriver();
    const { effectId } = await eventMade(driver, 'obj_1', 1, 0);
    await driver.finish(effectId, serverError);
    await driver.advance(1000);
    await driver.finish(effectId.replace(/\.1$/, '.2'), { error: 'timed out' });
    await driver.advance(2000);
    await driver.finish(effectId.replace(/\.1$/, '.3'), serverError);
    assert.deepEqual(driver.observed, [
      { type: 'attempt', result: 'http_error' },
      { type: 'attempt', result: 'no_response' },
      { type: 'attempt', result: 'http_error' },
      { type: 'delivery_finished', result: 'failed' },
    ]);
    // A manual retry, delivered: counted again, without a lag (a person started it, long after the event).
    const failed = [...driver.rows.values()][0];
    await driver.command({ type: 'retry', delivery: failed, webhookUrl: URL_A, body: envelope('obj_1', 1) });
    await driver.finish(effectId.replace(/\.1$/, '.4'), ok);
    assert.deepEqual(driver.observed.slice(4), [{ type: 'attempt', result: 'delivered' }, { type: 'delivery_finished', result: 'delivered' }]);
  });

  it('a 410 disables the endpoint: its delivery, every queued one and every later one count as disabled', async () => {
    const driver = new EndpointDriver();
    const { effectId } = await eventMade(driver, 'obj_1', 1, 0);
    await eventMade(driver, 'obj_1', 2, 0);
    await driver.finish(effectId, gone);
    await driver.event('obj_2', 1);
    assert.deepEqual(driver.observed, [
      { type: 'attempt', result: 'http_error' },
      { type: 'delivery_finished', result: 'disabled' },
      { type: 'delivery_finished', result: 'disabled' },
      { type: 'delivery_finished', result: 'disabled' },
    ]);
  });
});
