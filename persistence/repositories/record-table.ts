// Generic insert/find/update/delete over one entity schema: the four queries
// every table repeats, written once.
import type { EntityManager, EntitySchema, ObjectLiteral } from 'typeorm';
import type { RecordTable } from '../../src/ports/foundation-store';
import { translateDriverError } from './driver-errors';

/** A RecordTable over `entity`, bound to `manager` (a transaction or the pool). */
export function recordTable<T extends ObjectLiteral & { id: string }>(manager: EntityManager, entity: EntitySchema<T>): RecordTable<T> {
  const repository = manager.getRepository(entity);
  return {
    async insert(record) {
      try {
        await repository.insert(record as never);
      } catch (error) {
        throw translateDriverError(error);
      }
      return record;
    },
    async findById(id) {
      return repository.findOneBy({ id } as never);
    },
    async update(id, changes) {
      if (Object.keys(changes).length) {
        try {
          await repository.update({ id } as never, changes as never);
        } catch (error) {
          throw translateDriverError(error);
        }
      }
      return repository.findOneBy({ id } as never);
    },
    async delete(id) {
      await repository.delete({ id } as never);
    },
  };
}
