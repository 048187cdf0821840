// Streamed answers on the event streams (issue 26, token-level streaming):
// with the fake OpenRouter streaming slowly, `.../events/stream?deltas=true`
// sends the answer's text as `event: delta` frames (no `id:`) before its
// ASSISTANT_MESSAGE, whose content they make; without `deltas=true` a client
// sees no delta; the widget host's stream always sends them (only
// modelTurn, offset and text). Every stream here polls once a minute
// (pollMs 60 s): events that arrive promptly were pushed by the live feed's
// commit nudges. Once streams end, however they end, the live feed holds no
// listener and no bus subscription. Embedded mode (in-process bus, the
// runtime's commits) and cluster mode (core NATS, JetStream's messages).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { objectiveRoutes } from '../../http/routes/objectives.routes';
import { startTestApi, type TestApi } from '../support/api';
import { created, createAgent, createVariation, MODEL_ID, workspaceFixture } from '../support/agents-world';
import { deleteStream, deleteWebhookIntakeDurables, eventually, TEST_NATS_URL, uniqueBusNames } from '../support/cluster-harness';
import { fakeAnswers, startFakeOpenRouter, type FakeOpenRouter } from '../support/fake-openrouter';
import type { WorkspaceFixture } from '../support/workspace-keys';

/* eslint-disable @typescript-eslint/no-explicit-any */

const PROVIDER_MODEL = 'openai/gpt-4o-mini';
/** 5 chunks of 5 characters, 100 ms apart. */
const ANSWER = 'Tokens arrive one by one.';
const SLOW = { chunkChars: 5, chunkDelayMs: 100 };
const ASSISTANT_MESSAGE = 'OBJECTIVE_EVENT_TYPE_ASSISTANT_MESSAGE';
const FINALIZED = 'OBJECTIVE_EVENT_TYPE_FINALIZED';
/** The streams' poll interval here: far longer than any test waits. */
const POLL_MS = 60_000;

interface Frame {
  /** When the frame arrived (Date.now()). */
  at: number;
  id?: string;
  event?: string;
  data?: any;
}

interface OpenStream {
  status: number;
  frames: Frame[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  /** Closes it from the client's side. */
  close(): void;
}

/** Opens an SSE stream with node:http (a Host of our choosing), recording each frame as it arrives. */
function openStream(url: string, path: string, headers: Record<string, string>): Promise<OpenStream> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method: 'GET', path, headers: { host: `127.0.0.1:${port}`, ...headers } }, (response) => {
      const frames: Frame[] = [];
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const frame: Frame = { at: Date.now() };
          for (const line of block.split('\n')) {
            const colon = line.indexOf(':');
            if (colon <= 0) continue;
            const field = line.slice(0, colon);
            const value = line.slice(colon + 1).replace(/^ /, '');
            if (field === 'id' || field === 'event') frame[field] = value;
            if (field === 'data') frame.data = JSON.parse(value);
          }
          if (frame.data !== undefined) frames.push(frame);
        }
      });
      const ended = new Promise<void>((done) => {
        response.once('end', done);
        response.once('close', done);
      });
      resolve({ status: response.statusCode ?? 0, frames, ended, close: () => request.destroy() });
    });
    request.on('error', (error) => (request.destroyed ? undefined : reject(error)));
    request.end();
  });
}

const deltasOf = (frames: Frame[]) => frames.filter((frame) => frame.event === 'delta');
const eventsOf = (frames: Frame[]) => frames.filter((frame) => frame.event === undefined);
const typeOf = (frame: Frame) => frame.data.data.type as string;

/** A node with the fake OpenRouter as its workspace's provider, an agent answering through it and one on builtin/scripted. */
async function liveWorld(api: TestApi, openRouter: FakeOpenRouter) {
  const ws = await workspaceFixture(api);
  await created(api, ws.token, `/v1/workspaces/${ws.workspaceId}/ai_provider_keys`, { metadata: { name: 'openrouter' }, spec: { apiKey: 'sk-or-v1-test', openrouter: { baseUrl: openRouter.baseUrl } } });
  const agentOn = async (name: string, modelId: string) => {
    const agentId = (await createAgent(api, ws.token, ws.workspaceId, { metadata: { name } })).metadata.id as string;
    await createVariation(api, ws.token, ws.workspaceId, agentId, { spec: { prompt: 'You help.', modelConfig: { modelId } } });
    return agentId;
  };
  return { ws, providerAgent: await agentOn('streamer', PROVIDER_MODEL), scriptedAgent: await agentOn('scripted', MODEL_ID) };
}

async function startObjective(api: TestApi, ws: WorkspaceFixture, agentId: string, initialMessage: string): Promise<string> {
  const response = await api.request('POST', `/v1/workspaces/${ws.workspaceId}/objectives`, { token: ws.token, body: { agentId, initialMessage } });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.metadata.id as string;
}

const apiStream = (api: TestApi, ws: WorkspaceFixture, id: string, query = '') =>
  openStream(api.url, `/v1/workspaces/${ws.workspaceId}/objectives/${id}/events/stream${query}`, { authorization: `Bearer ${ws.token}` });

/** The stream ends on its own (FINALIZED) within `ms`: with a 60 s poll, only nudges bring the events that soon. */
async function endsWithin(stream: OpenStream, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the stream did not end within ${ms} ms`)), ms)));
  try {
    await Promise.race([stream.ended, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The live feed lets go of every stream's listener and subscription once they ended. */
async function assertFeedEmpty(api: TestApi): Promise<void> {
  const empty = { objectives: 0, listeners: 0, subscriptions: 0, commitHook: false };
  await eventually(() => JSON.stringify(api.services.objectiveLive.holdings()) === JSON.stringify(empty), 'the live feed holds nothing', 5_000)
    .catch(() => assert.deepEqual(api.services.objectiveLive.holdings(), empty));
}

/** Deltas were sent before the answer's ASSISTANT_MESSAGE, as it streamed, without `id:`, and they make its content. */
function assertStreamedAnswer(frames: Frame[]): void {
  const deltas = deltasOf(frames);
  const message = frames.findIndex((frame) => frame.event === undefined && typeOf(frame) === ASSISTANT_MESSAGE);
  assert.ok(message >= 0, 'the ASSISTANT_MESSAGE came');
  assert.ok(deltas.length >= 2, `several delta frames, as the model streamed: ${JSON.stringify(deltas)}`);
  assert.ok(frames.indexOf(deltas.at(-1)!) < message, 'every delta before the ASSISTANT_MESSAGE');
  assert.ok(deltas.at(-1)!.at - deltas[0].at >= 200, 'the deltas came as the model streamed, not all at once');
  for (const delta of deltas) {
    assert.equal(delta.id, undefined, 'a delta frame has no id: (Last-Event-ID counts stored events only)');
    assert.deepEqual(Object.keys(delta.data).sort(), ['modelTurn', 'offset', 'text']);
    assert.equal(delta.data.modelTurn, 1, 'the objective\'s first model call');
  }
  let offset = 0;
  for (const { data } of deltas) {
    assert.equal(data.offset, offset, 'contiguous offsets');
    offset += data.text.length;
  }
  assert.equal(deltas.map((delta) => delta.data.text).join(''), frames[message].data.data.assistantMessage.content);
  assert.equal(frames[message].data.data.assistantMessage.content, ANSWER);
  assert.ok(eventsOf(frames).every((frame) => /^\d+$/.test(frame.id ?? '')), 'every event frame keeps its id:');
}

describe('streamed answers on event streams (embedded mode)', function () {
  this.timeout(60_000);
  let api: TestApi;
  let openRouter: FakeOpenRouter;
  let world: Awaited<ReturnType<typeof liveWorld>>;

  before(async () => {
    openRouter = await startFakeOpenRouter();
    api = await startTestApi({ runtime: true, stream: { pollMs: POLL_MS }, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true', AGENTRT_MODEL_CALL_ATTEMPTS: '1' } });
    world = await liveWorld(api, openRouter);
  });

  after(async () => {
    await api?.close();
    await openRouter?.close();
  });

  beforeEach(() => openRouter.reset());

  it('sends the answer as delta frames before its ASSISTANT_MESSAGE with deltas=true, and the events at once (no poll)', async () => {
    openRouter.answer(fakeAnswers.completion({ content: ANSWER }, SLOW));
    const id = await startObjective(api, world.ws, world.providerAgent, 'Stream it');
    const stream = await apiStream(api, world.ws, id, '?deltas=true');
    assert.equal(stream.status, 200);
    await endsWithin(stream, 10_000);
    assertStreamedAnswer(stream.frames);
    assert.equal(typeOf(stream.frames.at(-1)!), FINALIZED);
    const first = deltasOf(stream.frames)[0];
    // The target is 50 ms in the page (the browser test measures it); a loaded test machine gets some slack here.
    const lag = first.at - openRouter.requests[0].firstContentAt!;
    assert.ok(lag < 250, `the first delta came ${lag} ms after the model's first token`);
    await assertFeedEmpty(api);
  });

  it('gives a stream opened after the model\'s first token the answer so far as one delta at offset 0, then the rest', async () => {
    openRouter.answer(fakeAnswers.completion({ content: ANSWER }, { chunkChars: 5, chunkDelayMs: 150 }));
    const id = await startObjective(api, world.ws, world.providerAgent, 'Stream it');
    await eventually(() => openRouter.requests[0]?.firstContentAt !== undefined, 'the model wrote its first token', 10_000);
    // Two chunks out: a stream opening now has missed the first deltas.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stream = await apiStream(api, world.ws, id, '?deltas=true');
    await endsWithin(stream, 10_000);
    const deltas = deltasOf(stream.frames);
    assert.ok(deltas.length >= 2, `the text so far, then more deltas: ${JSON.stringify(deltas)}`);
    assert.equal(deltas[0].data.offset, 0, 'the text so far starts the answer');
    assert.ok(deltas[0].data.text.length >= 5, `the text so far holds what was streamed before the stream opened: ${JSON.stringify(deltas[0].data)}`);
    let offset = 0;
    for (const { data } of deltas) {
      if (data.offset !== 0) assert.equal(data.offset, offset, 'contiguous after the text so far');
      offset = data.offset + data.text.length;
    }
    assert.equal(offset, ANSWER.length);
    assert.ok(ANSWER.startsWith(deltas[0].data.text));
    await assertFeedEmpty(api);
  });

  it('sends no delta frame without deltas=true: the stream is the stored events', async () => {
    openRouter.answer(fakeAnswers.completion({ content: ANSWER }, SLOW));
    const id = await startObjective(api, world.ws, world.providerAgent, 'Stream it');
    const stream = await apiStream(api, world.ws, id, '?deltas=false');
    const plain = await apiStream(api, world.ws, id);
    await Promise.all([endsWithin(stream, 10_000), endsWithin(plain, 10_000)]);
    for (const frames of [stream.frames, plain.frames]) {
      assert.deepEqual(deltasOf(frames), []);
      assert.ok(frames.every((frame) => frame.event === undefined && /^\d+$/.test(frame.id ?? '')));
      assert.equal(typeOf(frames.at(-1)!), FINALIZED);
    }
    await assertFeedEmpty(api);
  });

  it('pushes each event as it is committed: with a 60 s poll, an answer after SLEEP 800 arrives right after its commit', async () => {
    const id = await startObjective(api, world.ws, world.scriptedAgent, 'SLEEP 800\nSAY done');
    const stream = await apiStream(api, world.ws, id);
    await endsWithin(stream, 10_000);
    const message = eventsOf(stream.frames).find((frame) => typeOf(frame) === ASSISTANT_MESSAGE)!;
    const lag = message.at - Date.parse(message.data.metadata.createdAt);
    assert.ok(lag < 500, `the ASSISTANT_MESSAGE arrived ${lag} ms after it was recorded`);
    assert.deepEqual(eventsOf(stream.frames).map(typeOf).slice(-1), [FINALIZED]);
    await assertFeedEmpty(api);
  });

  it('lets go of the live feed when a client leaves mid-answer, on a 204 and on a NOT_FOUND', async () => {
    openRouter.answer(fakeAnswers.completion({ content: ANSWER }, { ...SLOW, chunkDelayMs: 300 }));
    const id = await startObjective(api, world.ws, world.providerAgent, 'Stream it');
    const first = await apiStream(api, world.ws, id, '?deltas=true');
    const second = await apiStream(api, world.ws, id, '?deltas=true');
    await eventually(() => deltasOf(first.frames).length > 0, 'a first delta');
    assert.deepEqual(api.services.objectiveLive.holdings(), { objectives: 1, listeners: 2, subscriptions: 1, commitHook: true }, 'two streams share one subscription');
    first.close();
    await eventually(() => api.services.objectiveLive.holdings().listeners === 1, 'the closed stream unfollowed');
    await endsWithin(second, 10_000);
    await assertFeedEmpty(api);
    const last = eventsOf(second.frames).at(-1)!;
    const done = await apiStream(api, world.ws, id, `?lastEventId=${last.id}`);
    assert.equal(done.status, 204);
    const missing = await apiStream(api, world.ws, 'obj_01JZZZZZZZZZZZZZZZZZZZZZZZ');
    assert.equal(missing.status, 404);
    await Promise.all([done.ended, missing.ended]);
    await assertFeedEmpty(api);
  });

  it('lets go of the live feed when the node drains', async () => {
    // The stream route alone on a bare Koa server, with an isDraining of the test's (the mount's authentication is tested elsewhere).
    const id = await startObjective(api, world.ws, world.scriptedAgent, 'SLEEP 30000\nSAY never');
    let draining = false;
    const route = objectiveRoutes({ objectives: api.services.objectives, isDraining: () => draining, stream: { pollMs: 50 }, live: api.services.objectiveLive })
      .find((candidate) => candidate.operationId === 'streamObjectiveEvents')!;
    const workspace = { id: world.ws.workspaceId, accountId: world.ws.account.accountId, name: '', status: 'STATUS_ENABLED' as const };
    const app = new Koa();
    app.use(async (ctx) => {
      await route.handler({
        params: { workspaceId: world.ws.workspaceId, id }, query: { deltas: true }, body: undefined, principal: undefined as never,
        workspace, headers: ctx.headers, requestId: 'test', koa: ctx,
      });
    });
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const stream = await openStream(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, '/', {});
      assert.equal(stream.status, 200);
      await eventually(() => api.services.objectiveLive.holdings().listeners === 1, 'the stream follows the objective');
      draining = true;
      await endsWithin(stream, 5_000);
      await assertFeedEmpty(api);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await api.request('POST', `/v1/workspaces/${world.ws.workspaceId}/objectives/${id}/cancel`, { token: world.ws.token, body: {} });
    }
  });

  describe('on the widget host', () => {
    const HOST = `live-${randomBytes(4).toString('hex')}.widgets.test`;
    let widgetId: string;

    /** A session of the widget (its token); `body` may set its ttlSeconds. */
    const mint = async (body: Record<string, unknown> = {}): Promise<string> => {
      const session = await api.request('POST', `/v1/workspaces/${world.ws.workspaceId}/widgets/${widgetId}/sessions`, { token: world.ws.token, body });
      assert.equal(session.status, 200, JSON.stringify(session.body));
      return session.body.token;
    };

    /** The visitor's first message: the objective's id. */
    const visitorObjective = async (token: string): Promise<string> => {
      const { port } = new URL(api.url);
      const create = await new Promise<any>((resolve, reject) => {
        const request = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/api/objectives', headers: { host: `${HOST}:${port}`, authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (response) => {
          let text = '';
          response.on('data', (chunk) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode, body: JSON.parse(text) }));
        });
        request.on('error', reject);
        request.end(JSON.stringify({ content: 'Stream it' }));
      });
      assert.equal(create.status, 201, JSON.stringify(create.body));
      return create.body.id;
    };

    const visitorStream = (token: string, id: string) =>
      openStream(api.url, `/api/objectives/${id}/events/stream`, { host: `${HOST}:${new URL(api.url).port}`, authorization: `Bearer ${token}` });

    before(async () => {
      const widget = await created(api, world.ws.token, `/v1/workspaces/${world.ws.workspaceId}/widgets`, {
        metadata: { name: 'live' }, spec: { agentId: world.providerAgent, hostname: HOST, allowedOrigins: ['https://shop.example.com'] },
      });
      widgetId = widget.metadata.id;
    });

    it('always sends the visitor the answer\'s deltas (modelTurn, offset and text only), then the ASSISTANT_MESSAGE', async () => {
      openRouter.answer(fakeAnswers.completion({ content: ANSWER }, SLOW));
      const token = await mint();
      const stream = await visitorStream(token, await visitorObjective(token));
      assert.equal(stream.status, 200);
      await endsWithin(stream, 10_000);
      assertStreamedAnswer(stream.frames);
      await assertFeedEmpty(api);
    });

    it('lets go of the live feed when the session\'s token expires', async () => {
      openRouter.answer(fakeAnswers.hang());
      const token = await mint({ ttlSeconds: 2 });
      const id = await visitorObjective(token);
      const stream = await visitorStream(token, id);
      assert.equal(stream.status, 200);
      await eventually(() => api.services.objectiveLive.holdings().listeners === 1, 'the stream follows the objective');
      await endsWithin(stream, 5_000);
      await assertFeedEmpty(api);
      await api.request('POST', `/v1/workspaces/${world.ws.workspaceId}/objectives/${id}/cancel`, { token: world.ws.token, body: {} });
    });
  });
});

describe('streamed answers on event streams (cluster mode: NATS)', function () {
  this.timeout(60_000);
  const busNames = uniqueBusNames();
  let api: TestApi;
  let openRouter: FakeOpenRouter;
  let world: Awaited<ReturnType<typeof liveWorld>>;

  before(async () => {
    openRouter = await startFakeOpenRouter();
    api = await startTestApi({
      runtime: busNames, natsUrl: TEST_NATS_URL, stream: { pollMs: POLL_MS }, env: { AGENTRT_ALLOW_PRIVATE_NETWORK: 'true', AGENTRT_MODEL_CALL_ATTEMPTS: '1' },
    });
    world = await liveWorld(api, openRouter);
  });

  after(async () => {
    await api?.close();
    await openRouter?.close();
    await deleteWebhookIntakeDurables(busNames.subjectPrefix).catch(() => undefined);
    await deleteStream(busNames.eventStream).catch(() => undefined);
  });

  it('sends the deltas over NATS and pushes the events from their JetStream subjects, then lets go of both subscriptions', async () => {
    openRouter.answer(fakeAnswers.completion({ content: ANSWER }, SLOW));
    const id = await startObjective(api, world.ws, world.providerAgent, 'Stream it');
    const stream = await apiStream(api, world.ws, id, '?deltas=true');
    await eventually(() => api.services.objectiveLive.holdings().subscriptions === 2, 'the live subject and the events\' subjects followed');
    await endsWithin(stream, 10_000);
    assertStreamedAnswer(stream.frames);
    assert.equal(typeOf(stream.frames.at(-1)!), FINALIZED);
    await assertFeedEmpty(api);
  });

  it('pushes each event as it is committed: with a 60 s poll, an answer after SLEEP 800 arrives right after its commit', async () => {
    const id = await startObjective(api, world.ws, world.scriptedAgent, 'SLEEP 800\nSAY done');
    const stream = await apiStream(api, world.ws, id);
    await endsWithin(stream, 10_000);
    const message = eventsOf(stream.frames).find((frame) => typeOf(frame) === ASSISTANT_MESSAGE)!;
    const lag = message.at - Date.parse(message.data.metadata.createdAt);
    assert.ok(lag < 500, `the ASSISTANT_MESSAGE arrived ${lag} ms after it was recorded`);
    await assertFeedEmpty(api);
  });
});
