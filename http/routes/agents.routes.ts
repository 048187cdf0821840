// Agents (spec 4.8) and the agent's feedback list (api-decisions.md "Objectives").
import { Type } from '@sinclair/typebox';
import type { AgentService } from '../../src/agents/agent.service';
import type { FeedbackService } from '../../src/agents/feedback.service';
import { parseLabelSelector } from '../../src/resource/labels';
import { pageRequest } from '../../src/resource/pagination';
import { Agent, CreateAgentBody, Feedback, FeedbackRatingSchema, UpdateAgentBody } from '../../src/schemas/agents.schema';
import { Empty, ListOf, PathIds, Strict, listParamProperties } from '../../src/schemas/common.schema';
import { idPattern } from '../../src/ids';
import { defineRoute, type RouteDefinition } from '../route';

const WorkspacePath = PathIds({ workspaceId: 'workspace' });
const AgentPath = PathIds({ workspaceId: 'workspace', id: 'agent' });
const ListQuery = Strict(listParamProperties);
const DeleteQuery = Strict({ force: Type.Optional(Type.Boolean({ description: 'Delete even while objectives of the agent run' })) });
const FeedbackQuery = Strict({
  ...listParamProperties,
  variationId: Type.Optional(Type.String({ pattern: idPattern('agentVariation') })),
  rating: Type.Optional(FeedbackRatingSchema),
});

export function agentRoutes({ agents, feedback }: { agents: AgentService; feedback: FeedbackService }): RouteDefinition[] {
  const base = '/v1/workspaces/{workspaceId}/agents';
  return [
    defineRoute({
      method: 'GET', path: base, operationId: 'listAgents', summary: 'List agents', scope: 'agents:read', workspace: 'path',
      params: WorkspacePath, query: ListQuery, response: ListOf(Agent),
      handler: ({ workspace, query }) =>
        agents.list(workspace, pageRequest(query), { prefix: query.prefix, labels: parseLabelSelector(query.labels) }, query.includeInfo ?? false),
    }),
    defineRoute({
      method: 'POST', path: base, operationId: 'createAgent', summary: 'Create an agent', scope: 'agents:manage', workspace: 'path',
      params: WorkspacePath, body: CreateAgentBody, response: Agent, idempotent: true,
      handler: ({ principal, workspace, body }) => agents.create(principal, workspace, body),
    }),
    defineRoute({
      method: 'GET', path: `${base}/{id}`, operationId: 'getAgent', summary: 'Get an agent', scope: 'agents:read', workspace: 'path',
      params: AgentPath, response: Agent,
      handler: ({ workspace, params }) => agents.get(workspace, params.id),
    }),
    defineRoute({
      method: 'PATCH', path: `${base}/{id}`, operationId: 'updateAgent', summary: 'Update an agent', scope: 'agents:manage', workspace: 'path',
      params: AgentPath, body: UpdateAgentBody, response: Agent, conditional: true,
      handler: ({ workspace, params, body, headers }) => agents.update(workspace, params.id, body, headers['if-match']),
    }),
    defineRoute({
      method: 'DELETE', path: `${base}/{id}`, operationId: 'deleteAgent', summary: 'Delete an agent (FAILED_PRECONDITION while objectives run, unless force=true)',
      scope: 'agents:manage', workspace: 'path', params: AgentPath, query: DeleteQuery, response: Empty,
      handler: async ({ workspace, params, query }) => (await agents.delete(workspace, params.id, query.force ?? false), {}),
    }),
    defineRoute({
      method: 'GET', path: `${base}/{agentId}/feedback`, operationId: 'listAgentFeedback', summary: "List the agent's feedback",
      scope: 'agents:read', workspace: 'path', params: PathIds({ workspaceId: 'workspace', agentId: 'agent' }), query: FeedbackQuery, response: ListOf(Feedback),
      handler: ({ workspace, params, query }) =>
        feedback.list(workspace, params.agentId, pageRequest(query), {
          variationId: query.variationId, rating: query.rating, prefix: query.prefix, labels: parseLabelSelector(query.labels),
        }),
    }),
  ];
}
