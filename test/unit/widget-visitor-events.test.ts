// The widget visitor's view of objective events (http/widget-host/visitor-events.ts):
// per kind only what the chat page shows; internal kinds are not sent.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import type Koa from 'koa';
import { openEventStream } from '../../http/routes/objectives.routes';
import { visitorEvent } from '../../http/widget-host/visitor-events';
import type { ObjectiveService } from '../../src/objectives/objective.service';
import type { ObjectiveEventView } from '../../src/schemas/objectives.schema';

const SECRETISH = 'INTERNAL-7f3a';
const CREATED = '2026-11-27T10:00:00.000Z';

function event(kind: string, key: string, fields: Record<string, unknown>, sequence = 7): ObjectiveEventView {
  return {
    metadata: { id: 'objevt_1', accountId: 'acct_1', workspaceId: 'ws_1', profileId: 'prof_1', createdAt: CREATED },
    sequence,
    data: { type: `OBJECTIVE_EVENT_TYPE_${kind}`, [key]: fields },
    contextWindowId: 'ctxwin_1',
    info: { objective: { id: 'obj_1', accountId: 'acct_1', workspaceId: 'ws_1', profileId: 'prof_1', createdAt: CREATED, labels: { secret: SECRETISH } } },
  };
}

const view = (kind: string, key: string, fields: Record<string, unknown>) => visitorEvent(event(kind, key, fields));

describe('widget visitor events', () => {
  it('keeps the sequence, type and time, and of a user message its content only', () => {
    assert.deepEqual(view('USER_MESSAGE', 'userMessage', { content: 'hello', extra: SECRETISH }), {
      sequence: 7, createdAt: CREATED, data: { type: 'OBJECTIVE_EVENT_TYPE_USER_MESSAGE', userMessage: { content: 'hello' } },
    });
  });

  it('gives an assistant message its content and each tool call\'s id and function name, no arguments, tool metadata or usage', () => {
    const shown = view('ASSISTANT_MESSAGE', 'assistantMessage', {
      content: 'Let me look',
      toolCalls: [
        { functionName: 'order_status', id: 'toolcall_2', arguments: `{"order":"${SECRETISH}"}`, tool: { id: 'tool_1', labels: { k: SECRETISH } } },
        { functionName: 'refund', id: 'toolcall_1', arguments: '{}', tool: { id: 'tool_2' } },
      ],
      usage: { promptTokens: 10, completionTokens: 5, costCents: 3 },
    });
    assert.deepEqual(shown!.data, {
      type: 'OBJECTIVE_EVENT_TYPE_ASSISTANT_MESSAGE',
      assistantMessage: { content: 'Let me look', toolCalls: [{ id: 'toolcall_2', functionName: 'order_status' }, { id: 'toolcall_1', functionName: 'refund' }] },
    });
    // An event recorded before calls carried their id: the name only.
    assert.deepEqual(view('ASSISTANT_MESSAGE', 'assistantMessage', { content: '', toolCalls: [{ functionName: 'order_status', arguments: '{}' }] })!.data.assistantMessage,
      { content: '', toolCalls: [{ functionName: 'order_status' }] });
  });

  it('gives tool events their toolCallId only: no result content, memo or internal error message', () => {
    assert.deepEqual(view('TOOL_CALLED', 'toolCalled', { toolCallId: 'call_1' })!.data.toolCalled, { toolCallId: 'call_1' });
    assert.deepEqual(view('TOOL_RESULT', 'toolResult', { toolCallId: 'call_1', content: SECRETISH, type: 'text' })!.data.toolResult, { toolCallId: 'call_1' });
    assert.deepEqual(view('TOOL_APPROVAL_REQUESTED', 'toolApprovalRequested', { toolCallId: 'call_1' })!.data.toolApprovalRequested, { toolCallId: 'call_1' });
    assert.deepEqual(view('TOOL_APPROVED', 'toolApproved', { toolCallId: 'call_1' })!.data.toolApproved, { toolCallId: 'call_1' });
    assert.deepEqual(view('TOOL_DENIED', 'toolDenied', { toolCallId: 'call_1', memo: SECRETISH })!.data.toolDenied, { toolCallId: 'call_1' });
  });

  it('tells a tool error in plain words by its type, never the raw message', () => {
    const cases: Array<[string | undefined, string]> = [
      ['TIMED_OUT', 'The tool did not answer in time.'],
      ['NETWORK_ERROR', 'The tool could not be reached.'],
      ['CANCELLED', 'The tool call was stopped.'],
      ['HTTP_ERROR', 'The tool failed.'],
      [undefined, 'The tool failed.'],
    ];
    for (const [type, message] of cases) {
      const shown = view('TOOL_ERROR', 'toolError', { toolCallId: 'call_1', message: `http://10.0.0.1 answered 500: ${SECRETISH}`, ...(type ? { type } : {}) });
      assert.deepEqual(shown!.data.toolError, { toolCallId: 'call_1', message }, String(type));
    }
  });

  it('gives an ERROR a plain message (and its retry time), a FINALIZED its status only', () => {
    assert.deepEqual(view('ERROR', 'error', { message: `provider said ${SECRETISH}`, type: 'RATE_LIMITED', retryAt: CREATED, promptTokens: 3 })!.data.error,
      { message: 'Sorry, something went wrong.', retryAt: CREATED });
    assert.deepEqual(view('ERROR', 'error', { message: SECRETISH, type: 'INTERNAL' })!.data.error, { message: 'Sorry, something went wrong.' });
    assert.deepEqual(view('FINALIZED', 'finalized', { status: 'OBJECTIVE_STATUS_COMPLETED', output: SECRETISH, usage: { costCents: 1 } })!.data,
      { type: 'OBJECTIVE_EVENT_TYPE_FINALIZED', finalized: { status: 'OBJECTIVE_STATUS_COMPLETED' } });
    assert.deepEqual(view('CANCELLED', 'cancelled', { reason: SECRETISH })!.data, { type: 'OBJECTIVE_EVENT_TYPE_CANCELLED' });
  });

  it('sends nothing of memory reads, compactions, sub-objectives, sub-agents or an unknown kind', () => {
    for (const [kind, key] of [['MEMORY_READ', 'memoryRead'], ['CONTEXT_WINDOW_COMPACTED', 'contextWindowCompacted'], ['SUB_OBJECTIVE_CREATED', 'subObjectiveCreated'],
      ['SUB_AGENT_SPAWNED', 'subAgentSpawned'], ['SUB_AGENT_UPDATED', 'subAgentUpdated'], ['SOMETHING_NEW', 'somethingNew']]) {
      assert.equal(view(kind, key, { summary: SECRETISH }), undefined, kind);
    }
  });

  it('never carries the tenant, profile or objective metadata', () => {
    const text = JSON.stringify(view('USER_MESSAGE', 'userMessage', { content: 'hi' }));
    assert.doesNotMatch(text, /accountId|workspaceId|profileId|ctxwin_|INTERNAL-7f3a/);
  });
});

describe('the visitor stream (openEventStream with visitorEvent)', () => {
  /** Streams `batches` (one per read) through a fake service and context; the SSE text and the `after` of each read. */
  async function streamed(batches: ObjectiveEventView[][], after = 0) {
    const reads: number[] = [];
    const objectives = {
      eventsAfter: async (_ws: unknown, _id: string, from: number) => {
        reads.push(from);
        const events = batches.shift() ?? [];
        return { events, finalized: events.some((e) => e.data.type.endsWith('FINALIZED')) };
      },
      get: async () => ({ info: { status: 'OBJECTIVE_STATUS_RUNNING' } }),
    } as unknown as ObjectiveService;
    const socket = { setTimeout() {}, setNoDelay() {}, setKeepAlive() {} };
    const ctx = { req: { socket }, res: new PassThrough(), set() {}, status: 0, type: '', body: undefined as unknown } as unknown as Koa.Context;
    const settings = { pollMs: 1, heartbeatMs: 60_000, batch: 100, isDraining: () => false };
    await openEventStream(objectives, settings, ctx, { id: 'ws_1', accountId: 'acct_1' } as never, 'obj_1', after, { view: visitorEvent });
    let text = '';
    for await (const chunk of ctx.body as PassThrough) text += String(chunk);
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    return { text, ids, reads };
  }

  it('skips dropped kinds but counts them as read: ids stay sequences, the next read is after them, FINALIZED ends the stream', async () => {
    const { text, ids, reads } = await streamed([
      [event('USER_MESSAGE', 'userMessage', { content: 'hi' }, 1), event('MEMORY_READ', 'memoryRead', { content: SECRETISH }, 2), event('SUB_AGENT_SPAWNED', 'subAgentSpawned', { id: SECRETISH }, 3)],
      [event('CONTEXT_WINDOW_COMPACTED', 'contextWindowCompacted', { summary: SECRETISH }, 4)],
      [event('FINALIZED', 'finalized', { status: 'OBJECTIVE_STATUS_COMPLETED' }, 5)],
    ]);
    assert.deepEqual(ids, [1, 5]);
    assert.deepEqual(reads, [0, 3, 4], 'each read starts after the last event seen, dropped or not');
    assert.ok(!text.includes(SECRETISH));
  });
});
