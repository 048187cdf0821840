// The widget host's /api routes (api-decisions "Widgets"): a visitor's
// objectives, as the session token's session sees them. Every route
// authenticates the session first; a session sees only the objectives it
// created (another's is NOT_FOUND, as a missing one).
import Router from '@koa/router';
import { Type } from '@sinclair/typebox';
import type Koa from 'koa';
import { Readable } from 'node:stream';
import type { RateLimiter } from '../../src/auth/rate-limiter';
import type { WorkspaceRef } from '../../src/auth/workspace-access';
import { PermissionDeniedError } from '../../src/errors';
import { idPattern } from '../../src/ids';
import type { ObjectiveService } from '../../src/objectives/objective.service';
import type { ObjectiveRecord } from '../../src/ports/objectives-store';
import type { WidgetSessionPrincipal, WidgetSessionVerifier } from '../../src/ports/widget-sessions';
import { Strict } from '../../src/schemas/common.schema';
import { DenyToolCallBody, FollowUpMessageBody } from '../../src/schemas/objectives.schema';
import { readJsonBody } from '../middleware/json-body';
import { openEventStream, resumeAfter, type StreamSettings } from '../routes/objectives.routes';
import { compileValidator } from '../validation';
import { authenticateSession } from './session-auth';
import { visitorEvent, VISITOR_ERROR_MESSAGE } from './visitor-events';
import type { VisitorLimits } from './visitor-limits';

export interface WidgetApiOptions {
  widgets: Pick<WidgetSessionVerifier, 'verify'>;
  objectives: ObjectiveService;
  rateLimiter: RateLimiter;
  /** Objectives created and streams open per session (and widget): stricter than rateLimiter. */
  visitorLimits: VisitorLimits;
  bodyLimitBytes: number;
  stream: StreamSettings;
}

/** `{content}`: the visitor's first message (POST /api/objectives) or a follow-up (…/messages). */
const validateMessage = compileValidator(FollowUpMessageBody, 'body');
const validateDeny = compileValidator(DenyToolCallBody, 'body');
const validateApprove = compileValidator(Strict({}), 'body');
/** No route takes a query parameter (a stream resumes from the Last-Event-ID header only): any is INVALID_ARGUMENT naming it, as /v1 answers an unknown one. */
const validateQuery = compileValidator(Strict({}), 'query');
const validatePath = compileValidator(Strict({
  id: Type.String({ pattern: idPattern('objective') }),
  toolCallId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
}), 'path');

/** An objective as the visitor sees it: no agent configuration, tenant, usage or data. */
export function visitorView(record: Pick<ObjectiveRecord, 'id' | 'info'>) {
  const { info } = record;
  return {
    id: record.id,
    status: info.status,
    createdAt: info.createdAt,
    finishedAt: info.finishedAt,
    lastMessage: info.lastMessage,
    pendingToolCallIds: info.pendingToolCallIds,
    // The objective's error message is internal (provider answers, URLs): the visitor gets plain words.
    error: info.error ? { message: VISITOR_ERROR_MESSAGE } : null,
  };
}

/** The session's workspace, as ObjectiveService reads take it (only its id and account are compared). */
function sessionWorkspace(session: WidgetSessionPrincipal): WorkspaceRef {
  return { id: session.workspaceId, accountId: session.accountId, name: '', status: session.workspaceStatus };
}

interface SessionState {
  session: WidgetSessionPrincipal;
}

export function widgetApiRoutes(options: WidgetApiOptions): Router {
  const { objectives, stream } = options;
  const router = new Router({ prefix: '/api' });
  const path = (ctx: Koa.Context) => validatePath({ ...ctx.params }) as { id: string; toolCallId?: string };
  const body = async (ctx: Koa.Context, validate: (value: unknown) => unknown) => validate((await readJsonBody(ctx, options.bodyLimitBytes)) ?? {});
  /** The session's own objective, checked before any body is read. */
  const own = async (ctx: Koa.Context) => objectives.findForSession(state(ctx).session, path(ctx).id);
  const state = (ctx: Koa.Context) => ctx.state as SessionState;
  const approvals = (ctx: Koa.Context) => {
    if (!state(ctx).session.allowVisitorApprovals) throw new PermissionDeniedError('this widget does not let visitors approve or deny tool calls');
  };

  router.use(async function widgetSession(ctx, next) {
    const session = await authenticateSession(ctx, options.widgets);
    options.rateLimiter.take(`widget_session:${session.sessionId}`);
    validateQuery({ ...ctx.query });
    state(ctx).session = session;
    await next();
  });
  router.post('/objectives', async (ctx) => {
    const { content } = (await body(ctx, validateMessage)) as FollowUpMessageBody;
    options.visitorLimits.takeObjective(state(ctx).session);
    const created = await objectives.createForSession(state(ctx).session, content);
    ctx.status = 201;
    ctx.body = visitorView({ id: created.metadata.id, info: created.info as ObjectiveRecord['info'] });
  });
  router.get('/objectives/:id', async (ctx) => {
    ctx.body = visitorView(await own(ctx));
  });
  router.post('/objectives/:id/messages', async (ctx) => {
    const record = await own(ctx);
    const { content } = (await body(ctx, validateMessage)) as FollowUpMessageBody;
    await objectives.sendMessage(sessionWorkspace(state(ctx).session), record.id, content);
    ctx.body = visitorView(await own(ctx));
  });
  router.get('/objectives/:id/events/stream', async (ctx) => {
    const record = await own(ctx);
    const { session } = state(ctx);
    const release = options.visitorLimits.openStream(session.sessionId);
    try {
      // The stream ends when the session's token expires: the page reconnects with a fresh token. The
      // answer's deltas always: the page shows the text as it streams (a delta holds only modelTurn, offset and text).
      await openEventStream(objectives, stream, ctx, sessionWorkspace(session), record.id, resumeAfter(ctx.headers['last-event-id'], undefined), {
        view: visitorEvent, endAt: session.expiresAt, deltas: true,
      });
    } catch (error) {
      release();
      throw error;
    }
    if (ctx.body instanceof Readable) ctx.body.once('close', release);
    else release();
  });
  router.put('/objectives/:id/tool_calls/:toolCallId/approve', async (ctx) => {
    approvals(ctx);
    const record = await own(ctx);
    await body(ctx, validateApprove);
    await objectives.approve(sessionWorkspace(state(ctx).session), record.id, path(ctx).toolCallId!);
    ctx.body = visitorView(await own(ctx));
  });
  router.put('/objectives/:id/tool_calls/:toolCallId/deny', async (ctx) => {
    approvals(ctx);
    const record = await own(ctx);
    const { memo } = (await body(ctx, validateDeny)) as DenyToolCallBody;
    await objectives.deny(sessionWorkspace(state(ctx).session), record.id, path(ctx).toolCallId!, memo);
    ctx.body = visitorView(await own(ctx));
  });
  return router;
}
