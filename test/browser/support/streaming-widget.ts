// A widget whose agent runs on the fake OpenRouter, for seeing answers stream
// into the chat page and measuring how soon a visitor sees the model's first
// token: the real node (startTestApi, embedded runtime), the fake provider
// streaming slowly (chunkDelayMs; it notes when it wrote the first content
// chunk), Debian's Chromium on the chat page at http://<hostname>:<node port>/
// (the hostname mapped to the node), and an observer in the page noting when
// the pending answer first shows text and each text it shows. Both clocks are
// this machine's Date.now(). Shared by test/browser/widget-streaming.test.ts
// and bench/widget-first-token.ts.
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { startTestApi, type TestApi } from '../../support/api';
import { created, createAgent, createVariation } from '../../support/agents-world';
import { fakeAnswers, startFakeOpenRouter, type FakeOpenRouter, type FakeStreaming } from '../../support/fake-openrouter';
import { workspaceFixture, type WorkspaceFixture } from '../../support/workspace-keys';
import { launchChromium, type TestBrowser } from './chromium';

// The browser's globals in page callbacks (the project compiles without the DOM lib).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any, window: any, MutationObserver: any;

export const STREAMING_WIDGET_HOST = 'stream.widget.test';
const MODEL = 'openai/gpt-4o-mini';

export interface StreamingWidget {
  api: TestApi;
  openRouter: FakeOpenRouter;
  chrome: TestBrowser;
  /** The widget host as the browser reaches it: http://stream.widget.test:<node port>. */
  origin: string;
  /** A fresh visitor session's token. */
  mint(): Promise<string>;
  close(): Promise<void>;
}

/** The node, the fake provider, a workspace with an OpenRouter key, an agent on it and its widget, and Chromium. */
export async function startStreamingWidget(): Promise<StreamingWidget> {
  const openRouter = await startFakeOpenRouter();
  const api = await startTestApi({ runtime: true, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true' } });
  const ws: WorkspaceFixture = await workspaceFixture(api);
  const base = `/v1/workspaces/${ws.workspaceId}`;
  await created(api, ws.token, `${base}/ai_provider_keys`, { metadata: { name: 'openrouter' }, spec: { apiKey: 'sk-or-v1-test', openrouter: { baseUrl: openRouter.baseUrl } } });
  const agentId = (await createAgent(api, ws.token, ws.workspaceId)).metadata.id as string;
  await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId: MODEL } } });
  const widget = await created(api, ws.token, `${base}/widgets`, {
    metadata: { name: 'streaming' },
    spec: { agentId, hostname: STREAMING_WIDGET_HOST, allowedOrigins: ['https://customer.example'], title: 'Acme help', theme: 'THEME_LIGHT' },
  });
  const chrome = await launchChromium([STREAMING_WIDGET_HOST]);
  return {
    api,
    openRouter,
    chrome,
    origin: `http://${STREAMING_WIDGET_HOST}:${new URL(api.url).port}`,
    async mint() {
      const response = await api.request('POST', `${base}/widgets/${widget.metadata.id}/sessions`, { token: ws.token, body: {} });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body.token as string;
    },
    async close() {
      await chrome.close();
      await api.close();
      await openRouter.close();
    },
  };
}

/** One answer as the visitor saw it. */
export interface StreamedAnswer {
  /** When the provider wrote the answer's first content chunk (epoch ms). */
  firstContentAt: number;
  /** When the page's pending answer first showed text (epoch ms); undefined if it never did (no delta reached it). */
  firstTextAt?: number;
  /** Each text the pending answer showed, in order (as the observer saw it: texts shown within one task count once). */
  pendingTexts: string[];
  /** The final answers in the log so far. */
  answers: string[];
}

export interface StreamingChat {
  page: Page;
  /** Sends `message`; the model answers `answer` streamed as `streaming` says. Resolves once the objective rests. */
  ask(message: string, answer: string, streaming: FakeStreaming): Promise<StreamedAnswer>;
}

/** Opens the chat page with a fresh session in `context`, with the observer installed before the page's script runs. */
export async function openStreamingChat(widget: StreamingWidget, context: BrowserContext): Promise<StreamingChat> {
  const page = await context.newPage();
  await page.addInitScript(() => {
    const probe = { firstTextAt: undefined as number | undefined, texts: [] as string[] };
    window.firstTokenProbe = probe;
    // Callbacks run as a microtask of the task that changed the DOM: Date.now() here is when the text went in.
    new MutationObserver(() => {
      const bubble = document.querySelector('#chat-log .msg-pending');
      const text: string | undefined = bubble?.lastChild?.data;
      if (!text) return;
      probe.firstTextAt ??= Date.now();
      if (probe.texts.at(-1) !== text) probe.texts.push(text);
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  await page.goto(`${widget.origin}/#session=${await widget.mint()}`);
  await page.waitForSelector('#chat-input');
  const finals = () => page.$$eval('#chat-log .msg-assistant:not(.msg-pending)', (nodes) => nodes.map((n) => n.lastChild.data as string));
  return {
    page,
    async ask(message, answer, streaming) {
      const { requests } = widget.openRouter;
      const before = requests.length;
      const answered = (await finals()).length + 1;
      widget.openRouter.answer(fakeAnswers.completion({ content: answer }, streaming));
      await page.evaluate(() => Object.assign(window.firstTokenProbe, { firstTextAt: undefined, texts: [] }));
      await page.fill('#chat-input', message);
      await page.press('#chat-input', 'Enter');
      await page.waitForFunction(
        (count) => document.querySelectorAll('#chat-log .msg-assistant:not(.msg-pending)').length >= count && document.getElementById('chat-status').textContent === '',
        answered,
      );
      const request = requests.slice(before).find((r) => r.firstContentAt !== undefined);
      assert.ok(request?.firstContentAt, 'the provider streamed the answer');
      const probe = await page.evaluate(() => window.firstTokenProbe as { firstTextAt?: number; texts: string[] });
      return { firstContentAt: request.firstContentAt, firstTextAt: probe.firstTextAt, pendingTexts: probe.texts, answers: await finals() };
    },
  };
}

/** The value at percentile `p` (0-100) of `values` (nearest rank). */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
