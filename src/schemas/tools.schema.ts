// Wire shapes of tools and tool sets (api-decisions.md "Tools and tool sets").
import { Type, type Static } from '@sinclair/typebox';
import {
  BareMetadata,
  CreateMetadata,
  DateTime,
  Description,
  Profile,
  ResourceMetadata,
  Strict,
  UpdateBody,
} from './common.schema';

const URL_MAX = 2048;
export const TOOL_TIMEOUT_MAX_MS = 300_000;

export const HttpMethodSchema = Type.Union(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((method) => Type.Literal(method)));
const JsonObject = Type.Record(Type.String(), Type.Unknown());

export const HttpToolSpec = Strict({
  url: Type.String({ minLength: 1, maxLength: URL_MAX, description: 'May hold {{secrets.NAME}} in its path and query' }),
  method: HttpMethodSchema,
  headers: Type.Optional(Type.Record(Type.String({ maxLength: 256 }), Type.String({ maxLength: 8192 }), { description: 'Values may hold {{secrets.NAME}}' })),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: TOOL_TIMEOUT_MAX_MS, default: 30_000 })),
});
export const McpToolSpec = Strict({
  serverUrl: Type.String({ minLength: 1, maxLength: URL_MAX }),
  toolName: Type.String({ minLength: 1, maxLength: 256 }),
});

/** Tool spec as clients send it; exactly one of `http` and `mcp` (checked by the service). */
export const ToolSpecInput = Strict({
  description: Type.Optional(Description),
  inputSchema: Type.Optional(JsonObject),
  requiresApproval: Type.Optional(Type.Boolean()),
  http: Type.Optional(HttpToolSpec),
  mcp: Type.Optional(McpToolSpec),
});
export type ToolSpecInput = Static<typeof ToolSpecInput>;

export const Tool = Type.Object({
  metadata: ResourceMetadata,
  spec: Type.Object({
    description: Type.Optional(Type.String()),
    inputSchema: Type.Optional(JsonObject),
    requiresApproval: Type.Boolean(),
    http: Type.Optional(Type.Object({ url: Type.String(), method: Type.String(), headers: Type.Optional(Type.Record(Type.String(), Type.String())), timeoutMs: Type.Integer() })),
    mcp: Type.Optional(Type.Object({ serverUrl: Type.String(), toolName: Type.String() })),
  }),
  info: Type.Optional(Type.Object({
    createdBy: Type.Optional(Profile),
    modelToolName: Type.String({ description: 'The name a model sees' }),
    toolSets: Type.Array(BareMetadata),
    sourceToolSetId: Type.Optional(Type.String({ description: 'The MCP-mirroring tool set that created the tool' })),
  })),
});
export type Tool = Static<typeof Tool>;

export const CreateToolBody = Strict({ metadata: CreateMetadata, spec: ToolSpecInput });
export type CreateToolBody = Static<typeof CreateToolBody>;
/** Tool spec of a PATCH: `http` and `mcp` may be partial, merged into the stored ones (checked whole by the service). */
export const ToolSpecUpdateInput = Strict({
  description: Type.Optional(Description),
  inputSchema: Type.Optional(JsonObject),
  requiresApproval: Type.Optional(Type.Boolean()),
  http: Type.Optional(Type.Partial(HttpToolSpec)),
  mcp: Type.Optional(Type.Partial(McpToolSpec)),
});
export type ToolSpecUpdateInput = Static<typeof ToolSpecUpdateInput>;

export const UpdateToolBody = UpdateBody(ToolSpecUpdateInput);
export type UpdateToolBody = Static<typeof UpdateToolBody>;

export const ToolSetSpecInput = Strict({
  description: Type.Optional(Description),
  managed: Type.Optional(Type.Boolean({ description: 'Only API-key principals may change a managed set' })),
  mcpServerUrl: Type.Optional(Type.String({ minLength: 1, maxLength: URL_MAX })),
});
export type ToolSetSpecInput = Static<typeof ToolSetSpecInput>;

export const ToolSet = Type.Object({
  metadata: ResourceMetadata,
  spec: Type.Object({ description: Type.Optional(Type.String()), managed: Type.Boolean(), mcpServerUrl: Type.Optional(Type.String()) }),
  info: Type.Optional(Type.Object({
    createdBy: Type.Optional(Profile),
    toolCount: Type.Integer(),
    tools: Type.Array(BareMetadata),
    lastSyncedAt: Type.Optional(DateTime),
  })),
});
export type ToolSet = Static<typeof ToolSet>;

export const CreateToolSetBody = Strict({ metadata: CreateMetadata, spec: Type.Optional(ToolSetSpecInput) });
export type CreateToolSetBody = Static<typeof CreateToolSetBody>;
export const UpdateToolSetBody = UpdateBody(ToolSetSpecInput);
export type UpdateToolSetBody = Static<typeof UpdateToolSetBody>;

export const AddToolBody = Strict({ toolId: Type.String({ minLength: 1, maxLength: 64 }) });
export type AddToolBody = Static<typeof AddToolBody>;

export const ToolSetSyncResult = Type.Object({
  toolSet: ToolSet,
  created: Type.Array(BareMetadata),
  updated: Type.Array(BareMetadata),
  deleted: Type.Array(BareMetadata),
});
export type ToolSetSyncResult = Static<typeof ToolSetSyncResult>;
