// Workspace secrets (spec 2.8, 4.4, api-decisions.md): named values encrypted at
// rest, write-only on the API, resolved for the runtime in `{{secrets.NAME}}`
// templates. No method returns, logs or puts a value into an error message.
import type { Principal } from '../auth/principal';
import type { WorkspaceRef } from '../auth/workspace-access';
import type { FieldRef } from '../crypto/envelope';
import type { WorkspaceKeyring } from '../crypto/workspace-keyring';
import { FailedPreconditionError, NotFoundError } from '../errors';
import { newId } from '../ids';
import type { FoundationStore, ListFilter } from '../ports/foundation-store';
import type { SecretsStore } from '../ports/secrets-store';
import { checkIfMatch, metadataChanges, METADATA_UPDATE_PATHS, newResourceFields } from '../resource/metadata';
import { toPage, type Page, type PageRequest } from '../resource/pagination';
import { resolveUpdatePaths, touches } from '../resource/update-mask';
import type { CreateWorkspaceSecretBody, UpdateWorkspaceSecretBody, WorkspaceSecret } from '../schemas/secrets.schema';
import { toWorkspaceSecret } from './mappers';
import type { WorkspaceSecretRecord } from './records';
import { renderSecretTemplates, secretNamesIn, validateSecretName } from './secret-templates';

const UPDATE_PATHS = [...METADATA_UPDATE_PATHS, 'spec.value'] as const;

/** The AAD reference of a secret's value: bound to its workspace and row. */
function valueRef(workspaceId: string, secretId: string): FieldRef {
  return { workspaceId, resource: 'workspace_secret', resourceId: secretId, field: 'spec.value' };
}

export class WorkspaceSecretService {
  constructor(
    private readonly store: SecretsStore,
    private readonly foundation: FoundationStore,
    private readonly keyring: WorkspaceKeyring,
  ) {}

  /**
   * Creates a secret; its value is encrypted before it is stored.
   * @throws InvalidArgumentError for a name templates cannot reference
   * @throws AlreadyExistsError when the workspace has a secret of that name
   */
  async create(principal: Principal, workspace: WorkspaceRef, body: CreateWorkspaceSecretBody): Promise<WorkspaceSecret> {
    validateSecretName(body.metadata.name);
    const id = newId('workspaceSecret');
    const value = body.spec?.value;
    const record = await this.store.secrets.insert({
      ...newResourceFields(id, principal, workspace, body.metadata),
      valueCiphertext: value !== undefined ? await this.keyring.encrypt(valueRef(workspace.id, id), value) : null,
      lastUsedAt: null,
    });
    return this.withInfo(record);
  }

  async list(workspace: WorkspaceRef, page: PageRequest, filter: ListFilter, includeInfo: boolean): Promise<Page<WorkspaceSecret>> {
    const result = toPage(await this.store.secrets.list(workspace.id, page, filter), page, (row) => row);
    if (!includeInfo) return { ...result, items: result.items.map((row) => toWorkspaceSecret(row, false)) };
    const creators = await this.foundation.profiles.findByIds(result.items.map((row) => row.profileId));
    return { ...result, items: result.items.map((row) => toWorkspaceSecret(row, true, row.profileId ? creators.get(row.profileId) : null)) };
  }

  async get(workspace: WorkspaceRef, id: string): Promise<WorkspaceSecret> {
    return this.withInfo(await this.find(workspace, id));
  }

  /**
   * Applies the masked fields; naming `spec.value` without a value clears it.
   * @throws AbortedError when If-Match does not match `metadata.updatedAt`
   */
  async update(workspace: WorkspaceRef, id: string, body: UpdateWorkspaceSecretBody, ifMatch?: string): Promise<WorkspaceSecret> {
    const record = await this.find(workspace, id);
    checkIfMatch(ifMatch, record);
    const { updateMask, ...fields } = body;
    const paths = resolveUpdatePaths(fields, updateMask, UPDATE_PATHS);
    const changes: Partial<WorkspaceSecretRecord> = metadataChanges(body.metadata, paths);
    if (changes.name !== undefined) validateSecretName(changes.name);
    if (touches(paths, 'spec.value')) {
      const value = body.spec?.value;
      changes.valueCiphertext = value !== undefined ? await this.keyring.encrypt(valueRef(workspace.id, record.id), value) : null;
    }
    const updated = await this.store.secrets.update(record.id, { ...changes, updatedAt: new Date() });
    return this.withInfo(updated ?? record);
  }

  async delete(workspace: WorkspaceRef, id: string): Promise<void> {
    await this.store.secrets.delete((await this.find(workspace, id)).id);
  }

  /**
   * Replaces every `{{secrets.NAME}}` in `text` with the value of the workspace
   * secret NAME and records the use (`info.lastUsedAt`). For the runtime (tool
   * URLs and headers); the result must not be logged.
   * @param sessionSecrets per-session values (widget sessions) that take precedence over stored secrets
   * @throws FailedPreconditionError naming the first secret that does not exist or has no value
   */
  async resolveSecretTemplates(workspaceId: string, text: string, sessionSecrets: Readonly<Record<string, string>> = {}): Promise<string> {
    const names = secretNamesIn(text);
    if (names.length === 0) return text;
    const values = new Map<string, string>();
    const stored = names.filter((name) => !Object.hasOwn(sessionSecrets, name));
    for (const name of names) if (Object.hasOwn(sessionSecrets, name)) values.set(name, sessionSecrets[name]);
    const records = stored.length ? await this.store.secrets.findByNames(workspaceId, stored) : [];
    const byName = new Map(records.map((record) => [record.name, record]));
    for (const name of stored) {
      const record = byName.get(name);
      if (!record) throw new FailedPreconditionError(`{{secrets.${name}}} names no secret of workspace ${workspaceId}; create a workspace secret named "${name}"`);
      if (record.valueCiphertext === null) throw new FailedPreconditionError(`workspace secret "${name}" has no value; set its spec.value`);
      values.set(name, await this.keyring.decrypt(valueRef(workspaceId, record.id), record.valueCiphertext));
    }
    if (records.length) await this.store.secrets.markUsed(records.map((record) => record.id), new Date());
    return renderSecretTemplates(text, values);
  }

  private async find(workspace: WorkspaceRef, id: string): Promise<WorkspaceSecretRecord> {
    const record = await this.store.secrets.findById(id);
    if (!record || record.workspaceId !== workspace.id) throw NotFoundError.resource('workspace secret', id);
    return record;
  }

  private async withInfo(record: WorkspaceSecretRecord): Promise<WorkspaceSecret> {
    const createdBy = record.profileId ? await this.foundation.profiles.findById(record.profileId) : null;
    return toWorkspaceSecret(record, true, createdBy);
  }
}
