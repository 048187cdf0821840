// The storage port of uploads. persistence/repositories/upload.store.ts
// implements it over TypeORM.
import type { RecordTable } from './foundation-store';
import type { UploadRecord } from '../uploads/records';

export interface UploadStore extends Omit<RecordTable<UploadRecord>, 'delete'> {
  /**
   * Marks a COMPLETE upload CONSUMED in one conditional write, so two
   * concurrent consumers cannot both win.
   * @returns false when the upload was no longer COMPLETE
   */
  consume(id: string, consumedBy: string, at: Date): Promise<boolean>;
}
