// Record → wire mappings of the memory area.
import { toProfile } from '../accounts/mappers';
import type { ProfileRecord } from '../accounts/records';
import { toResourceMetadata } from '../resource/metadata';
import type { MemoryEntry, MemoryEntryDetail, MemoryLayer } from '../schemas/memory.schema';
import type { MemoryEntryRecord, MemoryEntrySummaryRecord, MemoryLayerRecord } from './records';

export interface MemoryLayerInfo {
  createdBy?: ProfileRecord | null;
  entryCount: number;
}

/** The MemoryLayer resource; `info` only when given (gets, and lists with includeInfo). */
export function toMemoryLayer(record: MemoryLayerRecord, info?: MemoryLayerInfo): MemoryLayer {
  return {
    metadata: toResourceMetadata(record, record.workspaceId),
    spec: {
      type: record.type,
      ...(record.description !== null ? { description: record.description } : {}),
      ...(record.expiresAt ? { expiresAt: record.expiresAt.toISOString() } : {}),
      systemManaged: record.systemManaged,
    },
    ...(info
      ? {
          info: {
            ...(info.createdBy ? { createdBy: toProfile(info.createdBy) } : {}),
            entryCount: info.entryCount,
            ...(record.lastUsedAt ? { lastUsedAt: record.lastUsedAt.toISOString() } : {}),
          },
        }
      : {}),
  };
}

export interface MemoryEntryInfo {
  createdBy?: ProfileRecord | null;
  memoryLayer: MemoryLayerRecord;
}

function entryInfo(info: MemoryEntryInfo) {
  return {
    ...(info.createdBy ? { createdBy: toProfile(info.createdBy) } : {}),
    memoryLayer: toResourceMetadata(info.memoryLayer, info.memoryLayer.workspaceId),
  };
}

/** The MemoryEntry summary of the entry list: no body. */
export function toMemoryEntry(record: MemoryEntrySummaryRecord, info?: MemoryEntryInfo): MemoryEntry {
  return {
    metadata: toResourceMetadata(record, record.workspaceId),
    spec: {
      key: record.key,
      ...(record.title !== null ? { title: record.title } : {}),
      ...(record.description !== null ? { description: record.description } : {}),
    },
    ...(info ? { info: entryInfo(info) } : {}),
  };
}

/** The MemoryEntryDetail of get, create and update: the summary plus `content`. */
export function toMemoryEntryDetail(record: MemoryEntryRecord, info: MemoryEntryInfo): MemoryEntryDetail {
  return { content: record.content, ...toMemoryEntry(record, info) };
}
