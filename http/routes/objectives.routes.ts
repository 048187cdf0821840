// Objectives (api-decisions.md "Objectives", interface-spec 4.10): create, read,
// list, follow-up messages, cancel, approve, deny, feedback, the events list
// and the events as Server-Sent Events.
//
// The SSE stream reads the read model (the objective_events rows every
// objective actor projects in its own turn), not the actor, so any node
// answers it, whichever node runs the objective. It reads
// ObjectiveService.eventsAfter in batches of SSE_BATCH as soon as the
// objective's live feed says events were committed, and every SSE_POLL_MS in
// any case (a nudge may be lost): one indexed read per open stream and
// nudge or poll. It also sends, when asked (always on the widget host), the
// answer's text as the model streams it (`event: delta`, no `id:`, never
// stored: http/stream-live-inbox.ts says which deltas a stream sends).
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type Koa from 'koa';
import type { WorkspaceRef } from '../../src/auth/workspace-access';
import { InvalidArgumentError } from '../../src/errors';
import type { ObjectiveService } from '../../src/objectives/objective.service';
import type { ObjectiveLiveFeed } from '../../src/ports/objective-live';
import { parseLabelSelector } from '../../src/resource/labels';
import { pageRequest } from '../../src/resource/pagination';
import { Feedback } from '../../src/schemas/agents.schema';
import { INT32_MAX, ListOf, PathIds, Strict, listParamProperties } from '../../src/schemas/common.schema';
import {
  ApproveToolCallBody, CancelObjectiveBody, CreateObjectiveBody, DenyToolCallBody, FollowUpMessageBody, Objective, ObjectiveEventView,
  ObjectiveFeedbackBody, ObjectiveListFilters,
} from '../../src/schemas/objectives.schema';
import { idempotencyKeyOf } from '../mount';
import { objectiveAccess } from '../parent-access';
import { defineRoute, type RouteDefinition } from '../route';
import { StreamLiveInbox, type StreamDelta } from '../stream-live-inbox';

/** How often an open stream looks for new events when no nudge of the live feed made it look sooner. */
export const SSE_POLL_MS = 150;
/** Most events one read of a stream fetches (a backlog is sent in batches of this size). */
export const SSE_BATCH = 100;
/** A comment line this often keeps proxies and load balancers from closing a quiet stream. */
export const SSE_HEARTBEAT_MS = 15_000;
/** The reconnection delay the stream asks EventSource clients to use (`retry:`). */
export const SSE_RETRY_MS = 1000;

const TERMINAL = new Set(['OBJECTIVE_STATUS_COMPLETED', 'OBJECTIVE_STATUS_FAILED', 'OBJECTIVE_STATUS_CANCELLED']);
const FINALIZED = 'OBJECTIVE_EVENT_TYPE_FINALIZED';
const ASSISTANT_MESSAGE = 'OBJECTIVE_EVENT_TYPE_ASSISTANT_MESSAGE';

export interface ObjectiveRoutesOptions {
  objectives: ObjectiveService;
  /** True once the node shuts down: open streams end, so clients resume on another node with Last-Event-ID. */
  isDraining?: () => boolean;
  /** Stream timings (tests shorten them). */
  stream?: StreamTimings;
  /** Answer deltas and commit nudges for the streams. @default none: streams poll and send no delta */
  live?: ObjectiveLiveFeed;
}

/** What tests may change of a stream's timings. */
export type StreamTimings = Partial<{ pollMs: number; heartbeatMs: number; batch: number }>;

const WorkspacePath = PathIds({ workspaceId: 'workspace' });
const ObjectivePath = PathIds({ workspaceId: 'workspace', id: 'objective' });
const ToolCallPath = Strict({
  workspaceId: ObjectivePath.properties.workspaceId,
  id: ObjectivePath.properties.id,
  toolCallId: Type.String({ minLength: 1, maxLength: 128, description: 'The id carried by the tool_approval_requested event' }),
});
const ListQuery = Strict({ ...listParamProperties, ...ObjectiveListFilters });
const EventsQuery = Strict({ cursor: listParamProperties.cursor, limit: listParamProperties.limit });
const StreamQuery = Strict({
  lastEventId: Type.Optional(Type.Integer({ minimum: 0, maximum: INT32_MAX, description: 'Resume after this sequence; the Last-Event-ID header wins when both are sent' })),
  deltas: Type.Optional(Type.Boolean({
    description: 'Also send the answer\'s text as the model streams it: `event: delta` frames, `data: {"modelTurn","offset","text"}`, without `id:`; never stored or resumed (an extension)',
  })),
});

/** The sequence a stream resumes after: Last-Event-ID, else `lastEventId`, else 0 (from the start). */
export function resumeAfter(header: string | string[] | undefined, query: number | undefined): number {
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined || raw.trim() === '') return query ?? 0;
  const value = raw.trim();
  if (!/^\d{1,10}$/.test(value) || Number(value) > INT32_MAX) throw InvalidArgumentError.forField('Last-Event-ID', 'must be the sequence (id:) of an event of this stream');
  return Number(value);
}

/** One SSE message: `id:` the sequence, `data:` the event as GET /events lists it, or as `view` shows it (one line of JSON). */
function formatEvent(sequence: number, body: unknown): string {
  return `id: ${sequence}\ndata: ${JSON.stringify(body)}\n\n`;
}

/** A delta frame: no `id:`, so the client's Last-Event-ID stays the last stored event's. */
function formatDelta({ modelTurn, offset, text }: StreamDelta): string {
  return `event: delta\ndata: ${JSON.stringify({ modelTurn, offset, text })}\n\n`;
}

/**
 * What a stream sends of one event (the widget host's visitor view, say);
 * undefined sends nothing, though the event still counts as read (the next
 * `id:` is a later sequence, and a FINALIZED still ends the stream).
 */
export type EventView = (event: ObjectiveEventView) => unknown;

export interface StreamSettings {
  pollMs: number;
  heartbeatMs: number;
  batch: number;
  isDraining: () => boolean;
  /** Where the streams follow their objective (nudges, deltas); without it they poll. */
  live?: ObjectiveLiveFeed;
}

export interface EventStreamOptions {
  /** What each event is sent as. @default the event as is */
  view?: EventView;
  /** When set, the stream ends then (a widget session's token expiry); the client reconnects with a fresh token. */
  endAt?: Date;
  /** Send the answer's deltas as the model streams them. @default false */
  deltas?: boolean;
}

/**
 * Streams the objective's events after `after` on `ctx`. The first read
 * happens before anything is written, so an unknown objective is a plain
 * NOT_FOUND; a resume with nothing left of a finalized objective is 204 (which
 * tells EventSource to stop reconnecting). The stream follows the
 * objective's live feed from before that read (no nudge is missed) until it
 * ends, however it ends.
 */
export async function openEventStream(
  objectives: ObjectiveService, settings: StreamSettings, ctx: Koa.Context, workspace: WorkspaceRef, id: string, after: number,
  options: EventStreamOptions = {},
): Promise<void> {
  const inbox = new StreamLiveInbox(options.deltas === true);
  const unfollow = settings.live?.follow(id, inbox.listener) ?? (() => undefined);
  let streaming = false;
  try {
    streaming = await startEventStream(objectives, settings, ctx, { workspace, id, after, view: options.view ?? ((event) => event), inbox, endAt: options.endAt }, unfollow);
  } finally {
    if (!streaming) unfollow();
  }
}

/** Reads the first batch and starts the pump; false when no stream was opened (204). */
async function startEventStream(
  objectives: ObjectiveService, settings: StreamSettings, ctx: Koa.Context,
  { workspace, id, after, view, inbox, endAt }: Omit<StreamStart, 'first'> & { endAt?: Date }, unfollow: () => void,
): Promise<boolean> {
  const first = await objectives.eventsAfter(workspace, id, after, settings.batch);
  if (first.events.length === 0 && TERMINAL.has((await objectives.get(workspace, id)).info.status)) {
    ctx.status = 204;
    return false;
  }
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.req.socket.setKeepAlive(true);
  ctx.status = 200;
  ctx.type = 'text/event-stream';
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('X-Accel-Buffering', 'no');
  const stream = new PassThrough();
  ctx.body = stream;
  // Koa pipes the stream once the middleware returns; the response closes when the client goes away.
  const stopped = new AbortController();
  const stop = () => stopped.abort();
  ctx.res.once('close', stop);
  stream.once('close', stop);
  const signal = endAt ? AbortSignal.any([stopped.signal, AbortSignal.timeout(Math.max(0, endAt.getTime() - Date.now()))]) : stopped.signal;
  void pump(objectives, settings, stream, signal, { workspace, id, after, first, view, inbox }).finally(() => {
    unfollow();
    ctx.res.off('close', stop);
    if (!stream.destroyed && !stream.writableEnded) stream.end();
  });
  return true;
}

interface StreamStart {
  workspace: WorkspaceRef;
  id: string;
  /** The sequence the client has seen. */
  after: number;
  /** The first read, made before the answer began. */
  first: Awaited<ReturnType<ObjectiveService['eventsAfter']>>;
  view: EventView;
  /** The live news the stream got (nudges, deltas to send). */
  inbox: StreamLiveInbox;
}

async function pump(objectives: ObjectiveService, settings: StreamSettings, stream: PassThrough, signal: AbortSignal, start: StreamStart): Promise<void> {
  const { workspace, id, inbox } = start;
  /** Writes respecting backpressure; false once the stream is gone. */
  const write = async (chunk: string): Promise<boolean> => {
    if (signal.aborted || stream.destroyed) return false;
    if (stream.write(chunk)) return true;
    // A slow reader: wait until it caught up (or left: `signal` aborts when the stream closes).
    await once(stream, 'drain', { signal }).catch(() => undefined);
    return !signal.aborted;
  };
  let batch = start.first;
  let lastSequence = start.after;
  let lastType: string | undefined;
  let lastWrite = Date.now();
  if (!(await write(`retry: ${SSE_RETRY_MS}\n\n`))) return;
  try {
    for (;;) {
      for (const event of batch.events) {
        const body = start.view(event);
        if (event.data.type === ASSISTANT_MESSAGE) inbox.answerSent();
        if (body !== undefined) {
          if (!(await write(formatEvent(event.sequence, body)))) return;
          lastWrite = Date.now();
        }
        lastSequence = event.sequence;
        lastType = event.data.type;
      }
      const full = batch.events.length >= settings.batch;
      // Finalized and nothing after it: done. (A follow-up after COMPLETED adds
      // events after a FINALIZED; a stream that sees them keeps going.)
      if (!full && lastType === FINALIZED) return;
      if (settings.isDraining()) return;
      if (!full) {
        // Until the next read (a nudge, or the poll interval): deltas as they come, heartbeats when quiet.
        const readAt = Date.now() + settings.pollMs;
        for (;;) {
          await inbox.wait(Math.max(0, Math.min(readAt, lastWrite + settings.heartbeatMs) - Date.now()), signal);
          if (signal.aborted) return;
          for (const delta of inbox.takeDeltas()) {
            if (!(await write(formatDelta(delta)))) return;
            lastWrite = Date.now();
          }
          if (Date.now() - lastWrite >= settings.heartbeatMs) {
            if (!(await write(': heartbeat\n\n'))) return;
            lastWrite = Date.now();
          }
          if (inbox.takeNudge() || Date.now() >= readAt) break;
          if (settings.isDraining()) return;
        }
      }
      batch = await objectives.eventsAfter(workspace, id, lastSequence, settings.batch);
    }
  } catch {
    // The read failed (database gone, node stopping, objective erased): end
    // the stream; the client resumes with Last-Event-ID, on another node if need be.
    await write(': read failed; reconnect with Last-Event-ID\n\n');
  }
}

/** The stream's timings with their defaults (the widget host's stream uses them too). */
export function streamSettings({ isDraining, stream, live }: Pick<ObjectiveRoutesOptions, 'isDraining' | 'stream' | 'live'>): StreamSettings {
  return {
    pollMs: stream?.pollMs ?? SSE_POLL_MS,
    heartbeatMs: stream?.heartbeatMs ?? SSE_HEARTBEAT_MS,
    batch: stream?.batch ?? SSE_BATCH,
    isDraining: isDraining ?? (() => false),
    ...(live ? { live } : {}),
  };
}

export function objectiveRoutes({ objectives, isDraining, stream, live }: ObjectiveRoutesOptions): RouteDefinition[] {
  const base = '/v1/workspaces/{workspaceId}/objectives';
  const read = { scope: 'objectives:read', workspace: 'path' } as const;
  const manage = { scope: 'objectives:manage', workspace: 'path' } as const;
  const settings = streamSettings({ isDraining, stream, live });
  return [
    defineRoute({
      method: 'POST', path: base, operationId: 'createObjective', summary: 'Create and start an objective', ...manage,
      params: WorkspacePath, body: CreateObjectiveBody, response: Objective, idempotent: true,
      handler: ({ workspace, principal, body, headers }) => objectives.create(workspace, principal, body, idempotencyKeyOf(headers)),
    }),
    defineRoute({
      method: 'GET', path: base, operationId: 'listObjectives', summary: 'List objectives', ...read,
      params: WorkspacePath, query: ListQuery, response: ListOf(Objective),
      handler: ({ workspace, query }) =>
        objectives.list(workspace, pageRequest(query), {
          prefix: query.prefix,
          labels: parseLabelSelector(query.labels),
          agentId: query.agentId,
          status: query.status,
          tenantId: query.tenantId,
          subjectId: query.subjectId,
          scheduleId: query.scheduleId,
          parentObjectiveId: query.parentObjectiveId,
          externalId: query.externalId,
        }),
    }),
    defineRoute({
      method: 'GET', path: `${base}/{id}`, operationId: 'getObjective', summary: 'Get an objective', ...read,
      params: ObjectivePath, response: Objective,
      handler: ({ workspace, params }) => objectives.get(workspace, params.id),
    }),
    defineRoute({
      method: 'POST', path: `${base}/{id}/messages`, operationId: 'sendObjectiveMessage',
      summary: 'Send a follow-up user message (taken at the next turn; after COMPLETED the objective runs again)', ...manage,
      params: ObjectivePath, body: FollowUpMessageBody, response: Objective, idempotent: true, checkAccess: objectiveAccess(objectives),
      handler: ({ workspace, principal, params, body, headers }) => objectives.sendMessage(workspace, params.id, body.content, { principal, ...idempotencyKeyOf(headers) }),
    }),
    defineRoute({
      method: 'POST', path: `${base}/{id}/cancel`, operationId: 'cancelObjective', summary: 'Cancel an objective and its running sub-objectives', ...manage,
      params: ObjectivePath, body: CancelObjectiveBody, response: Objective, idempotent: true,
      handler: ({ workspace, principal, params, body, headers }) => objectives.cancel(workspace, params.id, body.reason, { principal, ...idempotencyKeyOf(headers) }),
    }),
    defineRoute({
      method: 'PUT', path: `${base}/{id}/tool_calls/{toolCallId}/approve`, operationId: 'approveToolCall', summary: 'Approve a tool call awaiting approval', ...manage,
      params: ToolCallPath, body: ApproveToolCallBody, response: Objective, idempotent: true, checkAccess: objectiveAccess(objectives),
      handler: ({ workspace, principal, params, headers }) => objectives.approve(workspace, params.id, params.toolCallId, { principal, ...idempotencyKeyOf(headers) }),
    }),
    defineRoute({
      method: 'PUT', path: `${base}/{id}/tool_calls/{toolCallId}/deny`, operationId: 'denyToolCall',
      summary: 'Deny a tool call awaiting approval; the memo goes to the model as the call\'s result', ...manage,
      params: ToolCallPath, body: DenyToolCallBody, response: Objective, idempotent: true, checkAccess: objectiveAccess(objectives),
      handler: ({ workspace, principal, params, body, headers }) =>
        objectives.deny(workspace, params.id, params.toolCallId, body.memo, { principal, ...idempotencyKeyOf(headers) }),
    }),
    defineRoute({
      method: 'POST', path: `${base}/{id}/feedback`, operationId: 'createObjectiveFeedback', summary: 'Rate an objective (moves its variation\'s score)', ...manage,
      params: ObjectivePath, body: ObjectiveFeedbackBody, response: Feedback, checkAccess: objectiveAccess(objectives),
      handler: ({ workspace, principal, params, body }) => objectives.recordFeedback(workspace, principal, params.id, body),
    }),
    defineRoute({
      method: 'GET', path: `${base}/{id}/events`, operationId: 'listObjectiveEvents', summary: 'List an objective\'s events, ascending by sequence', ...read,
      params: ObjectivePath, query: EventsQuery, response: ListOf(ObjectiveEventView),
      handler: ({ workspace, params, query }) => objectives.listEvents(workspace, params.id, pageRequest(query)),
    }),
    defineRoute({
      method: 'GET', path: `${base}/{id}/events/stream`, operationId: 'streamObjectiveEvents',
      summary: 'Server-Sent Events of an objective: `id:` the sequence, `data:` the event; resumes after Last-Event-ID; ends after FINALIZED (204 when a resume finds nothing left); with `deltas=true` also the answer\'s text as it streams (`event: delta`)',
      ...read, produces: 'text/event-stream',
      params: ObjectivePath, query: StreamQuery, response: ObjectiveEventView,
      handler: async ({ workspace, params, query, headers, koa }) => {
        await openEventStream(objectives, settings, koa, workspace, params.id, resumeAfter(headers['last-event-id'], query.lastEventId), { deltas: query.deltas === true });
        // The answer is the stream set on koa.body (or the 204): nothing for mount to write.
        return undefined as never;
      },
    }),
  ];
}
