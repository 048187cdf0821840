// Tool sets (api-decisions.md "Tools and tool sets"): named groups of tools;
// managed sets change only through API keys; MCP-mirroring sets sync their
// tools to the server's tool list.
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import { checkJsonSchema } from '../agents/json-schema';
import { bundleKeyChange, inWorkspace, updatePaths, type WriteOptions } from '../agents/write-options';
import { AlreadyExistsError, ApiError, FailedPreconditionError, NotFoundError } from '../errors';
import { newId } from '../ids';
import { checkOutboundUrl, type UrlPolicyOptions } from '../network/url-policy';
import type { AgentsStore } from '../ports/agents-store';
import type { FoundationStore, ListFilter } from '../ports/foundation-store';
import type { McpClient, McpToolDescription } from '../ports/mcp-client';
import { checkIfMatch, metadataChanges, METADATA_UPDATE_PATHS, newResourceFields } from '../resource/metadata';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import { touches } from '../resource/update-mask';
import type { CreateToolSetBody, ToolSet, ToolSetSpecInput, ToolSetSyncResult, UpdateToolSetBody } from '../schemas/tools.schema';
import { assertMayChangeManaged } from './managed';
import { toToolSet } from './mappers';
import type { ToolRecord, ToolSetRecord } from './records';
import type { ToolService } from './tool.service';

const UPDATE_LEAVES = [...METADATA_UPDATE_PATHS, 'spec.description', 'spec.managed', 'spec.mcpServerUrl'];

type Bare = { id: string; name: string };
const bare = (record: Bare): Bare => ({ id: record.id, name: record.name });

export class ToolSetService {
  constructor(
    private readonly store: AgentsStore,
    private readonly foundation: FoundationStore,
    private readonly tools: ToolService,
    private readonly mcp: McpClient,
    private readonly policy: UrlPolicyOptions,
  ) {}

  /** @throws PermissionDeniedError when a USER principal creates a managed set */
  async create(principal: Principal, workspace: WorkspaceRef, body: CreateToolSetBody, options: WriteOptions = {}): Promise<ToolSet> {
    if (body.spec?.managed) assertMayChangeManaged(principal, 'a tool set created with spec.managed');
    const store = options.store ?? this.store;
    const record = await store.toolSets.insert({
      ...newResourceFields(newId('toolSet'), principal, workspace, body.metadata),
      bundleKey: options.bundleKey ?? null,
      description: body.spec?.description ?? null,
      managed: body.spec?.managed ?? false,
      mcpServerUrl: this.serverUrl(body.spec?.mcpServerUrl),
      lastSyncedAt: null,
    });
    return this.withInfo(record, store);
  }

  async list(workspace: WorkspaceRef, page: PageRequest, filter: ListFilter, includeInfo: boolean): Promise<Page<ToolSet>> {
    const result = toPage(await this.store.toolSets.list(workspace.id, page, filter), page, (row) => row);
    if (!includeInfo) return { ...result, items: result.items.map((row) => toToolSet(row)) };
    const tools = await this.store.toolSetTools.toolsOf(result.items.map((row) => row.id));
    const creators = await this.foundation.profiles.findByIds(result.items.map((row) => row.profileId));
    return { ...result, items: result.items.map((row) => toToolSet(row, { createdBy: creators.get(row.profileId ?? ''), tools: tools.get(row.id) ?? [] })) };
  }

  async get(workspace: WorkspaceRef, id: string): Promise<ToolSet> {
    return this.withInfo(await this.find(workspace, id));
  }

  /**
   * @throws PermissionDeniedError when a USER principal changes a managed set or makes one managed
   * @throws AbortedError when If-Match does not match `updatedAt`
   */
  async update(principal: Principal, workspace: WorkspaceRef, id: string, body: UpdateToolSetBody, ifMatch?: string, options: WriteOptions = {}): Promise<ToolSet> {
    const store = options.store ?? this.store;
    const record = await this.findChangeable(principal, workspace, id, store);
    checkIfMatch(ifMatch, record);
    const { updateMask, ...fields } = body;
    const paths = updatePaths(fields, updateMask, UPDATE_LEAVES, ['spec']);
    const spec: ToolSetSpecInput = body.spec ?? {};
    const changes: Partial<ToolSetRecord> = { ...metadataChanges(body.metadata, paths), ...bundleKeyChange(options) };
    if (touches(paths, 'spec.description')) changes.description = spec.description ?? null;
    if (touches(paths, 'spec.managed')) {
      if (spec.managed) assertMayChangeManaged(principal, `tool set ${record.id}`);
      changes.managed = spec.managed ?? false;
    }
    if (touches(paths, 'spec.mcpServerUrl')) changes.mcpServerUrl = this.serverUrl(spec.mcpServerUrl);
    const updated = await store.toolSets.update(record.id, { ...changes, updatedAt: new Date() });
    return this.withInfo(updated ?? record, store);
  }

  /** Deletes the set, the tools its sync created, and its variation assignments. */
  async delete(principal: Principal, workspace: WorkspaceRef, id: string, options: WriteOptions = {}): Promise<void> {
    const store = options.store ?? this.store;
    const record = await this.findChangeable(principal, workspace, id, store);
    await store.toolSets.delete(record.id);
  }

  /**
   * Adds a tool of the workspace to the set.
   * @throws AlreadyExistsError when the tool is already in the set
   */
  async addTool(principal: Principal, workspace: WorkspaceRef, id: string, toolId: string, options: WriteOptions = {}): Promise<ToolSet> {
    const store = options.store ?? this.store;
    const record = await this.findChangeable(principal, workspace, id, store);
    const tool = await this.tools.find(workspace, toolId, store);
    if (!(await store.toolSetTools.add(record.id, tool.id))) throw new AlreadyExistsError(`tool ${tool.id} is already in tool set ${record.id}`);
    return this.withInfo(record, store);
  }

  /** @throws NotFoundError when the tool is not in the set */
  async removeTool(principal: Principal, workspace: WorkspaceRef, id: string, toolId: string, options: WriteOptions = {}): Promise<void> {
    const store = options.store ?? this.store;
    const record = await this.findChangeable(principal, workspace, id, store);
    if (!(await store.toolSetTools.remove(record.id, toolId))) throw NotFoundError.resource('tool', `${toolId} in tool set ${record.id}`);
  }

  /**
   * Makes the set's synced tools match the MCP server's tool list: new server
   * tools are created and added, changed ones updated, vanished ones deleted.
   * @throws FailedPreconditionError when the set has no spec.mcpServerUrl
   * @throws UnavailableError when the server cannot be reached
   */
  async sync(principal: Principal, workspace: WorkspaceRef, id: string): Promise<ToolSetSyncResult> {
    const record = await this.findChangeable(principal, workspace, id, this.store);
    if (!record.mcpServerUrl) throw new FailedPreconditionError(`tool set ${record.id} has no spec.mcpServerUrl to sync from`);
    const listed = await this.mcp.listTools(record.mcpServerUrl);
    listed.forEach((tool) => checkServerTool(record.mcpServerUrl!, tool));
    return this.store.transaction(async (store) => {
      const existing = new Map((await store.tools.listBySourceSet(record.id)).map((tool) => [tool.mcpToolName ?? '', tool]));
      const result = { created: [] as Bare[], updated: [] as Bare[], deleted: [] as Bare[] };
      for (const tool of listed) {
        const current = existing.get(tool.name);
        existing.delete(tool.name);
        if (!current) result.created.push(bare(await this.createSynced(principal, workspace, record, tool, store)));
        else if (await this.updateSynced(current, record.mcpServerUrl!, tool, store)) result.updated.push(bare(current));
      }
      for (const stale of existing.values()) {
        await store.tools.delete(stale.id);
        result.deleted.push(bare(stale));
      }
      const synced = (await store.toolSets.update(record.id, { lastSyncedAt: new Date() })) ?? record;
      return { toolSet: await this.withInfo(synced, store), ...result };
    });
  }

  /** @throws NotFoundError when the set is not in the workspace */
  async find(workspace: WorkspaceRef, id: string, store: AgentsStore = this.store): Promise<ToolSetRecord> {
    return inWorkspace(await store.toolSets.findById(id), workspace, 'tool set', id);
  }

  private async createSynced(principal: Principal, workspace: WorkspaceRef, set: ToolSetRecord, tool: McpToolDescription, store: AgentsStore): Promise<ToolRecord> {
    const record = this.tools.newRecord(
      principal,
      workspace,
      { metadata: { name: tool.name }, spec: { description: tool.description, inputSchema: tool.inputSchema, mcp: { serverUrl: set.mcpServerUrl!, toolName: tool.name } } },
      { sourceToolSetId: set.id, bundleKey: set.bundleKey },
    );
    await store.tools.insert(record);
    await store.toolSetTools.add(set.id, record.id);
    return record;
  }

  /** Updates a synced tool when the server changed it; true when it did. */
  private async updateSynced(current: ToolRecord, serverUrl: string, tool: McpToolDescription, store: AgentsStore): Promise<boolean> {
    const description = tool.description ?? null;
    const same = current.description === description && current.mcpServerUrl === serverUrl && canonicalJson(current.inputSchema) === canonicalJson(tool.inputSchema);
    if (same) return false;
    await store.tools.update(current.id, { description, inputSchema: tool.inputSchema, mcpServerUrl: serverUrl, updatedAt: new Date() });
    await store.toolSetTools.add(current.sourceToolSetId!, current.id);
    return true;
  }

  private serverUrl(raw: string | undefined): string | null {
    if (!raw) return null;
    checkOutboundUrl('spec.mcpServerUrl', raw, this.policy);
    return raw;
  }

  private async findChangeable(principal: Principal, workspace: WorkspaceRef, id: string, store: AgentsStore): Promise<ToolSetRecord> {
    const record = await this.find(workspace, id, store);
    if (record.managed) assertMayChangeManaged(principal, `tool set ${record.id}`);
    return record;
  }

  private async withInfo(record: ToolSetRecord, store: AgentsStore = this.store): Promise<ToolSet> {
    const tools = await store.toolSetTools.toolsOf([record.id]);
    const creators = await this.foundation.profiles.findByIds([record.profileId]);
    return toToolSet(record, { createdBy: creators.get(record.profileId ?? ''), tools: tools.get(record.id) ?? [] });
  }
}

/** JSON with object keys sorted: jsonb does not keep key order, so compare this way. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A server tool must carry an object JSON Schema we can compile. */
function checkServerTool(serverUrl: string, tool: McpToolDescription): void {
  try {
    checkJsonSchema('inputSchema', tool.inputSchema, { objectType: true });
  } catch (error) {
    const problem = error instanceof ApiError ? error.message : 'is invalid';
    throw new FailedPreconditionError(`MCP server ${serverUrl} lists tool "${tool.name}" with an unusable ${problem}`);
  }
}
