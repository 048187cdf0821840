// The service-provided tools inside the objective loop (issue 25): which are
// offered, how a call runs (a `service_tool.call` effect, never held for
// approval, never counted against maxToolCalls), the MEMORY_READ event before
// a resolved key's result, and tools found by `search_tools` joining the tool
// list from the next model call under names of their own. The driver replays
// the journal after every decision, so each test also checks replay.
import assert from 'node:assert/strict';
import type { ObjectiveMemory, ServiceToolCallInput, ServiceToolOutcome } from '../../../src/ports/service-tools';
import type { ObjectiveTool } from '../../../src/objectives/objective-state';
import { MAX_OFFERED_TOOLS } from '../../../src/objectives/objective-service-tools';
import { lookupTool, ObjectiveDriver, toolSuccess } from './objective-driver';

const MANIFEST = '## Skills\n- refunds: Refunds — how to refund an invoice';
const skills: ObjectiveMemory = { layerIds: ['memlyr_a', 'memlyr_b'], skillsLayerIds: ['memlyr_b'], skillsManifest: MANIFEST, episodic: null };
const episodic: ObjectiveMemory = { layerIds: [], skillsLayerIds: [], skillsManifest: null, episodic: { key: 'customer-42', ttlSeconds: 3600 } };
const discovery = { hints: ['billing'], maxTools: 5, rerankThreshold: 0 };

function dataOf(driver: ObjectiveDriver, kind: string): Array<Record<string, unknown>> {
  return driver.published.filter((event) => event.type === `objective_event.${kind}`).map((event) => Object.values(event.data as Record<string, unknown>)[0] as Record<string, unknown>);
}

describe('objective service tools', () => {
  it('offers none without memory or discovery settings, and refuses their names as unknown tools', async () => {
    const driver = new ObjectiveDriver();
    await driver.start();
    assert.deepEqual(driver.modelRequest().tools.map((tool) => tool.name), ['lookup']);
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'call_1', name: 'load_skill', arguments: '{"key":"refunds"}' }] });
    assert.deepEqual(dataOf(driver, 'tool_error').map((error) => error.message), ['unknown tool: load_skill']);
  });

  it('offers load_skill with a skills layer, memory_read with another layer or episodic memory, memory_write with episodic memory, search_tools with discovery', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ memory: skills });
    const request = driver.modelRequest();
    assert.deepEqual(request.tools.map((tool) => tool.name), ['lookup', 'load_skill', 'memory_read'], 'memlyr_a is not a skills layer: memory_read reads it');
    const skillsOnly = new ObjectiveDriver();
    await skillsOnly.start({ memory: { ...skills, layerIds: ['memlyr_b'] } });
    assert.deepEqual(skillsOnly.modelRequest().tools.map((tool) => tool.name), ['lookup', 'load_skill']);
    assert.deepEqual(request.messages[0], { role: 'system', content: `You help.\n\n${MANIFEST}` }, 'the manifest follows the variation prompt');

    const both = new ObjectiveDriver();
    await both.start({ memory: episodic, discovery, systemPrompt: null });
    assert.deepEqual(both.modelRequest().tools.map((tool) => tool.name), ['lookup', 'memory_read', 'memory_write', 'search_tools']);
    assert.equal(both.modelRequest().messages[0].role, 'user', 'no system message without a prompt or a manifest');
  });

  it('runs load_skill as a service_tool.call effect, uncounted, with MEMORY_READ before its result', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ memory: skills, limits: { maxToolCalls: 1, maxSubObjectives: 0 } });
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'call_1', name: 'load_skill', arguments: '{"key":"refunds"}' }] });
    const id = driver.callId('call_1');
    const effect = driver.running.get(id)!;
    assert.equal(effect.name, 'service_tool.call');
    assert.deepEqual(effect.input, {
      toolCallId: id, name: 'load_skill', arguments: '{"key":"refunds"}',
      // The manifest stays in the objective: the input is journaled with every call.
      context: { accountId: 'acc_1', workspaceId: 'ws_1', objectiveId: 'obj_1', memory: { layerIds: skills.layerIds, skillsLayerIds: skills.skillsLayerIds, episodic: null }, discovery: null },
    } satisfies ServiceToolCallInput);
    assert.equal(driver.state.toolCallCount, 0, 'a service tool call does not count against maxToolCalls');

    const outcome: ServiceToolOutcome = { ok: true, content: 'Refund within 30 days.', memoryRead: { key: 'refunds', memoryLayerId: 'memlyr_b', memoryEntryId: 'memntr_1' } };
    await driver.succeed(id, outcome);
    assert.deepEqual(driver.kinds().slice(-3), ['tool_called', 'memory_read', 'tool_result']);
    assert.deepEqual(dataOf(driver, 'memory_read'), [{ key: 'refunds', memoryLayerId: 'memlyr_b', memoryEntryId: 'memntr_1' }]);
    assert.deepEqual(driver.published.at(-3)!.data, { toolCalled: { toolCallId: id } });
    const assistant = dataOf(driver, 'assistant_message')[0] as { toolCalls: Array<{ tool: unknown }> };
    assert.deepEqual(assistant.toolCalls[0].tool, { serviceProvidedTool: { name: 'load_skill' } });
    assert.deepEqual(driver.modelRequest().messages.at(-1), { role: 'tool', toolCallId: 'call_1', content: 'Refund within 30 days.' });

    // The assigned tool is still allowed: its limit was not used by load_skill.
    assert.deepEqual(driver.modelRequest().tools.map((tool) => tool.name), ['lookup', 'load_skill', 'memory_read']);
  });

  it('gives the model a service tool failure as a TOOL_ERROR and carries on, with no MEMORY_READ', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ memory: skills });
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'call_1', name: 'load_skill', arguments: '{"key":"nope"}' }] });
    await driver.succeed(driver.callId('call_1'), { ok: false, content: 'no skill with key "nope"' } satisfies ServiceToolOutcome);
    assert.deepEqual(dataOf(driver, 'memory_read'), []);
    assert.deepEqual(dataOf(driver, 'tool_error'), [{ message: 'no skill with key "nope"', toolCallId: driver.callId('call_1') }]);
    assert.deepEqual(driver.modelRequest().messages.at(-1), { role: 'tool', toolCallId: 'call_1', content: 'no skill with key "nope"' });

    const failing = new ObjectiveDriver();
    await failing.start({ memory: skills });
    await failing.modelAnswers({ content: null, toolCalls: [{ id: 'call_1', name: 'load_skill', arguments: '{"key":"a"}' }] });
    await failing.fail(failing.callId('call_1'), { code: 'UNAVAILABLE', message: 'the database is unreachable' });
    assert.deepEqual(failing.modelRequest().messages.at(-1), { role: 'tool', toolCallId: 'call_1', content: '[error: the database is unreachable]' });
  });

  it('runs a lost service tool call again with the same input', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ memory: episodic });
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'call_1', name: 'memory_write', arguments: '{"key":"k","content":"v"}' }] });
    const id = driver.callId('call_1');
    const before = driver.running.get(id)!.input;
    await driver.interrupt(id);
    assert.deepEqual(driver.running.get(id)?.input, before);
    await driver.succeed(id, { ok: true, content: 'saved under "k"' });
    assert.equal(driver.runningModelCall().id, 'model_call_2');
  });

  it('adds the tools search_tools found from the next model call, under names of their own, with their approval rule', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ discovery });
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'call_1', name: 'search_tools', arguments: '{"query":"refund"}' }] });
    const metadata = (id: string, name: string) => ({ id, name, accountId: 'acc_1', workspaceId: 'ws_1', profileId: 'prof_1', createdAt: '2026-11-23T11:00:00.000Z' });
    const namesake: ObjectiveTool = lookupTool({
      description: 'Refunds an invoice', requiresApproval: true, metadata: metadata('tool_9', 'lookup'),
      executable: { ...lookupTool().executable, id: 'tool_9', httpUrl: 'https://tools.example.com/refund' },
    });
    const offered = lookupTool({ metadata: metadata('tool_1', 'lookup') });
    await driver.succeed(driver.callId('call_1'), { ok: true, content: '', discoveredTools: [namesake, offered, namesake] } satisfies ServiceToolOutcome);

    assert.deepEqual(driver.state.discoveredTools?.map((tool) => tool.name), ['lookup_2'], 'a new tool, once, named apart from the assigned lookup');
    const [result] = dataOf(driver, 'tool_result');
    assert.equal(result.content, 'Found 2 tools; you can call them from your next turn:\n- lookup_2: Refunds an invoice\n- lookup: Looks a thing up');
    assert.deepEqual(driver.modelRequest().tools.map((tool) => tool.name), ['lookup', 'lookup_2', 'search_tools']);

    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'call_2', name: 'lookup_2', arguments: '{"q":"inv_1"}' }] });
    assert.equal(driver.state.status, 'OBJECTIVE_STATUS_AWAITING_APPROVAL', 'the found tool keeps its own approval rule');
    await driver.send({ type: 'approve', toolCallId: driver.callId('call_2') });
    const effect = driver.running.get(driver.callId('call_2'))!;
    assert.equal(effect.name, 'tool.call');
    assert.equal((effect.input as { tool: { httpUrl: string } }).tool.httpUrl, 'https://tools.example.com/refund', 'the found tool reaches its own endpoint');
    await driver.succeed(driver.callId('call_2'), toolSuccess(driver.callId('call_2'), 'refunded'));
    assert.equal(driver.runningModelCall().id, 'model_call_3');
  });

  it('keeps a request within MAX_OFFERED_TOOLS: the best found first, the earliest found pushed out', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ discovery });
    const tool = (index: number): ObjectiveTool => lookupTool({
      name: `tool_${index}`, description: `tool ${index}`,
      executable: { ...lookupTool().executable, id: `tool_${index}` },
    });
    const search = async (providerId: string, tools: ObjectiveTool[]) => {
      await driver.modelAnswers({ content: null, toolCalls: [{ id: providerId, name: 'search_tools', arguments: '{"query":"x"}' }] });
      await driver.succeed(driver.callId(providerId), { ok: true, content: '', discoveredTools: tools });
    };
    // Room: 128 less the assigned lookup and search_tools.
    await search('call_1', Array.from({ length: 100 }, (_, index) => tool(index)));
    await search('call_2', Array.from({ length: 100 }, (_, index) => tool(100 + index)));
    const names = driver.modelRequest().tools.map((offered) => offered.name);
    assert.equal(names.length, MAX_OFFERED_TOOLS);
    assert.deepEqual(names.slice(0, 3), ['lookup', 'tool_74', 'tool_75'], 'the 74 earliest found left');
    assert.equal(names.at(-2), 'tool_199');
    const listed = (dataOf(driver, 'tool_result').at(-1)!.content as string).split('\n').slice(1);
    assert.equal(listed.length, 100, 'the search lists every tool it added');

    await search('call_3', Array.from({ length: 200 }, (_, index) => tool(200 + index)));
    const last = driver.modelRequest().tools.map((offered) => offered.name);
    assert.deepEqual([last.length, last[1], last.at(-2)], [MAX_OFFERED_TOOLS, 'tool_200', 'tool_325'], 'more than there is room for: the best ones only');
    assert.equal((dataOf(driver, 'tool_result').at(-1)!.content as string).split('\n').length - 1, 126, 'only what the model can call is listed');
  });

  it('answers a search that found nothing in words the model can act on', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ discovery });
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'call_1', name: 'search_tools', arguments: '{"query":"zzz"}' }] });
    await driver.succeed(driver.callId('call_1'), { ok: true, content: '', discoveredTools: [] });
    assert.equal(dataOf(driver, 'tool_result')[0].content, 'No tools match. Try other words.');
    assert.equal(driver.state.discoveredTools, undefined);
  });
});
