// Workspace administration (spec 4.2): workspaces, members and profile search.
// Archiving the last non-archived workspace is FAILED_PRECONDITION; member
// removal cuts access at once (authentication reads memberships per request).
import { CredentialChanges } from '../auth/credential-changes';
import { newId } from '../ids';
import { FailedPreconditionError, InvalidArgumentError, NotFoundError } from '../errors';
import type { Principal } from '../auth/principal';
import { WorkspaceStatus } from '../auth/workspace-access';
import type { FoundationStore, ListFilter } from '../ports/foundation-store';
import { checkIfMatch, metadataChanges, METADATA_UPDATE_PATHS, newMetadataFields } from '../resource/metadata';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import { resolveUpdatePaths, touches } from '../resource/update-mask';
import type { AddMemberBody, CreateWorkspaceBody, UpdateWorkspaceBody, Workspace, WorkspaceMember } from '../schemas/account.schema';
import type { Profile } from '../schemas/common.schema';
import { toProfile, toWorkspace, toWorkspaceMember } from './mappers';
import { ProfileType, type WorkspaceRecord } from './records';

const UPDATE_PATHS = [...METADATA_UPDATE_PATHS, 'spec.description'] as const;

/** Called after a workspace is created (e.g. to seed the model catalog). */
export type WorkspaceCreatedHook = (workspace: WorkspaceRecord) => Promise<void>;

export class WorkspaceService {
  private readonly createdHooks: WorkspaceCreatedHook[] = [];

  constructor(
    private readonly store: FoundationStore,
    /** Told after a workspace is archived (keys of an archived workspace stop working). */
    private readonly changes: CredentialChanges = new CredentialChanges(),
  ) {}

  /** Registers work to do for every new workspace. */
  onWorkspaceCreated(hook: WorkspaceCreatedHook): void {
    this.createdHooks.push(hook);
  }

  async list(principal: Principal, page: PageRequest, filter: ListFilter & { includeArchived: boolean }): Promise<Page<Workspace>> {
    return toPage(await this.store.workspaces.list(principal.accountId, page, filter), page, toWorkspace);
  }

  async create(principal: Principal, body: CreateWorkspaceBody): Promise<Workspace> {
    const record = await this.insert(this.store, principal.accountId, principal.profileId, body);
    await this.runCreatedHooks(record);
    return toWorkspace(record);
  }

  /** Inserts a workspace row (used by create and by account bootstrap). */
  async insert(store: FoundationStore, accountId: string, creatorProfileId: string | null, body: CreateWorkspaceBody): Promise<WorkspaceRecord> {
    const now = new Date();
    return store.workspaces.insert({
      id: newId('workspace'),
      accountId,
      ...newMetadataFields(body.metadata),
      profileId: creatorProfileId,
      description: body.spec?.description ?? null,
      status: WorkspaceStatus.ENABLED,
      createdAt: now,
      updatedAt: now,
    });
  }

  async runCreatedHooks(record: WorkspaceRecord): Promise<void> {
    for (const hook of this.createdHooks) await hook(record);
  }

  async get(principal: Principal, id: string): Promise<Workspace> {
    return toWorkspace(await this.find(principal, id));
  }

  async update(principal: Principal, id: string, body: UpdateWorkspaceBody, ifMatch?: string): Promise<Workspace> {
    const record = await this.find(principal, id);
    checkIfMatch(ifMatch, record);
    const { updateMask, ...fields } = body;
    const paths = resolveUpdatePaths(fields, updateMask, UPDATE_PATHS);
    const changes: Partial<WorkspaceRecord> = metadataChanges(body.metadata, paths);
    if (touches(paths, 'spec.description')) changes.description = body.spec?.description ?? null;
    return toWorkspace((await this.store.workspaces.update(record.id, { ...changes, updatedAt: new Date() })) ?? record);
  }

  /**
   * Archives (soft-deletes) a workspace.
   * @throws FailedPreconditionError when it is the account's last non-archived workspace
   */
  async archive(principal: Principal, id: string): Promise<void> {
    await this.store.transaction(async (store) => {
      await store.workspaces.lockAccountWorkspaces(principal.accountId);
      const record = await store.workspaces.findById(id);
      if (!record || record.accountId !== principal.accountId) throw NotFoundError.resource('workspace', id);
      if (record.status === WorkspaceStatus.ARCHIVED) return;
      if ((await store.workspaces.countNotArchived(principal.accountId)) <= 1) {
        throw new FailedPreconditionError(`workspace ${id} is the account's last non-archived workspace and cannot be archived`);
      }
      await store.workspaces.update(id, { status: WorkspaceStatus.ARCHIVED, updatedAt: new Date() });
    });
    this.changes.changed();
  }

  async listMembers(principal: Principal, workspaceId: string, page: PageRequest): Promise<Page<WorkspaceMember>> {
    const workspace = await this.find(principal, workspaceId);
    const rows = await this.store.members.listActive(workspace.id, page);
    const paged = toPage(rows.map((row) => ({ ...row, id: row.member.id })), page, (row) => row);
    return { ...paged, items: paged.items.map((row) => toWorkspaceMember(row.member, row.profile)) };
  }

  /**
   * Adds a member by exactly one of `email` (resolve-or-invite: a USER profile
   * is created when none has the email) and `profileId`. Idempotent for an
   * already-active member.
   */
  async addMember(principal: Principal, workspaceId: string, body: AddMemberBody): Promise<WorkspaceMember> {
    if ((body.email === undefined) === (body.profileId === undefined)) {
      throw new InvalidArgumentError('exactly one of email and profileId must be set', [
        { field: 'email', description: 'set exactly one of email and profileId' },
        { field: 'profileId', description: 'set exactly one of email and profileId' },
      ]);
    }
    const workspace = await this.find(principal, workspaceId);
    return this.store.transaction(async (store) => {
      const profile = body.email !== undefined ? await this.resolveOrInvite(store, principal, body.email) : await store.profiles.findById(body.profileId!);
      if (!profile || profile.accountId !== principal.accountId) throw NotFoundError.resource('profile', body.profileId ?? '');
      if (profile.type !== ProfileType.USER) throw InvalidArgumentError.forField('profileId', 'only USER profiles can be workspace members');
      const existing = await store.members.find(workspace.id, profile.id);
      if (existing && !existing.removedAt) return toWorkspaceMember(existing, profile);
      const member = existing
        ? await store.members.update(existing.id, { removedAt: null, addedAt: new Date() })
        : await store.members.insert({ id: newId('workspaceMember'), workspaceId: workspace.id, profileId: profile.id, addedAt: new Date(), removedAt: null });
      return toWorkspaceMember(member!, profile);
    });
  }

  /** Removes a member; the profile is kept. Removing a non-member is NOT_FOUND. */
  async removeMember(principal: Principal, workspaceId: string, profileId: string): Promise<void> {
    const workspace = await this.find(principal, workspaceId);
    const member = await this.store.members.find(workspace.id, profileId);
    if (!member || member.removedAt) throw new NotFoundError(`profile ${profileId} is not a member of workspace ${workspace.id}`);
    await this.store.members.update(member.id, { removedAt: new Date() });
  }

  async searchProfiles(principal: Principal, query: string | undefined, page: PageRequest): Promise<Page<Profile>> {
    return toPage(await this.store.profiles.search(principal.accountId, query, page), page, toProfile);
  }

  private async resolveOrInvite(store: FoundationStore, principal: Principal, email: string) {
    const existing = await store.profiles.findUserByEmail(principal.accountId, email);
    if (existing) return existing;
    const now = new Date();
    return store.profiles.insert({
      id: newId('profile'),
      accountId: principal.accountId,
      name: email,
      externalId: null,
      labels: {},
      profileId: principal.profileId,
      createdAt: now,
      updatedAt: now,
      type: ProfileType.USER,
      email,
      displayName: null,
      admin: false,
      oidcSubject: null,
    });
  }

  private async find(principal: Principal, id: string): Promise<WorkspaceRecord> {
    const record = await this.store.workspaces.findById(id);
    if (!record || record.accountId !== principal.accountId) throw NotFoundError.resource('workspace', id);
    return record;
  }
}
