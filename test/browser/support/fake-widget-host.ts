// A stand-in for the widget host, for the page's own browser tests: it serves
// the real asset files the way the host does (GET /, /widget.js, /assets/<file>,
// CSP frame-ancestors, CORS only for allowed origins) and a fake /api whose
// objectives follow a tiny script the test controls, so the page's logic
// (streaming, resume, dedupe, approvals, errors) is tested in a browser on its own.
//
// Script lines: SAY <text> | CALL <tool> | CALLFAIL <tool> <error type> <message> | ASK <tool>
// (approval; waits for the visitor) | PARALLEL <tool> <tool> (one answer calling both; the second
// runs first, as parallel calls may) | WAIT (until release()) | FAIL <message> |
// DELTA {"offset":0,"text":"Hel"} (a delta frame of the next answer's model turn, sent to open streams only).
// As the node does, an objective that ended FAILED or CANCELLED (cancel()) refuses
// messages and decisions with 400 FAILED_PRECONDITION.
import http from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { visitorEvent } from '../../../http/widget-host/visitor-events';
import type { ObjectiveEventView } from '../../../src/schemas/objectives.schema';

export const ASSETS_DIR = path.join(__dirname, '..', '..', '..', 'http', 'widget-host', 'assets');

/** The page's files (chat.html, its CSS and script, widget.js): each one's gzip-compressed size (level 9), by name. */
export function assetWeights(): Record<string, number> {
  const files = readdirSync(ASSETS_DIR).filter((name) => /\.(html|css|js)$/.test(name));
  return Object.fromEntries(files.map((name) => [name, gzipSync(readFileSync(path.join(ASSETS_DIR, name)), { level: 9 }).length]));
}
const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

export interface WidgetSettings {
  title: string;
  greeting: string;
  theme: string;
  allowVisitorApprovals: boolean;
}

export interface FakeWidgetHostOptions {
  allowedOrigins: string[];
  widget: WidgetSettings;
}

interface FakeEvent { sequence: number; data: Record<string, unknown> }

/** What the real stream sends as `event: delta`: never stored, never replayed. */
interface FakeDelta { delta: { modelTurn: number; offset: number; text: string } }

interface FakeObjective {
  id: string;
  token: string;
  events: FakeEvent[];
  listeners: Set<(event: FakeEvent | FakeDelta) => void>;
  decisions: Map<string, (verdict: 'approve' | 'deny') => void>;
  /** Assistant messages so far (the model turns answered). */
  modelTurns: number;
  status: 'OBJECTIVE_STATUS_RUNNING' | 'OBJECTIVE_STATUS_COMPLETED' | 'OBJECTIVE_STATUS_FAILED' | 'OBJECTIVE_STATUS_CANCELLED';
}

export interface StreamRequest { objectiveId: string; lastEventId: string | null }

export class FakeWidgetHost {
  readonly streamRequests: StreamRequest[] = [];
  readonly decisions: Array<{ toolCallId: string; verdict: string }> = [];
  /** On a resume, also send the event the client says it has (a server repeating itself must not show twice). */
  repeatOnResume = false;
  private readonly server: http.Server;
  private readonly tokens = new Map<string, { expired: boolean }>();
  private readonly objectives = new Map<string, FakeObjective>();
  /** Open event streams, each with what stops it (no event is written to it afterwards). */
  private readonly streams = new Map<http.ServerResponse, () => void>();
  private waiting: Array<() => void> = [];
  private nextId = 1;

  private constructor(private readonly options: FakeWidgetHostOptions) {
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: Error) => {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 13, message: err.message }));
      });
    });
  }

  static async start(options: FakeWidgetHostOptions): Promise<FakeWidgetHost> {
    const host = new FakeWidgetHost(options);
    await new Promise<void>((resolve) => host.server.listen(0, '127.0.0.1', resolve));
    return host;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** A session token, valid unless `expired`. */
  mint(expired = false): string {
    const token = `tok-${this.nextId++}-${Math.random().toString(36).slice(2)}`;
    this.tokens.set(token, { expired });
    return token;
  }

  /** Lets every objective waiting on a WAIT line go on. */
  release(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }

  /** Ids of the objectives created, oldest first. */
  get objectiveIds(): string[] {
    return [...this.objectives.keys()];
  }

  /** Cancels an objective as `POST /v1/…/objectives/{id}/cancel` does: CANCELLED, then FINALIZED; a question waiting for the visitor is dropped. */
  cancel(objectiveId: string): void {
    const objective = this.objectives.get(objectiveId);
    if (!objective) throw new Error(`no objective ${objectiveId}`);
    objective.status = 'OBJECTIVE_STATUS_CANCELLED';
    objective.decisions.clear();
    this.emit(objective, { type: 'OBJECTIVE_EVENT_TYPE_CANCELLED' });
    this.emit(objective, { type: 'OBJECTIVE_EVENT_TYPE_FINALIZED', finalized: { status: objective.status } });
  }

  /** Drops every open event stream, as a network failure would. */
  cutStreams(): void {
    for (const [res, stop] of this.streams) {
      stop();
      res.socket?.destroy();
    }
  }

  /** Ends every open event stream cleanly before the objective rests, as a node stopping does. */
  endStreams(): void {
    for (const [res, stop] of this.streams) {
      stop();
      res.end();
    }
  }

  async close(): Promise<void> {
    this.cutStreams();
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (url.pathname.startsWith('/api/')) return this.api(req, res, url);
    const file = url.pathname === '/' ? 'chat.html' : url.pathname === '/widget.js' ? 'widget.js' : /^\/assets\/[a-z-]+\.(css|js)$/.test(url.pathname) ? url.pathname.slice(8) : null;
    if (req.method !== 'GET' || !file) return void res.writeHead(404).end();
    let body = await readFile(path.join(ASSETS_DIR, file));
    if (file === 'chat.html') {
      // The host places the widget's settings before </head> as a JSON data block, as the real one does.
      const block = `<script type="application/json" id="agentrt-widget-config">${JSON.stringify({ ...this.options.widget, apiBase: '/api' }).replace(/</g, '\\u003c')}</script>`;
      body = Buffer.from(body.toString('utf8').replace('</head>', `${block}\n</head>`));
    }
    res.writeHead(200, {
      'content-type': TYPES[path.extname(file)],
      'content-security-policy': `frame-ancestors ${this.options.allowedOrigins.join(' ')}`,
      'x-content-type-options': 'nosniff',
    });
    res.end(body);
  }

  private cors(req: http.IncomingMessage, res: http.ServerResponse): void {
    const origin = req.headers.origin;
    if (origin && this.options.allowedOrigins.includes(origin)) {
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('vary', 'Origin');
    }
  }

  private async api(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    this.cors(req, res);
    if (req.method === 'OPTIONS') {
      if (res.hasHeader('access-control-allow-origin')) {
        res.setHeader('access-control-allow-methods', 'GET, POST, PUT');
        res.setHeader('access-control-allow-headers', 'authorization, content-type, last-event-id');
      }
      return void res.writeHead(204).end();
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const session = this.tokens.get(token);
    if (!session || session.expired) return this.status(res, 401, 16, 'the widget session token is expired or not valid');
    const body = req.method === 'GET' ? {} : await readJson(req);
    const parts = url.pathname.split('/').filter(Boolean).slice(1); // after "api"
    if (req.method === 'POST' && parts.join('/') === 'objectives') {
      const objective: FakeObjective = {
        id: `obj_${this.nextId++}`, token, events: [], listeners: new Set(), decisions: new Map(), modelTurns: 0, status: 'OBJECTIVE_STATUS_RUNNING',
      };
      this.objectives.set(objective.id, objective);
      this.run(objective, String(body.content ?? ''));
      return this.json(res, 201, { id: objective.id, status: 'OBJECTIVE_STATUS_RUNNING' });
    }
    const objective = this.objectives.get(parts[1] ?? '');
    if (parts[0] !== 'objectives' || !objective || objective.token !== token) return this.status(res, 404, 5, 'objective not found');
    if (req.method === 'POST' && parts[2] === 'messages') {
      if (objective.status === 'OBJECTIVE_STATUS_FAILED' || objective.status === 'OBJECTIVE_STATUS_CANCELLED') {
        return this.status(res, 400, 9, `objective ${objective.id} is ${objective.status}: it takes no more messages`);
      }
      this.run(objective, String(body.content ?? ''));
      return this.json(res, 200, {});
    }
    if (req.method === 'GET' && parts.slice(2).join('/') === 'events/stream') return this.stream(req, res, objective);
    if (req.method === 'PUT' && parts[2] === 'tool_calls' && (parts[4] === 'approve' || parts[4] === 'deny')) {
      if (!this.options.widget.allowVisitorApprovals) return this.status(res, 403, 7, 'this widget does not let visitors approve or deny tool calls');
      const decide = objective.decisions.get(parts[3] ?? '');
      if (!decide) return this.status(res, 400, 9, 'tool call is not awaiting approval');
      this.decisions.push({ toolCallId: parts[3] ?? '', verdict: parts[4] });
      decide(parts[4]);
      return this.json(res, 200, {});
    }
    return this.status(res, 404, 5, 'no route');
  }

  private stream(req: http.IncomingMessage, res: http.ServerResponse, objective: FakeObjective): void {
    const header = req.headers['last-event-id'];
    const lastEventId = typeof header === 'string' ? header : null;
    this.streamRequests.push({ objectiveId: objective.id, lastEventId });
    let after = lastEventId ? Number(lastEventId) : 0;
    if (lastEventId && this.repeatOnResume) after -= 1;
    const newest = objective.events.at(-1);
    const isEnd = (event: FakeEvent | undefined) => event?.data.type === 'OBJECTIVE_EVENT_TYPE_FINALIZED' && event === objective.events.at(-1);
    if (isEnd(newest) && newest!.sequence <= Number(lastEventId ?? 0)) return void res.writeHead(204).end();
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write('retry: 1000\n\n');
    const send = (event: FakeEvent | FakeDelta) => {
      if ('delta' in event) return void res.write(`event: delta\ndata: ${JSON.stringify(event.delta)}\n\n`);
      // What the real host sends: the visitor's view of the event.
      const view = visitorEvent({ ...event, metadata: { createdAt: new Date().toISOString() } } as unknown as ObjectiveEventView);
      if (view) res.write(`id: ${event.sequence}\ndata: ${JSON.stringify(view)}\n\n`);
      if (isEnd(event)) finish();
    };
    const stop = () => {
      objective.listeners.delete(send);
      this.streams.delete(res);
    };
    const finish = () => {
      stop();
      res.end();
    };
    this.streams.set(res, stop);
    res.on('close', stop);
    for (const event of objective.events.filter((e) => e.sequence > after)) {
      send(event);
      if (res.writableEnded) return;
    }
    objective.listeners.add(send);
  }

  private emit(objective: FakeObjective, data: Record<string, unknown>): void {
    const event = { sequence: objective.events.length + 1, data };
    objective.events.push(event);
    for (const listener of [...objective.listeners]) listener(event);
  }

  private async run(objective: FakeObjective, content: string): Promise<void> {
    objective.status = 'OBJECTIVE_STATUS_RUNNING';
    /** Whether cancel() ended it while the script waited (it then records nothing more). */
    const cancelled = (): boolean => objective.status === 'OBJECTIVE_STATUS_CANCELLED';
    const ev = (kind: string, key: string, value: unknown) => {
      if (kind === 'ASSISTANT_MESSAGE') objective.modelTurns += 1;
      this.emit(objective, { type: `OBJECTIVE_EVENT_TYPE_${kind}`, [key]: value });
    };
    ev('USER_MESSAGE', 'userMessage', { content });
    let failed = false;
    for (const line of content.split('\n')) {
      const [word = '', ...rest] = line.trim().split(' ');
      const text = rest.join(' ');
      const callId = `toolcall_${this.nextId++}`;
      // As the node records it: each call with the id its TOOL_* events name.
      const call = (name: string, id = callId) => ev('ASSISTANT_MESSAGE', 'assistantMessage', { content: '', toolCalls: [{ functionName: name, id, arguments: '{}', tool: name }] });
      const ran = (id: string) => {
        ev('TOOL_CALLED', 'toolCalled', { toolCallId: id });
        ev('TOOL_RESULT', 'toolResult', { toolCallId: id, content: 'ok', type: 'text' });
      };
      if (word === 'SAY') ev('ASSISTANT_MESSAGE', 'assistantMessage', { content: text, toolCalls: [] });
      else if (word === 'CALL') {
        call(text);
        ran(callId);
      } else if (word === 'PARALLEL') {
        const ids = rest.map(() => `toolcall_${this.nextId++}`);
        ev('ASSISTANT_MESSAGE', 'assistantMessage', { content: '', toolCalls: rest.map((name, index) => ({ functionName: name, id: ids[index], arguments: '{}', tool: name })) });
        for (const id of [...ids].reverse()) ran(id);
      } else if (word === 'CALLFAIL') {
        call(rest[0] ?? '');
        ev('TOOL_CALLED', 'toolCalled', { toolCallId: callId });
        ev('TOOL_ERROR', 'toolError', { toolCallId: callId, type: rest[1], message: rest.slice(2).join(' ') });
      } else if (word === 'ASK') {
        call(text);
        const verdict = await new Promise<'approve' | 'deny'>((resolve) => {
          objective.decisions.set(callId, resolve);
          ev('TOOL_APPROVAL_REQUESTED', 'toolApprovalRequested', { toolCallId: callId });
        });
        objective.decisions.delete(callId);
        if (cancelled()) return;
        if (verdict === 'approve') {
          ev('TOOL_APPROVED', 'toolApproved', { toolCallId: callId });
          ran(callId);
        } else ev('TOOL_DENIED', 'toolDenied', { toolCallId: callId, memo: '' });
      } else if (word === 'DELTA') {
        const delta = { modelTurn: objective.modelTurns + 1, ...(JSON.parse(text) as { offset: number; text: string }) };
        for (const listener of [...objective.listeners]) listener({ delta });
      } else if (word === 'WAIT') {
        await new Promise<void>((resolve) => this.waiting.push(resolve));
        if (cancelled()) return;
      } else if (word === 'FAIL') {
        ev('ERROR', 'error', { message: text, type: 'SCRIPT_FAILED' });
        failed = true;
        break;
      }
    }
    objective.status = failed ? 'OBJECTIVE_STATUS_FAILED' : 'OBJECTIVE_STATUS_COMPLETED';
    ev('FINALIZED', 'finalized', { status: objective.status });
  }

  private json(res: http.ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  private status(res: http.ServerResponse, status: number, code: number, message: string): void {
    this.json(res, status, { code, message, details: [] });
  }
}

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return {};
  const value: unknown = JSON.parse(text);
  return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}
