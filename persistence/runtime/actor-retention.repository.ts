// Retention of the runtime's tables: deletes, in bounded batches, the rows the
// runtime no longer needs once the command dedupe window has passed: journal
// entries covered by their actor's snapshot, published outbox rows and
// processed durable commands. Each batch is one short transaction that first
// takes the cluster-wide retention try-lock, so only one node purges at a time.
import type { RuntimeDatabase, SqlQueryable } from './runtime-database';

/**
 * Key of the transaction-level advisory lock every purge batch tries first
 * ("art\x02"; single-key form: 0x61727400 guards migrations, 0x61727401 the
 * first account, and shard leases use the two-key form).
 */
export const RETENTION_LOCK_KEY = 0x61727402;

/** One batch of one table. `busy`: another node holds the retention lock, nothing was read or deleted. */
export interface PurgeBatch {
  deleted: number;
  busy: boolean;
}

/**
 * Where a journal sweep resumes, in (persistence key, sequence number) order:
 * the next batch looks at the entries after `(key, sequenceNr)`, so at the
 * snapshots of later keys, and at this key's own only if it covers entries
 * past `sequenceNr`.
 */
export interface JournalPurgeCursor {
  key: string;
  sequenceNr: number;
}

/** One journal batch; `next` is null once every snapshot has been visited. */
export interface JournalPurgeBatch extends PurgeBatch {
  next: JournalPurgeCursor | null;
}

/** The start of a journal sweep (every persistence key is longer than ''). */
export const JOURNAL_PURGE_START: JournalPurgeCursor = { key: '', sequenceNr: 0 };

// Past any real sequence number: resuming after (key, this) skips the whole key.
const WHOLE_KEY = Number.MAX_SAFE_INTEGER;

const CUTOFF = 'now() - make_interval(secs => $1::double precision / 1000)';

/** Deletes what the retention window lets go, at most `batchSize` rows per call. */
export class ActorRetentionRepository {
  constructor(private readonly database: RuntimeDatabase) {}

  /**
   * Deletes up to `batchSize` journal entries older than `windowMs` whose
   * actor has a snapshot at or past their sequence number, looking at up to
   * `batchSize` snapshots from `from` on. An actor without a snapshot keeps
   * every entry: the walk starts from the snapshots, so it never sees one.
   *
   * Cost: one index probe per snapshot visited (pk_actor_snapshots, then the
   * covered prefix through uq_actor_journal_key_sequence) plus the rows
   * deleted; neither the journal's size nor its uncovered tails (entries
   * after the latest snapshot, actors never snapshotted) are read. A sweep
   * that follows `next` until null visits each snapshot once.
   */
  async purgeJournal(windowMs: number, batchSize: number, from: JournalPurgeCursor = JOURNAL_PURGE_START): Promise<JournalPurgeBatch> {
    return this.inRetentionLock<JournalPurgeBatch>({ deleted: 0, busy: true, next: from }, async (sql) => {
      // The victims are taken in scope (key) order then sequence order, as the nested loop yields them, so the
      // last one is where a full batch resumes. Were the executor to yield another order, entries below that
      // cursor would only wait for the next sweep: what is deleted never depends on the order.
      const [row] = await sql.query<{
        deleted: number;
        victims: number;
        last_victim_key: string | null;
        last_victim_seq: string | null;
        keys: number;
        last_key: string | null;
      }>(
        `WITH scope AS MATERIALIZED (
           SELECT persistence_key, sequence_nr FROM actor_snapshots
           WHERE persistence_key >= $3 AND (persistence_key, sequence_nr) > ($3::text, $4::bigint)
           ORDER BY persistence_key LIMIT $2
         ), victims AS MATERIALIZED (
           SELECT entry.ordering, entry.persistence_key, entry.sequence_nr
           FROM scope CROSS JOIN LATERAL (
             SELECT j.ordering, j.persistence_key, j.sequence_nr FROM actor_journal j
             WHERE j.persistence_key = scope.persistence_key
               AND j.sequence_nr <= scope.sequence_nr
               AND (j.persistence_key, j.sequence_nr) > ($3::text, $4::bigint)
               AND j.created_at < ${CUTOFF}
             ORDER BY j.sequence_nr
           ) entry
           LIMIT $2
         ), purged AS (
           DELETE FROM actor_journal WHERE ordering = ANY(ARRAY(SELECT ordering FROM victims)) RETURNING 1
         )
         SELECT (SELECT count(*) FROM purged)::int AS deleted,
                (SELECT count(*) FROM victims)::int AS victims,
                last_victim.persistence_key AS last_victim_key,
                last_victim.sequence_nr AS last_victim_seq,
                (SELECT count(*) FROM scope)::int AS keys,
                (SELECT max(persistence_key) FROM scope) AS last_key
         FROM (SELECT 1) AS one
         LEFT JOIN LATERAL (SELECT persistence_key, sequence_nr FROM victims ORDER BY persistence_key DESC, sequence_nr DESC LIMIT 1) AS last_victim ON true`,
        [windowMs, batchSize, from.key, from.sequenceNr],
      );
      let next: JournalPurgeCursor | null = null;
      // A full batch may have stopped inside a key: resume right after its last victim.
      if (row.victims >= batchSize) next = { key: row.last_victim_key!, sequenceNr: Number(row.last_victim_seq) };
      else if (row.keys >= batchSize) next = { key: row.last_key!, sequenceNr: WHOLE_KEY };
      return { deleted: row.deleted, busy: false, next };
    });
  }

  /** Deletes up to `batchSize` outbox rows published more than `windowMs` ago, oldest first. */
  async purgeOutbox(windowMs: number, batchSize: number): Promise<PurgeBatch> {
    return this.deleteOldest('actor_outbox', 'id', 'published_at', windowMs, batchSize);
  }

  /** Deletes up to `batchSize` durable commands processed more than `windowMs` ago, oldest first. */
  async purgeCommands(windowMs: number, batchSize: number): Promise<PurgeBatch> {
    return this.deleteOldest('actor_commands', 'id', 'processed_at', windowMs, batchSize);
  }

  // Rows still waiting (NULL time) never match `<`, and the partial index on the time column
  // (migration 1763812900000) hands out the oldest first, so a batch reads only what it deletes.
  private deleteOldest(table: string, key: string, doneAt: string, windowMs: number, batchSize: number): Promise<PurgeBatch> {
    return this.inRetentionLock<PurgeBatch>({ deleted: 0, busy: true }, async (sql) => {
      const [row] = await sql.query<{ deleted: number }>(
        `WITH purged AS (
           DELETE FROM ${table} WHERE ${key} = ANY(ARRAY(
             SELECT ${key} FROM ${table} WHERE ${doneAt} < ${CUTOFF} ORDER BY ${doneAt} LIMIT $2))
           RETURNING 1
         )
         SELECT count(*)::int AS deleted FROM purged`,
        [windowMs, batchSize],
      );
      return { deleted: row.deleted, busy: false };
    });
  }

  /** Runs `work` in a transaction holding the retention lock, or answers `busy` when another session holds it. */
  private inRetentionLock<T>(busy: T, work: (sql: SqlQueryable) => Promise<T>): Promise<T> {
    return this.database.transaction(async (sql) => {
      const [lock] = await sql.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [RETENTION_LOCK_KEY]);
      return lock.locked ? work(sql) : busy;
    });
  }
}
