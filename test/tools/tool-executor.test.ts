// Tool execution (issue 9 item 4) against real servers: a node:http tool
// server, the test MCP server, and stored tools and secrets of a real
// workspace (the API over the test database), so secret resolution, its
// `lastUsedAt`, and synced MCP tools are the production paths.
import assert from 'node:assert/strict';
import { startTestApi, type TestApi } from '../support/api';
import { eventuallyValue } from '../support/eventually';
import { createTool, createToolSet, created } from '../support/agents-world';
import { startTestMcpServer, type TestMcpServer } from '../support/mcp-server';
import { RENDEZVOUS_SIZE, startTestToolServer, type TestToolServer } from '../support/tool-server';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';
import { WorkspaceSecretResolver } from '../../src/secrets/workspace-secret-resolver';
import { SdkMcpClient } from '../../src/tools/mcp-sdk-client';
import { executableTool, TOOL_RESULT_MAX_BYTES, type ExecutableTool, type ToolCallFailure, type ToolCallOutcome } from '../../src/tools/tool-call-outcome';
import { effectTimeoutMsFor, ToolExecutor, type ToolCallRequest } from '../../src/tools/tool-executor';

const SECRET_VALUE = 'sk_live_9f8e7d6c5b4a3210';
const SEARCH_SCHEMA = {
  type: 'object',
  properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1 } },
  required: ['query'],
  additionalProperties: false,
};

function assertFailure(outcome: ToolCallOutcome, errorType: string): asserts outcome is ToolCallFailure {
  assert.equal(outcome.ok, false, `expected ${errorType}, got ${JSON.stringify(outcome)}`);
  assert.equal((outcome as ToolCallFailure).errorType, errorType, JSON.stringify(outcome));
}

describe('tool executor', () => {
  let api: TestApi;
  let ws: WorkspaceFixture;
  let server: TestToolServer;
  let mcp: TestMcpServer;
  let mcpClient: SdkMcpClient;
  let executor: ToolExecutor;
  let callNumber = 0;

  before(async () => {
    api = await startTestApi({ env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
    server = await startTestToolServer();
    mcp = await startTestMcpServer();
    mcpClient = new SdkMcpClient({ allowPrivateNetwork: true });
    executor = new ToolExecutor({ secrets: new WorkspaceSecretResolver(api.services.secrets), mcp: mcpClient, urlPolicy: { allowPrivateNetwork: api.config.allowPrivateNetwork } });
  });
  after(async () => {
    await executor.close();
    await server.close();
    await mcp.close();
    await api.close();
  });
  beforeEach(async () => {
    ws = await workspaceFixture(api);
    server.requests.length = 0;
    mcp.calls.length = 0;
    mcp.onCall = (call) => ({ content: [{ type: 'text', text: `called ${call.name} with ${JSON.stringify(call.arguments)}` }] });
  });

  const workspaceRef = () => ({ id: ws.workspaceId, accountId: ws.account.accountId, name: '', status: 'STATUS_ENABLED' as const });
  /** Creates the tool through the API and loads it as the objective would. */
  async function storedTool(spec: Record<string, unknown>, name = 'lookup'): Promise<ExecutableTool> {
    const tool = await createTool(api, ws.token, ws.workspaceId, { metadata: { name }, spec });
    return executableTool(await api.services.tools.find(workspaceRef(), tool.metadata.id));
  }
  const httpTool = (path: string, http: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
    storedTool({ http: { url: `${server.url}${path}`, method: 'POST', ...http }, ...extra });
  const call = (tool: ExecutableTool, args: unknown = {}, extra: Partial<ToolCallRequest> = {}): ToolCallRequest => ({
    tool, toolCallId: `call_${++callNumber}`, arguments: args, context: { workspaceId: ws.workspaceId }, ...extra,
  });
  const createSecret = (name: string, value?: string) =>
    created(api, ws.token, '/v1/workspace_secrets', { metadata: { name }, spec: value === undefined ? {} : { value } });

  describe('HTTP tools', () => {
    it('sends the arguments as the JSON body with Idempotency-Key set to the tool call id', async () => {
      const tool = await httpTool('/echo', { headers: { 'x-tenant': 'acme' } });
      const request = call(tool, '{"query":"refund policy","limit":3}');
      const outcome = await executor.executeToolCall(request);
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
      assert.deepEqual([outcome.status, outcome.truncated, outcome.kind, outcome.toolId, outcome.toolCallId], [200, false, 'http', tool.id, request.toolCallId]);
      assert.equal(typeof outcome.durationMs, 'number');
      const [received] = server.requestsTo('/echo');
      assert.equal(received.method, 'POST');
      assert.deepEqual(JSON.parse(received.body), { query: 'refund policy', limit: 3 });
      assert.equal(received.headers['idempotency-key'], request.toolCallId);
      assert.equal(received.headers['content-type'], 'application/json');
      assert.equal(received.headers['x-tenant'], 'acme');
      assert.deepEqual(JSON.parse(outcome.content).body, received.body, 'the response body is the tool result');
      assert.deepEqual(JSON.parse(JSON.stringify(outcome)), outcome, 'an outcome is JSON (it crosses a restart)');
    });

    it('sends the arguments as the query for GET, and accepts arguments given as an object', async () => {
      const tool = await httpTool('/echo?fixed=1', { method: 'GET' });
      const outcome = await executor.executeToolCall(call(tool, { query: 'a b', tags: ['x', 'y'], filter: { on: true }, skip: null }));
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
      const [received] = server.requestsTo('/echo');
      assert.deepEqual([received.method, received.body], ['GET', '']);
      const query = new URL(received.url, server.url).searchParams;
      assert.deepEqual([...query.entries()], [['fixed', '1'], ['query', 'a b'], ['tags', 'x'], ['tags', 'y'], ['filter', '{"on":true}']]);
    });

    it('replaces a configured Idempotency-Key header with the tool call id', async () => {
      const tool = await httpTool('/echo', { headers: { 'Idempotency-Key': 'fixed' } });
      const request = call(tool);
      await executor.executeToolCall(request);
      assert.equal(server.requestsTo('/echo')[0].headers['idempotency-key'], request.toolCallId);
    });

    it('resolves {{secrets.NAME}} in the URL and headers, records the use, and never shows the value', async () => {
      const secret = await createSecret('TOOL_TOKEN', SECRET_VALUE);
      assert.equal(secret.info.lastUsedAt, undefined);
      const tool = await httpTool('/echo?key={{secrets.TOOL_TOKEN}}', { headers: { authorization: 'Bearer {{ secrets.TOOL_TOKEN }}' } });
      const outcome = await executor.executeToolCall(call(tool, { query: 'x' }));
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
      const [received] = server.requestsTo('/echo');
      assert.equal(received.headers.authorization, `Bearer ${SECRET_VALUE}`);
      assert.equal(new URL(received.url, server.url).searchParams.get('key'), SECRET_VALUE);
      // The echo server sent the value back: the model must not see it.
      assert.ok(!JSON.stringify(outcome).includes(SECRET_VALUE), JSON.stringify(outcome));
      assert.match(outcome.content, /Bearer \[redacted\]/);
      const read = await api.request('GET', `/v1/workspace_secrets/${secret.metadata.id}`, { token: ws.token });
      assert.equal(typeof read.body.info.lastUsedAt, 'string', JSON.stringify(read.body));
    });

    it('keeps the secret out of every failure too (HTTP error, redirect, time-out)', async () => {
      await createSecret('TOOL_TOKEN', SECRET_VALUE);
      const headers = { authorization: 'Bearer {{secrets.TOOL_TOKEN}}' };
      const outcomes = [
        await executor.executeToolCall(call(await httpTool('/fail?key={{secrets.TOOL_TOKEN}}', { headers }))),
        await executor.executeToolCall(call(await httpTool('/redirect?key={{secrets.TOOL_TOKEN}}', { headers }))),
        await executor.executeToolCall(call(await httpTool('/slow?key={{secrets.TOOL_TOKEN}}', { headers, timeoutMs: 100 }))),
        await executor.executeToolCall(call(await httpTool('/echo?key={{secrets.TOOL_TOKEN}}', { headers }, { inputSchema: SEARCH_SCHEMA }), {})),
      ];
      assert.deepEqual(outcomes.map((outcome) => (outcome as ToolCallFailure).errorType), ['HTTP_ERROR', 'HTTP_ERROR', 'TIMED_OUT', 'INVALID_ARGUMENTS']);
      for (const outcome of outcomes) assert.ok(!JSON.stringify(outcome).includes(SECRET_VALUE), JSON.stringify(outcome));
    });

    it('answers SECRET_NOT_FOUND naming a secret that does not exist or has no value, and sends nothing', async () => {
      await createSecret('EMPTY_TOKEN');
      const missing = await executor.executeToolCall(call(await httpTool('/echo', { headers: { authorization: 'Bearer {{secrets.MISSING_TOKEN}}' } })));
      assertFailure(missing, 'SECRET_NOT_FOUND');
      assert.match(missing.message, /\{\{secrets\.MISSING_TOKEN\}\} names no secret of workspace/);
      assert.match(missing.content, /MISSING_TOKEN/);
      const empty = await executor.executeToolCall(call(await httpTool('/echo', { headers: { authorization: '{{secrets.EMPTY_TOKEN}}' } })));
      assertFailure(empty, 'SECRET_NOT_FOUND');
      assert.match(empty.message, /workspace secret "EMPTY_TOKEN" has no value/);
      assert.equal(server.requests.length, 0);
    });

    it('answers SECRET_NOT_FOUND for a placeholder no secret name can match', async () => {
      const outcome = await executor.executeToolCall(call(await httpTool('/echo', { headers: { 'x-key': '{{secrets.my-key}}' } })));
      assertFailure(outcome, 'SECRET_NOT_FOUND');
      assert.match(outcome.message, /\{\{secrets\.my-key\}\} can name no workspace secret/);
      assert.equal(server.requests.length, 0);
    });

    it('answers SECRET_UNUSABLE for a secret with a line break used in a header', async () => {
      await createSecret('MULTILINE', 'line one\r\nX-Injected: yes');
      const outcome = await executor.executeToolCall(call(await httpTool('/echo', { headers: { 'x-key': '{{secrets.MULTILINE}}' } })));
      assertFailure(outcome, 'SECRET_UNUSABLE');
      assert.ok(!JSON.stringify(outcome).includes('X-Injected'));
      assert.equal(server.requests.length, 0);
    });

    it('answers INVALID_ARGUMENTS naming the failing fields, as a result for the model, and sends nothing', async () => {
      const tool = await httpTool('/echo', {}, { inputSchema: SEARCH_SCHEMA });
      const wrong = await executor.executeToolCall(call(tool, '{"limit":"ten","extra":1}'));
      assertFailure(wrong, 'INVALID_ARGUMENTS');
      assert.deepEqual(wrong.fieldViolations, [
        { field: 'arguments.query', description: 'is required' },
        { field: 'arguments.extra', description: 'is not a known field' },
        { field: 'arguments.limit', description: 'must be of type integer' },
      ]);
      assert.equal(wrong.content, 'invalid arguments: arguments.query: is required; arguments.extra: is not a known field; arguments.limit: must be of type integer');
      assert.match(wrong.message, /^invalid arguments for tool "lookup": arguments\.query: is required/);
      const notJson = await executor.executeToolCall(call(tool, '{"query": '));
      assertFailure(notJson, 'INVALID_ARGUMENTS');
      assert.deepEqual(notJson.fieldViolations, [{ field: 'arguments', description: 'must be a JSON object; the text is not valid JSON' }]);
      const notObject = await executor.executeToolCall(call(tool, '["query"]'));
      assertFailure(notObject, 'INVALID_ARGUMENTS');
      assert.equal(server.requests.length, 0);
    });

    it('treats empty arguments as {} for a tool without parameters', async () => {
      const outcome = await executor.executeToolCall(call(await httpTool('/echo'), ''));
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
      assert.equal(server.requestsTo('/echo')[0].body, '{}');
    });

    it('answers TIMED_OUT when the tool does not answer within timeoutMs', async () => {
      const outcome = await executor.executeToolCall(call(await httpTool('/slow', { timeoutMs: 150 })));
      assertFailure(outcome, 'TIMED_OUT');
      assert.match(outcome.message, /^POST http:\/\/127\.0\.0\.1:\d+\/slow timed out after 150 ms$/);
      assert.equal(server.requestsTo('/slow').length, 1);
    });

    it('answers TIMED_OUT at the effect deadline when it comes before timeoutMs', async () => {
      const outcome = await executor.executeToolCall(call(await httpTool('/slow', { timeoutMs: 300_000 }), {}, { deadline: new Date(Date.now() + 150) }));
      assertFailure(outcome, 'TIMED_OUT');
      const late = await executor.executeToolCall(call(await httpTool('/echo'), {}, { deadline: new Date(Date.now() - 1) }));
      assertFailure(late, 'TIMED_OUT');
      assert.equal(server.requestsTo('/echo').length, 0, 'nothing is sent past the deadline');
    });

    it('answers CANCELLED when the effect signal aborts the call', async () => {
      const controller = new AbortController();
      const pending = executor.executeToolCall(call(await httpTool('/slow'), {}, { signal: controller.signal }));
      await server.arrived('/slow');
      controller.abort();
      const outcome = await pending;
      assertFailure(outcome, 'CANCELLED');
      assert.equal(outcome.content, '[cancelled]');
      const stopped = await executor.executeToolCall(call(await httpTool('/echo'), {}, { signal: AbortSignal.abort() }));
      assertFailure(stopped, 'CANCELLED');
      assert.equal(server.requestsTo('/echo').length, 0, 'nothing is sent for a call stopped before it starts');
    });

    it('does not follow a redirect: the 3xx is the result', async () => {
      const outcome = await executor.executeToolCall(call(await httpTool('/redirect')));
      assertFailure(outcome, 'HTTP_ERROR');
      assert.equal(outcome.status, 302);
      assert.match(outcome.message, /answered HTTP 302 \(redirect to \/echo\?redirected=true, not followed\)$/);
      assert.equal(outcome.content, 'HTTP 302 (redirect to /echo?redirected=true, not followed)\nmoved');
      assert.equal(server.requestsTo('/echo').length, 0);
    });

    it('cuts a 1 MiB answer to 64 KiB', async () => {
      const outcome = await executor.executeToolCall(call(await httpTool('/large')));
      assert.equal(outcome.ok, true, outcome.ok ? '' : outcome.message);
      assert.equal(outcome.truncated, true);
      assert.equal(Buffer.byteLength(outcome.content), TOOL_RESULT_MAX_BYTES);
      assert.equal(outcome.content, 'x'.repeat(TOOL_RESULT_MAX_BYTES));
    });

    it('answers HTTP_ERROR with the status and the body for a 500', async () => {
      const outcome = await executor.executeToolCall(call(await httpTool('/fail')));
      assertFailure(outcome, 'HTTP_ERROR');
      assert.equal(outcome.status, 500);
      assert.match(outcome.message, /^POST http:\/\/127\.0\.0\.1:\d+\/fail answered HTTP 500$/);
      assert.equal(outcome.content, 'HTTP 500\nthe database is on fire');
    });

    it('describes an empty 2xx answer instead of returning nothing', async () => {
      const outcome = await executor.executeToolCall(call(await httpTool('/empty', { method: 'DELETE' })));
      assert.equal(outcome.ok, true);
      assert.deepEqual([outcome.status, outcome.content], [204, '(empty response, HTTP 204)']);
    });

    it('answers NETWORK_ERROR when nothing listens', async () => {
      const gone = await startTestToolServer();
      await gone.close();
      const outcome = await executor.executeToolCall(call(await storedTool({ http: { url: `${gone.url}/echo`, method: 'POST' } })));
      assertFailure(outcome, 'NETWORK_ERROR');
      assert.match(outcome.message, /ECONNREFUSED/);
    });

    it('sizes the effect timeout to let the tool report its own time-out', async () => {
      assert.equal(effectTimeoutMsFor(await httpTool('/echo', { timeoutMs: 2_000 })), 7_000);
      assert.equal(effectTimeoutMsFor(await storedTool({ mcp: { serverUrl: mcp.url, toolName: 'x' } })), 35_000);
    });
  });

  describe('without AGENTRT_ALLOW_PRIVATE_NETWORK', () => {
    let strict: ToolExecutor;
    before(() => {
      strict = new ToolExecutor({ secrets: new WorkspaceSecretResolver(api.services.secrets), mcp: new SdkMcpClient({ allowPrivateNetwork: false }), urlPolicy: { allowPrivateNetwork: false } });
    });
    after(() => strict.close());

    it('refuses a private address at connect time', async () => {
      const outcome = await strict.executeToolCall(call(await storedTool({ http: { url: 'http://10.255.255.1/lookup', method: 'POST' } })));
      assertFailure(outcome, 'URL_REFUSED');
      assert.match(outcome.message, /^POST http:\/\/10\.255\.255\.1\/lookup: refused to connect to 10\.255\.255\.1 \(10\.255\.255\.1\), a private, loopback or link-local address; set AGENTRT_ALLOW_PRIVATE_NETWORK=true on the node to allow private and loopback addresses$/);
    });

    it('refuses a name that resolves to loopback, without sending anything', async () => {
      const outcome = await strict.executeToolCall(call(await storedTool({ http: { url: `http://localhost:${server.port}/echo`, method: 'POST' } })));
      assertFailure(outcome, 'URL_REFUSED');
      assert.match(outcome.message, /refused to connect to localhost/);
      const literal = await strict.executeToolCall(call(await httpTool('/echo')));
      assertFailure(literal, 'URL_REFUSED');
      assert.equal(server.requests.length, 0);
    });

    it('refuses an MCP server on a loopback address', async () => {
      const outcome = await strict.executeToolCall(call(await storedTool({ mcp: { serverUrl: mcp.url, toolName: 'search' } })));
      assertFailure(outcome, 'URL_REFUSED');
      assert.equal(mcp.calls.length, 0);
    });
  });

  describe('MCP tools', () => {
    const mcpTool = (toolName: string, extra: Record<string, unknown> = {}) => storedTool({ mcp: { serverUrl: mcp.url, toolName }, ...extra }, toolName);

    it('calls the tool through the MCP SDK with the arguments and Idempotency-Key', async () => {
      const request = call(await mcpTool('search'), '{"query":"refunds"}');
      const outcome = await executor.executeToolCall(request);
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
      assert.deepEqual([outcome.kind, outcome.content, outcome.truncated], ['mcp', 'called search with {"query":"refunds"}', false]);
      assert.deepEqual(mcp.calls, [{ name: 'search', arguments: { query: 'refunds' }, idempotencyKey: request.toolCallId }]);
    });

    it('calls a tool of a synced tool set, validating against the schema the server listed', async () => {
      mcp.tools = [{ name: 'search', description: 'Searches', inputSchema: SEARCH_SCHEMA }];
      const set = await createToolSet(api, ws.token, ws.workspaceId, { spec: { mcpServerUrl: mcp.url } });
      const synced = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tool_sets/${set.metadata.id}/sync`, {});
      const tool = executableTool(await api.services.tools.find(workspaceRef(), synced.created[0].id));
      const invalid = await executor.executeToolCall(call(tool, { query: 7 }));
      assertFailure(invalid, 'INVALID_ARGUMENTS');
      assert.deepEqual(invalid.fieldViolations, [{ field: 'arguments.query', description: 'must be of type string' }]);
      assert.equal(mcp.calls.length, 0);
      const outcome = await executor.executeToolCall(call(tool, { query: 'refunds', limit: 2 }));
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
      assert.deepEqual(mcp.calls.map((item) => item.arguments), [{ query: 'refunds', limit: 2 }]);
    });

    it('flattens text, resources, images and structured content to text', async () => {
      mcp.onCall = () => ({
        content: [
          { type: 'text', text: 'first' },
          { type: 'resource', resource: { uri: 'file:///a.txt', text: 'embedded text' } },
          { type: 'image', data: Buffer.from('png!').toString('base64'), mimeType: 'image/png' },
          { type: 'resource_link', uri: 'file:///b.pdf', name: 'b.pdf' },
        ],
      });
      const outcome = await executor.executeToolCall(call(await mcpTool('mixed')));
      assert.equal(outcome.content, 'first\n\nembedded text\n\n[image: image/png, 4 bytes]\n\n[resource link: file:///b.pdf (b.pdf)]');
      mcp.onCall = () => ({ content: [], structuredContent: { total: 3 } });
      assert.equal((await executor.executeToolCall(call(await mcpTool('structured')))).content, '{"total":3}');
    });

    it('answers MCP_TOOL_ERROR with the tool\'s explanation when the tool reports an error', async () => {
      mcp.onCall = () => ({ content: [{ type: 'text', text: 'no such customer' }], isError: true });
      const outcome = await executor.executeToolCall(call(await mcpTool('crm')));
      assertFailure(outcome, 'MCP_TOOL_ERROR');
      assert.equal(outcome.content, 'no such customer');
      assert.match(outcome.message, /^MCP tool "crm" of http:\/\/127\.0\.0\.1:\d+\/mcp reported an error: no such customer$/);
    });

    it('answers MCP_ERROR when the server cannot be reached', async () => {
      const gone = await startTestMcpServer();
      await gone.close();
      const outcome = await executor.executeToolCall(call(await storedTool({ mcp: { serverUrl: gone.url, toolName: 'search' } })));
      assertFailure(outcome, 'MCP_ERROR');
      assert.match(outcome.message, /^MCP server http:\/\/127\.0\.0\.1:\d+\/mcp failed the call of tool "search": /);
    });

    for (const resumable of [false, true]) {
      it(`answers MCP_ERROR, not the deadline, when the server goes away in mid-call${resumable ? ' (a resumable stream: after the attempts to resume it)' : ''}`, async function () {
        await serverKilledInMidCall(this, resumable);
      });
    }

    async function serverKilledInMidCall(test: Mocha.Context, resumable: boolean) {
      // Without the fix the call waited out the tool's 30 s and ended TIMED_OUT: leave room to see that.
      test.timeout(45_000);
      const doomed = await startTestMcpServer([], { resumable });
      let markArrived: () => void = () => undefined;
      const arrived = new Promise<void>((resolve) => (markArrived = resolve));
      // The tool reports progress first: the answer's event stream is open when the server dies.
      doomed.onCall = async (_received, notify) => {
        const before = doomed.chunksSent;
        await notify('working');
        void eventuallyValue(async () => doomed.chunksSent > before, 'the progress message sent').then(markArrived);
        return new Promise(() => undefined);
      };
      const pending = executor.executeToolCall(call(await storedTool({ mcp: { serverUrl: doomed.url, toolName: 'slow' } }, 'slow')));
      await arrived;
      doomed.kill();
      const outcome = await pending;
      assertFailure(outcome, 'MCP_ERROR');
      assert.match(outcome.message, /^MCP server http:\/\/127\.0\.0\.1:\d+\/mcp failed the call of tool "slow": /);
    }

    it('ends the MCP session of every call and tool listing: the server holds no more open sessions after them', async () => {
      mcp.tools = [{ name: 'search', inputSchema: { type: 'object' } }];
      const tool = await mcpTool('search');
      const before = mcp.sessionsStarted;
      mcp.onCall = (received) => (received.arguments.fail ? { content: [{ type: 'text', text: 'no' }], isError: true } : { content: [{ type: 'text', text: 'ok' }] });
      const outcomes = await executor.executeToolCalls(Array.from({ length: 6 }, (_, index) => call(tool, { fail: index % 2 === 1 })));
      assert.deepEqual(outcomes.map((outcome) => (outcome.ok ? 'ok' : outcome.errorType)), ['ok', 'MCP_TOOL_ERROR', 'ok', 'MCP_TOOL_ERROR', 'ok', 'MCP_TOOL_ERROR']);
      await mcpClient.listTools(mcp.url);
      assert.equal(mcp.sessionsStarted - before, 7, 'each call and the listing had a session');
      assert.equal(mcp.openSessions(), 0);
    });

    it('answers TIMED_OUT when the server does not answer before the deadline', async () => {
      mcp.onCall = () => new Promise(() => undefined);
      const outcome = await executor.executeToolCall(call(await mcpTool('slow'), {}, { deadline: new Date(Date.now() + 150) }));
      assertFailure(outcome, 'TIMED_OUT');
      assert.match(outcome.message, /^MCP tool "slow" of http:\/\/127\.0\.0\.1:\d+\/mcp timed out after \d+ ms$/);
    });

    it('answers CANCELLED when the effect signal aborts the call', async () => {
      let markArrived: () => void = () => undefined;
      const arrived = new Promise<void>((resolve) => (markArrived = resolve));
      mcp.onCall = () => {
        markArrived();
        return new Promise(() => undefined);
      };
      const controller = new AbortController();
      const pending = executor.executeToolCall(call(await mcpTool('slow'), {}, { signal: controller.signal }));
      await arrived;
      controller.abort();
      assertFailure(await pending, 'CANCELLED');
    });
  });

  describe('executeToolCalls', () => {
    it('runs the calls of one turn in parallel: the server holds both before answering either', async () => {
      // A generous timeoutMs: run one after the other, the first call would wait here until TIMED_OUT.
      const tool = await httpTool('/rendezvous', { timeoutMs: 10_000 });
      const calls = Array.from({ length: RENDEZVOUS_SIZE }, (_, index) => call(tool, { index }));
      const outcomes = await executor.executeToolCalls(calls);
      assert.deepEqual(outcomes.map((outcome) => outcome.ok), [true, true], JSON.stringify(outcomes));
      // Every answer was written after both requests were in: each saw the other.
      assert.deepEqual(outcomes.map((outcome) => JSON.parse(outcome.content).seen), [RENDEZVOUS_SIZE, RENDEZVOUS_SIZE]);
      assert.deepEqual(outcomes.map((outcome) => JSON.parse(JSON.parse(outcome.content).body)), [{ index: 0 }, { index: 1 }]);
      assert.deepEqual(outcomes.map((outcome) => outcome.toolCallId), calls.map((item) => item.toolCallId));
    });

    it('gives each call its own outcome', async () => {
      const outcomes = await executor.executeToolCalls([call(await httpTool('/echo')), call(await httpTool('/fail')), call(await storedTool({ mcp: { serverUrl: mcp.url, toolName: 'search' } }, 'search'))]);
      assert.deepEqual(outcomes.map((outcome) => (outcome.ok ? 'ok' : outcome.errorType)), ['ok', 'HTTP_ERROR', 'ok']);
    });
  });
});
