// builtin/scripted (api-decisions.md "Models"): every directive, how turns
// advance since the latest user message, the fallbacks, usage, and SLEEP
// under the signal and the deadline. No timing is asserted.
import assert from 'node:assert/strict';
import { ModelCallError, ModelCallErrorType } from '../../../src/models/model-call-error';
import { ScriptedChatModel } from '../../../src/models/scripted-model';
import { scriptTurns } from '../../../src/models/scripted-script';
import type { ChatMessage, ChatRequest, ChatResponse, ChatToolDefinition } from '../../../src/ports/model-provider';

const model = new ScriptedChatModel();

function request(messages: ChatMessage[], tools: ChatToolDefinition[] = []): ChatRequest {
  return { model: 'builtin/scripted', messages, tools };
}

/** The conversation after the model's `response` and a result for each of its tool calls. */
function afterTurn(messages: ChatMessage[], response: ChatResponse, result = (name: string) => `result of ${name}`): ChatMessage[] {
  return [
    ...messages,
    { role: 'assistant', content: response.content, toolCalls: response.toolCalls },
    ...response.toolCalls.map((call): ChatMessage => ({ role: 'tool', toolCallId: call.id, content: result(call.name) })),
  ];
}

async function failureOf(call: Promise<unknown>): Promise<ModelCallError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof ModelCallError, String(error));
    return error;
  }
  return assert.fail('expected a ModelCallError');
}

const emitOutputTool = (parameters: Record<string, unknown>): ChatToolDefinition => ({ name: 'emit_output', description: 'emit', parameters });

describe('builtin/scripted', () => {
  describe('SAY', () => {
    it('answers the text as a final answer', async () => {
      const response = await model.complete(request([{ role: 'user', content: 'SAY Hello, world' }]));
      assert.equal(response.content, 'Hello, world');
      assert.deepEqual(response.toolCalls, []);
      assert.equal(response.finishReason, 'stop');
      assert.equal(response.model, 'builtin/scripted');
    });
  });

  describe('CALL', () => {
    it('calls a tool with the JSON arguments as written', async () => {
      const response = await model.complete(request([{ role: 'user', content: 'CALL weather {"city": "Oslo"}' }]));
      assert.equal(response.content, null);
      assert.equal(response.finishReason, 'tool_calls');
      assert.deepEqual(response.toolCalls, [{ id: 'call_1', name: 'weather', arguments: '{"city": "Oslo"}' }]);
    });

    it('makes consecutive CALL lines parallel calls of one turn, with distinct ids', async () => {
      const response = await model.complete(request([{ role: 'user', content: 'CALL a {"n":1}\nCALL b\nCALL a {"n":2}' }]));
      assert.deepEqual(response.toolCalls, [
        { id: 'call_1', name: 'a', arguments: '{"n":1}' },
        { id: 'call_2', name: 'b', arguments: '{}' },
        { id: 'call_3', name: 'a', arguments: '{"n":2}' },
      ]);
    });

    it('passes arguments that are not JSON through, as a real model might send them', async () => {
      const response = await model.complete(request([{ role: 'user', content: 'CALL lookup {not json' }]));
      assert.equal(response.toolCalls[0].arguments, '{not json');
    });

    it('gives the same ids when the same request is run again (a model call re-run after a crash)', async () => {
      const messages: ChatMessage[] = [{ role: 'user', content: 'CALL a\nCALL b' }];
      assert.deepEqual(await model.complete(request(messages)), await model.complete(request(messages)));
    });

    it('numbers ids after the calls already in the conversation', async () => {
      const messages: ChatMessage[] = [{ role: 'user', content: 'CALL a\nSAY between\nCALL b' }];
      const first = await model.complete(request(messages));
      const conversation = afterTurn([{ role: 'user', content: 'CALL x' }], await model.complete(request([{ role: 'user', content: 'CALL x' }])));
      const later = await model.complete(request([...conversation, { role: 'user', content: 'CALL b' }]));
      assert.equal(first.toolCalls[0].id, 'call_1');
      assert.equal(later.toolCalls[0].id, 'call_2');
    });
  });

  describe('OUTPUT', () => {
    it('calls emit_output with the JSON', async () => {
      const tools = [emitOutputTool({ type: 'object', properties: { answer: { type: 'number' } } })];
      const response = await model.complete(request([{ role: 'user', content: 'OUTPUT {"answer": 42}' }], tools));
      assert.deepEqual(response.toolCalls, [{ id: 'call_1', name: 'emit_output', arguments: '{"answer": 42}' }]);
      assert.equal(response.finishReason, 'tool_calls');
    });

    it('wraps the value when emit_output offers a non-object definition wrapped as {output}', async () => {
      const wrapper = { type: 'object', properties: { output: { type: 'number' } }, required: ['output'], additionalProperties: false };
      const plain = await model.complete(request([{ role: 'user', content: 'OUTPUT 42' }], [emitOutputTool(wrapper)]));
      assert.equal(plain.toolCalls[0].arguments, '{"output":42}');
      const wrapped = await model.complete(request([{ role: 'user', content: 'OUTPUT {"output": 42}' }], [emitOutputTool(wrapper)]));
      assert.equal(wrapped.toolCalls[0].arguments, '{"output": 42}');
    });

    it('is its own turn, apart from the CALL lines before it', async () => {
      const messages: ChatMessage[] = [{ role: 'user', content: 'CALL a\nOUTPUT {"done": true}' }];
      const first = await model.complete(request(messages));
      assert.deepEqual(first.toolCalls.map((call) => call.name), ['a']);
      const second = await model.complete(request(afterTurn(messages, first)));
      assert.deepEqual(second.toolCalls.map((call) => call.name), ['emit_output']);
    });
  });

  describe('SLEEP', () => {
    it('waits, then goes on with the next instruction in the same turn', async () => {
      const response = await model.complete(request([{ role: 'user', content: 'SLEEP 20\nSAY awake' }]));
      assert.equal(response.content, 'awake');
    });

    it('ends with CANCELLED when the signal aborts the wait', async () => {
      const controller = new AbortController();
      const call = model.complete(request([{ role: 'user', content: 'SLEEP 60000\nSAY never' }]), { signal: controller.signal });
      controller.abort();
      const error = await failureOf(call);
      assert.equal(error.type, ModelCallErrorType.CANCELLED);
    });

    it('ends with CANCELLED at once when the signal is already aborted', async () => {
      const error = await failureOf(model.complete(request([{ role: 'user', content: 'SAY hi' }]), { signal: AbortSignal.abort() }));
      assert.equal(error.type, ModelCallErrorType.CANCELLED);
    });

    it('ends with TIMED_OUT when the sleep would pass the deadline', async () => {
      const error = await failureOf(model.complete(request([{ role: 'user', content: 'SLEEP 60000\nSAY never' }]), { deadline: new Date(Date.now() + 20) }));
      assert.equal(error.type, ModelCallErrorType.TIMED_OUT);
      assert.equal(error.code, 'DEADLINE_EXCEEDED');
    });

    it('refuses a duration that is not a whole number of milliseconds with SCRIPT_INVALID', async () => {
      const error = await failureOf(model.complete(request([{ role: 'user', content: 'SAY one\nSLEEP soon' }, { role: 'assistant', content: 'one' }])));
      // The SAY turn is already performed; the next turn reaches the bad line.
      assert.equal(error.type, ModelCallErrorType.SCRIPT_INVALID);
      assert.equal(error.message, 'builtin/scripted script line 2: SLEEP needs a whole number of milliseconds: SLEEP <ms>');
    });
  });

  describe('FAIL', () => {
    it('fails the model call with the message', async () => {
      const error = await failureOf(model.complete(request([{ role: 'user', content: 'FAIL the provider exploded' }])));
      assert.equal(error.type, ModelCallErrorType.SCRIPT_FAILED);
      assert.equal(error.message, 'the provider exploded');
      assert.equal(error.retryable, false);
    });

    it('fails on the turn that reaches it', async () => {
      const messages: ChatMessage[] = [{ role: 'user', content: 'CALL a\nFAIL after the call' }];
      const first = await model.complete(request(messages));
      assert.equal(first.toolCalls.length, 1);
      const error = await failureOf(model.complete(request(afterTurn(messages, first))));
      assert.equal(error.message, 'after the call');
    });
  });

  describe('turns', () => {
    it('performs the next turn not yet performed since the latest user message', async () => {
      const messages: ChatMessage[] = [{ role: 'user', content: 'CALL a\nCALL b\nCALL c {"x":1}\nSAY done' }];
      const first = await model.complete(request(messages));
      assert.deepEqual(first.toolCalls.map((call) => call.name), ['a', 'b', 'c']);
      const second = await model.complete(request(afterTurn(messages, first)));
      assert.equal(second.content, 'done');
    });

    it('starts a follow-up user message from its own first line', async () => {
      const messages: ChatMessage[] = [{ role: 'user', content: 'SAY first' }, { role: 'assistant', content: 'first' }, { role: 'user', content: 'SAY second\nSAY third' }];
      const response = await model.complete(request(messages));
      assert.equal(response.content, 'second');
    });

    it('reads only upper-case directives followed by a space; other lines are not instructions', async () => {
      assert.deepEqual(scriptTurns('say hi\nSAYING hi\n\nCALLx\nSAY hi'), [{ sleepMs: 0, action: { kind: 'SAY', text: 'hi' } }]);
    });

    it('refuses CALL without a tool name with SCRIPT_INVALID', async () => {
      const error = await failureOf(model.complete(request([{ role: 'user', content: 'CALL' }])));
      assert.equal(error.type, ModelCallErrorType.SCRIPT_INVALID);
    });

    it('answers the same request the same way every time', async () => {
      const messages: ChatMessage[] = [{ role: 'user', content: 'CALL a {"q":"x"}\nSAY ok' }];
      assert.deepEqual(await model.complete(request(messages)), await model.complete(request(messages)));
    });
  });

  describe('fallbacks', () => {
    it('answers with the latest tool result when the script has no instruction left', async () => {
      const messages: ChatMessage[] = [{ role: 'user', content: 'CALL a\nCALL b' }];
      const first = await model.complete(request(messages));
      const second = await model.complete(request(afterTurn(messages, first)));
      assert.equal(second.content, 'result of b');
      assert.equal(second.finishReason, 'stop');
    });

    it('echoes the user message when it holds no instruction', async () => {
      const response = await model.complete(request([{ role: 'system', content: 'be nice' }, { role: 'user', content: 'What is the weather like?' }]));
      assert.equal(response.content, 'What is the weather like?');
      assert.deepEqual(response.toolCalls, []);
    });

    it('echoes the user message once its instructions are done and no tool ran since it', async () => {
      const messages: ChatMessage[] = [
        { role: 'user', content: 'CALL a' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'a', arguments: '{}' }] },
        { role: 'tool', toolCallId: 'call_1', content: 'old result' },
        { role: 'assistant', content: 'old result' },
        { role: 'user', content: 'thanks' },
      ];
      const response = await model.complete(request(messages));
      assert.equal(response.content, 'thanks');
    });

    it('answers after trailing SLEEP lines with the fallback', async () => {
      const response = await model.complete(request([{ role: 'user', content: 'SLEEP 5' }]));
      assert.equal(response.content, 'SLEEP 5');
    });
  });

  describe('usage', () => {
    it('counts one token per 4 characters of prompt and answer, at no cost', async () => {
      // Prompt: "SAY 12345" (9) + "be brief" (8) = 17 characters, 5 tokens; answer "12345": 2 tokens.
      const response = await model.complete(request([{ role: 'system', content: 'be brief' }, { role: 'user', content: 'SAY 12345' }]));
      assert.deepEqual(response.usage, { promptTokens: 5, completionTokens: 2, totalTokens: 7, costCents: 0, costSource: 'catalog' });
    });

    it('counts tool call names and arguments on both sides', async () => {
      const response = await model.complete(request([{ role: 'user', content: 'CALL abcd {"k":1}' }]));
      // Prompt 17 characters: 5 tokens; answer "abcd" + '{"k":1}' = 11 characters: 3 tokens.
      assert.equal(response.usage?.promptTokens, 5);
      assert.equal(response.usage?.completionTokens, 3);
    });
  });
});
