// Metadata handling shared by every resource: wire shapes from records, create
// defaults, masked updates and the If-Match check (api-decisions.md).
import { AbortedError, InvalidArgumentError } from '../errors';
import type { MetadataRecord } from '../accounts/records';
import type { AccountResourceMetadata, CreateMetadata, ResourceMetadata, UpdateMetadata } from '../schemas/common.schema';
import { validateLabels } from './labels';
import { touches } from './update-mask';

function optionalFields(record: MetadataRecord) {
  return {
    ...(record.externalId !== null ? { externalId: record.externalId } : {}),
    labels: record.labels ?? {},
  };
}

/** AccountResourceMetadata of an account-scoped record. */
export function toAccountResourceMetadata(record: MetadataRecord): AccountResourceMetadata {
  return {
    id: record.id,
    accountId: record.accountId,
    name: record.name,
    profileId: record.profileId ?? '',
    ...optionalFields(record),
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

/** ResourceMetadata of a workspace-scoped record. */
export function toResourceMetadata(record: MetadataRecord & { bundleKey?: string | null }, workspaceId: string): ResourceMetadata {
  return {
    id: record.id,
    accountId: record.accountId,
    workspaceId,
    name: record.name,
    profileId: record.profileId ?? '',
    ...(record.bundleKey ? { bundleKey: record.bundleKey } : {}),
    ...optionalFields(record),
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

/** Validated metadata fields for a new record. */
export function newMetadataFields(metadata: CreateMetadata): Pick<MetadataRecord, 'name' | 'externalId' | 'labels'> {
  validateLabels(metadata.labels);
  return { name: metadata.name, externalId: metadata.externalId ?? null, labels: metadata.labels ?? {} };
}

/**
 * The identity and metadata fields of a new workspace-scoped record: id,
 * account and workspace, validated name/externalId/labels, creator, timestamps.
 */
export function newResourceFields(id: string, principal: { profileId: string }, workspace: { id: string; accountId: string }, metadata: CreateMetadata) {
  const now = new Date();
  return {
    id,
    accountId: workspace.accountId,
    workspaceId: workspace.id,
    ...newMetadataFields(metadata),
    profileId: principal.profileId as string | null,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * The metadata fields a PATCH changes, for the resolved update paths.
 * `metadata.labels` replaces the whole map.
 * @throws InvalidArgumentError naming `metadata.name` when the update names it without a value: a named field
 *   absent from the body is cleared, and every resource requires its name
 */
export function metadataChanges(metadata: UpdateMetadata | undefined, paths: readonly string[]): Partial<MetadataRecord> {
  const changes: Partial<MetadataRecord> = {};
  if (touches(paths, 'metadata.name')) {
    if (metadata?.name === undefined) throw InvalidArgumentError.forField('metadata.name', 'is required when the update names it');
    changes.name = metadata.name;
  }
  if (touches(paths, 'metadata.externalId')) changes.externalId = metadata?.externalId ?? null;
  if (touches(paths, 'metadata.labels')) {
    validateLabels(metadata?.labels);
    changes.labels = metadata?.labels ?? {};
  }
  return changes;
}

export const METADATA_UPDATE_PATHS = ['metadata.name', 'metadata.externalId', 'metadata.labels'] as const;

/**
 * Optimistic concurrency: a PATCH may send `If-Match: <updatedAt>`.
 * @throws AbortedError when the resource changed since that version
 * @throws InvalidArgumentError naming `If-Match` when it is not a date-time
 */
export function checkIfMatch(ifMatch: string | undefined, record: { updatedAt: Date }): void {
  if (ifMatch === undefined || ifMatch === '') return;
  const expected = ifMatch.replace(/^W\//, '').replace(/^"|"$/g, '');
  const expectedTime = Date.parse(expected);
  if (Number.isNaN(expectedTime)) throw InvalidArgumentError.forField('If-Match', `"${expected}" is not a metadata.updatedAt date-time`);
  if (expectedTime !== record.updatedAt.getTime()) {
    throw new AbortedError(`the resource was modified (updatedAt is ${record.updatedAt.toISOString()}, If-Match was ${expected})`);
  }
}
