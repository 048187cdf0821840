// Generic insert/find/update/delete over one entity schema: the four queries
// every table repeats, written once. Reads by id (the hot path: every request
// loads its API key and workspace) are one prepared-shape SQL statement built
// from the entity's metadata, skipping the query builder.
import type { EntityManager, EntitySchema, ObjectLiteral, ValueTransformer } from 'typeorm';
import type { RecordTable } from '../../src/ports/foundation-store';
import { translateDriverError } from './driver-errors';

function fromDatabase(transformer: ValueTransformer | ValueTransformer[], value: unknown): unknown {
  const chain = Array.isArray(transformer) ? [...transformer].reverse() : [transformer];
  return chain.reduce((current, step) => step.from(current), value);
}

/**
 * `findById` as raw SQL: the columns aliased to their property names (pg
 * already parses jsonb, timestamps, booleans and integers), then the entity's
 * transformers (bigint → number) applied.
 */
function findByIdQuery<T extends ObjectLiteral>(manager: EntityManager, entity: EntitySchema<T>): (id: string) => Promise<T | null> {
  const metadata = manager.dataSource.getMetadata(entity);
  const select = metadata.columns.map((column) => `"${column.databaseName}" AS "${column.propertyName}"`).join(', ');
  const sql = `SELECT ${select} FROM "${metadata.tableName}" WHERE "id" = $1`;
  const transformed = metadata.columns.filter((column) => column.transformer);
  return async (id) => {
    const row = ((await manager.query(sql, [id])) as T[])[0];
    if (!row) return null;
    for (const column of transformed) (row as Record<string, unknown>)[column.propertyName] = fromDatabase(column.transformer!, row[column.propertyName]);
    return row;
  };
}

/** A RecordTable over `entity`, bound to `manager` (a transaction or the pool). */
export function recordTable<T extends ObjectLiteral & { id: string }>(manager: EntityManager, entity: EntitySchema<T>): RecordTable<T> {
  const repository = manager.getRepository(entity);
  const findById = findByIdQuery(manager, entity);
  return {
    async insert(record) {
      try {
        await repository.insert(record as never);
      } catch (error) {
        throw translateDriverError(error);
      }
      return record;
    },
    findById,
    async update(id, changes) {
      if (Object.keys(changes).length) {
        try {
          await repository.update({ id } as never, changes as never);
        } catch (error) {
          throw translateDriverError(error);
        }
      }
      return findById(id);
    },
    async delete(id) {
      await repository.delete({ id } as never);
    },
  };
}
