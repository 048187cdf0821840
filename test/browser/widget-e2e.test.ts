// The widget end to end in Debian's Chromium: the real node (startTestApi with
// the embedded runtime and builtin/scripted) mints widget sessions whose
// widgetUrl names http://<hostname>:<port>, and the widget host serves the page,
// widget.js and /api on that hostname. Chromium resolves the widget hostnames
// and the customers' sites to this machine (--host-resolver-rules) and reaches
// the node through a TCP proxy that can drop every connection mid-objective.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { BrowserContext, Frame, Page } from 'playwright-core';
import { startTestApi, type TestApi } from '../support/api';
import { createAgent, created, createVariation, MODEL_ID, workspaceFixture } from '../support/agents-world';
import { eventually } from '../support/cluster-harness';
import { startTestToolServer, type TestToolServer } from '../support/tool-server';
import type { WorkspaceFixture } from '../support/workspace-keys';
import { launchChromium, type TestBrowser } from './support/chromium';
import { TcpProxy } from './support/tcp-proxy';
import { VisitorSite } from './support/visitor-site';

const HOST = 'help.widget.test';
const APPROVING_HOST = 'approve.widget.test';

describe('widget end to end in Chromium (the node\'s widget host)', function () {
  this.timeout(60_000);
  let api: TestApi;
  let ws: WorkspaceFixture;
  let proxy: TcpProxy;
  let tools: TestToolServer;
  let chrome: TestBrowser;
  let site: VisitorSite;
  let context: BrowserContext;
  let customer: string;
  const widgetIds: Record<string, string> = {};

  const widgetOrigin = (hostname: string) => `http://${hostname}:${proxy.port}`;
  const mint = async (hostname: string, body: Record<string, unknown> = {}) => {
    const response = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/widgets/${widgetIds[hostname]}/sessions`, { token: ws.token, body });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as { sessionId: string; token: string; expiresAt: string; widgetUrl: string };
  };
  /** The objectives a session created, oldest first. */
  const objectivesOf = async (sessionId: string) =>
    ((await api.dataSource.query('SELECT id FROM objectives WHERE widget_session_id = $1 ORDER BY created_at, id', [sessionId])) as Array<{ id: string }>).map((row) => row.id);
  /** The one objective of the session, once it exists. */
  const onlyObjective = async (sessionId: string) => {
    let ids: string[] = [];
    await eventually(async () => (ids = await objectivesOf(sessionId)).length === 1, 'the objective exists', 10_000);
    return ids[0];
  };
  const cancel = async (objectiveId: string) => {
    const response = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/objectives/${objectiveId}/cancel`, { token: ws.token, body: { reason: 'stopped by the shop' } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
  };
  /** Nothing of a server's own words (objective ids, statuses) reached the visitor. */
  const assertPlainWords = async (chat: Frame) => {
    const text = await chat.textContent('#chat-log') ?? '';
    assert.doesNotMatch(text, /That did not work|obj_|OBJECTIVE_STATUS|FAILED_PRECONDITION|takes no more messages/, text);
  };
  /** Whether the node takes `token` on `hostname`'s /api (a request naming the widget's Host). */
  const accepted = (hostname: string, token: string) => new Promise<boolean>((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port: proxy.port, method: 'GET', path: '/api/objectives/obj_00000000000000000000000000', headers: { host: `${hostname}:${proxy.port}`, authorization: `Bearer ${token}` } }, (response) => {
      response.resume();
      resolve(response.statusCode !== 401);
    });
    request.on('error', reject);
    request.end();
  });

  before(async () => {
    proxy = await TcpProxy.start();
    site = await VisitorSite.start();
    customer = `http://customer.test:${site.port}`;
    api = await startTestApi({ runtime: true, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true', AGENTRT_WIDGET_BASE_URL: `http://{hostname}:${proxy.port}` } });
    proxy.target = Number(new URL(api.url).port);
    ws = await workspaceFixture(api);
    tools = await startTestToolServer();
    const agentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id;
    const variation = await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL_ID } } });
    const assign = async (name: string, requiresApproval: boolean) => {
      const tool = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/tools`, { metadata: { name }, spec: { description: name, http: { url: `${tools.url}/echo`, method: 'POST' } } });
      await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/agents/${agentId}/variations/${variation.metadata.id}/assignments`, { toolId: tool.metadata.id, requiresApproval });
    };
    await assign('order_status', false);
    await assign('cancel_order', true);
    for (const [hostname, allowVisitorApprovals] of [[HOST, false], [APPROVING_HOST, true]] as const) {
      const widget = await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/widgets`, {
        metadata: { name: hostname },
        spec: { agentId, hostname, allowedOrigins: [customer], title: 'Acme help', greeting: 'Hi! Ask me about your order.', theme: 'THEME_LIGHT', allowVisitorApprovals },
      });
      widgetIds[hostname] = widget.metadata.id;
    }
    chrome = await launchChromium([HOST, APPROVING_HOST, 'customer.test', 'other.test']);
  });
  after(async () => {
    await chrome?.close();
    await api?.close();
    await tools?.close();
    await proxy?.close();
    await site?.close();
  });
  beforeEach(async () => {
    context = await chrome.browser.newContext();
  });
  afterEach(async () => context?.close());

  async function embed(hostname: string, token: string): Promise<{ page: Page; chat: Frame }> {
    site.page('/shop', `<!doctype html><html lang="en"><head><title>Shop</title></head><body><h1>Shop</h1>
      <script src="${widgetOrigin(hostname)}/widget.js" data-session="${token}"></script></body></html>`);
    const page = await context.newPage();
    await page.goto(`${customer}/shop`);
    const chat = await (await page.waitForSelector('iframe')).contentFrame();
    assert.ok(chat);
    await chat.waitForSelector('#chat-input');
    return { page, chat };
  }
  const messages = (chat: Frame) => chat.$$eval('#chat-log .msg', (nodes) => nodes.map((n) => `${n.getAttribute('data-role')}: ${n.textContent}`));
  const notes = (chat: Frame) => chat.$$eval('#chat-log .note', (nodes) => nodes.map((n) => n.textContent));
  async function say(chat: Frame, text: string): Promise<void> {
    await chat.fill('#chat-input', text);
    await chat.press('#chat-input', 'Enter');
  }

  it('a visitor on an allowed origin sends a message through widget.js and sees the streamed answer, then a follow-up', async () => {
    const session = await mint(HOST);
    assert.equal(session.widgetUrl, `${widgetOrigin(HOST)}/#session=${session.token}`);
    const { page, chat } = await embed(HOST, session.token);
    assert.equal(await page.getAttribute('iframe', 'src'), session.widgetUrl);
    assert.equal(chat.url(), `${widgetOrigin(HOST)}/`, 'the token left the address bar');
    assert.equal(await chat.textContent('h1'), 'Acme help');
    assert.equal(await chat.textContent('#chat-greeting'), 'Hi! Ask me about your order.');
    assert.equal(await chat.evaluate(() => (globalThis as unknown as { document: { documentElement: { dataset: { theme: string } } } }).document.documentElement.dataset.theme), 'light');

    await say(chat, 'SAY Your order ships tomorrow.');
    await chat.waitForSelector('.msg-assistant:text("Your order ships tomorrow.")');
    await chat.waitForSelector('#chat-status:text-matches("^$")', { state: 'attached' });
    await say(chat, 'CALL order_status {"orderId":"1042"}\nSAY It is packed.');
    await chat.waitForSelector('.msg-assistant:text("It is packed.")');
    assert.deepEqual(await messages(chat), [
      'user: You: SAY Your order ships tomorrow.',
      'assistant: Assistant: Your order ships tomorrow.',
      'user: You: CALL order_status {"orderId":"1042"}\nSAY It is packed.',
      'assistant: Assistant: It is packed.',
    ]);
    assert.deepEqual(await notes(chat), ['order status: Done']);
  });

  it('resumes a stream dropped mid-objective with Last-Event-ID, losing and repeating nothing', async () => {
    const { token } = await mint(HOST);
    const streams: Array<string | undefined> = [];
    context.on('request', (request) => { if (request.url().endsWith('/events/stream')) streams.push(request.headers()['last-event-id']); });
    const { chat } = await embed(HOST, token);
    await say(chat, 'CALL order_status {}\nSLEEP 1500\nSAY Back again.');
    await chat.waitForSelector('text=order status: Done');
    proxy.cut();
    await chat.waitForSelector('.msg-assistant:text("Back again.")');
    assert.deepEqual(await messages(chat), ['user: You: CALL order_status {}\nSLEEP 1500\nSAY Back again.', 'assistant: Assistant: Back again.']);
    assert.deepEqual(await notes(chat), ['order status: Done']);
    assert.equal(streams[0], undefined);
    assert.ok(streams.slice(1).some((id) => Number(id) >= 4), `a reconnection resumed after the events it had: ${JSON.stringify(streams)}`);
  });

  it('asks the visitor to approve a tool call on a widget that allows it, and not on one that does not', async () => {
    let { chat } = await embed(HOST, (await mint(HOST)).token);
    await say(chat, 'CALL cancel_order {}\nSAY Cancelled.');
    await chat.waitForSelector('text=Waiting for a team member to allow cancel order…');
    assert.equal(await chat.$$eval('#chat-log button', (buttons) => buttons.length), 0);

    ({ chat } = await embed(APPROVING_HOST, (await mint(APPROVING_HOST)).token));
    await say(chat, 'CALL cancel_order {}\nSAY Cancelled.');
    await (await chat.waitForSelector('button:text("Approve")')).press('Enter');
    await chat.waitForSelector('.msg-assistant:text("Cancelled.")');
    assert.deepEqual(await notes(chat), ['cancel order: Done']);
  });

  it('starts a new conversation with the message after one that FAILED, and a reload of the shop does not bring the failed one back', async () => {
    const session = await mint(HOST);
    const { page, chat } = await embed(HOST, session.token);
    await say(chat, 'FAIL upstream answered 502 at http://10.0.0.7/internal');
    await chat.waitForSelector('.note-divider:text("Your next message starts a new conversation.")');
    await say(chat, 'SAY Fresh start.');
    await chat.waitForSelector('.msg-assistant:text("Fresh start.")');
    const [failed, fresh] = await objectivesOf(session.sessionId);
    assert.ok(fresh, 'the message started a second objective');
    assert.equal((await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${failed}`, { token: ws.token })).body.info.status, 'OBJECTIVE_STATUS_FAILED');
    assert.deepEqual(await messages(chat), [
      'user: You: FAIL upstream answered 502 at http://10.0.0.7/internal', 'user: You: SAY Fresh start.', 'assistant: Assistant: Fresh start.',
    ]);
    assert.deepEqual(await notes(chat), ['Sorry, something went wrong.', 'The assistant could not finish this answer.', 'Your next message starts a new conversation.']);
    await assertPlainWords(chat);

    await page.reload();
    const again = (await (await page.waitForSelector('iframe')).contentFrame())!;
    await again.waitForSelector('.msg-assistant:text("Fresh start.")');
    assert.deepEqual(await messages(again), ['user: You: SAY Fresh start.', 'assistant: Assistant: Fresh start.'], 'the reload resumes the new conversation');
  });

  it('settles the question of a conversation cancelled through the API (no live button) and starts a new one with the next message', async () => {
    const session = await mint(APPROVING_HOST);
    const { chat } = await embed(APPROVING_HOST, session.token);
    await say(chat, 'CALL cancel_order {}\nSAY Cancelled.');
    await chat.waitForSelector('button:text("Approve")');
    await cancel(await onlyObjective(session.sessionId));
    await chat.waitForSelector('.note-divider');
    assert.equal(await chat.$$eval('#chat-log button', (buttons) => buttons.length), 0, 'no Approve or Deny of a cancelled conversation');
    assert.deepEqual(await notes(chat), ['cancel order: not run, the conversation ended', 'The conversation was stopped.', 'Your next message starts a new conversation.']);
    await say(chat, 'SAY Hello again.');
    await chat.waitForSelector('.msg-assistant:text("Hello again.")');
    assert.equal((await objectivesOf(session.sessionId)).length, 2);
    await assertPlainWords(chat);
  });

  /**
   * A visitor's conversation waiting for approval, cancelled through the API
   * while the page hears nothing of it (its stream cut, every reconnection failing).
   */
  async function conversationEndedUnseen(): Promise<{ session: Awaited<ReturnType<typeof mint>>; chat: Frame; first: string }> {
    const session = await mint(HOST);
    const { chat } = await embed(HOST, session.token);
    await say(chat, 'CALL cancel_order {}\nSAY Cancelled.');
    await chat.waitForSelector('text=Waiting for a team member to allow cancel order…');
    const first = await onlyObjective(session.sessionId);
    await context.route(`**/api/objectives/${first}/events/stream`, (route) => route.abort());
    proxy.cut();
    await chat.waitForSelector('#chat-status:text("Connection lost. Reconnecting…")');
    await cancel(first);
    return { session, chat, first };
  }

  it('sends a follow-up to a new conversation when the node refuses it because the conversation ended unseen (FAILED_PRECONDITION)', async () => {
    const { session, chat, first } = await conversationEndedUnseen();
    await say(chat, 'SAY Still there?');
    await chat.waitForSelector('.msg-assistant:text("Still there?")');
    const objectives = await objectivesOf(session.sessionId);
    assert.equal(objectives.length, 2, 'the follow-up started a new objective');
    assert.deepEqual(await messages(chat), ['user: You: CALL cancel_order {}\nSAY Cancelled.', 'user: You: SAY Still there?', 'assistant: Assistant: Still there?']);
    assert.deepEqual(await notes(chat), ['cancel order: not run, the conversation ended', 'This conversation has ended. Your message starts a new one.']);
    await assertPlainWords(chat);
    const follow = (await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${first}`, { token: ws.token })).body;
    assert.equal(follow.info.status, 'OBJECTIVE_STATUS_CANCELLED');
  });

  it('sends a follow-up to a new conversation when the conversation is gone (404: erased, past retention)', async () => {
    const { session, chat, first } = await conversationEndedUnseen();
    await eventually(async () => (await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${first}`, { token: ws.token })).body.info?.status === 'OBJECTIVE_STATUS_CANCELLED', 'cancelled', 10_000);
    // Its record removed, as retention or an erasure removes it: the node answers the follow-up 404.
    await api.dataSource.query('DELETE FROM objectives WHERE id = $1', [first]);
    await say(chat, 'SAY Anyone?');
    await chat.waitForSelector('.msg-assistant:text("Anyone?")');
    const remaining = await objectivesOf(session.sessionId);
    assert.equal(remaining.length, 1, 'one objective: the new one');
    assert.notEqual(remaining[0], first);
    assert.deepEqual(await notes(chat), ['cancel order: not run, the conversation ended', 'This conversation has ended. Your message starts a new one.']);
    await assertPlainWords(chat);
  });

  it('refuses an expired token in plain words', async () => {
    const { token } = await mint(HOST, { ttlSeconds: 1 });
    await eventually(async () => !(await accepted(HOST, token)), 'the token expired', 10_000);
    const { chat } = await embed(HOST, token);
    await say(chat, 'SAY hello?');
    await chat.waitForSelector('.note-error');
    assert.match(await chat.textContent('.note-error') ?? '', /This chat session has expired or is not valid/);
  });

  it('cannot be framed by another origin, whose calls to /api get no CORS answer', async () => {
    const other = `http://other.test:${site.port}`;
    const { token, widgetUrl } = await mint(HOST);
    site.page('/evil', `<!doctype html><html lang="en"><head><title>Other</title></head><body><iframe src="${widgetUrl}" title="chat"></iframe></body></html>`);
    const page = await context.newPage();
    const refusals: string[] = [];
    page.on('console', (msg) => { if (/frame-ancestors/.test(msg.text())) refusals.push(msg.text()); });
    await page.goto(`${other}/evil`);
    const frame = await (await page.$('iframe'))!.contentFrame();
    assert.equal(await frame!.$('#chat-input'), null, 'the chat page did not load in the other origin\'s frame');
    assert.ok(refusals.length > 0, 'Chromium reports the frame-ancestors refusal');
    const answer = await page.evaluate(async ([url, bearer]) => {
      try {
        const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: '{"content":"SAY hi"}' });
        return `answered ${res.status}`;
      } catch (err) {
        return `refused: ${(err as Error).name}`;
      }
    }, [`${widgetOrigin(HOST)}/api/objectives`, token]);
    assert.equal(answer, 'refused: TypeError');
  });
});
