// Memory in the agent loop (issue 25 items 2, 4 and 5) on a cluster-mode node
// (real NATS JetStream and Postgres), each end to end and as its two outside
// consumers see it: a NATS consumer of OBJECTIVE_EVENTS and a real webhook
// receiver verifying every delivery with the `standardwebhooks` package.
// A skill loaded with load_skill (MEMORY_READ right before the TOOL_RESULT),
// a tool found with search_tools then run (it reaches the tool server), and a
// compaction with a real summarization call through the fake OpenRouter (the
// context window id changing at CONTEXT_WINDOW_COMPACTED). The embedded-mode
// suites (objective-memory, tool-discovery, objective-compaction) cover the
// variants; this one proves the cluster's publishing path carries them.
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { startTestApi, type TestApi } from '../support/api';
import { created, createAgent, createVariation, MODEL_ID, workspaceFixture } from '../support/agents-world';
import { deleteStream, deleteWebhookIntakeDurables, TEST_NATS_URL, uniqueBusNames } from '../support/cluster-harness';
import { eventuallyValue } from '../support/eventually';
import { fakeAnswers, startFakeOpenRouter, type FakeOpenRouter } from '../support/fake-openrouter';
import { objectiveEventMessages } from '../support/objective-event-messages';
import { runObjective, type FinishedObjective } from '../support/objective-runs';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import type { WorkspaceFixture } from '../support/workspace-keys';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** A model reached through the fake OpenRouter, its catalog row given a small window for the compaction. */
const PROVIDER_MODEL = 'openai/gpt-4o-mini';
/** The threshold is 1,500 tokens at the default 0.75: two 800-token tool results pass it. */
const MAX_INPUT_TOKENS = 2000;
const RESULT_BYTES = 3200;

/** What a consumer of OBJECTIVE_EVENTS gets: the subject's last token (the event's kind) and the payload (the webhook envelope). */
interface PublishedEvent {
  subject: string;
  kind: string;
  body: any;
}

describe('memory in the agent loop (cluster mode, NATS consumer and webhook receiver)', function () {
  this.timeout(120_000);
  const busNames = uniqueBusNames();
  let api: TestApi;
  let ws: WorkspaceFixture;
  let receiver: WebhookReceiver;
  let tools: TestToolServer;
  let openRouter: FakeOpenRouter;
  let signingSecret: string;

  /** An agent posting its events to `<receiver>/<name>`, with one variation of `spec` (prompt added). */
  async function agentPostingTo(name: string, spec: Record<string, unknown>): Promise<{ agentId: string; variationId: string }> {
    const agent = await createAgent(api, ws.token, ws.workspaceId, { metadata: { name }, spec: { webhookEventsUrl: `${receiver.url}/${name}` } });
    const variation = await createVariation(api, ws.token, ws.workspaceId, agent.metadata.id, { spec: { prompt: 'You help.', ...spec } });
    return { agentId: agent.metadata.id, variationId: variation.metadata.id };
  }

  /** Every event of a finished objective as its NATS messages, in stream order (read until all are there). */
  async function published(run: FinishedObjective): Promise<PublishedEvent[]> {
    const messages = await objectiveEventMessages(TEST_NATS_URL, run.id, run.events.length, 15_000, (message) => ({
      subject: message.subject, kind: message.subject.split('.').at(-1)!, body: message.json<any>(),
    }));
    assert.equal(messages.length, run.events.length, `every event on OBJECTIVE_EVENTS: ${messages.map((message) => message.kind).join(', ')}`);
    return messages;
  }

  /** Every event of a finished objective as the receiver got it at `/<path>`, verified, in arrival order (waits until each arrived). */
  async function delivered(path: string, run: FinishedObjective): Promise<any[]> {
    const verifier = new Webhook(signingSecret.replace(/^wh_/, 'whsec_'));
    return eventuallyValue(async () => {
      const bodies = receiver.at(`/${path}`).map((webhook) => verifier.verify(webhook.body, webhook.headers) as any).filter((body) => body.data.objective.id === run.id);
      return bodies.length >= run.events.length ? bodies : undefined;
    }, `the ${run.events.length} deliveries of ${run.id}`, 15_000);
  }

  /** What the API, the stream and the receiver hold is one list of events: the same ids, in sequence order, each once. */
  function assertSameEvents(run: FinishedObjective, messages: PublishedEvent[], deliveries: any[]): void {
    const ids = run.events.map((event) => event.metadata.id);
    assert.deepEqual(messages.map((message) => message.body.data.objectiveEvent.metadata.id), ids, 'the stream holds every event once, in order');
    assert.deepEqual(deliveries.map((body) => body.data.objectiveEvent.metadata.id), ids, 'the receiver got every event once, in order');
    const kinds = run.events.map((event) => event.data.type.replace('OBJECTIVE_EVENT_TYPE_', '').toLowerCase());
    assert.deepEqual(messages.map((message) => message.kind), kinds, 'the subject names the kind');
    assert.deepEqual(messages.map((message) => message.body.type), kinds.map((kind) => `objective_event.${kind}`));
    assert.deepEqual(deliveries.map((body) => body.type), kinds.map((kind) => `objective_event.${kind}`));
    for (const [index, event] of run.events.entries()) {
      assert.deepEqual(messages[index].body.data.objectiveEvent.data, event.data, `the stream's event ${event.sequence} is the API's`);
      assert.deepEqual(deliveries[index].data.objectiveEvent.data, event.data, `the delivered event ${event.sequence} is the API's`);
    }
  }

  before(async () => {
    receiver = await startWebhookReceiver();
    tools = await startTestToolServer();
    openRouter = await startFakeOpenRouter();
    api = await startTestApi({ runtime: busNames, natsUrl: TEST_NATS_URL, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true', AGENTRT_MODEL_CALL_ATTEMPTS: '1' } });
    ws = await workspaceFixture(api);
    signingSecret = (await api.request('GET', '/v1/account', { token: ws.account.globalApiKey.token })).body.info.webhookEventsHmacSecret;
    assert.match(signingSecret, /^wh_/);
  });

  after(async () => {
    await api?.close();
    await Promise.all([receiver?.close(), tools?.close(), openRouter?.close()]);
    await deleteWebhookIntakeDurables(busNames.subjectPrefix).catch(() => undefined);
    await deleteStream(busNames.eventStream).catch(() => undefined);
  });

  it('loads a skill: MEMORY_READ right before the TOOL_RESULT, on the memory_read subject and delivered as objective_event.memory_read', async () => {
    const layer = await created(api, ws.token, '/v1/memory_layers', { metadata: { name: 'cluster-skills' }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' } });
    const entry = await created(api, ws.token, `/v1/memory_layers/${layer.metadata.id}/entries`, {
      spec: { key: 'refunds', title: 'Refunds', description: 'How to refund an order', content: 'refund within 30 days' },
    });
    const { agentId, variationId } = await agentPostingTo('skills', { modelConfig: { modelId: MODEL_ID } });
    await created(api, ws.token, `/v1/agent_variations/${variationId}/memory_layer_assignments`, { memoryLayerId: layer.metadata.id, position: 1 });

    const run = await runObjective(api, ws, { agentId, initialMessage: 'CALL load_skill {"key":"refunds"}\nSAY loaded' });
    assert.equal(run.objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(run.objective.info));
    const memoryRead = { key: 'refunds', memoryLayerId: layer.metadata.id, memoryEntryId: entry.metadata.id };
    const [read] = run.of('MEMORY_READ');
    assert.deepEqual(read.data.memoryRead, memoryRead);
    const next = run.events[run.events.indexOf(read) + 1];
    assert.equal(next.data.type, 'OBJECTIVE_EVENT_TYPE_TOOL_RESULT', 'the TOOL_RESULT comes right after the MEMORY_READ');
    assert.equal(next.data.toolResult.content, 'refund within 30 days');

    const messages = await published(run);
    const deliveries = await delivered('skills', run);
    assertSameEvents(run, messages, deliveries);
    const message = messages.find((candidate) => candidate.body.data.objectiveEvent.metadata.id === read.metadata.id)!;
    assert.equal(message.subject, `objective_events.${ws.account.accountId}.${ws.workspaceId}.${agentId}.${run.id}.memory_read`);
    assert.deepEqual(message.body.data.objectiveEvent.data, { type: 'OBJECTIVE_EVENT_TYPE_MEMORY_READ', memoryRead });
    const delivery = deliveries.find((body) => body.type === 'objective_event.memory_read');
    assert.deepEqual(delivery.data.objectiveEvent.data.memoryRead, memoryRead);
    assert.equal(delivery.data.agent.id, agentId);
  });

  it('finds a tool with search_tools and runs it: it reaches the tool server, and every consumer sees the search result list it', async () => {
    const catalog = [
      ['refund_invoice', 'Refunds a paid invoice to the card it was paid with'],
      ['send_invoice', 'Emails an invoice to its customer'],
      ['weather_forecast', 'Tells the weather forecast for a city'],
      ['book_meeting_room', 'Books a meeting room for a time slot'],
    ];
    const toolIds = new Map<string, string>();
    for (const [name, description] of catalog) {
      const tool = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tools`, {
        metadata: { name }, spec: { description, http: { url: `${tools.url}/echo?tool=${name}`, method: 'POST' } },
      });
      toolIds.set(name, tool.metadata.id);
    }
    const { agentId } = await agentPostingTo('discovery', { modelConfig: { modelId: MODEL_ID }, progressiveDiscovery: { maxTools: 2 } });
    const since = tools.requests.length;

    const run = await runObjective(api, ws, { agentId, initialMessage: 'CALL search_tools {"query":"refund an invoice"}\nSLEEP 0\nCALL refund_invoice {"invoiceId":"inv-7"}\nSAY refunded' });
    assert.equal(run.objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(run.objective.info));
    const reached = tools.requests.slice(since).filter((request) => new URL(request.url, tools.url).searchParams.get('tool') === 'refund_invoice');
    assert.equal(reached.length, 1, 'the found tool reached the tool server once');
    assert.deepEqual(JSON.parse(reached[0].body), { invoiceId: 'inv-7' });
    const [search, refund] = run.of('TOOL_RESULT');
    const listed = (search.data.toolResult.content as string).split('\n').filter((line) => line.startsWith('- '));
    assert.ok(listed.length <= 2, `at most maxTools: ${search.data.toolResult.content}`);
    assert.equal(listed[0], '- refund_invoice: Refunds a paid invoice to the card it was paid with', search.data.toolResult.content);
    assert.equal(JSON.parse(refund.data.toolResult.content).url, '/echo?tool=refund_invoice');
    const calls = run.of('ASSISTANT_MESSAGE').flatMap((event) => event.data.assistantMessage.toolCalls ?? []);
    assert.deepEqual(calls[0].tool, { serviceProvidedTool: { name: 'search_tools' } });
    assert.equal(calls[1].tool.tool.id, toolIds.get('refund_invoice'), 'the call goes to the workspace tool found');

    const messages = await published(run);
    const deliveries = await delivered('discovery', run);
    assertSameEvents(run, messages, deliveries);
    const searchMessage = messages.find((message) => message.body.data.objectiveEvent.metadata.id === search.metadata.id)!;
    assert.equal(searchMessage.kind, 'tool_result');
    assert.match(searchMessage.body.data.objectiveEvent.data.toolResult.content, /^- refund_invoice: /m);
    const searchDelivery = deliveries.find((body) => body.data.objectiveEvent.metadata.id === search.metadata.id);
    assert.equal(searchDelivery.type, 'objective_event.tool_result');
    assert.match(searchDelivery.data.objectiveEvent.data.toolResult.content, /^- refund_invoice: /m);
  });

  it('compacts with a real summarization call: CONTEXT_WINDOW_COMPACTED opens a new context window, on the stream and in the deliveries too', async () => {
    await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/ai_provider_keys`, { metadata: { name: 'openrouter' }, spec: { apiKey: 'sk-or-v1-test', openrouter: { baseUrl: openRouter.baseUrl } } });
    // No API sets a model's window: the workspace's catalog row gets a small one.
    await api.dataSource.query('UPDATE models SET max_input_tokens = $1 WHERE workspace_id = $2 AND name = $3', [MAX_INPUT_TOKENS, ws.workspaceId, PROVIDER_MODEL]);
    const { agentId, variationId } = await agentPostingTo('compaction', { modelConfig: { modelId: PROVIDER_MODEL }, compactionConfig: { summarization: { instructions: 'Keep the task.' } } });
    const tool = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tools`, {
      metadata: { name: 'read_page' }, spec: { description: 'Returns a page', http: { url: `${tools.url}/sized?bytes=${RESULT_BYTES}`, method: 'POST' } },
    });
    await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/variations/${variationId}/assignments`, { toolId: tool.metadata.id });
    const usage = (promptTokens: number, completionTokens = 5) => ({ prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens });
    openRouter.answer(
      fakeAnswers.completion({ toolCalls: [{ id: 'c1', name: 'read_page', arguments: '{}' }], usage: usage(100) }),
      fakeAnswers.completion({ toolCalls: [{ id: 'c2', name: 'read_page', arguments: '{}' }], usage: usage(900) }),
      fakeAnswers.completion({ content: 'SUMMARY: page one was read.', usage: usage(950, 20) }),
      fakeAnswers.completion({ content: 'done', usage: usage(700) }),
    );

    const run = await runObjective(api, ws, { agentId, initialMessage: 'Read the pages.' }, 30_000);
    assert.equal(run.objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(run.objective.info));
    assert.equal(openRouter.requests.length, 4, 'two turns, the summarization, the last turn');
    assert.equal((openRouter.requests[2].body as any).messages.at(-1).content, 'Keep the task.', 'the third call is the summarization');
    const [compacted] = run.of('CONTEXT_WINDOW_COMPACTED');
    const fields = compacted.data.contextWindowCompacted;
    assert.deepEqual(fields.strategies, ['summarization']);
    assert.equal(fields.summary, 'SUMMARY: page one was read.');
    assert.equal(fields.newContextWindow.objectiveId, run.id);
    assert.equal(fields.newContextWindow.sequence, 2);
    assert.equal(run.events.at(-2).data.type, 'OBJECTIVE_EVENT_TYPE_ASSISTANT_MESSAGE', 'a turn follows the compaction');
    const windows = run.events.map((event) => event.contextWindowId);
    const at = run.events.indexOf(compacted);
    assert.ok(windows.every((window) => /^ctxwin_[0-9A-Z]{26}$/u.test(window)), JSON.stringify(windows));
    assert.equal(new Set(windows.slice(0, at)).size, 1, 'one window before the compaction');
    assert.equal(new Set(windows.slice(at)).size, 1, 'one window from the compaction on');
    assert.notEqual(windows[0], windows[at], 'the compaction opens a new window');

    const messages = await published(run);
    const deliveries = await delivered('compaction', run);
    assertSameEvents(run, messages, deliveries);
    assert.deepEqual(messages.map((message) => message.body.data.objectiveEvent.contextWindowId), windows, 'the stream carries each event\'s window');
    assert.deepEqual(deliveries.map((body) => body.data.objectiveEvent.contextWindowId), windows, 'so do the deliveries');
    const message = messages.find((candidate) => candidate.kind === 'context_window_compacted')!;
    assert.deepEqual(message.body.data.objectiveEvent.data.contextWindowCompacted.newContextWindow, fields.newContextWindow);
    const delivery = deliveries.find((body) => body.type === 'objective_event.context_window_compacted');
    assert.equal(delivery.data.objectiveEvent.metadata.id, compacted.metadata.id);
    assert.deepEqual(delivery.data.objectiveEvent.data.contextWindowCompacted.newContextWindow, fields.newContextWindow);
    assert.equal(delivery.data.objectiveEvent.contextWindowId, windows[at]);
  });
});
