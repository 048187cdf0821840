// Tools (api-decisions.md "Tools and tool sets"): HTTP and MCP tools of a
// workspace. A tool in a managed tool set changes only through API keys.
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import { bundleKeyChange, inWorkspace, updatePaths, type WriteOptions } from '../agents/write-options';
import { newId } from '../ids';
import type { UrlPolicyOptions } from '../network/url-policy';
import type { AgentsStore } from '../ports/agents-store';
import type { FoundationStore, ListFilter } from '../ports/foundation-store';
import { checkIfMatch, metadataChanges, METADATA_UPDATE_PATHS, newResourceFields } from '../resource/metadata';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import { touches } from '../resource/update-mask';
import type { CreateToolBody, Tool, ToolSpecUpdateInput, UpdateToolBody } from '../schemas/tools.schema';
import { assertMayChangeManaged } from './managed';
import { toTool } from './mappers';
import type { ToolRecord } from './records';
import { specOfRecord, toolSpecFields } from './tool-spec';

const SPEC_KEYS = ['description', 'inputSchema', 'requiresApproval'] as const;
/** Leaves of each kind a PATCH may name; naming `spec.http` (or `spec.mcp`) replaces it whole. */
const KIND_LEAVES = {
  http: ['url', 'method', 'headers', 'timeoutMs'],
  mcp: ['serverUrl', 'toolName'],
} as const;
const UPDATE_LEAVES = [
  ...METADATA_UPDATE_PATHS,
  ...SPEC_KEYS.map((key) => `spec.${key}`),
  ...Object.entries(KIND_LEAVES).flatMap(([kind, leaves]) => leaves.map((leaf) => `spec.${kind}.${leaf}`)),
];
const UPDATE_PARENTS = ['spec', 'spec.http', 'spec.mcp'];

export interface NewToolFields {
  sourceToolSetId?: string | null;
}

export class ToolService {
  constructor(
    private readonly store: AgentsStore,
    private readonly foundation: FoundationStore,
    private readonly policy: UrlPolicyOptions,
  ) {}

  async create(principal: Principal, workspace: WorkspaceRef, body: CreateToolBody, options: WriteOptions & NewToolFields = {}): Promise<Tool> {
    const store = options.store ?? this.store;
    const record = await store.tools.insert(this.newRecord(principal, workspace, body, options));
    return this.withInfo(record, store);
  }

  /** A validated new tool row (also used by tool-set sync inside its transaction). */
  newRecord(principal: Principal, workspace: WorkspaceRef, body: CreateToolBody, options: WriteOptions & NewToolFields = {}): ToolRecord {
    return {
      ...newResourceFields(newId('tool'), principal, workspace, body.metadata),
      bundleKey: options.bundleKey ?? null,
      ...toolSpecFields(body.spec, this.policy),
      sourceToolSetId: options.sourceToolSetId ?? null,
    };
  }

  async list(workspace: WorkspaceRef, page: PageRequest, filter: ListFilter, includeInfo: boolean): Promise<Page<Tool>> {
    const result = toPage(await this.store.tools.list(workspace.id, page, filter), page, (row) => row);
    if (!includeInfo) return { ...result, items: result.items.map((row) => toTool(row)) };
    const sets = await this.store.toolSetTools.setsOf(result.items.map((row) => row.id));
    const creators = await this.foundation.profiles.findByIds(result.items.map((row) => row.profileId));
    return { ...result, items: result.items.map((row) => toTool(row, { createdBy: creators.get(row.profileId ?? ''), toolSets: sets.get(row.id) ?? [] })) };
  }

  async get(workspace: WorkspaceRef, id: string): Promise<Tool> {
    return this.withInfo(await this.find(workspace, id));
  }

  /**
   * @throws PermissionDeniedError when a USER principal changes a tool of a managed tool set
   * @throws AbortedError when If-Match does not match `updatedAt`
   */
  async update(principal: Principal, workspace: WorkspaceRef, id: string, body: UpdateToolBody, ifMatch?: string, options: WriteOptions = {}): Promise<Tool> {
    const store = options.store ?? this.store;
    const record = await this.findChangeable(principal, workspace, id, store);
    checkIfMatch(ifMatch, record);
    const { updateMask, ...fields } = body;
    const paths = updatePaths(fields, updateMask, UPDATE_LEAVES, UPDATE_PARENTS);
    const spec: ToolSpecUpdateInput = specOfRecord(record);
    for (const key of SPEC_KEYS) {
      if (touches(paths, `spec.${key}`)) Object.assign(spec, { [key]: body.spec?.[key] });
    }
    for (const kind of ['http', 'mcp'] as const) {
      if (!touches(paths, `spec.${kind}`)) continue;
      if (paths.includes('spec') || paths.includes(`spec.${kind}`)) {
        spec[kind] = body.spec?.[kind];
        continue;
      }
      // Only leaves named: merge them into the stored kind (a leaf named without a value is removed).
      const merged: Record<string, unknown> = { ...spec[kind] };
      for (const leaf of KIND_LEAVES[kind]) {
        if (!paths.includes(`spec.${kind}.${leaf}`)) continue;
        const value = (body.spec?.[kind] as Record<string, unknown> | undefined)?.[leaf];
        if (value === undefined) delete merged[leaf];
        else merged[leaf] = value;
      }
      Object.assign(spec, { [kind]: merged });
    }
    const changes: Partial<ToolRecord> = { ...metadataChanges(body.metadata, paths), ...bundleKeyChange(options) };
    if (paths.some((path) => path === 'spec' || path.startsWith('spec.'))) Object.assign(changes, toolSpecFields(spec, this.policy));
    const updated = await store.tools.update(record.id, { ...changes, updatedAt: new Date() });
    return this.withInfo(updated ?? record, store);
  }

  /** Deletes the tool; it leaves every tool set and variation that held it. */
  async delete(principal: Principal, workspace: WorkspaceRef, id: string, options: WriteOptions = {}): Promise<void> {
    const store = options.store ?? this.store;
    const record = await this.findChangeable(principal, workspace, id, store);
    await store.tools.delete(record.id);
  }

  /** @throws NotFoundError when the tool is not in the workspace */
  async find(workspace: WorkspaceRef, id: string, store: AgentsStore = this.store): Promise<ToolRecord> {
    return inWorkspace(await store.tools.findById(id), workspace, 'tool', id);
  }

  private async findChangeable(principal: Principal, workspace: WorkspaceRef, id: string, store: AgentsStore): Promise<ToolRecord> {
    const record = await this.find(workspace, id, store);
    if (principal.kind !== 'API_KEY' && (await store.tools.inManagedSet(record.id))) assertMayChangeManaged(principal, `tool ${record.id} (in a managed tool set)`);
    return record;
  }

  private async withInfo(record: ToolRecord, store: AgentsStore = this.store): Promise<Tool> {
    const sets = await store.toolSetTools.setsOf([record.id]);
    const creators = await this.foundation.profiles.findByIds([record.profileId]);
    return toTool(record, { createdBy: creators.get(record.profileId ?? ''), toolSets: sets.get(record.id) ?? [] });
  }
}
