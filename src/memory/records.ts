// Stored records of the memory area (spec 2.11, 2.12) as the domain sees them.
// persistence/ maps its entity schemas onto these shapes.
import type { MetadataRecord } from '../accounts/records';

export const MemoryLayerType = {
  UNSPECIFIED: 'MEMORY_LAYER_TYPE_UNSPECIFIED',
  EPISODIC: 'MEMORY_LAYER_TYPE_EPISODIC',
  SKILLS: 'MEMORY_LAYER_TYPE_SKILLS',
} as const;
export type MemoryLayerType = (typeof MemoryLayerType)[keyof typeof MemoryLayerType];

export interface MemoryLayerRecord extends MetadataRecord {
  workspaceId: string;
  bundleKey: string | null;
  type: MemoryLayerType;
  description: string | null;
  /** When a finite-lifetime (episodic) layer becomes eligible for cleanup. */
  expiresAt: Date | null;
  /** True for layers the runtime manages; clients cannot mutate them. */
  systemManaged: boolean;
  /** The latest objective that resolved a key against this layer. */
  lastUsedAt: Date | null;
  /**
   * The episodic key of a system-managed EPISODIC layer (one per workspace and
   * key, src/memory/episodic-memory.ts); null for every other layer.
   */
  episodicKey: string | null;
}

/** An entry without its body: what lists return. */
export interface MemoryEntrySummaryRecord extends MetadataRecord {
  workspaceId: string;
  memoryLayerId: string;
  key: string;
  title: string | null;
  description: string | null;
}

/** An entry with its body. */
export interface MemoryEntryRecord extends MemoryEntrySummaryRecord {
  content: string;
}
