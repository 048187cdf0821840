// Wire shapes of widgets and widget sessions (api-decisions.md "Widgets"). The
// schemas check shapes and types; hostnames and origins are checked (and
// normalised) by src/widgets/widget-input.ts, which names the field.
import { Type, type Static } from '@sinclair/typebox';
import { idPattern } from '../ids';
import { CreateMetadata, DateTime, ResourceMetadata, Strict, UpdateBody } from './common.schema';
import { SECRET_VALUE_MAX } from './secrets.schema';
import { SubjectAssertion, TenantAssertion } from './tenants.schema';

export const TITLE_MAX = 200;
export const GREETING_MAX = 2000;
export const SESSION_TTL_DEFAULT_SECONDS = 900;
export const SESSION_TTL_MAX_SECONDS = 86_400;
export const MAX_SESSION_SECRETS = 64;

export const WidgetThemeSchema = Type.Union([
  Type.Literal('THEME_UNSPECIFIED'),
  Type.Literal('THEME_LIGHT'),
  Type.Literal('THEME_DARK'),
  Type.Literal('THEME_AUTO'),
]);

const AgentId = Type.String({ pattern: idPattern('agent'), description: 'An agent of the workspace: the only agent the widget runs' });
const Hostname = Type.String({ maxLength: 253, description: 'A DNS hostname such as chat.example.com, stored in lower case; unique across all accounts' });
const AllowedOrigins = Type.Array(Type.String({ maxLength: 2048 }), {
  description: 'Exact origins scheme://host[:port] (http or https; no path, no wildcard) that may embed the widget; at least one',
});
const Title = Type.String({ maxLength: TITLE_MAX, description: 'The chat header; blank: none' });
const Greeting = Type.String({ maxLength: GREETING_MAX, description: 'The first message the visitor sees; blank: none' });
const Theme = Type.Union(WidgetThemeSchema.anyOf, { description: 'THEME_UNSPECIFIED or absent: THEME_AUTO (follows the visitor\'s colour scheme)' });
const AllowVisitorApprovals = Type.Boolean({ description: 'The visitor may approve or deny tool calls that require approval; default false' });

export const CreateWidgetBody = Strict({
  metadata: CreateMetadata,
  spec: Strict({
    agentId: AgentId,
    hostname: Hostname,
    allowedOrigins: AllowedOrigins,
    title: Type.Optional(Title),
    greeting: Type.Optional(Greeting),
    theme: Type.Optional(Theme),
    allowVisitorApprovals: Type.Optional(AllowVisitorApprovals),
  }),
});
export type CreateWidgetBody = Static<typeof CreateWidgetBody>;

export const UpdateWidgetBody = UpdateBody(Strict({
  agentId: Type.Optional(AgentId),
  hostname: Type.Optional(Hostname),
  allowedOrigins: Type.Optional(AllowedOrigins),
  title: Type.Optional(Title),
  greeting: Type.Optional(Greeting),
  theme: Type.Optional(Theme),
  allowVisitorApprovals: Type.Optional(AllowVisitorApprovals),
}));
export type UpdateWidgetBody = Static<typeof UpdateWidgetBody>;

export const Widget = Type.Object({
  metadata: ResourceMetadata,
  spec: Type.Object({
    agentId: Type.String(),
    hostname: Type.String(),
    allowedOrigins: Type.Array(Type.String()),
    title: Type.Optional(Type.String()),
    greeting: Type.Optional(Type.String()),
    theme: WidgetThemeSchema,
    allowVisitorApprovals: Type.Boolean(),
  }),
  info: Type.Object({
    baseUrl: Type.String({ description: 'The widget host of this widget: https://<hostname>, or AGENTRT_WIDGET_BASE_URL with the hostname filled in (widget.js is served under it)' }),
  }),
});
export type Widget = Static<typeof Widget>;

export const WidgetListFilters = {
  agentId: Type.Optional(Type.String({ pattern: idPattern('agent'), description: 'Only the widgets of this agent' })),
};

export const CreateWidgetSessionBody = Strict({
  tenant: Type.Optional(TenantAssertion),
  subject: Type.Optional(SubjectAssertion),
  secrets: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: SECRET_VALUE_MAX }), {
    description: `NAME → value for {{secrets.NAME}} in the tools of this session's objectives (before the workspace's); names as workspace secret names; at most ${MAX_SESSION_SECRETS}; never returned`,
  })),
  ttlSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: SESSION_TTL_MAX_SECONDS, description: `Lifetime of the session and its token; default ${SESSION_TTL_DEFAULT_SECONDS}` })),
});
export type CreateWidgetSessionBody = Static<typeof CreateWidgetSessionBody>;

export const WidgetSession = Type.Object({
  sessionId: Type.String({ description: 'wsess_…: DELETE …/sessions/{sessionId} revokes it' }),
  token: Type.String({ description: 'The visitor\'s bearer token on the widget host (a JWT whose audience is the widget\'s hostname)' }),
  expiresAt: DateTime,
  widgetUrl: Type.String({ description: '<widget base URL>/#session=<token>: the chat page for this session' }),
  tenantId: Type.Optional(Type.String()),
  subjectId: Type.Optional(Type.String()),
});
export type WidgetSession = Static<typeof WidgetSession>;
