// The visitor's chat page and widget.js in Debian's Chromium, against a fake
// widget host (support/fake-widget-host.ts) that serves the real asset files
// and an /api the test controls: embedding, sending, streaming, resume without
// loss or repeats, approvals, errors, framing and CORS refusals, keyboard use.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Frame, Page } from 'playwright-core';
import { FakeWidgetHost, type WidgetSettings } from './support/fake-widget-host';
import { launchChromium, type TestBrowser } from './support/chromium';
import { VisitorSite } from './support/visitor-site';

// The browser's globals in page.evaluate callbacks (the project compiles without the DOM lib).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any, getComputedStyle: (element: unknown) => { outlineStyle: string; backgroundColor: string };

const SETTINGS: WidgetSettings = { title: 'Acme help', greeting: 'Hi! Ask me about your order.', theme: 'light', allowVisitorApprovals: false };

describe('widget page in Chromium (fake widget host)', function () {
  this.timeout(60_000);
  let chrome: TestBrowser;
  let site: VisitorSite;
  let context: BrowserContext;
  let host: FakeWidgetHost;
  let customer: string;
  let widgetOrigin: string;

  const startHost = async (widget: Partial<WidgetSettings> = {}) => {
    await host?.close();
    host = await FakeWidgetHost.start({ allowedOrigins: [customer], widget: { ...SETTINGS, ...widget } });
    widgetOrigin = `http://widget.test:${host.port}`;
  };

  before(async () => {
    chrome = await launchChromium(['widget.test', 'customer.test', 'other.test']);
    site = await VisitorSite.start();
    customer = `http://customer.test:${site.port}`;
  });
  after(async () => {
    await host?.close();
    await site?.close();
    await chrome?.close();
  });
  beforeEach(async () => {
    await startHost();
    context = await chrome.browser.newContext();
  });
  afterEach(async () => context?.close());

  /** The customer's page with the widget.js snippet; answers the chat's frame once the page shows. */
  async function embed(token: string): Promise<{ page: Page; chat: Frame }> {
    site.page('/shop', `<!doctype html><html lang="en"><head><title>Shop</title></head><body><h1>Shop</h1>
      <script src="${widgetOrigin}/widget.js" data-session="${token}"></script></body></html>`);
    const page = await context.newPage();
    await page.goto(`${customer}/shop`);
    const element = await page.waitForSelector('iframe');
    const chat = await element.contentFrame();
    assert.ok(chat);
    await chat.waitForSelector('#chat-input');
    return { page, chat };
  }

  const messages = (chat: Frame) => chat.$$eval('#chat-log .msg', (nodes) => nodes.map((n) => `${n.getAttribute('data-role')}: ${n.textContent}`));

  it('embeds with widget.js on an allowed origin: the visitor sends with Enter and sees the streamed answer', async () => {
    const token = host.mint();
    const { page, chat } = await embed(token);
    assert.equal(await page.getAttribute('iframe', 'src'), `${widgetOrigin}/#session=${token}`);
    assert.equal(chat.url(), `${widgetOrigin}/`, 'the token left the address bar');
    assert.equal(await chat.textContent('h1'), 'Acme help');
    assert.equal(await chat.textContent('#chat-greeting'), 'Hi! Ask me about your order.');

    await chat.fill('#chat-input', 'SAY Your order ships tomorrow.');
    await chat.press('#chat-input', 'Enter');
    await chat.waitForSelector('.msg-assistant');
    assert.deepEqual(await messages(chat), ['user: You: SAY Your order ships tomorrow.', 'assistant: Assistant: Your order ships tomorrow.']);
    assert.equal(await chat.inputValue('#chat-input'), '');

    await chat.fill('#chat-input', 'SAY Anything else?');
    await chat.click('#chat-send');
    await chat.waitForFunction(() => document.querySelectorAll('.msg-assistant').length === 2);
    assert.equal((await messages(chat)).length, 4);
    assert.equal(new Set(host.streamRequests.map((r) => r.objectiveId)).size, 1, 'the follow-up went to the same objective');

    const height = await page.$eval('iframe', (f) => f.getBoundingClientRect().height);
    const content = await chat.evaluate(() => document.documentElement.scrollHeight);
    assert.equal(Math.round(height), content, 'widget.js sized the iframe from the page\'s height message');
  });

  it('is usable from the keyboard with labels, a live log and visible focus', async () => {
    const { chat } = await embed(host.mint());
    assert.equal(await chat.getAttribute('#chat-log', 'role'), 'log');
    assert.equal(await chat.getAttribute('#chat-log', 'aria-live'), 'polite');
    assert.equal(await chat.textContent('label[for="chat-input"]'), 'Your message');

    const order: string[] = [];
    await chat.focus('body');
    for (let i = 0; i < 3; i++) {
      await chat.page().keyboard.press('Tab');
      order.push(await chat.evaluate(() => document.activeElement?.id ?? ''));
    }
    assert.deepEqual(order, ['chat-log', 'chat-input', 'chat-send']);
    await chat.page().keyboard.press('Shift+Tab');
    const outline = await chat.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    assert.notEqual(outline, 'none', 'the focused textarea shows its focus');

    await chat.page().keyboard.type('SAY first line');
    await chat.page().keyboard.press('Shift+Enter');
    await chat.page().keyboard.type('second line');
    assert.equal(await chat.inputValue('#chat-input'), 'SAY first line\nsecond line', 'Shift+Enter starts a new line');
    await chat.page().keyboard.press('Enter');
    await chat.waitForSelector('.msg-assistant');
    assert.equal(await chat.evaluate(() => document.activeElement?.id), 'chat-input', 'focus stays in the textarea after sending');
  });

  it('tells tool activity and errors in plain words', async () => {
    const { chat } = await embed(host.mint());
    await chat.fill('#chat-input', 'CALL order_status\nCALLFAIL refund_order TIMED_OUT upstream said 504 at http://10.0.0.1/refund\nFAIL the model gave up');
    await chat.press('#chat-input', 'Enter');
    await chat.waitForFunction(() => /new conversation/.test(document.getElementById('chat-log')!.textContent ?? ''));
    const notes = await chat.$$eval('#chat-log .note', (nodes) => nodes.map((n) => n.textContent));
    assert.deepEqual(notes, [
      'order status: Done',
      'refund order: The tool did not answer in time.',
      'Sorry, something went wrong.',
      'The assistant could not finish this answer.',
      'Your next message starts a new conversation.',
    ]);
  });

  it('starts a new conversation with the message after one that FAILED (the failed one takes no more), and forgets the failed one', async () => {
    const { page, chat } = await embed(host.mint());
    await chat.fill('#chat-input', 'SAY Checking.\nFAIL the model gave up');
    await chat.press('#chat-input', 'Enter');
    await chat.waitForSelector('.note-divider:text("Your next message starts a new conversation.")');
    await chat.fill('#chat-input', 'SAY Fresh start.');
    await chat.press('#chat-input', 'Enter');
    await chat.waitForSelector('.msg-assistant:text("Fresh start.")');
    assert.equal(host.objectiveIds.length, 2, 'the message started a second objective');
    assert.deepEqual(await messages(chat), [
      'user: You: SAY Checking.\nFAIL the model gave up', 'assistant: Assistant: Checking.', 'user: You: SAY Fresh start.', 'assistant: Assistant: Fresh start.',
    ], 'the failed conversation stays above the note');
    assert.equal(await chat.$$eval('#chat-log .note-error', (nodes) => nodes.map((n) => n.textContent).join(' | ')),
      'Sorry, something went wrong. | The assistant could not finish this answer.', 'no raw server text');
    await page.reload();
    const again = (await (await page.waitForSelector('iframe')).contentFrame())!;
    await again.waitForSelector('.msg-assistant:text("Fresh start.")');
    assert.deepEqual(await messages(again), ['user: You: SAY Fresh start.', 'assistant: Assistant: Fresh start.'], 'a reload resumes the new conversation');
  });

  it('settles the questions of a CANCELLED conversation (no live button) and starts a new one with the next message', async () => {
    await startHost({ allowVisitorApprovals: true });
    const { page, chat } = await embed(host.mint());
    await chat.fill('#chat-input', 'ASK cancel_order\nSAY Cancelled.');
    await chat.press('#chat-input', 'Enter');
    await chat.waitForSelector('button:text("Approve")');
    host.cancel(host.objectiveIds[0]);
    await chat.waitForSelector('.note-divider');
    assert.equal(await chat.$$eval('#chat-log button', (buttons) => buttons.length), 0, 'no Approve or Deny of an ended conversation');
    assert.deepEqual(await chat.$$eval('#chat-log .note', (nodes) => nodes.map((n) => n.textContent)), [
      'cancel order: not run, the conversation ended', 'The conversation was stopped.', 'Your next message starts a new conversation.',
    ]);
    assert.equal(await chat.textContent('#chat-status'), '');
    await page.reload();
    const again = (await (await page.waitForSelector('iframe')).contentFrame())!;
    await again.waitForSelector('#chat-input');
    assert.deepEqual(await messages(again), [], 'a reload does not bring the ended conversation back');
    await again.fill('#chat-input', 'SAY Hello again.');
    await again.press('#chat-input', 'Enter');
    await again.waitForSelector('.msg-assistant:text("Hello again.")');
    assert.equal(host.objectiveIds.length, 2);
    assert.deepEqual(host.decisions, []);
  });

  it('names each tool call by its id, whatever order parallel calls run in', async () => {
    const { chat } = await embed(host.mint());
    // One answer calls order_status then refund_order; refund_order's events come first.
    await chat.fill('#chat-input', 'PARALLEL order_status refund_order\nSAY Both done.');
    await chat.press('#chat-input', 'Enter');
    await chat.waitForSelector('.msg-assistant:text("Both done.")');
    assert.deepEqual(await chat.$$eval('#chat-log .note', (nodes) => nodes.map((n) => n.textContent)), ['refund order: Done', 'order status: Done']);
  });

  it('asks the visitor to approve a tool call only when the widget allows it', async () => {
    let { chat } = await embed(host.mint());
    await chat.fill('#chat-input', 'ASK cancel_order');
    await chat.press('#chat-input', 'Enter');
    await chat.waitForSelector('text=Waiting for a team member to allow cancel order…');
    assert.equal(await chat.$$eval('#chat-log button', (b) => b.length), 0);

    await startHost({ allowVisitorApprovals: true });
    ({ chat } = await embed(host.mint()));
    await chat.fill('#chat-input', 'ASK cancel_order\nASK refund_order\nSAY Cancelled, not refunded.');
    await chat.press('#chat-input', 'Enter');
    const approve = await chat.waitForSelector('button:text("Approve")');
    assert.equal(await chat.evaluate(() => document.activeElement?.textContent), 'Approve', 'the prompt takes focus');
    assert.match(await chat.textContent('#chat-log [role="group"]') ?? '', /The assistant wants to use cancel order\. Do you allow it\?/);
    await approve.press('Enter');
    await chat.waitForSelector('text=The assistant wants to use refund order. Do you allow it?');
    await chat.click('button:text("Deny")');
    await chat.waitForSelector('.msg-assistant:text("Cancelled, not refunded.")');
    assert.deepEqual(host.decisions.map((d) => d.verdict), ['approve', 'deny']);
    assert.equal(await chat.$$eval('#chat-log button', (b) => b.length), 0);
    assert.deepEqual(await chat.$$eval('#chat-log .note', (nodes) => nodes.map((n) => n.textContent)), ['cancel order: Done', 'refund order: not allowed']);
  });

  it('moves focus to a new approval question only when the visitor is not writing, and never on a replay', async () => {
    await startHost({ allowVisitorApprovals: true });
    // The chat page on its own (as the window with the focus, so a replay on load could take it).
    const page = await context.newPage();
    await page.goto(`${widgetOrigin}/#session=${host.mint()}`);
    const chat = page.mainFrame();
    await chat.fill('#chat-input', 'WAIT\nASK cancel_order\nSAY Cancelled.');
    await chat.press('#chat-input', 'Enter');
    await chat.waitForSelector('.msg-user');
    await chat.fill('#chat-input', 'And my other order');
    host.release();
    await chat.waitForSelector('button:text("Approve")');
    assert.equal(await chat.evaluate(() => document.activeElement?.id), 'chat-input', 'the visitor writing keeps the focus');
    assert.equal(await chat.inputValue('#chat-input'), 'And my other order');
    assert.equal(await chat.textContent('#chat-status'), 'The assistant asks to use cancel order: Approve or Deny is in the conversation.');

    await page.reload();
    const again = page.mainFrame();
    await again.waitForSelector('button:text("Approve")');
    assert.ok(await again.evaluate(() => document.hasFocus()), 'the reloaded page has the focus');
    assert.notEqual(await again.evaluate(() => document.activeElement?.textContent), 'Approve', 'the question replayed on load does not take the focus');
    assert.equal(await again.textContent('#chat-status'), 'The assistant asks to use cancel order: Approve or Deny is in the conversation.');
    await again.click('button:text("Approve")');
    await again.waitForSelector('.msg-assistant:text("Cancelled.")');
    assert.deepEqual(host.decisions.map((d) => d.verdict), ['approve']);
  });

  it('shows an answer as it streams, in a pending bubble the final answer replaces, once', async () => {
    const { chat } = await embed(host.mint());
    // Every text a pending bubble shows, as the test's observer sees it (an answer growing, then gone).
    await chat.evaluate(() => {
      const seen: string[] = [];
      (globalThis as unknown as { pendingTexts: string[] }).pendingTexts = seen;
      new (globalThis as unknown as { MutationObserver: new (callback: (records: Array<{ target: { parentElement?: { classList: { contains(name: string): boolean } }; data?: string } }>) => void) => { observe(node: unknown, options: unknown): void } }).MutationObserver((records) => {
        for (const record of records) if (record.target.parentElement?.classList.contains('msg-pending')) seen.push(record.target.data ?? '');
      }).observe(document.getElementById('chat-log'), { subtree: true, characterData: true });
    });
    const delta = (offset: number, text: string) => `DELTA ${JSON.stringify({ offset, text })}`;
    const pending = () => chat.$$eval('#chat-log .msg-pending', (nodes) => nodes.map((n) => ({ text: n.lastChild.data, hidden: n.getAttribute('aria-hidden') })));
    const answers = () => chat.$$eval('#chat-log .msg-assistant', (nodes) => nodes.map((n) => n.textContent));
    await chat.fill('#chat-input', [
      'WAIT', delta(0, 'Your or'), delta(7, 'der'), delta(7, 'der'),
      'WAIT', delta(0, 'Your order'), delta(10, ' ships'), delta(30, 'after a gap'),
      'WAIT', 'SAY Your order ships today.',
      'WAIT', delta(0, 'Let me check'), 'CALL order_status', 'SAY Done.',
    ].join('\n'));
    await chat.press('#chat-input', 'Enter');
    await chat.waitForSelector('.msg-user');
    host.release();
    await chat.waitForSelector('.msg-pending:text("Your order")');
    assert.deepEqual(await pending(), [{ text: 'Your order', hidden: 'true' }], 'a repeated delta does not double its text; screen readers wait for the final answer');

    // A dropped stream resumes after the last stored event: deltas are not counted.
    host.cutStreams();
    await chat.waitForFunction(() => /Reconnecting/.test(document.getElementById('chat-status').textContent));
    await chat.waitForFunction(() => !/Reconnecting/.test(document.getElementById('chat-status').textContent));
    assert.deepEqual(host.streamRequests.map((r) => r.lastEventId), [null, '1']);
    host.release();
    await chat.waitForSelector('.msg-pending:text("Your order ships")');
    assert.deepEqual(await pending(), [{ text: 'Your order ships', hidden: 'true' }], 'a restarted call replaces the text; text after a gap waits');

    host.release();
    await chat.waitForSelector('.msg-assistant:not(.msg-pending):text("Your order ships today.")');
    assert.deepEqual(await pending(), []);
    assert.deepEqual(await answers(), ['Assistant: Your order ships today.']);
    assert.equal(await chat.getAttribute('.msg-assistant', 'aria-hidden'), null, 'the final answer is read out');

    host.release();
    await chat.waitForSelector('.msg-assistant:text("Done.")');
    assert.deepEqual(await pending(), []);
    assert.deepEqual(await answers(), ['Assistant: Your order ships today.', 'Assistant: Done.'], 'the bubble of a turn with only tool calls is gone');
    assert.deepEqual(await chat.$$eval('#chat-log .note', (nodes) => nodes.map((n) => n.textContent)), ['order status: Done']);
    const seen = await chat.evaluate(() => (globalThis as unknown as { pendingTexts: string[] }).pendingTexts);
    for (const text of ['Your order', 'Your order ships', 'Let me check']) assert.ok(seen.includes(text), `a pending bubble showed "${text}": ${JSON.stringify(seen)}`);
    assert.deepEqual(seen.filter((text) => !['Your or', 'Your order', 'Your order ships', 'Let me check'].includes(text)), [], 'nothing else, never doubled text');
  });

  it('resumes a dropped stream with Last-Event-ID, losing and repeating nothing', async () => {
    host.repeatOnResume = true; // the server even sends the last event again: the page drops it by sequence
    const { chat } = await embed(host.mint());
    await chat.fill('#chat-input', 'SAY one\nWAIT\nSAY two\nSAY three');
    await chat.press('#chat-input', 'Enter');
    await chat.waitForSelector('.msg-assistant:text("one")');
    host.cutStreams();
    host.release();
    await chat.waitForSelector('.msg-assistant:text("three")');
    assert.deepEqual(await messages(chat), ['user: You: SAY one\nWAIT\nSAY two\nSAY three', 'assistant: Assistant: one', 'assistant: Assistant: two', 'assistant: Assistant: three']);
    assert.deepEqual(host.streamRequests.map((r) => r.lastEventId), [null, '2']);
  });

  it('comes back when the server ends the stream before the objective rests', async () => {
    const { chat } = await embed(host.mint());
    await chat.fill('#chat-input', 'SAY one\nWAIT\nSAY two');
    await chat.press('#chat-input', 'Enter');
    await chat.waitForSelector('.msg-assistant:text("one")');
    host.endStreams();
    host.release();
    await chat.waitForSelector('.msg-assistant:text("two")');
    assert.deepEqual(await messages(chat), ['user: You: SAY one\nWAIT\nSAY two', 'assistant: Assistant: one', 'assistant: Assistant: two']);
    assert.deepEqual(host.streamRequests.map((r) => r.lastEventId), [null, '2']);
  });

  it('keeps the session and the conversation over a reload', async () => {
    const { page, chat } = await embed(host.mint());
    await chat.fill('#chat-input', 'SAY kept');
    await chat.press('#chat-input', 'Enter');
    await chat.waitForSelector('.msg-assistant');
    await page.reload();
    const again = (await (await page.waitForSelector('iframe')).contentFrame())!;
    await again.waitForSelector('.msg-assistant:text("kept")');
    assert.deepEqual(await messages(again), ['user: You: SAY kept', 'assistant: Assistant: kept']);
    assert.equal(new Set(host.streamRequests.map((r) => r.objectiveId)).size, 1, 'the reloaded page streams the same objective');
  });

  it('refuses an expired token in plain words', async () => {
    const { chat } = await embed(host.mint(true));
    await chat.fill('#chat-input', 'SAY hello?');
    await chat.press('#chat-input', 'Enter');
    await chat.waitForSelector('.note-error');
    assert.match(await chat.textContent('.note-error') ?? '', /This chat session has expired or is not valid/);
    assert.equal(await chat.isDisabled('#chat-input'), true);
  });

  it('cannot be framed by another origin, whose calls to /api get no CORS answer', async () => {
    const other = `http://other.test:${site.port}`;
    const token = host.mint();
    site.page('/evil', `<!doctype html><html lang="en"><head><title>Other</title></head><body><iframe src="${widgetOrigin}/#session=${token}" title="chat"></iframe></body></html>`);
    const page = await context.newPage();
    const refusals: string[] = [];
    page.on('console', (msg) => { if (/frame-ancestors/.test(msg.text())) refusals.push(msg.text()); });
    await page.goto(`${other}/evil`);
    await page.waitForFunction(() => true);
    const frame = await (await page.$('iframe'))!.contentFrame();
    await page.waitForLoadState('load');
    assert.equal(await frame!.$('#chat-input'), null, 'the chat page did not load in the other origin\'s frame');
    assert.ok(refusals.length > 0, 'Chromium reports the frame-ancestors refusal');

    const answer = await page.evaluate(async ([url, bearer]) => {
      try {
        const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: '{"content":"SAY hi"}' });
        return `answered ${res.status}`;
      } catch (err) {
        return `refused: ${(err as Error).name}`;
      }
    }, [`${widgetOrigin}/api/objectives`, token]);
    assert.equal(answer, 'refused: TypeError');
    const preflight = await fetch(`http://127.0.0.1:${host.port}/api/objectives`, { method: 'OPTIONS', headers: { origin: other, 'access-control-request-method': 'POST' } });
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
  });

  it('shows light and dark themes (screenshots: SCREENSHOTS=docs)', async () => {
    const dir = process.env.SCREENSHOTS ?? path.join(os.tmpdir(), 'agentrt-widget-screenshots');
    mkdirSync(dir, { recursive: true });
    const backgrounds: string[] = [];
    for (const theme of ['light', 'dark']) {
      await startHost({ theme, allowVisitorApprovals: true });
      const page = await context.newPage();
      await page.setViewportSize({ width: 440, height: 640 });
      await page.goto(`${widgetOrigin}/#session=${host.mint()}`);
      await page.fill('#chat-input', 'SAY Your order #1042 ships tomorrow.\nCALL order_status\nASK cancel_order');
      await page.press('#chat-input', 'Enter');
      await page.waitForSelector('button:text("Approve")');
      await page.fill('#chat-input', 'Thanks!');
      backgrounds.push(await page.evaluate(() => getComputedStyle(document.body).backgroundColor));
      await page.screenshot({ path: path.join(dir, `widget-${theme}.png`) });
      await page.close();
    }
    assert.deepEqual(backgrounds, ['rgb(255, 255, 255)', 'rgb(18, 20, 23)']);
  });
});
