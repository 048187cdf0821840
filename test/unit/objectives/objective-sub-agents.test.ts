import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { ApiError } from '../../../src/errors';
import type { ActorSend } from '../../../src/ports/actor-behavior';
import type { ChatMessage } from '../../../src/objectives/chat-model-types';
import { PREPARE_CHILD_EFFECT, type ChildFinishedCommand, type PrepareChildInput } from '../../../src/objectives/objective-children';
import type { ObjectiveChange } from '../../../src/objectives/objective-events';
import { DEFAULT_MAX_OBJECTIVE_DEPTH } from '../../../src/objectives/objective-limits';
import type { ObjectiveCommand } from '../../../src/objectives/objective.behavior';
import type { ObjectiveStart, ObjectiveTool } from '../../../src/objectives/objective-state';
import { lookupTool, ObjectiveDriver, startOf, toolSuccess } from './objective-driver';

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => error instanceof ApiError && error.code === code);
}

const statusOf = (driver: ObjectiveDriver) => driver.state.status?.replace('OBJECTIVE_STATUS_', '');

function toolMessages(messages: ChatMessage[]): Array<{ toolCallId: string; content: string }> {
  return messages.flatMap((message) => (message.role === 'tool' ? [{ toolCallId: message.toolCallId, content: message.content }] : []));
}

const metadataBase = { accountId: 'acc_1', workspaceId: 'ws_1', profileId: 'prof_1', createdAt: '2026-11-23T11:00:00.000Z' };
const researcherMetadata = { ...metadataBase, id: 'agent_2', name: 'researcher' };

/** A sub-agent without an inputDataSchema: the tool takes `{prompt}`. */
function researcherTool(overrides: Partial<ObjectiveTool> = {}): ObjectiveTool {
  return {
    name: 'researcher',
    description: 'Researches a question',
    inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
    requiresApproval: false,
    effectTimeoutMs: 0,
    subAgent: { agentId: 'agent_2', promptOnly: true },
    metadata: researcherMetadata,
    ...overrides,
  };
}

/** A sub-agent with an inputDataSchema: the arguments are the child's data. */
function plannerTool(): ObjectiveTool {
  return researcherTool({
    name: 'planner',
    inputSchema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] },
    subAgent: { agentId: 'agent_3', promptOnly: false },
    metadata: { ...metadataBase, id: 'agent_3', name: 'planner' },
  });
}

/** What the composition root's `objective.prepare_child` resolves: the child's start, as an API create would. */
function childStartFor(input: PrepareChildInput, overrides: Partial<ObjectiveStart> = {}): ObjectiveStart {
  const base = startOf();
  return startOf({
    objectiveId: input.childObjectiveId,
    agentId: input.agentId,
    metadata: {
      objective: { ...metadataBase, id: input.childObjectiveId },
      agent: { ...metadataBase, id: input.agentId, name: 'child-agent' },
      agentVariation: { ...metadataBase, id: 'agentvar_2', name: 'v1' },
    },
    initialMessage: input.initialMessage ?? JSON.stringify(input.data),
    tools: [lookupTool()],
    spec: {
      ...base.spec, agentId: input.agentId, data: input.data, initialMessage: input.initialMessage, tenantId: input.tenantId, subjectId: input.subjectId,
      parentObjectiveId: input.parentObjectiveId,
    },
    depth: input.depth,
    parentToolCallId: input.parentToolCallId,
    ...overrides,
  });
}

function prepareInput(driver: ObjectiveDriver, toolCallId: string): PrepareChildInput {
  const effect = driver.running.get(driver.callId(toolCallId));
  assert.equal(effect?.name, PREPARE_CHILD_EFFECT, `${toolCallId} prepares a child`);
  return effect.input as PrepareChildInput;
}

/** Delivers the durable commands a driver sent to the drivers they name (a child driver is made on its `start`). */
async function deliver(from: ObjectiveDriver, actors: Map<string, ObjectiveDriver>): Promise<ActorSend[]> {
  const sends = from.takeSent();
  for (const send of sends) {
    assert.equal(send.kind, 'objective');
    let target = actors.get(send.id);
    if (!target) {
      target = new ObjectiveDriver(send.id);
      actors.set(send.id, target);
    }
    await target.send(send.command as ObjectiveCommand);
  }
  return sends;
}

const noEvents = (driver: ObjectiveDriver) => assert.equal(driver.lastDecision.events, undefined, 'nothing recorded');

interface Family {
  parent: ObjectiveDriver;
  child: ObjectiveDriver;
  childId: string;
  actors: Map<string, ObjectiveDriver>;
}

/** A parent whose model called the researcher once, with the child started and running its first model call. */
async function family(startOverrides: Partial<ObjectiveStart> = {}): Promise<Family> {
  const parent = new ObjectiveDriver();
  await parent.start({ tools: [lookupTool(), researcherTool()], ...startOverrides });
  await parent.modelAnswers({
    content: null, toolCalls: [{ id: 'call_sub', name: 'researcher', arguments: '{"prompt":"find X"}' }], usage: { promptTokens: 10, completionTokens: 2, costCents: 1 },
  });
  const input = prepareInput(parent, 'call_sub');
  await parent.succeed(parent.callId('call_sub'), childStartFor(input));
  const actors = new Map([[parent.objectiveId, parent]]);
  await deliver(parent, actors);
  const child = actors.get(input.childObjectiveId)!;
  return { parent, child, childId: input.childObjectiveId, actors };
}

describe('objective sub-agents', () => {
  it('a sub-agent call creates a child through a transactional send; its answer is the tool result and its usage joins the parent\'s', async () => {
    const parent = new ObjectiveDriver();
    await parent.start({ tools: [lookupTool(), researcherTool()], spec: { ...startOf().spec, tenantId: 'tenant_1', subjectId: 'subject_1' } });
    assert.deepEqual(parent.modelRequest().tools.map((tool) => tool.name), ['lookup', 'researcher']);
    await parent.modelAnswers({
      content: null, toolCalls: [{ id: 'call_sub', name: 'researcher', arguments: '{"prompt":"find X"}' }], usage: { promptTokens: 10, completionTokens: 2, costCents: 1 },
    });
    const assistant = parent.published[1].data as { assistantMessage: { toolCalls: Array<{ tool: unknown }> } };
    assert.deepEqual(assistant.assistantMessage.toolCalls[0].tool, { agent: researcherMetadata }, 'a sub-agent call names its agent');

    // The prepare effect: its id is the tool call id, its input everything the composition root needs.
    const input = prepareInput(parent, 'call_sub');
    assert.match(input.childObjectiveId, /^obj_/u);
    assert.deepEqual(input, {
      workspaceId: 'ws_1', accountId: 'acc_1', parentObjectiveId: 'obj_1', childObjectiveId: input.childObjectiveId, parentToolCallId: parent.callId('call_sub'),
      agentId: 'agent_2', data: { prompt: 'find X' }, initialMessage: 'find X', depth: 1, tenantId: 'tenant_1', subjectId: 'subject_1', profileId: 'prof_1',
    });
    assert.deepEqual(parent.sent, [], 'nothing is sent before the child is prepared');
    assert.equal(statusOf(parent), 'RUNNING');

    const childStart = childStartFor(input, { limits: { maxToolCalls: 0, maxSubObjectives: 0 } });
    await parent.succeed(parent.callId('call_sub'), childStart);
    assert.deepEqual(parent.kinds(), ['user_message', 'assistant_message', 'tool_called', 'sub_objective_created', 'sub_agent_spawned']);
    const childMetadata = { ...metadataBase, id: input.childObjectiveId };
    assert.deepEqual(parent.published[3].data, { subObjectiveCreated: { metadata: childMetadata } });
    assert.deepEqual(parent.published[4].data, { subAgentSpawned: { metadata: childMetadata, status: 'OBJECTIVE_STATUS_PENDING', toolCallId: parent.callId('call_sub') } });
    assert.equal(parent.state.subObjectiveCount, 1);
    assert.equal(parent.state.toolCallCount, 0, 'a sub-agent call does not count against maxToolCalls');
    assert.equal(parent.running.size, 0, 'the call waits for the child, not for an effect');
    assert.equal(statusOf(parent), 'RUNNING');
    const sent = parent.takeSent();
    assert.equal(sent.length, 1);
    assert.equal(sent[0].kind, 'objective');
    assert.equal(sent[0].id, input.childObjectiveId);
    assert.deepEqual(sent[0].command, {
      type: 'start',
      start: { ...childStart, depth: 1, parentToolCallId: parent.callId('call_sub'), spec: { ...childStart.spec, parentObjectiveId: 'obj_1' }, limits: { ...childStart.limits, maxDepth: DEFAULT_MAX_OBJECTIVE_DEPTH } },
    });

    // The child runs on its own: the prompt is its first message.
    const child = new ObjectiveDriver(input.childObjectiveId);
    await child.send(sent[0].command as ObjectiveCommand);
    assert.deepEqual(child.modelRequest().messages.at(-1), { role: 'user', content: 'find X' });
    await child.modelAnswers({ content: 'X is 42.', usage: { promptTokens: 5, completionTokens: 1, costCents: 2 } });
    assert.equal(statusOf(child), 'COMPLETED');
    const reports = child.takeSent();
    assert.deepEqual(reports, [{
      kind: 'objective',
      id: 'obj_1',
      command: {
        type: 'child_finished', childObjectiveId: input.childObjectiveId, toolCallId: parent.callId('call_sub'), status: 'OBJECTIVE_STATUS_COMPLETED', content: 'X is 42.',
        usage: { promptTokens: 5, completionTokens: 1, costCents: 2 }, error: null,
      },
    }]);

    await parent.send(reports[0].command as ObjectiveCommand);
    assert.deepEqual(parent.kinds().slice(5), ['sub_agent_updated', 'tool_result']);
    assert.deepEqual(parent.published[5].data, { subAgentUpdated: { metadata: childMetadata, status: 'OBJECTIVE_STATUS_COMPLETED', toolCallId: parent.callId('call_sub') } });
    assert.deepEqual(parent.published[6].data, { toolResult: { content: 'X is 42.', toolCallId: parent.callId('call_sub'), type: 'text' } });
    assert.deepEqual(toolMessages(parent.modelRequest().messages), [{ toolCallId: 'call_sub', content: 'X is 42.' }]);
    assert.deepEqual(parent.state.usage, { promptTokens: 15, completionTokens: 3, costCents: 3 }, 'the child\'s usage is summed in');

    await parent.modelAnswers({ content: 'The answer is 42.', usage: { promptTokens: 20, completionTokens: 4, costCents: 4 } });
    assert.equal(statusOf(parent), 'COMPLETED');
    const finalized = parent.published.at(-1)?.data as { finalized: { usage: unknown } };
    assert.deepEqual(finalized.finalized.usage, { promptTokens: 35, completionTokens: 7, costCents: 7 });
    const rows = parent.projected.filter((change): change is Extract<ObjectiveChange, { type: 'objective' }> => change.type === 'objective');
    assert.deepEqual(rows.at(-1)?.info.usage, { promptTokens: 35, completionTokens: 7, costCents: 7 });
    assert.equal(rows.at(-1)?.info.subObjectiveCount, 1);
    assert.deepEqual(parent.takeSent(), [], 'a top-level objective reports to no one');
  });

  it('a sub-agent with an input schema gets the arguments as data and no initial message; its output is the result, as JSON', async () => {
    const parent = new ObjectiveDriver();
    await parent.start({ tools: [plannerTool()] });
    await parent.modelAnswers({ content: null, toolCalls: [{ id: 'call_plan', name: 'planner', arguments: '{"city":"Oslo","days":2}' }] });
    const input = prepareInput(parent, 'call_plan');
    assert.deepEqual({ data: input.data, initialMessage: input.initialMessage, agentId: input.agentId }, { data: { city: 'Oslo', days: 2 }, initialMessage: null, agentId: 'agent_3' });

    const actors = new Map([[parent.objectiveId, parent]]);
    await parent.succeed(parent.callId('call_plan'), childStartFor(input, { outputDefinition: { type: 'object', properties: { plan: { type: 'string' } } } }));
    await deliver(parent, actors);
    const child = actors.get(input.childObjectiveId)!;
    assert.deepEqual(child.modelRequest().messages.at(-1), { role: 'user', content: '{"city":"Oslo","days":2}' });
    await child.modelAnswers({ content: 'Here it is.', toolCalls: [{ id: 'out', name: 'emit_output', arguments: '{"plan":"fjords"}' }] });
    assert.equal(statusOf(child), 'COMPLETED');
    await deliver(child, actors);
    assert.deepEqual(toolMessages(parent.modelRequest().messages), [{ toolCallId: 'call_plan', content: '{"plan":"fjords"}' }]);
  });

  it('a failed child is a TOOL_ERROR with its error, and the parent goes on', async () => {
    const { parent, child, childId, actors } = await family();
    await child.fail('model_call_1', { code: 'FAILED_PRECONDITION', message: 'provider down' });
    assert.equal(statusOf(child), 'FAILED');
    await deliver(child, actors);
    assert.deepEqual(parent.kinds().slice(-2), ['sub_agent_updated', 'tool_error']);
    assert.deepEqual(parent.published.at(-1)?.data, { toolError: { message: `sub-objective ${childId} ended OBJECTIVE_STATUS_FAILED: provider down`, toolCallId: parent.callId('call_sub') } });
    assert.deepEqual(toolMessages(parent.modelRequest().messages), [{ toolCallId: 'call_sub', content: '[sub-agent failed: provider down]' }]);
    assert.equal(statusOf(parent), 'RUNNING');
  });

  it('a child reports to its parent once: not again after a follow-up run, and a second delivery changes nothing', async () => {
    const { parent, child, actors } = await family();
    await child.modelAnswers({ content: 'first' });
    const [report] = child.takeSent();
    await parent.send(report.command as ObjectiveCommand);
    const events = parent.journal.length;
    await parent.send(report.command as ObjectiveCommand);
    noEvents(parent);
    assert.equal(parent.journal.length, events);

    await child.send({ type: 'message', content: 'more please' });
    await child.modelAnswers({ content: 'second' });
    assert.equal(statusOf(child), 'COMPLETED');
    assert.deepEqual(await deliver(child, actors), [], 'a child run again by a follow-up does not report again');
  });

  it('a report for a call the parent does not know changes nothing', async () => {
    const { parent, childId } = await family();
    const stray: ChildFinishedCommand = {
      type: 'child_finished', childObjectiveId: childId, toolCallId: 'call_other', status: 'OBJECTIVE_STATUS_COMPLETED', content: 'x',
      usage: { promptTokens: 1, completionTokens: 1, costCents: 1 }, error: null,
    };
    await parent.send(stray);
    noEvents(parent);
    await parent.send({ ...stray, toolCallId: parent.callId('call_sub'), childObjectiveId: 'obj_someone_else' });
    noEvents(parent);
    assert.equal(statusOf(parent), 'RUNNING');
  });

  describe('limits', () => {
    it('a sub-agent call beyond maxSubObjectives is a TOOL_ERROR; sub-agent calls do not count against maxToolCalls', async () => {
      const parent = new ObjectiveDriver();
      await parent.start({ tools: [lookupTool(), researcherTool()], limits: { maxToolCalls: 1, maxSubObjectives: 1 } });
      await parent.modelAnswers({
        content: null,
        toolCalls: [
          { id: 's1', name: 'researcher', arguments: '{"prompt":"a"}' },
          { id: 's2', name: 'researcher', arguments: '{"prompt":"b"}' },
          { id: 't1', name: 'lookup', arguments: '{}' },
        ],
      });
      assert.deepEqual([...parent.running.keys()], [parent.callId('s1'), parent.callId('t1')]);
      assert.deepEqual(parent.published.find((event) => event.type === 'objective_event.tool_error')?.data, { toolError: { message: 'limit reached: maxSubObjectives', toolCallId: parent.callId('s2') } });
      assert.equal(parent.state.toolCallCount, 1);

      await parent.succeed(parent.callId('s1'), childStartFor(prepareInput(parent, 's1')));
      await parent.succeed(parent.callId('t1'), toolSuccess(parent.callId('t1'), 'T'));
      assert.equal(parent.state.subObjectiveCount, 1);
      const [start] = parent.takeSent();
      const childId = start.id;
      await parent.send({ type: 'child_finished', childObjectiveId: childId, toolCallId: parent.callId('s1'), status: 'OBJECTIVE_STATUS_COMPLETED', content: 'A', usage: { promptTokens: 0, completionTokens: 0, costCents: 0 }, error: null });
      assert.deepEqual(toolMessages(parent.modelRequest().messages), [
        { toolCallId: 's1', content: 'A' }, { toolCallId: 's2', content: 'limit reached: maxSubObjectives' }, { toolCallId: 't1', content: 'T' },
      ]);

      // The next turn: the one child allowed exists already.
      await parent.modelAnswers({ content: null, toolCalls: [{ id: 's3', name: 'researcher', arguments: '{"prompt":"c"}' }] });
      assert.equal(parent.running.has(parent.callId('s3')), false);
      assert.deepEqual(toolMessages(parent.modelRequest().messages).at(-1), { toolCallId: 's3', content: 'limit reached: maxSubObjectives' });
    });

    it('a call that would nest deeper than maxDepth (default 5) is a TOOL_ERROR', async () => {
      const deep = new ObjectiveDriver();
      await deep.start({ tools: [researcherTool()], depth: 5 });
      await deep.modelAnswers({ content: null, toolCalls: [{ id: 's1', name: 'researcher', arguments: '{"prompt":"a"}' }] });
      assert.equal(deep.running.has(deep.callId('s1')), false);
      assert.deepEqual(toolMessages(deep.modelRequest().messages), [{ toolCallId: 's1', content: 'limit reached: sub-objective depth 5' }]);

      const shallow = new ObjectiveDriver();
      await shallow.start({ tools: [researcherTool()], depth: 1, limits: { maxToolCalls: 0, maxSubObjectives: 0, maxDepth: 2 } });
      await shallow.modelAnswers({ content: null, toolCalls: [{ id: 's1', name: 'researcher', arguments: '{"prompt":"a"}' }] });
      assert.equal(prepareInput(shallow, 's1').depth, 2);

      const limited = new ObjectiveDriver();
      await limited.start({ tools: [researcherTool()], depth: 2, limits: { maxToolCalls: 0, maxSubObjectives: 0, maxDepth: 2 } });
      await limited.modelAnswers({ content: null, toolCalls: [{ id: 's1', name: 'researcher', arguments: '{"prompt":"a"}' }] });
      assert.deepEqual(limited.published.at(-1)?.data, { toolError: { message: 'limit reached: sub-objective depth 2', toolCallId: limited.callId('s1') } });
    });

    it('a child inherits its parent\'s depth limit when its start sets none, and its depth is the parent\'s + 1', async () => {
      const parent = new ObjectiveDriver();
      await parent.start({ tools: [researcherTool()], depth: 1, limits: { maxToolCalls: 0, maxSubObjectives: 0, maxDepth: 3 } });
      await parent.modelAnswers({ content: null, toolCalls: [{ id: 's1', name: 'researcher', arguments: '{"prompt":"a"}' }] });
      const input = prepareInput(parent, 's1');
      await parent.succeed(parent.callId('s1'), childStartFor(input, { depth: 0, parentToolCallId: null, limits: { maxToolCalls: 0, maxSubObjectives: 0 } }));
      const [{ command }] = parent.takeSent();
      const start = (command as { start: ObjectiveStart }).start;
      assert.deepEqual({ depth: start.depth, parentToolCallId: start.parentToolCallId, maxDepth: start.limits.maxDepth, parent: start.spec.parentObjectiveId }, {
        depth: 2, parentToolCallId: parent.callId('s1'), maxDepth: 3, parent: 'obj_1',
      });
    });
  });

  describe('invalid calls', () => {
    it('arguments that are not JSON, or lack the prompt, go back to the model as a TOOL_ERROR; nothing starts', async () => {
      const parent = new ObjectiveDriver();
      await parent.start({ tools: [researcherTool()] });
      await parent.modelAnswers({
        content: null,
        toolCalls: [{ id: 's1', name: 'researcher', arguments: '{"prompt": "a"' }, { id: 's2', name: 'researcher', arguments: '{"question":"a"}' }, { id: 's3', name: 'researcher', arguments: '[1]' }],
      });
      assert.equal(parent.running.size, 1, 'only the next model call runs');
      const results = toolMessages(parent.modelRequest().messages);
      assert.match(results[0].content, /^invalid arguments: arguments are not JSON: /u);
      assert.deepEqual(results.slice(1), [
        { toolCallId: 's2', content: 'invalid arguments: arguments must have a "prompt" string' },
        { toolCallId: 's3', content: 'invalid arguments: arguments must be a JSON object' },
      ]);
      assert.equal(parent.state.subObjectiveCount, 0);
    });

    it('a failed preparation (the agent refused, the data invalid) is a TOOL_ERROR with its message', async () => {
      const parent = new ObjectiveDriver();
      await parent.start({ tools: [researcherTool()] });
      await parent.modelAnswers({ content: null, toolCalls: [{ id: 's1', name: 'researcher', arguments: '{"prompt":"a"}' }] });
      await parent.fail(parent.callId('s1'), { code: 'FAILED_PRECONDITION', message: 'agent agent_2 is ARCHIVED' });
      assert.deepEqual(parent.published.at(-1)?.data, { toolError: { message: 'the sub-agent could not be started: agent agent_2 is ARCHIVED', toolCallId: parent.callId('s1') } });
      assert.deepEqual(toolMessages(parent.modelRequest().messages), [{ toolCallId: 's1', content: 'the sub-agent could not be started: agent agent_2 is ARCHIVED' }]);
      assert.deepEqual(parent.sent, []);
      assert.equal(parent.state.subObjectiveCount, 0);
    });

    it('a prepared start for another objective id is refused', async () => {
      const parent = new ObjectiveDriver();
      await parent.start({ tools: [researcherTool()] });
      await parent.modelAnswers({ content: null, toolCalls: [{ id: 's1', name: 'researcher', arguments: '{"prompt":"a"}' }] });
      await parent.succeed(parent.callId('s1'), childStartFor(prepareInput(parent, 's1'), { objectiveId: 'obj_wrong' }));
      assert.match((parent.published.at(-1)?.data as { toolError: { message: string } }).toolError.message, /obj_wrong is not the child/u);
      assert.deepEqual(parent.sent, []);
    });
  });

  it('an interrupted preparation runs again with the same input, so at most one child exists', async () => {
    const parent = new ObjectiveDriver();
    await parent.start({ tools: [researcherTool()] });
    await parent.modelAnswers({ content: null, toolCalls: [{ id: 's1', name: 'researcher', arguments: '{"prompt":"a"}' }] });
    const first = parent.running.get(parent.callId('s1'))!;
    await parent.interrupt(parent.callId('s1'));
    const again = parent.running.get(parent.callId('s1'))!;
    assert.deepEqual({ ...again, attempt: 1 }, first);
    assert.equal(again.attempt, 2);
    assert.equal(parent.kinds().filter((kind) => kind === 'tool_called').length, 1);
    await parent.succeed(parent.callId('s1'), childStartFor(again.input as PrepareChildInput));
    assert.deepEqual(parent.sent.map((send) => send.id), [(first.input as PrepareChildInput).childObjectiveId]);

    // Once the child was started, a stale interruption of the preparation is dropped.
    const decision = await parent.behavior.onEffectInterrupted!(parent.state, again, { kind: 'objective', id: 'obj_1', now: new Date() });
    assert.deepEqual(decision, {});
  });

  it('a sub-agent that needs approval prepares its child once approved', async () => {
    const parent = new ObjectiveDriver();
    await parent.start({ tools: [researcherTool({ requiresApproval: true })] });
    await parent.modelAnswers({ content: null, toolCalls: [{ id: 's1', name: 'researcher', arguments: '{"prompt":"a"}' }] });
    assert.equal(statusOf(parent), 'AWAITING_APPROVAL');
    assert.equal(parent.running.size, 0);
    await parent.send({ type: 'approve', toolCallId: parent.callId('s1') });
    assert.equal(prepareInput(parent, 's1').initialMessage, 'a');
    assert.deepEqual(parent.kinds().slice(-2), ['tool_approved', 'tool_called']);
  });

  describe('budgets', () => {
    const limits = (extra: Partial<ObjectiveStart['limits']>): ObjectiveStart['limits'] => ({ maxToolCalls: 0, maxSubObjectives: 0, ...extra });
    const usage = (tokens: number, costCents = 0) => ({ promptTokens: tokens, completionTokens: 0, costCents });
    const startSent = (driver: ObjectiveDriver) => {
      const [send] = driver.takeSent();
      return send.command as Extract<ObjectiveCommand, { type: 'start' }>;
    };
    const finished = (driver: ObjectiveDriver, providerId: string, childObjectiveId: string, used: number): ChildFinishedCommand => ({
      type: 'child_finished', childObjectiveId, toolCallId: driver.callId(providerId), status: 'OBJECTIVE_STATUS_COMPLETED', content: 'done', usage: usage(used), error: null,
    });
    const callResearcher = (...ids: string[]) => ({ content: null, toolCalls: ids.map((id) => ({ id, name: 'researcher', arguments: '{"prompt":"a"}' })) });

    it('a child starts with what its parent has free as its share; past it the child fails, and the parent stops at its next model call', async () => {
      const parent = new ObjectiveDriver();
      await parent.start({ tools: [researcherTool()], limits: limits({ maxTokens: 100, maxCostCents: 10 }) });
      await parent.modelAnswers({ ...callResearcher('s1'), usage: usage(12, 1) });
      const input = prepareInput(parent, 's1');
      await parent.succeed(parent.callId('s1'), childStartFor(input, { limits: limits({ maxTokens: 1000 }) }));
      const command = startSent(parent);
      const share = { maxTokens: 88, maxCostCents: 9 };
      assert.deepEqual(command.start.limits, { ...limits({ maxTokens: 1000 }), maxDepth: DEFAULT_MAX_OBJECTIVE_DEPTH, parentShare: share }, 'its own maxTokens stays; the share is the lower');
      assert.deepEqual(parent.journal.find((event) => event.type === 'child_started'), { type: 'child_started', toolCallId: parent.callId('s1'), metadata: command.start.metadata.objective, share });

      const child = new ObjectiveDriver(input.childObjectiveId);
      await child.send(command);
      await child.modelAnswers({ content: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }], usage: usage(90, 2) });
      await child.succeed(child.callId('c1'), toolSuccess(child.callId('c1'), 'x'));
      assert.equal(statusOf(child), 'FAILED');
      assert.deepEqual(child.state.error, { type: 'LIMIT_REACHED', message: "limit reached: maxTokens (90 tokens used; the limit is 88, this sub-objective's share of its parent's budget)" });

      const actors = new Map([[parent.objectiveId, parent], [child.objectiveId, child]]);
      await deliver(child, actors);
      assert.equal(statusOf(parent), 'FAILED', 'no model call after the child pushed it over');
      assert.deepEqual(parent.state.error, { type: 'LIMIT_REACHED', message: 'limit reached: maxTokens (102 tokens used; the limit is 100)' });
      assert.deepEqual(parent.kinds().slice(-4), ['sub_agent_updated', 'tool_error', 'error', 'finalized']);
      assert.ok(parent.state.usage.promptTokens < 100 + 90, 'passed by less than the one call that crossed it (the child\'s)');
      assert.equal(parent.starts.filter((effect) => effect.name === 'model.call').length, 1);
    });

    it('cents: a child spending exactly its share takes the parent to its limit, float noise or not', async () => {
      const parent = new ObjectiveDriver();
      await parent.start({ tools: [researcherTool()], limits: limits({ maxCostCents: 1 }) });
      await parent.modelAnswers({ ...callResearcher('s1'), usage: usage(10, 0.7) });
      await parent.succeed(parent.callId('s1'), childStartFor(prepareInput(parent, 's1')));
      const command = startSent(parent);
      assert.deepEqual(command.start.limits.parentShare, { maxCostCents: 0.3 }, '1 - 0.7 is 0.30000000000000004 in floats');
      const child = new ObjectiveDriver(command.start.objectiveId);
      await child.send(command);
      for (const [index, cents] of [0.1, 0.2].entries()) {
        assert.equal(statusOf(child), 'RUNNING');
        await child.modelAnswers({ content: null, toolCalls: [{ id: `c${index}`, name: 'lookup', arguments: '{}' }], usage: usage(1, cents) });
        await child.succeed(child.callId(`c${index}`), toolSuccess(child.callId(`c${index}`), 'x'));
      }
      assert.equal(child.state.error?.message, "limit reached: maxCostCents (0.3 cents spent; the limit is 0.3, this sub-objective's share of its parent's budget)");
      await deliver(child, new Map([[parent.objectiveId, parent]]));
      assert.equal(statusOf(parent), 'FAILED');
      assert.equal(parent.state.error?.message, 'limit reached: maxCostCents (1 cents spent; the limit is 1)');
    });

    it("a child's own lower limit applies, named as its own; a parent without budgets gives no share", async () => {
      const parent = new ObjectiveDriver();
      await parent.start({ tools: [researcherTool()], limits: limits({ maxTokens: 100 }) });
      await parent.modelAnswers({ ...callResearcher('s1'), usage: usage(12) });
      await parent.succeed(parent.callId('s1'), childStartFor(prepareInput(parent, 's1'), { limits: limits({ maxTokens: 50 }) }));
      const command = startSent(parent);
      assert.deepEqual(command.start.limits.parentShare, { maxTokens: 88 });
      const child = new ObjectiveDriver(command.start.objectiveId);
      await child.send(command);
      await child.modelAnswers({ content: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }], usage: usage(60) });
      await child.succeed(child.callId('c1'), toolSuccess(child.callId('c1'), 'x'));
      assert.deepEqual(child.state.error, { type: 'LIMIT_REACHED', message: 'limit reached: maxTokens (60 tokens used; the limit is 50)' });

      const free = new ObjectiveDriver();
      await free.start({ tools: [researcherTool()], limits: limits({ maxTokens: 0 }) });
      await free.modelAnswers({ ...callResearcher('s1'), usage: usage(12) });
      await free.succeed(free.callId('s1'), childStartFor(prepareInput(free, 's1')));
      assert.equal('parentShare' in startSent(free).start.limits, false);
    });

    it('children of one turn split what is free; a share is held until its child reports', async () => {
      const parent = new ObjectiveDriver();
      await parent.start({ tools: [researcherTool(), researcherTool({ name: 'auditor', requiresApproval: true })], limits: limits({ maxTokens: 100 }) });
      await parent.modelAnswers({
        content: null, usage: usage(12),
        toolCalls: [{ id: 's1', name: 'researcher', arguments: '{"prompt":"a"}' }, { id: 's2', name: 'researcher', arguments: '{"prompt":"b"}' }, { id: 'a1', name: 'auditor', arguments: '{"prompt":"c"}' }],
      });
      // 88 free among three calls that may start a child (one awaiting approval): 29 each.
      await parent.succeed(parent.callId('s1'), childStartFor(prepareInput(parent, 's1')));
      const first = startSent(parent).start;
      assert.deepEqual(first.limits.parentShare, { maxTokens: 29 });
      await parent.succeed(parent.callId('s2'), childStartFor(prepareInput(parent, 's2')));
      assert.deepEqual(startSent(parent).start.limits.parentShare, { maxTokens: 29 }, '88 less the 29 held, split between two');

      // The first child used 80 (its last call crossed its share): 92 used and 29 held leave nothing for the third.
      await parent.send(finished(parent, 's1', first.objectiveId, 80));
      await parent.send({ type: 'approve', toolCallId: parent.callId('a1') });
      await parent.succeed(parent.callId('a1'), childStartFor(prepareInput(parent, 'a1')));
      assert.deepEqual(parent.takeSent(), [], 'no child started');
      const refusal = 'limit reached: maxTokens (92 tokens used and 29 held by running sub-objectives; the limit is 100)';
      assert.deepEqual(parent.published.at(-1)?.data, { toolError: { message: refusal, toolCallId: parent.callId('a1') } });
      assert.equal(parent.state.subObjectiveCount, 2);
      assert.equal(statusOf(parent), 'RUNNING', 'the second child still works');
    });

    it('a sibling that reported frees its share: the next child gets what is left', async () => {
      const parent = new ObjectiveDriver();
      await parent.start({ tools: [researcherTool()], limits: limits({ maxTokens: 100 }) });
      await parent.modelAnswers({ ...callResearcher('s1', 's2'), usage: usage(12) });
      await parent.succeed(parent.callId('s1'), childStartFor(prepareInput(parent, 's1')));
      const first = startSent(parent).start;
      assert.deepEqual(first.limits.parentShare, { maxTokens: 44 });
      await parent.send(finished(parent, 's1', first.objectiveId, 30));
      await parent.succeed(parent.callId('s2'), childStartFor(prepareInput(parent, 's2')));
      assert.deepEqual(startSent(parent).start.limits.parentShare, { maxTokens: 58 }, '100 less 42 used, nothing held');
    });

    it('under a budget run one sub-agent at a time, a second call waits for the first child, then gets what is left', async () => {
      const parent = new ObjectiveDriver();
      await parent.start({ tools: [researcherTool()], limits: limits({ maxTokens: 100, sequentialSubAgents: true }) });
      await parent.modelAnswers({ ...callResearcher('s1', 's2'), usage: usage(12) });
      assert.deepEqual(parent.starts.filter((effect) => effect.name === 'objective.prepare_child').map((effect) => effect.id), [parent.callId('s1')], 'only the first prepares');
      assert.deepEqual(parent.state.turnCalls.map((call) => call.state), ['running', 'queued']);
      assert.equal(statusOf(parent), 'RUNNING');
      await parent.succeed(parent.callId('s1'), childStartFor(prepareInput(parent, 's1')));
      const first = startSent(parent).start;
      assert.deepEqual(first.limits.parentShare, { maxTokens: 44 }, '88 free, split with the call waiting');
      assert.equal(first.limits.sequentialSubAgents, true, 'the child spends its share the same way');

      await parent.send(finished(parent, 's1', first.objectiveId, 50));
      assert.equal(parent.state.turnCalls[1].state, 'running', 'the second runs once the first reported');
      await parent.succeed(parent.callId('s2'), childStartFor(prepareInput(parent, 's2')));
      assert.deepEqual(startSent(parent).start.limits.parentShare, { maxTokens: 38 }, '100 less the 62 used');
    });

    it('one sub-agent at a time: a first child that crossed its share leaves the second nothing, so the tree passes the budget by less than one call', async () => {
      const parent = new ObjectiveDriver();
      await parent.start({ tools: [researcherTool()], limits: limits({ maxTokens: 100, sequentialSubAgents: true }) });
      await parent.modelAnswers({ ...callResearcher('s1', 's2', 's3'), usage: usage(10) });
      await parent.succeed(parent.callId('s1'), childStartFor(prepareInput(parent, 's1')));
      const first = startSent(parent).start;
      assert.deepEqual(first.limits.parentShare, { maxTokens: 30 });
      // The child's last call crossed the whole budget (its share was 30, it used 95).
      await parent.send(finished(parent, 's1', first.objectiveId, 95));
      await parent.succeed(parent.callId('s2'), childStartFor(prepareInput(parent, 's2')));
      assert.deepEqual(parent.takeSent(), [], 'no second child');
      assert.ok(parent.published.some((event) => isDeepStrictEqual(event.data, { toolError: { message: 'limit reached: maxTokens (105 tokens used; the limit is 100)', toolCallId: parent.callId('s2') } })));
      await parent.succeed(parent.callId('s3'), childStartFor(prepareInput(parent, 's3')));
      assert.deepEqual(parent.takeSent(), [], 'no third child');
      assert.equal(statusOf(parent), 'FAILED', 'no model call after the calls ended');
      assert.equal(parent.state.error?.message, 'limit reached: maxTokens (105 tokens used; the limit is 100)');
      assert.equal(parent.starts.filter((effect) => effect.name === 'model.call').length, 1);
    });

    it('under the node\'s token cap alone (no budget the variation set), sub-agent calls run side by side', async () => {
      const parent = new ObjectiveDriver();
      await parent.start({ tools: [researcherTool()], limits: limits({ maxTokens: 100 }) });
      await parent.modelAnswers({ ...callResearcher('s1', 's2'), usage: usage(12) });
      assert.deepEqual(parent.state.turnCalls.map((call) => call.state), ['running', 'running']);
    });

    it('cancelling a parent whose sub-agent call waits its turn cancels the running child and never starts the waiting one', async () => {
      const parent = new ObjectiveDriver();
      await parent.start({ tools: [researcherTool()], limits: limits({ maxTokens: 100, sequentialSubAgents: true }) });
      await parent.modelAnswers({ ...callResearcher('s1', 's2'), usage: usage(12) });
      await parent.succeed(parent.callId('s1'), childStartFor(prepareInput(parent, 's1')));
      const first = startSent(parent).start;
      await parent.send({ type: 'cancel', reason: 'enough' });
      assert.equal(statusOf(parent), 'CANCELLED');
      assert.deepEqual(parent.takeSent().map((send) => [send.id, (send.command as { type: string }).type]), [[first.objectiveId, 'cancel']]);
      assert.deepEqual(parent.state.turnCalls.map((call) => call.state), ['not_run', 'not_run']);
      assert.equal(parent.starts.filter((effect) => effect.name === 'objective.prepare_child').length, 1);
    });

    it('a parent whose own model call used up its budget starts no child, and then fails before its next model call', async () => {
      const parent = new ObjectiveDriver();
      await parent.start({ tools: [researcherTool()], limits: limits({ maxCostCents: 5 }) });
      await parent.modelAnswers({ ...callResearcher('s1'), usage: usage(10, 5) });
      await parent.succeed(parent.callId('s1'), childStartFor(prepareInput(parent, 's1')));
      assert.deepEqual(parent.sent, [], 'no child started');
      assert.equal(statusOf(parent), 'FAILED');
      const message = 'limit reached: maxCostCents (5 cents spent; the limit is 5)';
      assert.deepEqual(parent.kinds().slice(-4), ['tool_called', 'tool_error', 'error', 'finalized']);
      assert.deepEqual(parent.published.at(-3)?.data, { toolError: { message, toolCallId: parent.callId('s1') } });
      assert.deepEqual(parent.state.error, { type: 'LIMIT_REACHED', message });
    });

    it("a child passes a share of its own limit on to its children: the parent's share less what it used", async () => {
      const child = new ObjectiveDriver('obj_child');
      await child.start({ objectiveId: 'obj_child', tools: [researcherTool()], depth: 1, limits: limits({ maxTokens: 1000, parentShare: { maxTokens: 88 } }) });
      await child.modelAnswers({ ...callResearcher('s1'), usage: usage(8) });
      await child.succeed(child.callId('s1'), childStartFor(prepareInput(child, 's1')));
      assert.deepEqual(startSent(child).start.limits.parentShare, { maxTokens: 80 });
    });
  });

  describe('cancel cascade', () => {
    it('cancelling a parent cancels its waiting children; their late reports add only their usage', async () => {
      const { parent, child, childId, actors } = await family();
      const reply = await parent.send({ type: 'cancel', reason: 'user left' });
      assert.equal(reply?.info.status, 'OBJECTIVE_STATUS_CANCELLED');
      assert.deepEqual(parent.kinds().slice(-2), ['cancelled', 'finalized']);
      assert.deepEqual(parent.takeSent(), [{ kind: 'objective', id: childId, command: { type: 'cancel', reason: 'parent cancelled', fromParent: true } }]);
      assert.deepEqual(parent.aborted, [], 'no effect ran for the waiting call');

      await child.send({ type: 'cancel', reason: 'parent cancelled', fromParent: true });
      assert.equal(statusOf(child), 'CANCELLED');
      assert.deepEqual(child.aborted, ['model_call_1']);
      assert.deepEqual(child.published.find((event) => event.type === 'objective_event.cancelled')?.data, { cancelled: { reason: 'parent cancelled' } });
      const events = parent.published.length;
      await deliver(child, actors);
      assert.equal(parent.published.length, events, 'the parent ended: the child\'s report records no event');
      assert.equal(statusOf(parent), 'CANCELLED');
    });

    it('a child that ends after its parent still adds its usage to the parent (once), and the parent passes it on up', async () => {
      const spec = { ...startOf().spec, parentObjectiveId: 'obj_grandparent' };
      const { parent, child, childId } = await family({ spec, parentToolCallId: 'call_up' });
      await child.modelAnswers({
        content: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }], usage: { promptTokens: 7, completionTokens: 3, costCents: 2 },
      });
      await parent.send({ type: 'cancel', reason: 'user left' });
      const reported = parent.takeSent().find((send) => send.id === 'obj_grandparent')!.command as ChildFinishedCommand;
      assert.deepEqual(reported.usage, { promptTokens: 10, completionTokens: 2, costCents: 1 }, 'the parent reported what it knew');

      await child.send({ type: 'cancel', reason: 'parent cancelled', fromParent: true });
      const [report] = child.takeSent();
      const events = parent.published.length;
      await parent.send(report.command as ObjectiveCommand);
      assert.deepEqual(parent.state.usage, { promptTokens: 17, completionTokens: 5, costCents: 3 }, 'the child\'s usage reached its ended parent');
      assert.deepEqual(parent.projected.at(-1), { ...parent.projected.at(-1), type: 'objective' });
      assert.deepEqual((parent.projected.at(-1) as { info: { usage: unknown } }).info.usage, { promptTokens: 17, completionTokens: 5, costCents: 3 }, 'and its row');
      assert.equal(parent.published.length, events, 'no event after FINALIZED');
      assert.deepEqual(parent.takeSent(), [{
        kind: 'objective', id: 'obj_grandparent',
        command: { type: 'child_usage', childObjectiveId: parent.objectiveId, sourceObjectiveId: childId, usage: { promptTokens: 7, completionTokens: 3, costCents: 2 } },
      }], 'passed on to the grandparent, which had its report already');

      await parent.send(report.command as ObjectiveCommand);
      assert.deepEqual(parent.state.usage, { promptTokens: 17, completionTokens: 5, costCents: 3 }, 'a report delivered twice counts once');
      assert.deepEqual(parent.takeSent(), []);
    });

    it('a cancel while the child is being prepared aborts the preparation and sends nothing', async () => {
      const parent = new ObjectiveDriver();
      await parent.start({ tools: [researcherTool()] });
      await parent.modelAnswers({ content: null, toolCalls: [{ id: 's1', name: 'researcher', arguments: '{"prompt":"a"}' }] });
      await parent.send({ type: 'cancel' });
      assert.deepEqual(parent.aborted, [parent.callId('s1')]);
      assert.deepEqual(parent.sent, []);
    });

    it('a parent\'s cancel reaching a child that already ended is a no-op; an API cancel of it is FAILED_PRECONDITION', async () => {
      const { child } = await family();
      await child.modelAnswers({ content: 'done' });
      const reply = await child.send({ type: 'cancel', reason: 'parent cancelled', fromParent: true });
      assert.equal(reply?.info.status, 'OBJECTIVE_STATUS_COMPLETED');
      noEvents(child);
      await rejectsWith(child.send({ type: 'cancel' }), 'FAILED_PRECONDITION');
    });

    it('a parent that fails while a child works cancels the child', async () => {
      const { parent, childId } = await family({ turnTimeoutMs: 60_000 });
      parent.now = new Date(parent.now.getTime() + 60_000);
      await parent.fireReminder('turn_deadline');
      assert.equal(statusOf(parent), 'FAILED');
      assert.deepEqual(parent.takeSent(), [{ kind: 'objective', id: childId, command: { type: 'cancel', reason: 'parent failed', fromParent: true } }]);
    });
  });

  describe('usage roll-up deltas', () => {
    const deltasOf = (driver: ObjectiveDriver) =>
      driver.projected.flatMap((change) => (change.type === 'objective_usage' ? [change.delta] : []));
    const summed = (deltas: Array<{ promptTokens: number; completionTokens: number; costCents: number; objectives: number }>) => deltas.reduce(
      (sum, delta) => ({
        promptTokens: sum.promptTokens + delta.promptTokens, completionTokens: sum.completionTokens + delta.completionTokens,
        costCents: sum.costCents + delta.costCents, objectives: sum.objectives + delta.objectives,
      }),
      { promptTokens: 0, completionTokens: 0, costCents: 0, objectives: 0 },
    );

    it('each objective adds its own model calls under its own agent, and itself once; a child\'s report adds nothing to the parent\'s', async () => {
      const { parent, child, actors } = await family({ spec: { ...startOf().spec, tenantId: 'tenant_1' } });
      await child.modelAnswers({ content: 'X is 42.', usage: { promptTokens: 5, completionTokens: 1, costCents: 2 } });
      const before = parent.projected.length;
      await deliver(child, actors);
      assert.equal(deltasOf({ projected: parent.projected.slice(before) } as ObjectiveDriver).length, 0, 'the child\'s report projects no usage of the parent');
      // The parent's last model call comes two days after its creation: its usage still goes to the creation's buckets.
      const createdAt = parent.state.createdAt;
      parent.now = new Date(parent.now.getTime() + 2 * 24 * 3_600_000);
      await parent.modelAnswers({ content: 'The answer is 42.', usage: { promptTokens: 20, completionTokens: 4, costCents: 4 } });
      assert.equal(statusOf(parent), 'COMPLETED');
      assert.deepEqual(new Set(deltasOf(parent).map((delta) => delta.createdAt)), new Set([createdAt]), 'every delta in the buckets of the objective\'s createdAt');

      assert.deepEqual(parent.state.usage, { promptTokens: 35, completionTokens: 7, costCents: 7 }, 'the parent\'s info sums its child in');
      assert.deepEqual(summed(deltasOf(parent)), { promptTokens: 30, completionTokens: 6, costCents: 5, objectives: 1 }, 'its roll-up deltas are its own calls only');
      assert.deepEqual(summed(deltasOf(child)), { promptTokens: 5, completionTokens: 1, costCents: 2, objectives: 1 });
      assert.deepEqual(
        new Set(deltasOf(parent).map((delta) => `${delta.agentId} ${delta.variationId} ${delta.tenantId} ${delta.modelId}`)),
        new Set(['agent_1 agentvar_1 tenant_1 builtin/scripted']),
      );
      assert.deepEqual(new Set(deltasOf(child).map((delta) => `${delta.agentId} ${delta.tenantId}`)), new Set(['agent_2 tenant_1']), 'the child under its own agent, with the tenant it inherited');
      assert.deepEqual(deltasOf(parent)[0], {
        createdAt, agentId: 'agent_1', variationId: 'agentvar_1', tenantId: 'tenant_1', modelId: 'builtin/scripted',
        promptTokens: 0, completionTokens: 0, costCents: 0, objectives: 1,
      }, 'the start turn counts the objective');
      const projected = parent.projected.slice(-2).map((change) => change.type);
      assert.deepEqual(projected, ['objective_usage', 'objective'], 'the delta comes before the row');
    });

    it('a child\'s usage that reaches its ended parent late adds nothing to the parent\'s deltas', async () => {
      const { parent, child, actors } = await family();
      await child.modelAnswers({
        content: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }], usage: { promptTokens: 7, completionTokens: 3, costCents: 2 },
      });
      await parent.send({ type: 'cancel', reason: 'user left' });
      await child.send({ type: 'cancel', reason: 'parent cancelled', fromParent: true });
      await deliver(child, actors);
      assert.deepEqual(parent.state.usage, { promptTokens: 17, completionTokens: 5, costCents: 3 }, 'the late usage reached the parent\'s info');
      assert.deepEqual(summed(deltasOf(parent)), { promptTokens: 10, completionTokens: 2, costCents: 1, objectives: 1 }, 'not its roll-up deltas');
      assert.deepEqual(summed(deltasOf(child)), { promptTokens: 7, completionTokens: 3, costCents: 2, objectives: 1 });
    });
  });
});
