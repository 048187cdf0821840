// What an objective's decisions tell the node's metrics (objective-observations.ts):
// a start, each tool call's end by the kind of tool and its outcome, each
// approval decision, and the final status with the error type of a failure. Driven through the pure
// behaviour; actors/domain-metrics.ts counts what these decisions carry.
import assert from 'node:assert/strict';
import type { ObjectiveObservation } from '../../../src/objectives/objective-observations';
import type { ObjectiveTool } from '../../../src/objectives/objective-state';
import { lookupTool, ObjectiveDriver, toolSuccess } from './objective-driver';

const toolCalls = (driver: ObjectiveDriver) => driver.observed.filter((fact) => fact.type === 'tool_call_finished');
const finished = (driver: ObjectiveDriver) => driver.observed.filter((fact) => fact.type === 'objective_finished');

const researcher: ObjectiveTool = {
  name: 'researcher', description: 'Researches', inputSchema: { type: 'object', properties: { prompt: { type: 'string' } } },
  requiresApproval: false, effectTimeoutMs: 0, subAgent: { agentId: 'agent_2', promptOnly: true },
};

describe('objective observations (the metrics a decision carries)', () => {
  it('a run with a tool call: started, the call http/result, then completed with no error type, each once', async () => {
    const driver = new ObjectiveDriver();
    await driver.start();
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'a', name: 'lookup', arguments: '{}' }] });
    await driver.succeed(driver.callId('a'), toolSuccess(driver.callId('a'), 'A'));
    await driver.modelAnswers({ content: 'Done.' });
    assert.deepEqual<ObjectiveObservation[]>(driver.observed, [
      { type: 'objective_started' },
      { type: 'tool_call_finished', kind: 'http', outcome: 'result' },
      { type: 'objective_finished', status: 'OBJECTIVE_STATUS_COMPLETED', errorType: null },
    ]);
  });

  it('outcomes: a tool error by its type, a deadline as timed_out, an unknown tool and a limit as refused', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ tools: [lookupTool({ executable: { ...lookupTool().executable, kind: 'mcp' } })], limits: { maxToolCalls: 2, maxSubObjectives: 0 } });
    await driver.modelAnswers({
      content: null,
      toolCalls: ['a', 'b', 'c'].map((id) => ({ id, name: 'lookup', arguments: '{}' })).concat({ id: 'x', name: 'nowhere', arguments: '{}' }),
    });
    await driver.succeed(driver.callId('a'), {
      ok: false, toolCallId: driver.callId('a'), toolId: 'tool_1', kind: 'mcp', content: 'no', truncated: false, durationMs: 1, errorType: 'MCP_TOOL_ERROR', message: 'the tool said no',
    });
    await driver.fail(driver.callId('b'), { code: 'DEADLINE_EXCEEDED', message: 'deadline passed' });
    assert.deepEqual(toolCalls(driver), [
      // The third call passes maxToolCalls and the fourth names no tool: both are refused as the model's answer is taken.
      { type: 'tool_call_finished', kind: 'mcp', outcome: 'refused' },
      { type: 'tool_call_finished', kind: 'unknown', outcome: 'refused' },
      { type: 'tool_call_finished', kind: 'mcp', outcome: 'mcp_tool_error' },
      { type: 'tool_call_finished', kind: 'mcp', outcome: 'timed_out' },
    ]);
  });

  it('a denial counts as denied; an approval counts the run that follows it; each decision once, as made', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ tools: [lookupTool({ requiresApproval: true })] });
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'a', name: 'lookup', arguments: '{}' }, { id: 'b', name: 'lookup', arguments: '{}' }] });
    assert.deepEqual(toolCalls(driver), [], 'a call awaiting approval has not ended');
    await driver.send({ type: 'deny', toolCallId: driver.callId('a'), memo: 'no' });
    await driver.send({ type: 'approve', toolCallId: driver.callId('b') });
    // Deciding again is refused: the first decision wins and is the only one observed.
    await assert.rejects(driver.send({ type: 'deny', toolCallId: driver.callId('b'), memo: 'too late' }), /not awaiting approval/);
    await driver.succeed(driver.callId('b'), toolSuccess(driver.callId('b'), 'B'));
    assert.deepEqual(toolCalls(driver), [
      { type: 'tool_call_finished', kind: 'http', outcome: 'denied' },
      { type: 'tool_call_finished', kind: 'http', outcome: 'result' },
    ]);
    assert.deepEqual(driver.observed.filter((fact) => fact.type === 'approval_decided'), [
      { type: 'approval_decided', decision: 'denied' },
      { type: 'approval_decided', decision: 'approved' },
    ]);
  });

  it('emit_output counts as kind output; a sub-agent that could not start as sub_agent/error', async () => {
    const driver = new ObjectiveDriver();
    await driver.start({ tools: [researcher], outputDefinition: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } });
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 's', name: 'researcher', arguments: '{"prompt":"go"}' }] });
    await driver.fail(driver.callId('s'), { code: 'FAILED_PRECONDITION', message: 'agent agent_2 is ARCHIVED' });
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'o1', name: 'emit_output', arguments: '{"n":"x"}' }] });
    await driver.modelAnswers({ content: null, toolCalls: [{ id: 'o2', name: 'emit_output', arguments: '{"n":1}' }] });
    assert.deepEqual(toolCalls(driver), [
      { type: 'tool_call_finished', kind: 'sub_agent', outcome: 'error' },
      { type: 'tool_call_finished', kind: 'output', outcome: 'invalid_arguments' },
      { type: 'tool_call_finished', kind: 'output', outcome: 'result' },
    ]);
    assert.deepEqual(finished(driver), [{ type: 'objective_finished', status: 'OBJECTIVE_STATUS_COMPLETED', errorType: null }]);
  });

  it('a failure carries its error type; a cancel none; a follow-up after COMPLETED finishes again', async () => {
    const failed = new ObjectiveDriver();
    await failed.start();
    await failed.fail(failed.runningModelCall().id, { code: 'FAILED_PRECONDITION', message: 'no provider key' });
    assert.deepEqual(finished(failed), [{ type: 'objective_finished', status: 'OBJECTIVE_STATUS_FAILED', errorType: 'FAILED_PRECONDITION' }]);

    const cancelled = new ObjectiveDriver();
    await cancelled.start();
    await cancelled.send({ type: 'cancel' });
    assert.deepEqual(finished(cancelled), [{ type: 'objective_finished', status: 'OBJECTIVE_STATUS_CANCELLED', errorType: null }]);

    const again = new ObjectiveDriver();
    await again.start();
    await again.modelAnswers({ content: 'One.' });
    await again.send({ type: 'message', content: 'and again' });
    await again.modelAnswers({ content: 'Two.' });
    assert.equal(finished(again).length, 2);
    assert.equal(again.observed.filter((fact) => fact.type === 'objective_started').length, 1, 'a follow-up is not a new objective');
  });
});
