// Episodic memory (issue 25 item 3): one system-managed EPISODIC layer per
// (workspace, episodic key), shared by every objective with that key,
// created on first use, its `expiresAt` moved to now + TTL on every use, and
// removed with its entries by the sweeper after it expires. MemoryToolsService
// reaches it through the EpisodicMemoryPort below; it never decides what the
// model is offered (src/objectives/objective-service-tools.ts does).
import { newId } from '../ids';
import type { MemoryStore } from '../ports/memory-store';
import type { EpisodicMemorySettings, ServiceToolContext, ServiceToolOutcome } from '../ports/service-tools';
import { NAME_MAX } from '../schemas/common.schema';
import { ToolErrorType } from '../tools/tool-call-outcome';
import { MemoryLayerType, type MemoryEntryRecord, type MemoryLayerRecord } from './records';
import { LAST_USED_AT_SLACK_MS } from './memory-tools.service';

/** What the memory tools need of episodic memory. */
export interface EpisodicMemoryPort {
  /** Creates the layer of (workspace, settings.key), or moves its expiry to now + TTL; safe when objectives race. */
  ensureLayer(workspace: { id: string; accountId: string }, settings: EpisodicMemorySettings): Promise<MemoryLayerRecord>;
  /** The entry under `key` in the context's episodic layer (a use: the expiry moves), or null (no layer, or no such key). */
  read(context: ServiceToolContext, key: string): Promise<MemoryEntryRecord | null>;
  /** Writes `content` under `key` in the context's episodic layer (created when missing); the last write wins. */
  write(context: ServiceToolContext, key: string, content: string): Promise<ServiceToolOutcome>;
}

/** The prefix of an episodic layer's `metadata.name`: `episodic/<key>`. */
export const EPISODIC_LAYER_NAME_PREFIX = 'episodic/';

/**
 * The `metadata.name` of the episodic layer of `key`: `episodic/<key>`, cut
 * to the longest name a client could set (a key may be as long). Names are
 * not unique: the layer is found by its key, never by its name.
 */
export function episodicLayerName(key: string): string {
  // By code points, as names are measured: a cut never splits a character.
  return Array.from(`${EPISODIC_LAYER_NAME_PREFIX}${key}`).slice(0, NAME_MAX).join('');
}

/** What one sweep batch did (see MemoryStore.layers.deleteExpiredEpisodic). */
export interface EpisodicSweepBatch {
  deleted: number;
  /** Another node is sweeping now. */
  busy: boolean;
}

export class EpisodicMemory implements EpisodicMemoryPort {
  constructor(private readonly store: MemoryStore) {}

  /**
   * The episodic layer of (workspace, `settings.key`): created when there is
   * none, else its expiry moved to now + `settings.ttlSeconds` (null: none).
   * Objectives racing with one key get the same layer (one statement on the
   * unique (workspace, episodic key) index), never an error.
   */
  ensureLayer(workspace: { id: string; accountId: string }, settings: EpisodicMemorySettings): Promise<MemoryLayerRecord> {
    return this.store.layers.upsertEpisodic(this.newLayer(workspace, settings.key), settings.ttlSeconds);
  }

  /**
   * The entry under `key` in the objective's episodic layer, or null when
   * the objective has no episodic memory, its layer is gone (swept; the next
   * write makes it again) or holds no such key. Reading is a use: the
   * layer's expiry moves, and its `lastUsedAt` when the key resolves.
   */
  async read(context: ServiceToolContext, key: string): Promise<MemoryEntryRecord | null> {
    const settings = context.memory?.episodic;
    if (!settings) return null;
    const layer = await this.store.layers.refreshEpisodic(context.workspaceId, settings.key, settings.ttlSeconds);
    if (!layer) return null;
    // As a stack layer's: lastUsedAt in the same statement as the read, on the database's clock, at most once per slack.
    return this.store.stacks.resolveKey([layer.id], key, { slackMs: LAST_USED_AT_SLACK_MS });
  }

  /**
   * Writes `content` under `key` (a key already checked by the caller) in
   * the objective's episodic layer, creating the layer when it is missing and
   * moving its expiry. Concurrent writers of one key never fail: the layer
   * row, locked by the upsert until the entry is written, puts them in a row,
   * and the last to commit wins. The entry's `metadata.name` is its key.
   */
  async write(context: ServiceToolContext, key: string, content: string): Promise<ServiceToolOutcome> {
    const settings = context.memory?.episodic;
    if (!settings) return { ok: false, content: 'this objective has no episodic memory (its variation does not enable it, or it has no episodicKey)' };
    // Postgres text cannot hold NUL: the model gets a reason it can act on, not a failed call.
    if (content.includes('\u0000')) return { ok: false, content: 'content cannot contain the NUL character (\\u0000)', errorType: ToolErrorType.INVALID_ARGUMENTS };
    const workspace = { id: context.workspaceId, accountId: context.accountId };
    await this.store.transaction(async (store) => {
      const layer = await store.layers.upsertEpisodic(this.newLayer(workspace, settings.key), settings.ttlSeconds);
      const now = new Date();
      await store.entries.upsertContent({
        id: newId('memoryEntry'),
        accountId: layer.accountId,
        workspaceId: layer.workspaceId,
        memoryLayerId: layer.id,
        name: key,
        externalId: null,
        labels: {},
        profileId: null,
        key,
        title: null,
        description: null,
        content,
        createdAt: now,
        updatedAt: now,
      });
    });
    return { ok: true, content: `saved under "${key}"` };
  }

  /** One batch of the sweeper: expired episodic layers removed with their entries. */
  deleteExpired(limit: number): Promise<EpisodicSweepBatch> {
    return this.store.layers.deleteExpiredEpisodic(limit);
  }

  /** The row an upsert inserts when the key has no layer yet (its expiry is set by the database). */
  private newLayer(workspace: { id: string; accountId: string }, key: string): MemoryLayerRecord {
    const now = new Date();
    return {
      id: newId('memoryLayer'),
      accountId: workspace.accountId,
      workspaceId: workspace.id,
      name: episodicLayerName(key),
      externalId: null,
      labels: {},
      profileId: null,
      bundleKey: null,
      type: MemoryLayerType.EPISODIC,
      description: 'Episodic memory shared by the objectives with this episodic key (system-managed)',
      expiresAt: null,
      systemManaged: true,
      lastUsedAt: null,
      episodicKey: key,
      createdAt: now,
      updatedAt: now,
    };
  }
}
