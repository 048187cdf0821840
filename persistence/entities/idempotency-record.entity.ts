// Idempotency records: the first response to a create POST, kept 24 h per
// (principal, Idempotency-Key).
import { EntitySchema } from 'typeorm';

export interface IdempotencyRecordRow {
  principalKey: string;
  idempotencyKey: string;
  requestHash: string;
  status: number | null;
  body: unknown;
  createdAt: Date;
  /** The node whose request holds the claim while in progress (null: a node without an actor runtime). */
  claimedBy: string | null;
}

export const IdempotencyRecordEntity = new EntitySchema<IdempotencyRecordRow>({
  name: 'IdempotencyRecord',
  tableName: 'idempotency_records',
  columns: {
    principalKey: { type: 'text', name: 'principal_key', primary: true },
    idempotencyKey: { type: 'text', name: 'idempotency_key', primary: true },
    requestHash: { type: 'text', name: 'request_hash' },
    status: { type: 'integer', nullable: true },
    body: { type: 'jsonb', nullable: true },
    createdAt: { type: 'timestamptz', name: 'created_at' },
    claimedBy: { type: 'text', name: 'claimed_by', nullable: true },
  },
});
