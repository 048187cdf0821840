// Tool discovery inside objectives (issue 25 item 5), end to end through the
// API with the embedded runtime (real Postgres and NATS), the real HTTP tool
// server, builtin/scripted and a fake OpenRouter: among 30 workspace tools a
// variation with discovery settings offers `search_tools`, whose result lists
// at most `maxTools` tools by name and description, the best match first; a
// tool found is offered from the next model call (the provider's request
// shows it) and runs as an assigned tool does (reaching the tool server),
// with its own approval rule; `rerankThreshold` drops low scores; a found
// tool named like an assigned one gets a suffix and reaches its own tool;
// hints are searched with the query; a found tool is the very ObjectiveTool
// an assignment of it builds; bad input never throws; without discovery
// settings `search_tools` is an unknown tool.
import assert from 'node:assert/strict';
import { eventually } from '../support/cluster-harness';
import { startTestApi, type TestApi } from '../support/api';
import { createAgent, created, createVariation, MODEL_ID } from '../support/agents-world';
import { fakeAnswers, startFakeOpenRouter, type FakeOpenRouter } from '../support/fake-openrouter';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';
import { TERMINAL_OBJECTIVE_STATUSES } from '../support/objective-status';
import { objectiveEvents, runObjective } from '../support/objective-runs';
import { createAgentsStore } from '../../persistence/repositories/agents.store';
import { ToolDiscoveryService } from '../../src/search/tool-discovery.service';
import type { ServiceToolContext } from '../../src/ports/service-tools';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** A model reached through the fake OpenRouter: plain function calling. */
const PROVIDER_MODEL = 'openai/gpt-4o-mini';

/** The workspace's 30 tools: [name, description, requiresApproval]; two are named `lookup`. */
const CATALOG: ReadonlyArray<readonly [string, string, boolean?]> = [
  ['refund_invoice', 'Refunds a paid invoice to the card it was paid with'],
  ['send_invoice', 'Emails an invoice to its customer'],
  ['void_invoice', 'Voids an unpaid invoice so it can no longer be paid'],
  ['issue_store_credit', 'Gives store credit in place of a refund'],
  ['delete_customer', 'Deletes a customer and everything stored about them', true],
  ['create_customer', 'Creates a customer from a name and an email address'],
  ['update_customer_email', 'Changes the email address of a customer'],
  ['find_customer', 'Finds a customer by email address'],
  ['merge_customers', 'Merges two duplicate customer records into one'],
  ['list_orders', 'Lists the orders a customer placed'],
  ['cancel_order', 'Cancels an order before it leaves the warehouse'],
  ['lookup', 'Tracks a parcel by its tracking number'],
  ['lookup', 'Looks up the balance of a ledger account'],
  ['weather_forecast', 'Tells the weather forecast for a city'],
  ['book_meeting_room', 'Books a meeting room for a time slot'],
  ['translate_text', 'Translates text into another language'],
  ['summarize_document', 'Summarizes a long document in a few sentences'],
  ['convert_currency', 'Converts an amount between two currencies'],
  ['create_ticket', 'Opens a support ticket for a problem'],
  ['close_ticket', 'Closes a support ticket that is solved'],
  ['schedule_callback', 'Schedules a phone callback at a given hour'],
  ['check_stock', 'Checks how many units of a product are in the warehouse'],
  ['reserve_table', 'Reserves a restaurant table for dinner'],
  ['rotate_api_key', 'Rotates an API key and revokes the old one'],
  ['export_report', 'Exports a sales report as a spreadsheet'],
  ['post_announcement', 'Posts an announcement to the team channel'],
  ['reset_password', 'Sends a password reset link'],
  ['upload_file', 'Uploads a file to shared storage'],
  ['geocode_address', 'Turns a street address into map coordinates'],
  ['calculate_shipping', 'Calculates the shipping cost of a package to a country'],
];

describe('tool discovery inside objectives (search_tools)', function () {
  this.timeout(60_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let tools: TestToolServer;
  let openRouter: FakeOpenRouter;
  /** The workspace's tools by marker (the name, `lookup-ledger` for the assigned `lookup`). */
  const toolIds = new Map<string, string>();

  const base = () => `/v1/workspaces/${ws.workspaceId}`;
  const get = async (path: string) => {
    const response = await api.request('GET', path, { token: ws.token });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as any;
  };
  /** An agent whose one variation has `spec` (plus prompt and model) and these assignments. */
  const agentWith = async (spec: Record<string, unknown>, assignments: Array<Record<string, unknown>> = [], modelId = MODEL_ID) => {
    const agentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id as string;
    const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId }, ...spec } });
    for (const assignment of assignments) await created(api, ws.token, `${base()}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, assignment);
    return agentId;
  };
  const create = async (agentId: string, initialMessage: string) => {
    const response = await api.request('POST', `${base()}/objectives`, { token: ws.token, body: { agentId, initialMessage } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.metadata.id as string;
  };
  const waitFor = async (id: string, done: (objective: any) => boolean, what: string) => {
    let objective: any;
    await eventually(async () => {
      objective = await get(`${base()}/objectives/${id}`);
      return done(objective);
    }, what, 20_000);
    return objective;
  };
  const eventsOf = (id: string) => objectiveEvents(api, ws, id);
  /** Runs an objective to a terminal status; returns it with its events. */
  const run = (agentId: string, initialMessage: string) => runObjective(api, ws, { agentId, initialMessage });
  /** The tools a `search_tools` result lists, as [name, description]. */
  const listed = (content: string) => content.split('\n').filter((line) => line.startsWith('- ')).map((line) => {
    const [name, ...description] = line.slice(2).split(': ');
    return [name, description.join(': ')];
  });
  const searchResults = (of: (type: string) => any[]) => of('TOOL_RESULT').map((event) => event.data.toolResult.content as string).filter((content) => /^Found |^No tools match/.test(content));
  /** Requests the tool server got for a tool (by its `?tool=` marker), since `since`. */
  const reached = (marker: string, since = 0) => tools.requests.slice(since).filter((request) => new URL(request.url, tools.url).searchParams.get('tool') === marker);
  const offeredNames = (body: any) => (body.tools as any[] ?? []).map((tool) => tool.function.name as string);

  before(async () => {
    api = await startTestApi({ runtime: true, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
    ws = await workspaceFixture(api);
    tools = await startTestToolServer();
    openRouter = await startFakeOpenRouter();
    await created(api, ws.token, `${base()}/ai_provider_keys`, { metadata: { name: 'openrouter' }, spec: { apiKey: 'sk-test-discovery', openrouter: { baseUrl: openRouter.baseUrl } } });
    for (const [name, description, requiresApproval] of CATALOG) {
      const marker = name === 'lookup' && description.includes('ledger') ? 'lookup-ledger' : name === 'lookup' ? 'lookup-parcel' : name;
      const tool = await created(api, ws.token, `${base()}/tools`, {
        metadata: { name },
        spec: { description, requiresApproval: requiresApproval ?? false, http: { url: `${tools.url}/echo?tool=${marker}`, method: 'POST' } },
      });
      toolIds.set(marker, tool.metadata.id);
    }
    assert.equal(toolIds.size, 30);
  });

  beforeEach(() => openRouter.reset());

  after(async () => {
    await api?.close();
    await tools?.close();
    await openRouter?.close();
  });

  it('offers search_tools with progressiveDiscovery, lists the best match first within maxTools, and runs the found tool on the next turn', async () => {
    const agentId = await agentWith({ progressiveDiscovery: { maxTools: 3 } });
    const since = tools.requests.length;
    const { objective, of } = await run(agentId, 'CALL search_tools {"query":"refund an invoice"}\nSLEEP 0\nCALL refund_invoice {"invoiceId":"inv-7"}\nSAY refunded');
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));

    const [result] = searchResults(of);
    const found = listed(result);
    assert.equal(found.length, 3, `at most maxTools, and more than 3 tools match: ${result}`);
    assert.deepEqual(found[0], ['refund_invoice', 'Refunds a paid invoice to the card it was paid with']);
    assert.ok(found.some(([name]) => name === 'send_invoice' || name === 'void_invoice'), result);

    const calls = of('ASSISTANT_MESSAGE').flatMap((event) => event.data.assistantMessage.toolCalls);
    assert.deepEqual(calls[0].tool, { serviceProvidedTool: { name: 'search_tools' } });
    assert.equal(calls[1].tool.tool.id, toolIds.get('refund_invoice'), 'the found tool is the workspace tool');
    const [request] = reached('refund_invoice', since);
    assert.deepEqual(JSON.parse(request.body), { invoiceId: 'inv-7' });
    const toolResults = of('TOOL_RESULT');
    assert.equal(JSON.parse(toolResults[1].data.toolResult.content).url, '/echo?tool=refund_invoice');
    assert.equal(objective.info.toolCallCount, 1, 'search_tools counts against nothing; the found tool counts');
    assert.equal(of('TOOL_ERROR').length, 0);
  });

  it('offers a found tool to the model from its next call: the provider requests show it (plain function calling)', async () => {
    const ranked = await api.services.search.discoverTools(ws.workspaceId, { query: 'refund an invoice', maxTools: 5 });
    const agentId = await agentWith({ progressiveDiscovery: { maxTools: 5 } }, [], PROVIDER_MODEL);
    openRouter.answer(
      fakeAnswers.completion({ toolCalls: [{ id: 'call_search', name: 'search_tools', arguments: '{"query":"refund an invoice"}' }] }),
      fakeAnswers.completion({ toolCalls: [{ id: 'call_refund', name: 'refund_invoice', arguments: '{"invoiceId":"inv-8"}' }] }),
      fakeAnswers.completion({ content: 'refunded' }),
    );
    const since = tools.requests.length;
    const { objective } = await run(agentId, 'Refund invoice inv-8');
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    assert.equal(objective.info.lastMessage, 'refunded');

    const [first, second, third] = openRouter.requests.map((request) => request.body);
    assert.deepEqual(offeredNames(first), ['search_tools'], 'the first call offers search_tools and nothing found yet');
    assert.ok(offeredNames(second).includes('refund_invoice'), `offered from the next call: ${offeredNames(second)}`);
    const offered = (second.tools as any[]).find((tool) => tool.function.name === 'refund_invoice');
    assert.equal(offered.function.description, 'Refunds a paid invoice to the card it was paid with');
    assert.deepEqual(offeredNames(second), [...ranked.map((hit) => hit.name), 'search_tools'], 'the tools found (best first), then the service tool');
    assert.deepEqual(offeredNames(third), offeredNames(second), 'found tools stay offered');
    const toolMessage = (second.messages as any[]).find((message) => message.role === 'tool' && message.tool_call_id === 'call_search');
    assert.match(toolMessage.content, new RegExp(`^Found ${ranked.length} tools; you can call them from your next turn:\n- refund_invoice: Refunds a paid invoice`));
    assert.equal(reached('refund_invoice', since).length, 1);
    assert.deepEqual(JSON.parse(reached('refund_invoice', since)[0].body), { invoiceId: 'inv-8' });
  });

  it('holds a found tool that requires approval until it is approved, then runs it', async () => {
    const agentId = await agentWith({ progressiveDiscovery: {} });
    const since = tools.requests.length;
    const id = await create(agentId, 'CALL search_tools {"query":"delete a customer"}\nSLEEP 0\nCALL delete_customer {"customerId":"c-1"}\nSAY deleted');
    const waiting = await waitFor(id, (objective) => objective.info.status === 'OBJECTIVE_STATUS_AWAITING_APPROVAL', 'awaiting approval');
    const [toolCallId] = waiting.info.pendingToolCallIds;
    assert.ok(toolCallId);
    assert.equal(reached('delete_customer', since).length, 0, 'nothing is sent before the approval');
    const { of: before } = await eventsOf(id);
    assert.equal(listed(searchResults(before)[0])[0][0], 'delete_customer');
    assert.equal(before('TOOL_APPROVAL_REQUESTED')[0].data.toolApprovalRequested.toolCallId, toolCallId);

    const approved = await api.request('PUT', `${base()}/objectives/${id}/tool_calls/${toolCallId}/approve`, { token: ws.token, body: {} });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    const done = await waitFor(id, (objective) => TERMINAL_OBJECTIVE_STATUSES.includes(objective.info.status), 'objective finished');
    assert.equal(done.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(done.info));
    const [request] = reached('delete_customer', since);
    assert.deepEqual(JSON.parse(request.body), { customerId: 'c-1' });
    assert.equal(request.headers['idempotency-key'], toolCallId);
  });

  it('drops results scoring below rerankThreshold', async () => {
    const ranked = await api.services.search.discoverTools(ws.workspaceId, { query: 'refund an invoice' });
    assert.ok(ranked.length >= 3, JSON.stringify(ranked));
    assert.equal(ranked[0].id, toolIds.get('refund_invoice'));
    assert.ok(ranked[0].score > ranked[1].score, JSON.stringify(ranked));
    const threshold = (ranked[0].score + ranked[1].score) / 2;
    const script = 'CALL search_tools {"query":"refund an invoice"}\nSAY done';

    const open = await run(await agentWith({ progressiveDiscovery: { rerankThreshold: 0 } }), script);
    assert.deepEqual(listed(searchResults(open.of)[0]).map(([name]) => name), ranked.map((hit) => hit.name), 'without a threshold every match is listed');
    const strict = await run(await agentWith({ progressiveDiscovery: { rerankThreshold: threshold } }), script);
    assert.deepEqual(listed(searchResults(strict.of)[0]).map(([name]) => name), ['refund_invoice'], `threshold ${threshold}`);
    const none = await run(await agentWith({ progressiveDiscovery: { rerankThreshold: 1 } }), script);
    assert.deepEqual(searchResults(none.of), ['No tools match. Try other words.']);
  });

  it('names a found tool that collides with an assigned one with a suffix, each reaching its own tool, and lists it under that name when found again', async () => {
    const agentId = await agentWith({ progressiveDiscovery: { maxTools: 2 } }, [{ toolId: toolIds.get('lookup-ledger') }]);
    const since = tools.requests.length;
    const { objective, of } = await run(agentId, [
      'CALL search_tools {"query":"track a parcel"}',
      'SLEEP 0',
      'CALL search_tools {"query":"parcel tracking number"}',
      'SLEEP 0',
      'CALL lookup_2 {"tracking":"1Z999"}',
      'CALL lookup {"account":"a-1"}',
      'SAY both',
    ].join('\n'));
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    const [first, again] = searchResults(of).map(listed);
    assert.deepEqual(first[0], ['lookup_2', 'Tracks a parcel by its tracking number']);
    assert.deepEqual(again[0], ['lookup_2', 'Tracks a parcel by its tracking number'], 'found again: the same name, not lookup_3');
    assert.deepEqual(reached('lookup-parcel', since).map((request) => JSON.parse(request.body)), [{ tracking: '1Z999' }]);
    assert.deepEqual(reached('lookup-ledger', since).map((request) => JSON.parse(request.body)), [{ account: 'a-1' }]);
    assert.equal(of('TOOL_ERROR').length, 0);
  });

  it('lists an assigned tool that a search finds under its assigned name, with its assignment approval rule', async () => {
    // The assignment does not require approval although the tool does: the assignment wins, as without discovery.
    const agentId = await agentWith({ progressiveDiscovery: { maxTools: 1 } }, [{ toolId: toolIds.get('delete_customer'), requiresApproval: false }]);
    const since = tools.requests.length;
    const { objective, of } = await run(agentId, 'CALL search_tools {"query":"delete a customer"}\nSLEEP 0\nCALL delete_customer {"customerId":"c-2"}\nSAY deleted');
    assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
    assert.deepEqual(listed(searchResults(of)[0]).map(([name]) => name), ['delete_customer']);
    assert.equal(of('TOOL_APPROVAL_REQUESTED').length, 0);
    assert.equal(reached('delete_customer', since).length, 1);
  });

  it('searches the hints together with the query', async () => {
    const script = 'CALL search_tools {"query":"shipping cost"}\nSAY done';
    const plain = await run(await agentWith({ progressiveDiscovery: {} }), script);
    assert.deepEqual(listed(searchResults(plain.of)[0]).map(([name]) => name), ['calculate_shipping']);
    const hinted = await run(await agentWith({ progressiveDiscovery: { hints: ['weather forecasts'] } }), script);
    assert.deepEqual(listed(searchResults(hinted.of)[0]).map(([name]) => name).sort(), ['calculate_shipping', 'weather_forecast']);
  });

  it('offers search_tools with toolSelection.autoDiscovery (its maxTools) or allowDiscovery, and answers a query without words with no tools', async () => {
    const auto = await run(await agentWith({ toolSelection: { autoDiscovery: { maxTools: 2 } } }), 'CALL search_tools {"query":"customer"}\nSAY done');
    assert.equal(listed(searchResults(auto.of)[0]).length, 2);
    const allowed = await run(await agentWith({ toolSelection: { assignedTools: { allowDiscovery: true } } }), 'CALL search_tools {"query":"customer"}\nSAY done');
    const found = listed(searchResults(allowed.of)[0]);
    assert.ok(found.length > 2 && found.length <= 10, `the default maxTools is 10: ${found.length}`);
    const empty = await run(await agentWith({ progressiveDiscovery: { hints: ['invoice'] } }), 'CALL search_tools {"query":" ?! "}\nCALL search_tools {}\nSAY done');
    assert.deepEqual(searchResults(empty.of), ['No tools match. Try other words.']);
    assert.match(empty.of('TOOL_ERROR')[0].data.toolError.message, /^invalid arguments for search_tools: query: is required and must be a string$/);
    assert.equal(empty.objective.info.status, 'OBJECTIVE_STATUS_COMPLETED');
  });

  it('builds a found tool exactly as the same tool assigned to a variation, and never throws for what the model or the variation wrote', async () => {
    const discovery = new ToolDiscoveryService(api.services.search, createAgentsStore(api.dataSource).tools);
    const context = (settings: ServiceToolContext['discovery']): ServiceToolContext => ({
      accountId: ws.account.accountId, workspaceId: ws.workspaceId, objectiveId: 'objective_x', memory: null, discovery: settings,
    });
    const settings = { hints: [], maxTools: 1, rerankThreshold: 0 };
    const outcome = await discovery.searchTools(context(settings), 'delete a customer');
    assert.equal(outcome.ok, true);
    const agentId = await agentWith({}, [{ toolId: toolIds.get('delete_customer') }]);
    const start = await api.services.objectives.resolve({ id: ws.workspaceId, accountId: ws.account.accountId }, 'profile_x', { agentId, initialMessage: 'hi' });
    assert.deepEqual(outcome.discoveredTools, start.tools, 'the same ObjectiveTool (the assignment sets no approval rule: the tool\'s own, true)');
    assert.equal(start.tools[0].requiresApproval, true);
    assert.equal('discovery' in start, false, 'no discovery settings: none on the start');

    assert.deepEqual(await discovery.searchTools(context(settings), ' \u0000 ?? '), { ok: true, content: '', discoveredTools: [] });
    assert.deepEqual(await discovery.searchTools(context({ hints: ['customer'], maxTools: 10, rerankThreshold: 0 }), '...'), { ok: true, content: '', discoveredTools: [] }, 'hints alone search nothing');
    assert.deepEqual(await discovery.searchTools(context({ ...settings, rerankThreshold: -1 }), 'customer'), {
      ok: false, content: 'search_tools cannot search: rerankThreshold: must be a number of at least 0', errorType: 'INVALID_ARGUMENTS',
    });
    assert.deepEqual(await discovery.searchTools(context(null), 'customer'), { ok: false, content: 'search_tools is not offered to this objective', errorType: 'INVALID_ARGUMENTS' });
    const other = await ws.otherWorkspace();
    const elsewhere = await discovery.searchTools({ ...context(settings), workspaceId: other.workspaceId }, 'delete a customer');
    assert.deepEqual(elsewhere.discoveredTools, [], 'another workspace finds none of these tools');
  });

  it('does not offer search_tools without discovery settings (or with allowDiscovery false): calling it is an unknown tool', async () => {
    for (const spec of [{}, { toolSelection: { assignedTools: { allowDiscovery: false }, autoDiscovery: { maxTools: 3 } } }]) {
      const agentId = await agentWith(spec, [], PROVIDER_MODEL);
      openRouter.reset();
      openRouter.answer(
        fakeAnswers.completion({ toolCalls: [{ id: 'call_search', name: 'search_tools', arguments: '{"query":"refund an invoice"}' }] }),
        fakeAnswers.completion({ toolCalls: [{ id: 'call_refund', name: 'refund_invoice', arguments: '{}' }] }),
        fakeAnswers.completion({ content: 'cannot' }),
      );
      const since = tools.requests.length;
      const { objective, of } = await run(agentId, 'Refund invoice inv-9');
      assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
      assert.deepEqual(openRouter.requests.map((request) => offeredNames(request.body)), [[], [], []], JSON.stringify(spec));
      assert.deepEqual(of('TOOL_ERROR').map((event) => event.data.toolError.message), ['unknown tool: search_tools', 'unknown tool: refund_invoice']);
      assert.equal(reached('refund_invoice', since).length, 0);
    }
  });
});
