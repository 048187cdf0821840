// UploadStore over TypeORM.
import type { EntityManager } from 'typeorm';
import type { UploadStore } from '../../src/ports/upload-store';
import { UploadStatus } from '../../src/uploads/records';
import { UploadEntity } from '../entities/upload.entity';
import { recordTable } from './record-table';

/** The upload store bound to `manager` (a transaction or the pool). */
export function uploadStoreFor(manager: EntityManager): UploadStore {
  const { insert, findById, update } = recordTable(manager, UploadEntity);
  return {
    insert,
    findById,
    update,
    async consume(id, consumedBy, at) {
      const result = await manager
        .createQueryBuilder()
        .update(UploadEntity)
        .set({ status: UploadStatus.CONSUMED, consumedBy, consumedAt: at, updatedAt: at })
        .where('id = :id AND status = :complete', { id, complete: UploadStatus.COMPLETE })
        .execute();
      return (result.affected ?? 0) > 0;
    },
  };
}
