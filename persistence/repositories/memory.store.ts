// MemoryStore over TypeORM: layers, entries (lists without bodies) and the
// uploads entries consume, all bound to one manager so they share transactions.
import type { DataSource, EntityManager } from 'typeorm';
import type { MemoryStore } from '../../src/ports/memory-store';
import { MemoryEntryEntity } from '../entities/memory-entry.entity';
import { MemoryLayerEntity } from '../entities/memory-layer.entity';
import { registerUniqueMessage, translateDriverError } from './driver-errors';
import { fetchPage, likePrefix } from './list-query';
import { memoryStacksOn } from './memory-stack.read';
import { entityColumns, recordTable } from './record-table';
import { uploadStoreFor } from './upload.store';
import { runTransaction } from '../transaction-runner';

registerUniqueMessage('uq_memory_entries_key', 'the memory layer already has an entry with this key');

/** now() + TTL seconds by the database's clock (the sweeper's too), or NULL: no expiry. */
const EXPIRY = (parameter: string) => `now() + ${parameter}::integer * interval '1 second'`;

/**
 * The episodic sweep's transaction lock: one node deletes at a time (the
 * two-key form, apart from the runtime's one-key locks).
 */
const EPISODIC_SWEEP_LOCK = "hashtext('agentrt.episodic-memory-sweep'), 0";

/** Every column of an entry except `content`. */
const SUMMARY_COLUMNS = ['id', 'accountId', 'workspaceId', 'memoryLayerId', 'name', 'externalId', 'labels', 'profileId', 'key', 'title', 'description', 'createdAt', 'updatedAt'];

function storeFor(manager: EntityManager, dataSource: DataSource): MemoryStore {
  const layers = manager.getRepository(MemoryLayerEntity);
  const entries = manager.getRepository(MemoryEntryEntity);
  const layerColumns = entityColumns(manager, MemoryLayerEntity, 'l');
  const entryColumns = entityColumns(manager, MemoryEntryEntity, 'e');
  const layerRow = (rows: Array<{ r: unknown }>) => (rows[0] ? layerColumns.decode(rows[0].r) : null);
  return {
    transaction: (work) => runTransaction(dataSource, (tx) => work(storeFor(tx, dataSource)), { joining: manager }),
    layers: {
      ...recordTable(manager, MemoryLayerEntity),
      list(workspaceId, page, filter) {
        const query = layers.createQueryBuilder('l').where('l.workspace_id = :workspaceId', { workspaceId });
        if (filter.type) query.andWhere('l.type = :type', { type: filter.type });
        return fetchPage(query, 'l', page, filter);
      },
      async countEntries(layerIds) {
        if (!layerIds.length) return new Map();
        const rows: Array<{ layerId: string; count: string }> = await manager.query(
          'SELECT memory_layer_id AS "layerId", count(*) AS count FROM memory_entries WHERE memory_layer_id = ANY($1) GROUP BY memory_layer_id',
          [layerIds],
        );
        return new Map(rows.map((row) => [row.layerId, Number(row.count)]));
      },
      // Variation assignments belong to the agents area (variation_memory_layers,
      // whose foreign key cascades on layer delete). Until that table exists no
      // layer can be assigned, so there is nothing to count.
      async countAssignments(layerId) {
        const [{ count }]: Array<{ count: number }> = await manager.query('SELECT count(*)::int AS count FROM variation_memory_layers WHERE memory_layer_id = $1', [layerId]);
        return count;
      },
      async markUsed(layerIds, at) {
        await manager.query('UPDATE memory_layers SET last_used_at = GREATEST(COALESCE(last_used_at, $2), $2) WHERE id = ANY($1)', [layerIds, at]);
      },
      async upsertEpisodic(layer, ttlSeconds) {
        const rows = await manager.query(
          `INSERT INTO memory_layers AS l (id, account_id, workspace_id, name, labels, type, description, expires_at, system_managed, episodic_key, created_at, updated_at)
           VALUES ($1, $2, $3, $4, '{}'::jsonb, $5, $6, ${EXPIRY('$7')}, true, $8, $9, $9)
           ON CONFLICT (workspace_id, episodic_key) WHERE episodic_key IS NOT NULL
           DO UPDATE SET expires_at = EXCLUDED.expires_at, updated_at = EXCLUDED.updated_at
           RETURNING ${layerColumns.json} AS r`,
          [layer.id, layer.accountId, layer.workspaceId, layer.name, layer.type, layer.description, ttlSeconds, layer.episodicKey, layer.createdAt],
        );
        return layerRow(rows)!;
      },
      async refreshEpisodic(workspaceId, episodicKey, ttlSeconds) {
        // Through a CTE: an UPDATE's own RETURNING comes back from TypeORM with its row count.
        const rows = await manager.query(
          `WITH l AS (
             UPDATE memory_layers SET expires_at = ${EXPIRY('$3')}, updated_at = now()
             WHERE workspace_id = $1 AND episodic_key = $2 RETURNING *
           ) SELECT ${layerColumns.json} AS r FROM l`,
          [workspaceId, episodicKey, ttlSeconds],
        );
        return layerRow(rows);
      },
      async deleteExpiredEpisodic(limit) {
        return runTransaction(dataSource, async (tx) => {
          const [{ locked }]: Array<{ locked: boolean }> = await tx.query(`SELECT pg_try_advisory_xact_lock(${EPISODIC_SWEEP_LOCK}) AS locked`);
          if (!locked) return { deleted: 0, busy: true };
          // SKIP LOCKED: a layer a writer holds is being refreshed; the outer
          // condition checks the expiry again on the row as it is when deleted.
          const [{ deleted }]: Array<{ deleted: number }> = await tx.query(
            `WITH gone AS (
               DELETE FROM memory_layers WHERE id IN (
                 SELECT id FROM memory_layers
                 WHERE episodic_key IS NOT NULL AND expires_at < now()
                 ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED
               ) AND expires_at < now()
               RETURNING id
             ) SELECT count(*)::int AS deleted FROM gone`,
            [limit],
          );
          return { deleted, busy: false };
        }, { joining: manager });
      },
    },
    entries: {
      ...recordTable(manager, MemoryEntryEntity),
      list(layerId, page, filter) {
        const query = entries
          .createQueryBuilder('e')
          .select(SUMMARY_COLUMNS.map((column) => `e.${column}`))
          .where('e.memory_layer_id = :layerId', { layerId });
        if (filter.keyPrefix) query.andWhere("e.key LIKE :keyPrefix ESCAPE '\\'", { keyPrefix: likePrefix(filter.keyPrefix) });
        return fetchPage(query, 'e', page, { labels: filter.labels });
      },
      async findByKey(layerIds, key) {
        if (!layerIds.length) return [];
        return entries.createQueryBuilder('e').where('e.memory_layer_id IN (:...layerIds) AND e.key = :key', { layerIds, key }).getMany();
      },
      async upsertContent(entry) {
        try {
          const rows: Array<{ r: unknown }> = await manager.query(
            `INSERT INTO memory_entries AS e (id, account_id, workspace_id, memory_layer_id, name, external_id, labels, profile_id, key, title, description, content, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12, $13, $14)
             ON CONFLICT ON CONSTRAINT uq_memory_entries_key
             DO UPDATE SET content = EXCLUDED.content, updated_at = EXCLUDED.updated_at
             RETURNING ${entryColumns.json} AS r`,
            [
              entry.id, entry.accountId, entry.workspaceId, entry.memoryLayerId, entry.name, entry.externalId, JSON.stringify(entry.labels), entry.profileId,
              entry.key, entry.title, entry.description, entry.content, entry.createdAt, entry.updatedAt,
            ],
          );
          return entryColumns.decode(rows[0].r)!;
        } catch (error) {
          throw translateDriverError(error);
        }
      },
    },
    stacks: memoryStacksOn(manager),
    uploads: uploadStoreFor(manager),
  };
}

/** The memory store on the data source's pool. */
export function createMemoryStore(dataSource: DataSource): MemoryStore {
  return storeFor(dataSource.manager, dataSource);
}

/** The memory store bound to `manager` (a transaction shared with other stores, e.g. a bundle apply). */
export function memoryStoreOn(manager: EntityManager, dataSource: DataSource): MemoryStore {
  return storeFor(manager, dataSource);
}
