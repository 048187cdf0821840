// Secret canaries (security-reliability.md section 4, test 1): unique workspace
// secret values and AI provider keys are stored through the API and used by an
// objective (a secret in an HTTP tool's query and headers, the key against the
// fake OpenRouter); then every response, the captured logs, the OBJECTIVE_EVENTS
// messages and a dump of every table are scanned: no plaintext anywhere. In
// embedded mode and in cluster mode (OBJECTIVE_EVENTS on NATS JetStream).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { SEALED_VERSION } from '../../src/crypto/envelope';
import { startTestApi, type RequestOptions, type TestApi, type TestApiOptions } from '../support/api';
import { createAgent, created, createVariation } from '../support/agents-world';
import { deleteStream, eventually, TEST_NATS_URL, uniqueBusNames } from '../support/cluster-harness';
import { fakeAnswers, startFakeOpenRouter, type FakeOpenRouter } from '../support/fake-openrouter';
import { objectiveEventMessages } from '../support/objective-event-messages';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import { workspaceFixture, type WorkspaceFixture } from '../support/workspace-keys';

/* eslint-disable @typescript-eslint/no-explicit-any */

/**
 * Every column holding a sealed record (`v1.<base64url>`, src/crypto/envelope.ts).
 * The dump scans these too (a sealed record never holds its plaintext); the
 * list makes sure the canaries' rows really are sealed there, and a renamed or
 * dropped column fails the suite so the list is looked at again.
 */
const SEALED_COLUMNS = [
  { table: 'workspace_secrets', column: 'value_ciphertext' },
  { table: 'ai_provider_keys', column: 'api_key_ciphertext' },
  { table: 'workspace_data_keys', column: 'wrapped_key' },
  { table: 'service_keys', column: 'wrapped_key' },
  { table: 'accounts', column: 'webhook_signing_secret' },
  { table: 'accounts', column: 'previous_webhook_signing_secret' },
  { table: 'idempotency_records', column: 'body' },
] as const;

const SEALED_RECORD = new RegExp(`^"?${SEALED_VERSION}\\.[A-Za-z0-9_-]+"?$`);
const MODEL = 'openai/gpt-4o-mini';

/** The OBJECTIVE_EVENTS messages of one objective, as stored by the embedded event log or by JetStream. */
type PublishedMessages = (api: TestApi, objectiveId: string, expected: number) => Promise<string[]>;

/**
 * The outbox relay publishes after the turns' commit: read until every event is there or 10 s passed (the
 * assertion then tells what is missing). A single read once saw 4 of 6 on a busy box.
 */
const embeddedMessages: PublishedMessages = async (api, objectiveId, expected) => {
  const read = async () => {
    const rows: Array<{ subject: string; payload: string; headers: unknown }> = await api.dataSource.query(
      `SELECT subject, payload, headers FROM embedded_stream_messages WHERE stream = 'OBJECTIVE_EVENTS' AND subject LIKE $1`,
      [`objective_events.%.${objectiveId}.%`],
    );
    return rows.map((row) => JSON.stringify(row));
  };
  const deadline = Date.now() + 10_000;
  let messages = await read();
  while (messages.length < expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    messages = await read();
  }
  return messages;
};

const natsMessages: PublishedMessages = (_api, objectiveId, expected) =>
  objectiveEventMessages(TEST_NATS_URL, objectiveId, expected, 10_000, (message) => JSON.stringify({ subject: message.subject, headers: message.headers?.toString(), data: message.string() }));

describeCanaries('embedded mode', { runtime: true }, embeddedMessages);
const busNames = uniqueBusNames();
describeCanaries('cluster mode', { runtime: busNames, natsUrl: TEST_NATS_URL }, natsMessages, () => deleteStream(busNames.eventStream));

function describeCanaries(mode: string, apiOptions: TestApiOptions, publishedMessages: PublishedMessages, cleanUp?: () => Promise<void>): void {
  describe(`secret canaries (${mode})`, function () {
    this.timeout(60_000);
    // One lower-case token (no hyphen), so full-text columns keep it whole and a search finds it.
    const marker = `cnry${randomBytes(8).toString('hex')}`;
    const canary = (role: string) => `${marker}${role}`;
    // Idempotency keys of this suite (stored in plain text: no canary in them).
    const keyOf = (name: string) => `${ws.workspaceId}-${name}`;
    const secretValues = { query: canary('query'), header: canary('header'), replaced: canary('replaced'), current: canary('current') };
    const providerKeys = { replaced: canary('providerold'), current: canary('providernew') };

    let api: TestApi;
    let ws: WorkspaceFixture;
    let tools: TestToolServer;
    let openRouter: FakeOpenRouter;
    let apiKeyToken: string;
    let objectiveId: string;
    const responses: string[] = [];

    const call = (method: string, path: string, options: RequestOptions = {}) => api.request(method, path, { token: ws.token, ...options });
    const ok = async (method: string, path: string, options: RequestOptions = {}) => {
      const response = await call(method, path, options);
      assert.equal(response.status, 200, `${method} ${path}: ${JSON.stringify(response.body)}`);
      return response.body as any;
    };
    const hitsIn = (texts: readonly string[]) => texts.filter((text) => text.includes(marker));

    before(async () => {
      api = await startTestApi({ ...apiOptions, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
      recordResponses(api);
      tools = await startTestToolServer();
      openRouter = await startFakeOpenRouter();
      ws = await workspaceFixture(api);
      await storeCanaries();
      objectiveId = await runObjective();
    });

    after(async () => {
      await api?.close();
      await tools?.close();
      await openRouter?.close();
      await cleanUp?.();
    });

    /** Keeps every whole response the suite receives (fixtures' calls included) for the scan. */
    function recordResponses(target: TestApi): void {
      const request = target.request.bind(target);
      target.request = async (method, path, options) => {
        const response = await request(method, path, options);
        responses.push(JSON.stringify({ method, path, status: response.status, body: response.body, headers: [...response.headers] }));
        return response;
      };
    }

    /** Secrets and provider keys through every write and read route, each create with an Idempotency-Key (its answer is stored sealed). */
    async function storeCanaries(): Promise<void> {
      const secretsOf = { 'x-workspace-id': ws.workspaceId };
      const createSecret = (name: string, value: string) => ({ headers: { ...secretsOf, 'idempotency-key': keyOf(`create-${name}`) }, body: { metadata: { name }, spec: { value } } });
      await ok('POST', '/v1/workspace_secrets', createSecret('QUERY_TOKEN', secretValues.query));
      await ok('POST', '/v1/workspace_secrets', createSecret('QUERY_TOKEN', secretValues.query)); // the replay answers from the sealed record
      await ok('POST', '/v1/workspace_secrets', createSecret('HEADER_TOKEN', secretValues.header));
      const rotated = await ok('POST', '/v1/workspace_secrets', createSecret('ROTATED_TOKEN', secretValues.replaced));
      await ok('PATCH', `/v1/workspace_secrets/${rotated.metadata.id}`, { headers: secretsOf, body: { spec: { value: secretValues.current } } });
      await ok('GET', `/v1/workspace_secrets/${rotated.metadata.id}?includeInfo=true`, { headers: secretsOf });
      await ok('GET', '/v1/workspace_secrets?includeInfo=true', { headers: secretsOf });
      const refused = await call('POST', '/v1/workspace_secrets', { headers: secretsOf, body: { metadata: { name: 'bad name!' }, spec: { value: canary('refused') } } });
      assert.equal(refused.status, 400, JSON.stringify(refused.body));

      const keys = `/v1/workspaces/${ws.workspaceId}/ai_provider_keys`;
      const key = await ok('POST', keys, {
        headers: { 'idempotency-key': keyOf('create-provider-key') },
        body: { metadata: { name: 'openrouter' }, spec: { apiKey: providerKeys.replaced, openrouter: { baseUrl: openRouter.baseUrl } } },
      });
      await ok('PATCH', `${keys}/${key.metadata.id}`, { body: { spec: { apiKey: providerKeys.current } } });
      await ok('GET', `${keys}/${key.metadata.id}`);
      await ok('GET', keys);

      // A new API key's token comes back once, and is stored nowhere in plain text either.
      const apiKey = await ok('POST', `/v1/workspaces/${ws.workspaceId}/api_keys`, {
        headers: { 'idempotency-key': keyOf('create-api-key') }, body: { metadata: { name: 'canary-key' }, spec: { permissions: ['objectives:read'] } },
      });
      apiKeyToken = apiKey.spec.token;
    }

    /** An objective on an OpenRouter model whose one tool call sends the secrets in its query and headers. */
    async function runObjective(): Promise<string> {
      const base = `/v1/workspaces/${ws.workspaceId}`;
      const agentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
      const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You look customers up.', modelConfig: { modelId: MODEL } } });
      const tool = await created(api, ws.token, `${base}/tools`, {
        metadata: { name: 'crm' },
        spec: {
          description: 'Looks a customer up',
          inputSchema: { type: 'object', properties: { customer: { type: 'string' } }, required: ['customer'] },
          http: {
            url: `${tools.url}/echo?token={{secrets.QUERY_TOKEN}}`,
            method: 'GET',
            headers: { 'x-api-key': '{{secrets.HEADER_TOKEN}}', authorization: 'Bearer {{secrets.ROTATED_TOKEN}}' },
          },
        },
      });
      await created(api, ws.token, `${base}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, { toolId: tool.metadata.id });
      openRouter.answer(
        fakeAnswers.completion({ toolCalls: [{ id: 'call_crm_1', name: 'crm', arguments: '{"customer":"c-42"}' }] }),
        fakeAnswers.completion({ content: 'customer c-42 found' }),
      );
      const objective = await ok('POST', `${base}/objectives`, { headers: { 'idempotency-key': keyOf('start-objective') }, body: { agentId, initialMessage: 'Look up customer c-42' } });
      const id = objective.metadata.id as string;
      await eventually(async () => {
        const current = await ok('GET', `${base}/objectives/${id}`);
        return current.info.status !== 'OBJECTIVE_STATUS_RUNNING' && current.info.status !== 'OBJECTIVE_STATUS_PENDING';
      }, 'objective finished', 20_000);
      return id;
    }

    const events = async () => (await ok('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${objectiveId}/events?limit=1000`)).items as any[];

    describe('the objective', () => {
      it('completes, having sent every secret to the tool and the current provider key to the provider', async () => {
        const objective = await ok('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${objectiveId}`);
        assert.equal(objective.info.status, 'OBJECTIVE_STATUS_COMPLETED', JSON.stringify(objective.info));
        const [request] = tools.requestsTo('/echo');
        assert.equal(new URL(request.url, tools.url).searchParams.get('token'), secretValues.query);
        assert.equal(request.headers['x-api-key'], secretValues.header);
        assert.equal(request.headers.authorization, `Bearer ${secretValues.current}`);
        assert.equal(openRouter.requests.length, 2);
        assert.ok(openRouter.requests.every((received) => received.headers.authorization === `Bearer ${providerKeys.current}`));
      });

      it('hands the model the tool result with the echoed secrets redacted', async () => {
        const [result] = (await events()).filter((event) => event.data.type === 'OBJECTIVE_EVENT_TYPE_TOOL_RESULT');
        const echoed = JSON.parse(result.data.toolResult.content);
        assert.equal(echoed.headers['x-api-key'], '[redacted]');
        assert.equal(echoed.headers.authorization, 'Bearer [redacted]');
        assert.match(echoed.url, /token=\[redacted\]/);
        const { authorization: _authorization, ...otherHeaders } = openRouter.requests[1].headers;
        assert.deepEqual(hitsIn([JSON.stringify(openRouter.requests.map((received) => received.body)), JSON.stringify(otherHeaders)]), []);
      });
    });

    describe('the scan', () => {
      it('finds no canary in any response the client received', () => {
        assert.ok(responses.length >= 20, `${responses.length} responses recorded`);
        assert.deepEqual(hitsIn(responses), []);
      });

      it('finds no canary and no API key token in the captured logs', () => {
        assert.ok(api.logs.length > 0);
        assert.deepEqual(hitsIn(api.logs), []);
        assert.deepEqual(api.logs.filter((line) => line.includes(apiKeyToken)), []);
      });

      it("finds no canary in the objective's OBJECTIVE_EVENTS messages", async () => {
        const expected = (await events()).length;
        const messages = await publishedMessages(api, objectiveId, expected);
        assert.equal(messages.length, expected, 'one message per event');
        assert.ok(messages.some((message) => message.includes('TOOL_RESULT')), 'the tool result was published');
        assert.deepEqual(hitsIn(messages), []);
      });

      it('finds no canary and no API key token in a dump of every table, sealed columns included', async () => {
        const tables: Array<{ table_name: string }> = await api.dataSource.query(
          `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
        );
        assert.ok(tables.length >= 30, `${tables.length} tables`);
        const hits: string[] = [];
        for (const { table_name: table } of tables) {
          const rows: Array<{ row: string }> = await api.dataSource.query(
            `SELECT row_to_json(t)::text AS row FROM "${table}" t WHERE row_to_json(t)::text LIKE $1 OR row_to_json(t)::text LIKE $2`,
            [`%${marker}%`, `%${apiKeyToken}%`],
          );
          hits.push(...rows.map((row) => `${table}: ${row.row}`));
        }
        assert.deepEqual(hits, []);
      });

      it('finds the canaries sealed in the columns meant for them', async () => {
        const columns: Array<{ table_name: string; column_name: string }> = await api.dataSource.query(
          `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'`,
        );
        for (const { table, column } of SEALED_COLUMNS) {
          assert.ok(columns.some((row) => row.table_name === table && row.column_name === column), `${table}.${column} exists`);
        }
        const sealed = async (sql: string) => ((await api.dataSource.query(sql, [ws.workspaceId])) as Array<{ value: string }>).map((row) => row.value);
        const values = [
          ...await sealed('SELECT value_ciphertext AS value FROM workspace_secrets WHERE workspace_id = $1'),
          ...await sealed('SELECT api_key_ciphertext AS value FROM ai_provider_keys WHERE workspace_id = $1'),
          ...await sealed('SELECT wrapped_key AS value FROM workspace_data_keys WHERE workspace_id = $1'),
        ];
        assert.equal(values.length, 3 + 1 + 1);
        for (const value of values) assert.match(value, SEALED_RECORD);
        const stored: Array<{ body: unknown }> = await api.dataSource.query(
          'SELECT body FROM idempotency_records WHERE idempotency_key = ANY($1)',
          [['create-QUERY_TOKEN', 'create-provider-key', 'create-api-key', 'start-objective'].map(keyOf)],
        );
        assert.equal(stored.length, 4);
        for (const { body } of stored) assert.match(JSON.stringify(body), SEALED_RECORD);
      });
    });
  });
}
