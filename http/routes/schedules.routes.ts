// Agent schedules (interface-spec 2.15, api-decisions.md "Schedules"): list,
// create, get, update, DELETE (archives), trigger and upcoming fire times.
// Scopes are the agents' (api-decisions.md: schedules belong with agents).
import type { AgentService } from '../../src/agents/agent.service';
import type { ScheduleService } from '../../src/schedules/schedule.service';
import { parseLabelSelector } from '../../src/resource/labels';
import { pageRequest } from '../../src/resource/pagination';
import { ListOf, PathIds, Strict, listParamProperties } from '../../src/schemas/common.schema';
import {
  AgentSchedule, CreateScheduleBody, ScheduleListFilters, TriggerScheduleBody, TriggerScheduleResponse, UpcomingFireTimes, UpcomingQuery, UpdateScheduleBody,
} from '../../src/schemas/schedules.schema';
import { idempotencyKeyOf } from '../mount';
import { agentAccess } from '../parent-access';
import { defineRoute, type RouteDefinition } from '../route';

const AgentPath = PathIds({ workspaceId: 'workspace', agentId: 'agent' });
const SchedulePath = PathIds({ workspaceId: 'workspace', agentId: 'agent', id: 'schedule' });
const ListQuery = Strict({ ...listParamProperties, ...ScheduleListFilters });

export function scheduleRoutes({ schedules, agents }: { schedules: ScheduleService; agents: AgentService }): RouteDefinition[] {
  const base = '/v1/workspaces/{workspaceId}/agents/{agentId}/schedules';
  const one = `${base}/{id}`;
  // The agent is checked before the body, as the workspace is.
  const agentFound = agentAccess(agents);
  return [
    defineRoute({
      method: 'GET', path: base, operationId: 'listAgentSchedules', summary: "List the agent's schedules",
      scope: 'agents:read', workspace: 'path', params: AgentPath, query: ListQuery, response: ListOf(AgentSchedule),
      handler: ({ workspace, params, query }) =>
        schedules.list(workspace, params.agentId, pageRequest(query), { prefix: query.prefix, labels: parseLabelSelector(query.labels), status: query.status }),
    }),
    defineRoute({
      method: 'POST', path: base, operationId: 'createAgentSchedule', summary: 'Create a schedule that starts objectives of the agent',
      scope: 'agents:manage', workspace: 'path', params: AgentPath, body: CreateScheduleBody, response: AgentSchedule, idempotent: true, checkAccess: agentFound,
      handler: (request) => schedules.create(request.principal, request.workspace, request.params.agentId, request.body, idempotencyKeyOf(request.headers)),
    }),
    defineRoute({
      method: 'GET', path: one, operationId: 'getAgentSchedule', summary: 'Get a schedule',
      scope: 'agents:read', workspace: 'path', params: SchedulePath, response: AgentSchedule,
      handler: ({ workspace, params }) => schedules.get(workspace, params.agentId, params.id),
    }),
    defineRoute({
      method: 'PATCH', path: one, operationId: 'updateAgentSchedule', summary: 'Update a schedule (not an ARCHIVED one)',
      scope: 'agents:manage', workspace: 'path', params: SchedulePath, body: UpdateScheduleBody, response: AgentSchedule, conditional: true, checkAccess: agentFound,
      handler: ({ workspace, params, body, headers }) => schedules.update(workspace, params.agentId, params.id, body, headers['if-match']),
    }),
    defineRoute({
      method: 'DELETE', path: one, operationId: 'deleteAgentSchedule', summary: 'Archive a schedule: it never fires again; answers it ARCHIVED',
      scope: 'agents:manage', workspace: 'path', params: SchedulePath, response: AgentSchedule,
      handler: ({ workspace, params }) => schedules.archive(workspace, params.agentId, params.id),
    }),
    defineRoute({
      method: 'POST', path: `${one}/trigger`, operationId: 'triggerAgentSchedule', summary: 'Fire once now, honouring the overlap policy',
      scope: 'agents:manage', workspace: 'path', params: SchedulePath, body: TriggerScheduleBody, response: TriggerScheduleResponse, idempotent: true, checkAccess: agentFound,
      handler: (request) => schedules.trigger(request.principal, request.workspace, request.params.agentId, request.params.id, idempotencyKeyOf(request.headers)),
    }),
    defineRoute({
      method: 'GET', path: `${one}/upcoming`, operationId: 'listUpcomingScheduleFireTimes', summary: 'The next fire times of the rules, in UTC',
      scope: 'agents:read', workspace: 'path', params: SchedulePath, query: UpcomingQuery, response: UpcomingFireTimes,
      handler: ({ workspace, params, query }) => schedules.upcoming(workspace, params.agentId, params.id, query),
    }),
  ];
}
