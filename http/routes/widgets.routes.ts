// Widgets and widget sessions (api-decisions.md "Widgets"). Sessions are
// minted server-to-server with `widget_sessions:manage`; the visitor's token is
// then used on the widget host (http/widget-host), never on these routes.
import { parseLabelSelector } from '../../src/resource/labels';
import { pageRequest } from '../../src/resource/pagination';
import { Empty, ListOf, PathIds, Strict, listParamProperties } from '../../src/schemas/common.schema';
import { CreateWidgetBody, CreateWidgetSessionBody, UpdateWidgetBody, Widget, WidgetListFilters, WidgetSession } from '../../src/schemas/widgets.schema';
import type { WidgetSessionService } from '../../src/widgets/widget-session.service';
import type { WidgetService } from '../../src/widgets/widget.service';
import { defineRoute, type RouteDefinition } from '../route';

const WorkspacePath = PathIds({ workspaceId: 'workspace' });
const WidgetPath = PathIds({ workspaceId: 'workspace', id: 'widget' });
const SessionsPath = PathIds({ workspaceId: 'workspace', widgetId: 'widget' });
const SessionPath = PathIds({ workspaceId: 'workspace', widgetId: 'widget', sessionId: 'widgetSession' });
const ListQuery = Strict({ ...listParamProperties, ...WidgetListFilters });

export function widgetRoutes({ widgets, widgetSessions }: { widgets: WidgetService; widgetSessions: WidgetSessionService }): RouteDefinition[] {
  const base = '/v1/workspaces/{workspaceId}/widgets';
  const one = `${base}/{id}`;
  const sessions = `${base}/{widgetId}/sessions`;
  // The widget is looked up before the body is read: a caller for whom it is not there gets its 404 whatever the body.
  const widgetFound = async ({ workspace, params }: { workspace: Parameters<WidgetService['find']>[0]; params: { widgetId: string } }) => {
    await widgets.find(workspace, params.widgetId);
  };
  return [
    defineRoute({
      method: 'GET', path: base, operationId: 'listWidgets', summary: 'List widgets', scope: 'widgets:read', workspace: 'path',
      params: WorkspacePath, query: ListQuery, response: ListOf(Widget),
      handler: ({ workspace, query }) => widgets.list(workspace, pageRequest(query), { prefix: query.prefix, labels: parseLabelSelector(query.labels), agentId: query.agentId }),
    }),
    defineRoute({
      method: 'POST', path: base, operationId: 'createWidget', summary: 'Create a widget: an embeddable chat of one agent at a hostname of its own',
      scope: 'widgets:manage', workspace: 'path', params: WorkspacePath, body: CreateWidgetBody, response: Widget, idempotent: true,
      handler: ({ principal, workspace, body }) => widgets.create(principal, workspace, body),
    }),
    defineRoute({
      method: 'GET', path: one, operationId: 'getWidget', summary: 'Get a widget', scope: 'widgets:read', workspace: 'path',
      params: WidgetPath, response: Widget,
      handler: ({ workspace, params }) => widgets.get(workspace, params.id),
    }),
    defineRoute({
      method: 'PATCH', path: one, operationId: 'updateWidget', summary: 'Update a widget', scope: 'widgets:manage', workspace: 'path',
      params: WidgetPath, body: UpdateWidgetBody, response: Widget, conditional: true,
      handler: ({ workspace, params, body, headers }) => widgets.update(workspace, params.id, body, headers['if-match']),
    }),
    defineRoute({
      method: 'DELETE', path: one, operationId: 'deleteWidget', summary: 'Delete a widget and revoke every session of it', scope: 'widgets:manage', workspace: 'path',
      params: WidgetPath, response: Empty,
      handler: async ({ workspace, params }) => (await widgets.delete(workspace, params.id), {}),
    }),
    defineRoute({
      method: 'POST', path: sessions, operationId: 'createWidgetSession', summary: "Mint a visitor's session of the widget (server-to-server): its token and widgetUrl",
      scope: 'widget_sessions:manage', workspace: 'path', params: SessionsPath, body: CreateWidgetSessionBody, response: WidgetSession, checkAccess: widgetFound,
      handler: ({ principal, workspace, params, body }) => widgetSessions.create(principal, workspace, params.widgetId, body),
    }),
    defineRoute({
      method: 'DELETE', path: `${sessions}/{sessionId}`, operationId: 'deleteWidgetSession', summary: 'Revoke a widget session: its token is refused from now on',
      scope: 'widget_sessions:manage', workspace: 'path', params: SessionPath, response: Empty,
      handler: async ({ workspace, params }) => (await widgetSessions.revoke(workspace, params.widgetId, params.sessionId), {}),
    }),
  ];
}
