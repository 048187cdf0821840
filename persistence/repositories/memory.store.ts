// MemoryStore over TypeORM: layers, entries (lists without bodies) and the
// uploads entries consume, all bound to one manager so they share transactions.
import type { DataSource, EntityManager } from 'typeorm';
import type { MemoryStore } from '../../src/ports/memory-store';
import { MemoryEntryEntity } from '../entities/memory-entry.entity';
import { MemoryLayerEntity } from '../entities/memory-layer.entity';
import { registerUniqueMessage } from './driver-errors';
import { fetchPage, likePrefix } from './list-query';
import { memoryStacksOn } from './memory-stack.read';
import { recordTable } from './record-table';
import { uploadStoreFor } from './upload.store';
import { runTransaction } from '../transaction-runner';

registerUniqueMessage('uq_memory_entries_key', 'the memory layer already has an entry with this key');

/** Every column of an entry except `content`. */
const SUMMARY_COLUMNS = ['id', 'accountId', 'workspaceId', 'memoryLayerId', 'name', 'externalId', 'labels', 'profileId', 'key', 'title', 'description', 'createdAt', 'updatedAt'];

function storeFor(manager: EntityManager, dataSource: DataSource): MemoryStore {
  const layers = manager.getRepository(MemoryLayerEntity);
  const entries = manager.getRepository(MemoryEntryEntity);
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
