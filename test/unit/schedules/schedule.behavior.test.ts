import assert from 'node:assert/strict';
import { ApiError } from '../../../src/errors';
import type { ActorDecision, EffectRequest } from '../../../src/ports/actor-behavior';
import type { ScheduleConfiguration, ScheduleTriggerReply } from '../../../src/ports/schedule-commands';
import type { ScheduleChange, ScheduleRecord } from '../../../src/schedules/schedule-record';
import {
  PREPARE_LEAD_MS, scheduleBehavior, type ScheduleActorCommand, type ScheduleEvent, type ScheduleObservation, type ScheduleState,
} from '../../../src/schedules/schedule.behavior';

/** When the prepare reminder of a fire at `fireIso` is due. */
const preparing = (fireIso: string): string => new Date(Date.parse(fireIso) - PREPARE_LEAD_MS).toISOString();

type Decision = ActorDecision<ScheduleEvent, ScheduleRecord | ScheduleTriggerReply | null, ScheduleChange>;

function configuration(overrides: Partial<ScheduleConfiguration['spec']> = {}): ScheduleConfiguration {
  return {
    id: 'sched_1', accountId: 'acct_1', workspaceId: 'ws_1', agentId: 'agent_1', profileId: 'prof_1', name: 'every minute',
    externalId: null, labels: {}, bundleKey: null, createdAt: '2026-11-25T10:00:00.000Z', updatedAt: '2026-11-25T10:00:00.000Z',
    spec: {
      initialMessage: 'SAY tick', schedule: { intervals: [{ every: '1m' }], timezone: 'UTC' }, overlapPolicy: 'OVERLAP_POLICY_SKIP',
      status: 'AGENT_SCHEDULE_STATUS_ACTIVE', catchupWindow: '1m', ...overrides,
    },
  };
}

/** Runs the behaviour as the runtime would, with a clock the test moves. */
class ScheduleDriver {
  state: ScheduleState = scheduleBehavior.initialState('sched_1');
  now = new Date('2026-11-25T10:00:30.000Z');
  readonly running = new Map<string, EffectRequest>();
  readonly reminders = new Map<string, Date>();
  row: ScheduleRecord | null = null;
  readonly sent: Array<{ kind: string; id: string; command: unknown }> = [];
  /** The decisions' observations (what the node's metrics count), in order. */
  readonly observed: ScheduleObservation[] = [];
  last!: Decision;

  private absorb(decision: Decision) {
    this.last = decision;
    for (const event of decision.events ?? []) this.state = scheduleBehavior.evolve(this.state, event);
    for (const change of decision.project ?? []) {
      assert.ok(!this.row || this.row.revision < change.schedule.revision, 'revisions grow');
      this.row = change.schedule;
    }
    for (const id of decision.effects?.abort ?? []) this.running.delete(id);
    for (const effect of decision.effects?.start ?? []) this.running.set(effect.id!, effect);
    for (const name of decision.reminders?.cancel ?? []) this.reminders.delete(name);
    for (const reminder of decision.reminders?.set ?? []) this.reminders.set(reminder.name, reminder.dueAt);
    this.sent.push(...(decision.send ?? []));
    this.observed.push(...((decision.observations ?? []) as ScheduleObservation[]));
    return decision.reply;
  }

  private context() {
    return { kind: 'schedule', id: 'sched_1', now: this.now };
  }

  async command(command: ScheduleActorCommand) {
    return this.absorb(await scheduleBehavior.decide(this.state, command, this.context()) as Decision);
  }

  /** The due time of the fire reminder, or of the prepare reminder set ahead of it. */
  get reminder(): Date | null {
    return this.reminders.get('fire') ?? this.reminders.get('prepare') ?? null;
  }

  /** Moves the clock to `at`, firing the reminders due by then in due order (the prepare effects they start complete at once unless `hold`). */
  async at(iso: string, options: { hold?: boolean } = {}) {
    const target = new Date(iso);
    for (;;) {
      const due = [...this.reminders].filter(([, dueAt]) => dueAt.getTime() <= target.getTime()).sort((a, b) => a[1].getTime() - b[1].getTime())[0];
      if (!due) break;
      const [name, dueAt] = due;
      this.reminders.delete(name);
      this.now = new Date(Math.max(dueAt.getTime(), this.now.getTime()));
      if (name === 'fire') this.now = target;
      const isPrepare = name === 'prepare';
      this.absorb(await scheduleBehavior.onReminder!(this.state, { name, dueAt, payload: null }, this.context()) as Decision);
      if (isPrepare && !options.hold && this.running.size) await this.prepared();
    }
    this.now = target;
  }

  async prepared(ok = true) {
    const [id, effect] = [...this.running.entries()][0];
    this.running.delete(id);
    const base = { id, name: effect.name, input: effect.input, timeoutMs: effect.timeoutMs, attempt: 1 };
    const objectiveId = (effect.input as { objectiveId: string }).objectiveId;
    const start = { objectiveId, metadata: { objective: { id: objectiveId, createdAt: 'at prepare' } } };
    const outcome = ok ? { ...base, ok: true as const, value: start } : { ...base, ok: false as const, error: { code: 'FAILED_PRECONDITION', message: 'agent agent_1 is ARCHIVED' } };
    return this.absorb(await scheduleBehavior.onEffectResult!(this.state, outcome, this.context()) as Decision);
  }
}

type SentStart = { start: { objectiveId: string; metadata: { objective: { createdAt: string } }; reportsToSchedule?: boolean } };
const startOf = (driver: ScheduleDriver, index = 0) => (driver.sent[index].command as SentStart).start;

describe('schedule behaviour', () => {
  it('projects the configured schedule and sleeps on one reminder, set to prepare the next fire ahead of its time', async () => {
    const driver = new ScheduleDriver();
    const record = await driver.command({ type: 'configure', schedule: configuration() }) as ScheduleRecord;
    assert.equal(record.info.nextFireAt, '2026-11-25T10:01:00.000Z');
    assert.equal(driver.reminders.get('prepare')?.toISOString(), preparing('2026-11-25T10:01:00.000Z'));
    assert.equal(driver.reminders.has('fire'), false);
    assert.deepEqual(driver.row, record);
    assert.equal(driver.last.passivate, true, 'nothing in flight between fires: no memory held');
  });

  it('prepares the objective ahead, holds it, and starts it at the fire time with a send carrying the resolved start', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration() });
    await driver.at(preparing('2026-11-25T10:01:00.000Z'), { hold: true });
    const [effect] = [...driver.running.values()];
    assert.equal(effect.name, 'schedule.prepare_objective');
    const input = effect.input as { objectiveId: string; fireTime: string; initialMessage: string; scheduleId: string };
    assert.equal(input.fireTime, '2026-11-25T10:01:00.000Z', 'the nominal fire time');
    assert.equal(input.initialMessage, 'SAY tick');
    assert.match(input.objectiveId, /^obj_/);
    assert.equal(driver.reminders.get('fire')?.toISOString(), '2026-11-25T10:01:00.000Z');
    assert.equal(driver.last.passivate, undefined, 'a held fire keeps the actor');
    await driver.prepared();
    assert.equal(driver.sent.length, 0, 'held until its time');
    assert.equal(driver.last.passivate, undefined);
    await driver.at('2026-11-25T10:01:00.004Z');
    assert.equal(driver.sent.length, 1);
    assert.equal(driver.sent[0].id, input.objectiveId);
    assert.equal(startOf(driver).metadata.objective.createdAt, '2026-11-25T10:01:00.004Z', 'created when it starts, not when prepared');
    assert.equal(startOf(driver).reportsToSchedule, true, 'under SKIP the objective reports its end');
    assert.equal(driver.row?.info.fireCount, 1);
    assert.equal(driver.row?.info.lastObjectiveId, input.objectiveId);
    assert.equal(driver.row?.info.lastFiredAt, '2026-11-25T10:01:00.004Z');
    assert.equal(driver.row?.info.nextFireAt, '2026-11-25T10:02:00.000Z');
    assert.equal(driver.reminders.get('prepare')?.toISOString(), preparing('2026-11-25T10:02:00.000Z'));
    assert.equal(driver.last.passivate, true);
  });

  it('journals the row once per turn: a fire counts and arms the next in one record event, one revision on', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration() });
    await driver.at(preparing('2026-11-25T10:01:00.000Z'));
    const revision = driver.row!.revision;
    await driver.at('2026-11-25T10:01:00.004Z');
    assert.equal(driver.sent.length, 1, 'the fire started its objective');
    const records = (driver.last.events ?? []).filter((event) => event.type === 'record');
    // The row is the turn's last one, with both the fire's counters and the next fire time.
    assert.equal(records.length, 1);
    assert.equal(driver.row?.revision, revision + 1);
    assert.equal(driver.row?.info.fireCount, 1);
    assert.equal(driver.row?.info.nextFireAt, '2026-11-25T10:02:00.000Z');
    assert.deepEqual(driver.state.record, driver.row, 'replaying the journaled events gives the projected row');
  });

  it('a prepare still running at the fire time starts the objective as soon as it is back', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration() });
    await driver.at('2026-11-25T10:01:00.000Z', { hold: true });
    assert.deepEqual(driver.sent, []);
    driver.now = new Date('2026-11-25T10:01:00.300Z');
    await driver.prepared();
    assert.equal(driver.sent.length, 1);
    assert.equal(driver.row?.info.fireCount, 1);
  });

  it('SKIP: a fire while its last objective runs is skipped and counted; once it ended the next fire runs', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration() });
    await driver.at('2026-11-25T10:01:00.000Z');
    const first = driver.row!.info.lastObjectiveId!;
    await driver.at('2026-11-25T10:02:00.000Z');
    assert.equal(driver.sent.length, 1, 'skipped');
    assert.equal(driver.row?.info.skipCount, 1);
    await driver.command({ type: 'objective_finished', objectiveId: first });
    await driver.at('2026-11-25T10:03:00.000Z');
    assert.equal(driver.sent.length, 2);
  });

  it('ALLOW: fires while the last objective still runs, and its objectives do not report', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration({ overlapPolicy: 'OVERLAP_POLICY_ALLOW' }) });
    await driver.at('2026-11-25T10:01:00.000Z');
    await driver.at('2026-11-25T10:02:00.000Z');
    assert.equal(driver.row?.info.fireCount, 2);
    assert.equal(driver.state.running.length, 0, 'under ALLOW nothing is tracked');
    assert.equal(startOf(driver).reportsToSchedule, undefined);
  });

  it('a fire reminder handed over a little before its time fires once and arms the next time, not the same one', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration({ schedule: { intervals: [{ every: '1m' }], timezone: 'UTC' } }) });
    driver.now = new Date('2026-11-25T10:00:59.990Z');
    const decision = await scheduleBehavior.onReminder!(driver.state, { name: 'fire', dueAt: new Date('2026-11-25T10:01:00.000Z'), payload: null }, { kind: 'schedule', id: 'sched_1', now: driver.now }) as Decision;
    assert.equal(decision.effects?.start?.length, 1);
    assert.equal((decision.effects!.start![0].input as { fireTime: string }).fireTime, '2026-11-25T10:01:00.000Z');
    assert.equal(decision.reminders?.set?.[0].name, 'prepare');
    assert.equal(decision.reminders?.set?.[0].dueAt.toISOString(), preparing('2026-11-25T10:02:00.000Z'));
  });

  it('pause drops a held fire and disarms; resume never fires retroactively', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration() });
    await driver.at('2026-11-25T10:00:58.500Z', { hold: true });
    assert.equal(driver.running.size, 1);
    await driver.command({ type: 'configure', schedule: configuration({ status: 'AGENT_SCHEDULE_STATUS_PAUSED' }) });
    assert.equal(driver.running.size, 0, 'the prepare in flight is aborted');
    assert.equal(driver.reminder, null);
    assert.equal(driver.row?.info.nextFireAt, null);
    assert.equal(driver.state.held, undefined);
    driver.now = new Date('2026-11-25T11:30:10.000Z');
    await driver.command({ type: 'configure', schedule: configuration() });
    assert.equal(driver.row?.info.nextFireAt, '2026-11-25T11:31:00.000Z');
    assert.equal(driver.running.size, 0);
    assert.equal(driver.row?.info.skipCount, 0);
  });

  it('after downtime runs only the latest missed fire within the catch-up window, and counts the others as skipped', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration() });
    // Prepare due at 10:00:58 for 10:01; the node comes back at 10:05:30: 10:01..10:05 were missed, 10:05 is within the 1 m window.
    driver.now = new Date('2026-11-25T10:05:30.000Z');
    driver.reminders.clear();
    await (async () => {
      const decision = await scheduleBehavior.onReminder!(driver.state, { name: 'prepare', dueAt: new Date(preparing('2026-11-25T10:01:00.000Z')), payload: null }, { kind: 'schedule', id: 'sched_1', now: driver.now }) as Decision;
      for (const event of decision.events ?? []) driver.state = scheduleBehavior.evolve(driver.state, event);
      const [effect] = decision.effects?.start ?? [];
      assert.equal((effect.input as { fireTime: string }).fireTime, '2026-11-25T10:05:00.000Z');
      assert.equal(decision.project?.at(-1)?.schedule.info.skipCount, 4);
      assert.equal(decision.reminders?.set?.[0].dueAt.toISOString(), preparing('2026-11-25T10:06:00.000Z'));
    })();

    const outside = new ScheduleDriver();
    await outside.command({ type: 'configure', schedule: configuration({ schedule: { intervals: [{ every: '1h' }], timezone: 'UTC' } }) });
    outside.now = new Date('2026-11-25T11:02:00.000Z');
    const decision = await scheduleBehavior.onReminder!(outside.state, { name: 'prepare', dueAt: new Date(preparing('2026-11-25T11:00:00.000Z')), payload: null }, { kind: 'schedule', id: 'sched_1', now: outside.now }) as Decision;
    assert.equal(decision.effects?.start?.length ?? 0, 0, 'the 11:00 fire is 2 min old: outside the 1 m window');
    assert.equal(decision.project?.at(-1)?.schedule.info.skipCount, 1);
  });

  it('trigger fires once now, honours SKIP, and is refused for an archived or unknown schedule', async () => {
    const driver = new ScheduleDriver();
    await assert.rejects(driver.command({ type: 'trigger' }), (error: unknown) => error instanceof ApiError && error.code === 'NOT_FOUND');
    await driver.command({ type: 'configure', schedule: configuration({ status: 'AGENT_SCHEDULE_STATUS_PAUSED' }) });
    const reply = await driver.command({ type: 'trigger' }) as ScheduleTriggerReply;
    assert.match(reply.objectiveId ?? '', /^obj_/, 'a paused schedule can still be triggered by hand');
    const skipped = await driver.command({ type: 'trigger' }) as ScheduleTriggerReply;
    assert.equal(skipped.objectiveId, undefined, 'SKIP while the first is being prepared');
    assert.equal(skipped.schedule.info.skipCount, 1);
    await driver.prepared();
    assert.equal(driver.sent.length, 1, 'a trigger starts its objective as soon as it is prepared');
    await driver.command({ type: 'configure', schedule: configuration({ status: 'AGENT_SCHEDULE_STATUS_ARCHIVED' }) });
    await assert.rejects(driver.command({ type: 'trigger' }), (error: unknown) => error instanceof ApiError && error.code === 'FAILED_PRECONDITION');
  });

  it('answers a trigger with the counters after the fire, as the row keeps them once the objective is prepared', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration({ status: 'AGENT_SCHEDULE_STATUS_PAUSED' }) });
    const reply = await driver.command({ type: 'trigger' }) as ScheduleTriggerReply;
    assert.match(reply.objectiveId ?? '', /^obj_/);
    assert.deepEqual([reply.schedule.info.fireCount, reply.schedule.info.lastObjectiveId, reply.schedule.info.lastFiredAt], [1, reply.objectiveId, driver.now.toISOString()]);
    assert.deepEqual(driver.row, reply.schedule, 'the row says what the answer said');
    await driver.prepared();
    assert.deepEqual([driver.row?.info.fireCount, driver.row?.info.lastObjectiveId, driver.row?.info.skipCount], [1, reply.objectiveId, 0]);
  });

  it('takes back the count of a triggered fire whose objective cannot be prepared, and says why', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration({ status: 'AGENT_SCHEDULE_STATUS_PAUSED', overlapPolicy: 'OVERLAP_POLICY_ALLOW' }) });
    const first = await driver.command({ type: 'trigger' }) as ScheduleTriggerReply;
    await driver.prepared();
    const second = await driver.command({ type: 'trigger' }) as ScheduleTriggerReply;
    assert.equal(second.schedule.info.fireCount, 2);
    await driver.prepared(false);
    assert.deepEqual(
      [driver.row?.info.fireCount, driver.row?.info.skipCount, driver.row?.info.lastObjectiveId, driver.row?.info.lastError],
      [1, 1, first.objectiveId, 'agent agent_1 is ARCHIVED'],
      'the objective that was never created is not the last one',
    );
  });

  it('a fire whose objective cannot be prepared counts as skipped and says why', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration() });
    await driver.at(preparing('2026-11-25T10:01:00.000Z'), { hold: true });
    await driver.prepared(false);
    await driver.at('2026-11-25T10:01:00.000Z');
    assert.equal(driver.row?.info.skipCount, 1);
    assert.equal(driver.row?.info.fireCount, 0);
    assert.equal(driver.row?.info.lastError, 'agent agent_1 is ARCHIVED');
    assert.deepEqual(driver.sent, []);
    assert.equal(driver.state.running.length, 0, 'nothing runs: the next fire is not skipped');
  });
});

describe('schedule observations (the metrics a decision carries)', () => {
  it('a fire handled after its time carries its lateness; a held fire released on time none to speak of', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration() });
    await driver.at('2026-11-25T10:01:00.250Z');
    assert.deepEqual(driver.observed, [{ type: 'fired', latenessMs: 250 }]);
    await driver.at('2026-11-25T10:02:00.000Z');
    assert.deepEqual(driver.observed.at(-1), { type: 'fired', latenessMs: 0 });
  });

  it('after downtime the fire that runs counts its lateness from its own time; a trigger has no fire time and counts none', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration() });
    driver.now = new Date('2026-11-25T10:05:30.000Z');
    driver.reminders.clear();
    const decision = await scheduleBehavior.onReminder!(driver.state, { name: 'prepare', dueAt: new Date(preparing('2026-11-25T10:01:00.000Z')), payload: null }, { kind: 'schedule', id: 'sched_1', now: driver.now });
    assert.deepEqual(decision.observations, [{ type: 'fired', latenessMs: 30_000 }], 'the 10:05 fire, run at 10:05:30');

    const triggered = new ScheduleDriver();
    await triggered.command({ type: 'configure', schedule: configuration() });
    await triggered.command({ type: 'trigger' });
    await triggered.prepared();
    assert.deepEqual(triggered.observed, []);
  });
});
