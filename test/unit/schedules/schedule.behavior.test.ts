import assert from 'node:assert/strict';
import { ApiError } from '../../../src/errors';
import type { ActorDecision, EffectRequest } from '../../../src/ports/actor-behavior';
import type { ScheduleConfiguration, ScheduleTriggerReply } from '../../../src/ports/schedule-commands';
import type { ScheduleChange, ScheduleRecord } from '../../../src/schedules/schedule-record';
import { scheduleBehavior, type ScheduleActorCommand, type ScheduleEvent, type ScheduleState } from '../../../src/schedules/schedule.behavior';

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
  reminder: Date | null = null;
  row: ScheduleRecord | null = null;
  readonly sent: Array<{ kind: string; id: string; command: unknown }> = [];
  last!: Decision;

  private absorb(decision: Decision) {
    this.last = decision;
    for (const event of decision.events ?? []) this.state = scheduleBehavior.evolve(this.state, event);
    for (const change of decision.project ?? []) {
      assert.ok(!this.row || this.row.revision < change.schedule.revision, 'revisions grow');
      this.row = change.schedule;
    }
    for (const effect of decision.effects?.start ?? []) this.running.set(effect.id!, effect);
    if (decision.reminders?.cancel?.includes('fire')) this.reminder = null;
    for (const reminder of decision.reminders?.set ?? []) this.reminder = reminder.dueAt;
    this.sent.push(...(decision.send ?? []));
    return decision.reply;
  }

  private context() {
    return { kind: 'schedule', id: 'sched_1', now: this.now };
  }

  async command(command: ScheduleActorCommand) {
    return this.absorb(await scheduleBehavior.decide(this.state, command, this.context()) as Decision);
  }

  /** Moves the clock to `at` and fires the reminder if it is due. */
  async at(iso: string) {
    this.now = new Date(iso);
    if (this.reminder && this.reminder.getTime() <= this.now.getTime()) {
      const dueAt = this.reminder;
      this.reminder = null;
      this.absorb(await scheduleBehavior.onReminder!(this.state, { name: 'fire', dueAt, payload: null }, this.context()) as Decision);
    }
  }

  async prepared(ok = true) {
    const [id, effect] = [...this.running.entries()][0];
    this.running.delete(id);
    const base = { id, name: effect.name, input: effect.input, timeoutMs: effect.timeoutMs, attempt: 1 };
    const start = { objectiveId: (effect.input as { objectiveId: string }).objectiveId, marker: 'resolved start' };
    const outcome = ok ? { ...base, ok: true as const, value: start } : { ...base, ok: false as const, error: { code: 'FAILED_PRECONDITION', message: 'agent agent_1 is ARCHIVED' } };
    return this.absorb(await scheduleBehavior.onEffectResult!(this.state, outcome, this.context()) as Decision);
  }
}

describe('schedule behaviour', () => {
  it('projects the configured schedule and sleeps on one reminder until its next fire time', async () => {
    const driver = new ScheduleDriver();
    const record = await driver.command({ type: 'configure', schedule: configuration() }) as ScheduleRecord;
    assert.equal(record.info.nextFireAt, '2026-11-25T10:01:00.000Z');
    assert.equal(driver.reminder?.toISOString(), '2026-11-25T10:01:00.000Z');
    assert.deepEqual(driver.row, record);
    assert.equal(driver.last.passivate, true, 'nothing in flight between fires: no memory held');
  });

  it('at the fire time prepares an objective, then starts it with a send carrying the resolved start', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration() });
    await driver.at('2026-11-25T10:01:00.020Z');
    const [effect] = [...driver.running.values()];
    assert.equal(effect.name, 'schedule.prepare_objective');
    const input = effect.input as { objectiveId: string; fireTime: string; initialMessage: string; scheduleId: string };
    assert.equal(input.fireTime, '2026-11-25T10:01:00.000Z', 'the nominal fire time, not the late one');
    assert.equal(input.initialMessage, 'SAY tick');
    assert.match(input.objectiveId, /^obj_/);
    assert.equal(driver.reminder?.toISOString(), '2026-11-25T10:02:00.000Z', 'the next fire is armed at once');
    assert.equal(driver.last.passivate, undefined, 'the prepare effect keeps it');
    await driver.prepared();
    assert.deepEqual(driver.sent, [{
      kind: 'objective', id: input.objectiveId,
      command: { type: 'start', start: { objectiveId: input.objectiveId, marker: 'resolved start', reportsToSchedule: true } },
    }], 'under SKIP the objective reports its end');
    assert.equal(driver.row?.info.fireCount, 1);
    assert.equal(driver.row?.info.lastObjectiveId, input.objectiveId);
    assert.equal(driver.row?.info.lastFiredAt, '2026-11-25T10:01:00.020Z');
    assert.equal(driver.row?.info.nextFireAt, '2026-11-25T10:02:00.000Z');
  });

  it('SKIP: a fire while its last objective runs is skipped and counted; once it ended the next fire runs', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration() });
    await driver.at('2026-11-25T10:01:00.000Z');
    await driver.prepared();
    const first = driver.row!.info.lastObjectiveId!;
    await driver.at('2026-11-25T10:02:00.000Z');
    assert.equal(driver.running.size, 0);
    assert.equal(driver.row?.info.skipCount, 1);
    await driver.command({ type: 'objective_finished', objectiveId: first });
    await driver.at('2026-11-25T10:03:00.000Z');
    assert.equal(driver.running.size, 1);
  });

  it('ALLOW: fires while the last objective still runs', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration({ overlapPolicy: 'OVERLAP_POLICY_ALLOW' }) });
    await driver.at('2026-11-25T10:01:00.000Z');
    await driver.prepared();
    await driver.at('2026-11-25T10:02:00.000Z');
    await driver.prepared();
    assert.equal(driver.row?.info.fireCount, 2);
    assert.equal(driver.state.running.length, 0, 'under ALLOW nothing is tracked');
    assert.equal((driver.sent[0].command as { start: { reportsToSchedule?: boolean } }).start.reportsToSchedule, undefined, 'and the objectives do not report');
  });

  it('a reminder handed over a little before its time fires once and arms the next time, not the same one', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration() });
    driver.now = new Date('2026-11-25T10:00:59.990Z');
    const dueAt = driver.reminder!;
    driver.reminder = null;
    const decision = await scheduleBehavior.onReminder!(driver.state, { name: 'fire', dueAt, payload: null }, { kind: 'schedule', id: 'sched_1', now: driver.now }) as Decision;
    assert.equal(decision.effects?.start?.length, 1);
    assert.equal((decision.effects!.start![0].input as { fireTime: string }).fireTime, '2026-11-25T10:01:00.000Z');
    assert.equal(decision.reminders?.set?.[0].dueAt.toISOString(), '2026-11-25T10:02:00.000Z');
  });

  it('pause disarms; resume never fires retroactively', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration() });
    await driver.command({ type: 'configure', schedule: configuration({ status: 'AGENT_SCHEDULE_STATUS_PAUSED' }) });
    assert.equal(driver.reminder, null);
    assert.equal(driver.row?.info.nextFireAt, null);
    driver.now = new Date('2026-11-25T11:30:10.000Z');
    await driver.command({ type: 'configure', schedule: configuration() });
    assert.equal(driver.row?.info.nextFireAt, '2026-11-25T11:31:00.000Z');
    assert.equal(driver.running.size, 0);
    assert.equal(driver.row?.info.skipCount, 0);
  });

  it('after downtime runs only the latest missed fire within the catch-up window, and counts the others as skipped', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration() });
    // Due at 10:01; the node comes back at 10:05:30: 10:01..10:05 were missed, 10:05 is within the 1 m window.
    await driver.at('2026-11-25T10:05:30.000Z');
    const [effect] = [...driver.running.values()];
    assert.equal((effect.input as { fireTime: string }).fireTime, '2026-11-25T10:05:00.000Z');
    assert.equal(driver.row?.info.skipCount, 4);
    assert.equal(driver.reminder?.toISOString(), '2026-11-25T10:06:00.000Z');

    const late = new ScheduleDriver();
    await late.command({ type: 'configure', schedule: configuration() });
    await late.at('2026-11-25T10:03:10.000Z');
    assert.equal(late.running.size, 1, '10:03 is 10 s ago: within the window');
    const outside = new ScheduleDriver();
    await outside.command({ type: 'configure', schedule: configuration({ schedule: { intervals: [{ every: '1h' }], timezone: 'UTC' } }) });
    await outside.at('2026-11-25T11:02:00.000Z');
    assert.equal(outside.running.size, 0, 'the 11:00 fire is 2 min old: outside the 1 m window');
    assert.equal(outside.row?.info.skipCount, 1);
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
    await driver.command({ type: 'configure', schedule: configuration({ status: 'AGENT_SCHEDULE_STATUS_ARCHIVED' }) });
    await assert.rejects(driver.command({ type: 'trigger' }), (error: unknown) => error instanceof ApiError && error.code === 'FAILED_PRECONDITION');
  });

  it('a fire whose objective cannot be prepared counts as skipped and says why', async () => {
    const driver = new ScheduleDriver();
    await driver.command({ type: 'configure', schedule: configuration() });
    await driver.at('2026-11-25T10:01:00.000Z');
    await driver.prepared(false);
    assert.equal(driver.row?.info.skipCount, 1);
    assert.equal(driver.row?.info.fireCount, 0);
    assert.equal(driver.row?.info.lastError, 'agent agent_1 is ARCHIVED');
    assert.deepEqual(driver.sent, []);
    assert.equal(driver.state.running.length, 0, 'nothing runs: the next fire is not skipped');
  });
});
