// Widgets (api-decisions.md "Widgets"): an embeddable chat of one agent, served
// at a hostname unique across every account, framed only by its allowed
// origins. Validates creates and masked updates field by field; the store's
// unique index decides hostname races (ALREADY_EXISTS).
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import { BAD_REQUEST_TYPE, FailedPreconditionError, InvalidArgumentError, NotFoundError } from '../errors';
import { newId } from '../ids';
import type { AgentsStore } from '../ports/agents-store';
import type { WidgetListFilter, WidgetsStore } from '../ports/widgets-store';
import { checkIfMatch, metadataChanges, METADATA_UPDATE_PATHS, newResourceFields } from '../resource/metadata';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import { getPath, resolveUpdatePaths, touches } from '../resource/update-mask';
import type { CreateWidgetBody, UpdateWidgetBody, Widget } from '../schemas/widgets.schema';
import { toWidget } from './mappers';
import type { WidgetRecord } from './records';
import { checkAllowedOrigins, checkHostname, checkTheme, optionalText } from './widget-input';

const SPEC_PATHS = [
  'spec.agentId', 'spec.hostname', 'spec.allowedOrigins', 'spec.title', 'spec.greeting', 'spec.theme', 'spec.allowVisitorApprovals',
] as const;
const UPDATE_PATHS = [...METADATA_UPDATE_PATHS, ...SPEC_PATHS];

/**
 * A widget whose agent was deleted keeps existing (deleting an agent is never
 * blocked by a widget, as it is not by a schedule; PATCH spec.agentId mends
 * it): minting a session of it, and a visitor's new conversation, fail with
 * this. The customer is told the agent and the way out; the visitor only that
 * the chat cannot start (the visitor sees nothing of the agent).
 */
export function widgetAgentDeleted(agentId?: string): FailedPreconditionError {
  return new FailedPreconditionError(agentId === undefined
    ? "the widget's agent was deleted; this chat cannot start a conversation"
    : `the widget's agent ${agentId} was deleted; point the widget's spec.agentId at another agent, or delete the widget`);
}

type WidgetSpecFields = Pick<WidgetRecord, 'agentId' | 'hostname' | 'allowedOrigins' | 'title' | 'greeting' | 'theme' | 'allowVisitorApprovals'>;

export interface WidgetServiceOptions {
  /** AGENTRT_WIDGET_BASE_URL (config.widgetBaseUrl). */
  baseUrlTemplate?: string;
  /** Told of every hostname a create, update or delete changes the answer for (the verifier's cache forgets it). */
  onHostnameChanged?: (hostname: string) => void;
  /** The API's own hostname (config.publicUrl's): no widget may take it. */
  apiHostname?: string;
}

export class WidgetService {
  constructor(
    private readonly store: WidgetsStore,
    private readonly agents: Pick<AgentsStore, 'agents'>,
    private readonly options: WidgetServiceOptions = {},
  ) {}

  /**
   * @throws NotFoundError naming `spec.agentId` for an agent that is not the workspace's
   * @throws InvalidArgumentError naming the first offending field
   * @throws AlreadyExistsError when a widget of any account has the hostname
   */
  async create(principal: Principal, workspace: WorkspaceRef, body: CreateWidgetBody): Promise<Widget> {
    // Every field is checked on create (stored null), so the spec is whole.
    const spec = (await this.checkSpec(workspace, body.spec, SPEC_PATHS, null)) as WidgetSpecFields;
    const record = await this.store.widgets.insert({ ...newResourceFields(newId('widget'), principal, workspace, body.metadata), ...spec });
    // The host may have asked for this hostname before it had a widget.
    this.options.onHostnameChanged?.(record.hostname);
    return this.toWire(record);
  }

  async get(workspace: WorkspaceRef, id: string): Promise<Widget> {
    return this.toWire(await this.find(workspace, id));
  }

  async list(workspace: WorkspaceRef, page: PageRequest, filter: WidgetListFilter): Promise<Page<Widget>> {
    return toPage(await this.store.widgets.list(workspace.id, page, filter), page, (record) => this.toWire(record));
  }

  /**
   * Applies the masked fields (without a mask: the fields present); a masked
   * optional field absent from the body returns to its default. A change of
   * hostname ends every session of the widget (their rows go in the same
   * transaction): their tokens stop verifying, even if the hostname comes back.
   * @throws AbortedError when If-Match does not match `metadata.updatedAt`
   * @throws InvalidArgumentError, NotFoundError, AlreadyExistsError as create
   */
  async update(workspace: WorkspaceRef, id: string, body: UpdateWidgetBody, ifMatch?: string): Promise<Widget> {
    const record = await this.find(workspace, id);
    checkIfMatch(ifMatch, record);
    const { updateMask, ...fields } = body;
    const paths = resolveUpdatePaths(fields, updateMask, UPDATE_PATHS);
    const touched = SPEC_PATHS.filter((path) => touches(paths, path));
    const spec = await this.checkSpec(workspace, fields.spec ?? {}, touched, record);
    const changes: Partial<WidgetRecord> = { ...metadataChanges(body.metadata, paths), ...spec, updatedAt: new Date() };
    const updated = await this.store.transaction(async (store) => {
      const current = await store.widgets.findForUpdate(record.id);
      if (!current) return null;
      const row = await store.widgets.update(record.id, changes);
      // A session's token names the hostname it was minted for: a move ends the sessions, so moving
      // back (A→B→A) revives none of them.
      if (row && row.hostname !== current.hostname) await store.sessions.deleteOfWidget(record.id);
      return row;
    });
    if (!updated) throw NotFoundError.resource('widget', id);
    this.options.onHostnameChanged?.(record.hostname);
    if (updated.hostname !== record.hostname) this.options.onHostnameChanged?.(updated.hostname);
    return this.toWire(updated);
  }

  /** Deletes the widget and, with it, every session of it (their tokens stop verifying at once). */
  async delete(workspace: WorkspaceRef, id: string): Promise<void> {
    const record = await this.find(workspace, id);
    await this.store.widgets.delete(record.id);
    this.options.onHostnameChanged?.(record.hostname);
  }

  /** @throws NotFoundError when the widget is not the workspace's */
  async find(workspace: WorkspaceRef, id: string): Promise<WidgetRecord> {
    const record = await this.store.widgets.findById(id);
    if (!record || record.workspaceId !== workspace.id) throw NotFoundError.resource('widget', id);
    return record;
  }

  /**
   * The widget, when its agent still exists: the one a session is minted for.
   * @throws NotFoundError when the widget is not the workspace's
   * @throws FailedPreconditionError (widgetAgentDeleted) when its agent was deleted
   */
  async findWithAgent(workspace: WorkspaceRef, id: string): Promise<WidgetRecord> {
    const record = await this.find(workspace, id);
    const agent = await this.agents.agents.findById(record.agentId);
    if (!agent || agent.workspaceId !== record.workspaceId) throw widgetAgentDeleted(record.agentId);
    return record;
  }

  private toWire(record: WidgetRecord): Widget {
    return toWidget(record, this.options.baseUrlTemplate);
  }

  /** The spec fields of `paths` from `input`, checked (every field when `stored` is null: a create). */
  private async checkSpec(
    workspace: WorkspaceRef, input: Record<string, unknown>, paths: readonly string[], stored: WidgetRecord | null,
  ): Promise<Partial<WidgetSpecFields>> {
    const given = (path: (typeof SPEC_PATHS)[number]) => stored === null || paths.includes(path);
    const value = <T>(path: string) => getPath({ spec: input }, path) as T | undefined;
    const spec: Partial<WidgetSpecFields> = {};
    if (given('spec.agentId')) spec.agentId = await this.checkAgent(workspace, value<string>('spec.agentId'));
    if (given('spec.hostname')) {
      const hostname = value<string>('spec.hostname');
      if (hostname === undefined) throw InvalidArgumentError.forField('spec.hostname', 'is required');
      spec.hostname = checkHostname(hostname);
      if (spec.hostname === this.options.apiHostname) throw InvalidArgumentError.forField('spec.hostname', "is this service's own API hostname");
    }
    if (given('spec.allowedOrigins')) spec.allowedOrigins = checkAllowedOrigins(value<string[]>('spec.allowedOrigins'));
    if (given('spec.title')) spec.title = optionalText(value<string>('spec.title'));
    if (given('spec.greeting')) spec.greeting = optionalText(value<string>('spec.greeting'));
    if (given('spec.theme')) spec.theme = checkTheme(value<string>('spec.theme'));
    if (given('spec.allowVisitorApprovals')) spec.allowVisitorApprovals = value<boolean>('spec.allowVisitorApprovals') ?? false;
    return spec;
  }

  /** @throws NotFoundError naming `spec.agentId` when it is not an agent of the workspace */
  private async checkAgent(workspace: WorkspaceRef, agentId: string | undefined): Promise<string> {
    if (agentId === undefined) throw InvalidArgumentError.forField('spec.agentId', 'is required');
    const agent = await this.agents.agents.findById(agentId);
    if (!agent || agent.workspaceId !== workspace.id) {
      throw new NotFoundError(`spec.agentId: agent ${agentId} not found in the workspace`, {
        details: [{ '@type': BAD_REQUEST_TYPE, fieldViolations: [{ field: 'spec.agentId', description: 'names no agent of the workspace' }] }],
      });
    }
    return agent.id;
  }
}
