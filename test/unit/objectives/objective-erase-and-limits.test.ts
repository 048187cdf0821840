import assert from 'node:assert/strict';
import { ApiError } from '../../../src/errors';
import type { PrepareChildInput } from '../../../src/objectives/objective-children';
import type { ObjectiveChange } from '../../../src/objectives/objective-events';
import type { ObjectiveCommand } from '../../../src/objectives/objective.behavior';
import { ERASED, type ObjectiveTool } from '../../../src/objectives/objective-state';
import { lookupTool, ObjectiveDriver, startOf, toolSuccess } from './objective-driver';

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => error instanceof ApiError && error.code === code);
}

const statusOf = (driver: ObjectiveDriver) => driver.state.status?.replace('OBJECTIVE_STATUS_', '');
const changeTypes = (changes: ObjectiveChange[] | undefined) => (changes ?? []).map((change) => change.type);

function researcherTool(): ObjectiveTool {
  return {
    name: 'researcher', description: 'Researches', inputSchema: { type: 'object', properties: { prompt: { type: 'string' } } }, requiresApproval: false, effectTimeoutMs: 0,
    subAgent: { agentId: 'agent_2', promptOnly: true },
  };
}

describe('objective erasure', () => {
  it('erases a running objective: it stops (CANCELLED, reason erased), its content becomes [erased], objective_erased is projected', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ spec: { ...startOf().spec, data: { name: 'Ada' } } });
    await driver.modelAnswers({ content: 'Looking up Ada.', toolCalls: [{ id: 'a', name: 'lookup', arguments: '{"q":"Ada"}' }] });
    await driver.send({ type: 'message', content: 'her birthday too' });

    const reply = await driver.send({ type: 'erase' });
    assert.equal(reply?.info.status, 'OBJECTIVE_STATUS_CANCELLED');
    assert.deepEqual(driver.aborted, [driver.callId('a')]);
    assert.equal(driver.running.size, 0);
    assert.deepEqual(driver.kinds().slice(-2), ['cancelled', 'finalized']);
    assert.deepEqual(driver.published.at(-2)?.data, { cancelled: { reason: 'erased' } });
    assert.deepEqual(changeTypes(driver.lastDecision.project), ['objective_event', 'objective_event', 'objective_erased', 'objective']);
    assert.deepEqual(driver.lastDecision.project?.[2], { type: 'objective_erased', objectiveId: 'obj_1', workspaceId: 'ws_1' });

    const { state } = driver;
    assert.equal(state.erased, true);
    assert.deepEqual(state.conversation, [
      { role: 'user', content: ERASED },
      { role: 'assistant', content: ERASED, toolCalls: [{ id: 'a', name: 'lookup', arguments: ERASED }] },
    ]);
    assert.deepEqual(state.pendingUserMessages, [ERASED]);
    assert.deepEqual(state.turnCalls.map((call) => call.arguments), [ERASED]);
    assert.equal(state.lastMessage, ERASED);
    assert.equal(state.output, null, 'absent content stays absent');
    assert.equal(state.config?.initialMessage, ERASED);
    assert.equal(state.config?.spec.data, ERASED);
    assert.equal(state.config?.spec.initialMessage, ERASED);
    assert.equal(state.config?.metadata.objective.externalId, 'ext-1', 'metadata stays');
    const row = driver.lastDecision.project?.[3] as Extract<ObjectiveChange, { type: 'objective' }>;
    assert.equal(row.info.lastMessage, ERASED);

    await rejectsWith(driver.send({ type: 'message', content: 'again' }), 'FAILED_PRECONDITION');
  });

  it('erases a finished objective without new events; erasing again changes nothing; it takes no follow-up', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ outputDefinition: { type: 'object' } });
    await driver.modelAnswers({ content: 'Done.', toolCalls: [{ id: 'out', name: 'emit_output', arguments: '{"secret":"x"}' }] });
    assert.equal(statusOf(driver), 'COMPLETED');
    const published = driver.published.length;

    await driver.send({ type: 'erase' });
    assert.equal(statusOf(driver), 'COMPLETED', 'a finished objective keeps its status');
    assert.equal(driver.published.length, published, 'no public event');
    assert.deepEqual(changeTypes(driver.lastDecision.project), ['objective_erased', 'objective']);
    assert.equal(driver.state.output, ERASED);
    assert.equal(driver.state.lastMessage, ERASED);
    assert.deepEqual(driver.state.turnCalls.map((call) => call.result), [ERASED]);

    await driver.send({ type: 'erase' });
    assert.deepEqual(driver.lastDecision, { reply: driver.lastDecision.reply }, 'a second erase records and projects nothing');
    await rejectsWith(driver.send({ type: 'message', content: 'and then?' }), 'FAILED_PRECONDITION');
  });

  it('erasing a parent erases its children (which stop if running); the child\'s report is ignored', async () => {
    const parent = new ObjectiveDriver();
    await parent.start({ tools: [researcherTool()] });
    await parent.modelAnswers({ content: null, toolCalls: [{ id: 's1', name: 'researcher', arguments: '{"prompt":"about Ada"}' }] });
    const input = parent.running.get(parent.callId('s1'))!.input as PrepareChildInput;
    await parent.succeed(parent.callId('s1'), startOf({
      objectiveId: input.childObjectiveId, initialMessage: 'about Ada', metadata: { ...startOf().metadata, objective: { ...startOf().metadata.objective, id: input.childObjectiveId } },
    }));
    const child = new ObjectiveDriver(input.childObjectiveId);
    await child.send(parent.takeSent()[0].command as ObjectiveCommand);

    await parent.send({ type: 'erase' });
    assert.equal(statusOf(parent), 'CANCELLED');
    assert.deepEqual(parent.takeSent(), [{ kind: 'objective', id: input.childObjectiveId, command: { type: 'erase' } }], 'the child gets erase, which also stops it');

    await child.send({ type: 'erase' });
    assert.equal(statusOf(child), 'CANCELLED');
    assert.equal(child.state.config?.initialMessage, '[erased]');
    const [report] = child.takeSent();
    assert.equal((report.command as { type: string }).type, 'child_finished');
    const events = parent.published.length;
    await parent.send(report.command as ObjectiveCommand);
    assert.equal(parent.published.length, events, 'the report records no event (only the child\'s usage is added)');
  });
});

describe('objective turn timeout and accounting', () => {
  it('a turn past turnTimeoutMs fails with ERROR type TIMED_OUT, aborting what runs', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ turnTimeoutMs: 60_000 });
    assert.deepEqual(driver.reminders.get('turn_deadline')?.dueAt, new Date('2026-11-23T12:01:00.000Z'));
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'a', name: 'lookup', arguments: '{}' }] });
    assert.deepEqual(driver.reminders.get('turn_deadline')?.dueAt, new Date('2026-11-23T12:01:00.000Z'), 'the clock runs on through the turn');
    driver.now = new Date('2026-11-23T12:01:00.000Z');
    await driver.fireReminder('turn_deadline');
    assert.equal(statusOf(driver), 'FAILED');
    assert.deepEqual(driver.aborted, [driver.callId('a')]);
    assert.deepEqual(driver.published.at(-2)?.data, { error: { message: 'the objective turn ran longer than its limit of 60000 ms', type: 'TIMED_OUT' } });
    assert.deepEqual(driver.state.error?.type, 'TIMED_OUT');
    assert.equal(driver.reminders.size, 0);
  });

  it('the turn clock stops while approval is awaited, starts again on approve, and ends with the run', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ turnTimeoutMs: 60_000, tools: [lookupTool({ requiresApproval: true })] });
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'a', name: 'lookup', arguments: '{}' }] });
    assert.equal(statusOf(driver), 'AWAITING_APPROVAL');
    assert.equal(driver.reminders.size, 0, 'waiting for a human does not count');
    const stale = { name: 'turn_deadline', dueAt: new Date('2026-11-23T12:01:00.000Z'), payload: null };
    assert.deepEqual(await driver.behavior.onReminder!(driver.state, stale, { kind: 'objective', id: 'obj_1', now: stale.dueAt }), {}, 'a stale reminder changes nothing');

    driver.now = new Date('2026-11-24T09:00:00.000Z');
    await driver.send({ type: 'approve', toolCallId: driver.callId('a') });
    assert.deepEqual(driver.reminders.get('turn_deadline')?.dueAt, new Date('2026-11-24T09:01:00.000Z'));
    assert.deepEqual(await driver.behavior.onReminder!(driver.state, stale, { kind: 'objective', id: 'obj_1', now: driver.now }), {}, 'the earlier stretch\'s reminder is stale');
    await driver.succeed(driver.callId('a'), toolSuccess(driver.callId('a'), 'A'));
    await driver.modelAnswers({ content: 'done' });
    assert.equal(statusOf(driver), 'COMPLETED');
    assert.equal(driver.reminders.size, 0, 'the end cancels the clock');
  });

  it('sets no reminder without turnTimeoutMs', async () => {
    const driver = new ObjectiveDriver();
    await driver.start();
    assert.equal(driver.lastDecision.reminders, undefined);
  });

  it('every assistant message carries usage (zeros when the provider reported none), and info.usage is their sum', async () => {
    const driver = new ObjectiveDriver();
    await driver.start();
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'a', name: 'lookup', arguments: '{}' }] });
    await driver.succeed(driver.callId('a'), toolSuccess(driver.callId('a'), 'A'));
    await driver.modelAnswers({ content: 'ok', usage: { promptTokens: 3, completionTokens: 1, costCents: 0.5 } });
    const usages = driver.published
      .filter((event) => event.type === 'objective_event.assistant_message')
      .map((event) => (event.data as { assistantMessage: { usage: unknown } }).assistantMessage.usage);
    assert.deepEqual(usages, [{ promptTokens: 0, completionTokens: 0, costCents: 0 }, { promptTokens: 3, completionTokens: 1, costCents: 0.5 }]);
    assert.deepEqual(driver.state.usage, { promptTokens: 3, completionTokens: 1, costCents: 0.5 });
  });
});
