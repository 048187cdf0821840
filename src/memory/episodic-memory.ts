// Episodic memory (issue 25 item 3): one system-managed EPISODIC layer per
// (workspace, episodic key), shared by every objective with that key,
// created on first use, its `expiresAt` moved to now + TTL on every use, and
// removed with its entries by the sweeper after it expires. SKELETON: filled
// in by the episodic work of issue 25; MemoryToolsService uses it through
// the EpisodicMemoryPort below.
import type { MemoryEntryRecord, MemoryLayerRecord } from './records';
import type { EpisodicMemorySettings, ServiceToolContext, ServiceToolOutcome } from '../ports/service-tools';

/** What the memory tools need of episodic memory. */
export interface EpisodicMemoryPort {
  /** Creates the layer of (workspace, settings.key), or moves its expiry to now + TTL; safe when objectives race. */
  ensureLayer(workspace: { id: string; accountId: string }, settings: EpisodicMemorySettings): Promise<MemoryLayerRecord>;
  /** The entry under `key` in the context's episodic layer (a use: the expiry moves), or null (no layer, or no such key). */
  read(context: ServiceToolContext, key: string): Promise<MemoryEntryRecord | null>;
  /** Writes `content` under `key` in the context's episodic layer (created when missing); the last write wins. */
  write(context: ServiceToolContext, key: string, content: string): Promise<ServiceToolOutcome>;
}

/** SKELETON until the episodic work lands. */
export const episodicMemoryNotYet: EpisodicMemoryPort = {
  ensureLayer: () => Promise.reject(new Error('episodic memory is not available yet')),
  read: async () => null,
  write: async () => ({ ok: false, content: 'episodic memory is not available yet' }),
};
