// Writes actor turns: the journal entry, outbox rows, reminders, processed
// and sent durable commands, the work index and the kind's read-model rows,
// all fenced by the shard's epoch. Turns of many actors that arrive while a
// batch is being written are written together in the next one (group commit).
// Most turns write only their journal entry: a batch of them is ONE
// statement (fence check and insert; autocommit, so one round trip and no
// transaction left open). The other turns are batched apart, one transaction
// per batch: BEGIN, the same statement, their other writes, COMMIT. A turn
// that fails its fence or conflicts is refused alone; the rest of its batch
// commits.
import type { ProjectionBuilder, Projector } from '../../src/ports/actor-behavior';
import { DuplicateCommandError, JournalConflictError, ShardFencedError, WriteInterruptedError } from '../../src/sharding/sharding.errors';
import { markProcessedStatement } from './actor-command.repository';
import { isPostgresConnectionFailure } from './pg-results';
import { batchStatement, entriesOf, journalRowsJson, REMINDER_KEYS } from './turn-statement';
import type { PreparingQueryable, RuntimeDatabase, SqlQueryable } from './runtime-database';

/** The shard and epoch under which a write is made. */
export interface Fence {
  shard: number;
  epoch: number;
}

/** One journal entry of a turn. */
export interface JournalEntryWrite {
  sequenceNr: number;
  commandId: string | null;
  payload: unknown;
  /** The payload as JSON text when the caller made it already (the actor weighs each entry by it): written as is, not serialized again. */
  payloadJson?: string;
}

/** An outbox row written with a turn. */
export interface OutboxInsert {
  id: string;
  subject: string;
  payload: unknown;
  headers: Record<string, string>;
  /** The actor's own event sequence: gapless, publication order. */
  actorSeq: number;
  /** The kind's read model stores the payload in the same turn (OutgoingEvent.payloadProjected): the row keeps none. */
  payloadProjected?: true;
}

/** A reminder set with a turn. */
export interface ReminderUpsert {
  name: string;
  dueAt: Date;
  payload: unknown;
}

/** A durable command sent by a turn. */
export interface CommandInsert {
  id: string;
  shard: number;
  kind: string;
  actorId: string;
  payload: unknown;
  /** Not stored: the receiver's first command (ActorSend.first), which a receiver of this node may apply as handed over. */
  first?: true;
}

/** Everything one actor turn writes. */
export interface TurnWrite {
  fence: Fence;
  kind: string;
  actorId: string;
  key: string;
  /** The journal entry; absent for a turn that only marks commands processed. */
  entry?: JournalEntryWrite;
  /**
   * The entries of the same actor's turns decided right after this one and
   * written with it (a group of turns, entity.actor.ts), in sequence order.
   */
  followingEntries?: JournalEntryWrite[];
  outbox: OutboxInsert[];
  remindersSet: ReminderUpsert[];
  remindersCancelled: string[];
  /** A fired reminder consumed by this turn: deleted unless it was moved meanwhile. */
  reminderFired?: { name: string; dueAt: Date };
  processedCommandIds: string[];
  sends: CommandInsert[];
  /** Effects in flight after this turn: the actor enters or leaves the work index. */
  work?: 'enter' | 'leave';
  /** Read-model changes for the kind's projector. */
  changes: unknown[];
}

interface Pending {
  turn: TurnWrite;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface TurnWriterOptions {
  /** Bound on a write transaction's idle time (a paused node must not hold the shard row); 0 for none. */
  idleTimeoutMs: number;
  /** Projectors by kind. */
  projectors: ReadonlyMap<string, Projector>;
  /** Projections in statement form by kind: a batch whose kinds all have one is written as one statement (turn-statement.ts). */
  projections?: ReadonlyMap<string, ProjectionBuilder>;
  /**
   * Batches of journal-only turns written at once. @default 1: such a batch
   * is one short statement, and a second one in flight only halves the batch
   * size, which costs the node and Postgres more per turn for no more turns
   * per second (measured with bench/actor-turns.ts).
   */
  entryBatchesInFlight?: number;
  /**
   * Transactions of the other turns written at once. @default 2: such a batch
   * spends most of its time in round trips (BEGIN, its statements, COMMIT),
   * which a second batch overlaps.
   */
  transactionBatchesInFlight?: number;
  /** Most turns in one batch. @default 256 */
  maxBatch?: number;
  /**
   * The longest the sending lane gathers turns after its first. @default
   * SENDING_GATHER_MAX_MS: a burst's actors decide over a few loop turns (their
   * messages hop router to entity), and a steady stream must not keep the
   * lane from ever starting.
   */
  sendingGatherMaxMs?: number;
}

/**
 * Batches of turns that send commands written at once, beside the other lanes.
 * This lane gathers turns while loop turns keep bringing them before it starts
 * a batch: sends come in bursts (a second's schedule fires, all due at the
 * same millisecond), and each receiver waits for its sender's commit.
 */
const SENDING_BATCHES_IN_FLIGHT = 1;

/** The sending lane's default bound on gathering (TurnWriterOptions.sendingGatherMaxMs). */
const SENDING_GATHER_MAX_MS = 5;

/**
 * A queue of turns written a batch at a time (group commit): the turns that
 * arrive while a batch is being written form the next one.
 */
class GroupCommitLane {
  private readonly queue: Pending[] = [];
  private inFlight = 0;

  constructor(
    private readonly writeBatch: (batch: Pending[]) => Promise<void>,
    private readonly concurrency: number,
    private readonly maxBatch: number,
    /**
     * Start a batch only after two event-loop turns that brought no more
     * turns (or this many milliseconds after the first), with every turn
     * pushed meanwhile; undefined: start at once. Otherwise the first push
     * starts a batch of one and the rest of the turns decided alongside wait
     * for its commit.
     */
    private readonly gatherMaxMs?: number,
  ) {}

  private gathering = false;
  /** Turns pushed since the gathering last looked. */
  private pushedWhileGathering = 0;

  push(pending: Pending): void {
    this.queue.push(pending);
    const gatherMaxMs = this.gatherMaxMs;
    if (gatherMaxMs === undefined) {
      this.pump();
      return;
    }
    this.pushedWhileGathering++;
    if (this.gathering) return;
    this.gathering = true;
    this.pushedWhileGathering = 0;
    const gatherStartedAt = performance.now();
    let quietTurns = 0;
    // Turns decided in the same event-loop turn (the fires of one burst, each in its own actor) join one batch,
    // and so do the turns of the following loop turns while they keep coming. Two quiet loop turns end the
    // gathering: an immediate queued before a decision's own runs ahead of it in the next one.
    const gathered = () => {
      quietTurns = this.pushedWhileGathering > 0 ? 0 : quietTurns + 1;
      this.pushedWhileGathering = 0;
      if (quietTurns < 2 && performance.now() - gatherStartedAt < gatherMaxMs) {
        setImmediate(gathered);
        return;
      }
      this.gathering = false;
      this.pump();
    };
    setImmediate(gathered);
  }

  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < this.concurrency) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight++;
      void this.writeBatch(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }
}

/**
 * Group-committing writer of actor turns, in three lanes: the turns that
 * write only their journal entry (one statement per batch), the turns that
 * send commands, and the others (one statement, or one transaction, per
 * batch), so a slow transaction (a projector's, say) never holds up the
 * common turns, and a send's receiver, which waits for the sender's commit
 * (a schedule's fire starting its objective), does not wait behind the
 * batches of busy actors too.
 */
export class TurnWriter {
  private readonly entriesLane: GroupCommitLane;
  private readonly transactionLane: GroupCommitLane;
  private readonly sendingLane: GroupCommitLane;

  constructor(
    private readonly database: RuntimeDatabase,
    private readonly options: TurnWriterOptions,
  ) {
    const maxBatch = options.maxBatch ?? 256;
    this.entriesLane = new GroupCommitLane((batch) => this.writeEntries(batch), options.entryBatchesInFlight ?? 1, maxBatch);
    this.transactionLane = new GroupCommitLane((batch) => this.writeInTransaction(batch), options.transactionBatchesInFlight ?? 2, maxBatch);
    this.sendingLane = new GroupCommitLane((batch) => this.writeInTransaction(batch), SENDING_BATCHES_IN_FLIGHT, maxBatch, options.sendingGatherMaxMs ?? SENDING_GATHER_MAX_MS);
  }

  /**
   * Writes one turn (with whatever other turns are waiting).
   * @throws ShardFencedError when the turn's epoch is stale.
   * @throws DuplicateCommandError when the journal already has the turn's command id.
   * @throws JournalConflictError when the sequence number exists (another activation wrote it).
   * @throws WriteInterruptedError when the connection broke (the turn may or may not be written).
   */
  write(turn: TurnWrite): Promise<void> {
    return new Promise((resolve, reject) => this.laneOf(turn).push({ turn, resolve, reject }));
  }

  private laneOf(turn: TurnWrite): GroupCommitLane {
    if (writesOnlyItsEntry(turn)) return this.entriesLane;
    return turn.sends.length > 0 ? this.sendingLane : this.transactionLane;
  }

  /**
   * Turns that write only their journal entry: one autocommit statement. No
   * client round trip happens inside its transaction, so a paused node cannot
   * hold the shard rows locked (no idle timeout needed).
   */
  private async writeEntries(batch: Pending[]): Promise<void> {
    let outcome: FencedInsert;
    try {
      outcome = await insertEntriesFenced(this.database, batch, 0);
    } catch (error) {
      await this.failed(batch, error, (pending) => this.writeEntries([pending]));
      return;
    }
    const refused = await refusals(this.database, batch, outcome);
    for (const pending of batch) {
      const error = refused.get(pending);
      if (error) pending.reject(error);
      else pending.resolve();
    }
  }

  /**
   * The other turns: first as one statement (everything or nothing); when it
   * cannot be built, or fails for any reason but a broken connection (a stale
   * epoch, a journal conflict, a projection's constraint), through a
   * transaction that refuses the faulty turns one by one.
   */
  private async writeInTransaction(batch: Pending[]): Promise<void> {
    let statement: ReturnType<typeof batchStatement> = null;
    try {
      statement = batchStatement(batch.map((pending) => pending.turn), this.options.projections ?? new Map());
    } catch {
      // A builder refusing a change: the projector in the transaction path fails that turn alone.
    }
    if (statement) {
      try {
        await this.database.query(statement.text, statement.parameters, { preparedAs: statement.name });
        for (const pending of batch) pending.resolve();
        return;
      } catch (error) {
        if (isPostgresConnectionFailure(error)) {
          for (const pending of batch) pending.reject(new WriteInterruptedError(pending.turn.key, { cause: error }));
          return;
        }
        // Nothing was written: the transaction path finds which turn is at fault.
      }
    }
    await this.writeTransaction(batch);
  }

  private async writeTransaction(batch: Pending[]): Promise<void> {
    let refused = new Map<Pending, unknown>();
    try {
      await this.database.transaction(async (sql) => {
        refused = await refusals(sql, batch, await insertEntriesFenced(sql, batch, this.options.idleTimeoutMs));
        await writeEffects(sql, batch.filter((pending) => !refused.has(pending)).map((pending) => pending.turn), this.options.projectors);
      });
    } catch (error) {
      await this.failed(batch, error, (pending) => this.writeTransaction([pending]), refused);
      return;
    }
    for (const pending of batch) {
      const error = refused.get(pending);
      if (error) pending.reject(error);
      else pending.resolve();
    }
  }

  /** A batch's statement failed: a broken connection fails every turn; another error is retried turn by turn, to find the one that fails. */
  private async failed(batch: Pending[], error: unknown, writeAlone: (pending: Pending) => Promise<void>, refused = new Map<Pending, unknown>()): Promise<void> {
    if (isPostgresConnectionFailure(error)) {
      for (const pending of batch) pending.reject(refused.get(pending) ?? new WriteInterruptedError(pending.turn.key, { cause: error }));
      return;
    }
    // One turn's failure (a projector's constraint, say) must not fail its batch mates: write each alone.
    if (batch.length > 1) {
      for (const pending of batch) await writeAlone(pending);
      return;
    }
    batch[0].reject(refused.get(batch[0]) ?? error);
  }
}

/** True for the common turn: a journal entry and nothing else to write. */
function writesOnlyItsEntry(turn: TurnWrite): boolean {
  return (
    turn.entry !== undefined &&
    turn.outbox.length === 0 &&
    turn.remindersSet.length === 0 &&
    turn.remindersCancelled.length === 0 &&
    turn.reminderFired === undefined &&
    turn.processedCommandIds.length === 0 &&
    turn.sends.length === 0 &&
    turn.work === undefined &&
    turn.changes.length === 0
  );
}

/** What the fenced insert found: each shard's current epoch, and the entries written (key, sequence number, command id). */
interface FencedInsert {
  epochs: Map<number, number>;
  written: Set<string>;
}

const entryIdentity = (key: string, sequenceNr: number | string, commandId: string | null) => `${key}\u0000${sequenceNr}\u0000${commandId ?? ''}`;

/*
 * The fence check and the journal insert in one statement. FOR SHARE makes a
 * takeover's epoch bump wait for this statement's transaction: it either
 * commits before the new owner reads, or is refused. Only entries whose epoch
 * matches are inserted. ON CONFLICT DO NOTHING keeps one conflicting turn from
 * aborting its batch; the rare conflict is then classified. $1 is the entries
 * as one JSON array (one JSON.stringify, and no array literal for pg to build
 * and escape); $2 lists the shards of every turn, with or without an entry;
 * $3 (in a transaction) bounds its idle time, set while the shard rows are
 * locked.
 */
const FENCED_INSERT = (withIdleTimeout: boolean) => `
WITH fence AS (
  SELECT shard, epoch${withIdleTimeout ? ", set_config('idle_in_transaction_session_timeout', $3, true)" : ''}
  FROM actor_shards WHERE shard = ANY($2::int[]) FOR SHARE
), written AS (
  INSERT INTO actor_journal (persistence_key, sequence_nr, command_id, payload)
  SELECT t.persistence_key, t.sequence_nr, t.command_id, t.payload
  FROM jsonb_to_recordset($1::jsonb) AS t(persistence_key text, sequence_nr bigint, command_id text, payload jsonb, shard int, epoch bigint)
  JOIN fence ON fence.shard = t.shard AND fence.epoch = t.epoch
  ON CONFLICT DO NOTHING
  RETURNING persistence_key, sequence_nr, command_id
)
SELECT shard, epoch, NULL AS persistence_key, NULL AS sequence_nr, NULL AS command_id FROM fence
UNION ALL
SELECT NULL, NULL, persistence_key, sequence_nr, command_id FROM written`;
const FENCED_INSERT_ALONE = FENCED_INSERT(false);
const FENCED_INSERT_WITH_IDLE_TIMEOUT = FENCED_INSERT(true);

async function insertEntriesFenced(sql: PreparingQueryable, batch: Pending[], idleTimeoutMs: number): Promise<FencedInsert> {
  const turns = batch.map((pending) => pending.turn);
  const parameters: unknown[] = [journalRowsJson(turns, { withFence: true }), [...new Set(turns.map((turn) => turn.fence.shard))]];
  if (idleTimeoutMs > 0) parameters.push(String(idleTimeoutMs));
  const rows = await sql.query<{ shard: number | null; epoch: string | null; persistence_key: string | null; sequence_nr: string | null; command_id: string | null }>(
    idleTimeoutMs > 0 ? FENCED_INSERT_WITH_IDLE_TIMEOUT : FENCED_INSERT_ALONE,
    parameters,
    { preparedAs: idleTimeoutMs > 0 ? 'agentrt_fenced_insert_idle_timeout' : 'agentrt_fenced_insert' },
  );
  const outcome: FencedInsert = { epochs: new Map(), written: new Set() };
  for (const row of rows) {
    if (row.shard !== null) outcome.epochs.set(row.shard, Number(row.epoch));
    else outcome.written.add(entryIdentity(row.persistence_key!, row.sequence_nr!, row.command_id));
  }
  return outcome;
}

/** The turns refused: a stale epoch, or an entry not written (a duplicate command id or a taken sequence number). */
async function refusals(sql: SqlQueryable, batch: Pending[], outcome: FencedInsert): Promise<Map<Pending, unknown>> {
  const refused = new Map<Pending, unknown>();
  for (const pending of batch) {
    const { fence, key } = pending.turn;
    if (outcome.epochs.get(fence.shard) !== fence.epoch) {
      refused.set(pending, new ShardFencedError(fence.shard, fence.epoch));
      continue;
    }
    // The first entry not written names the refusal (the others of a group were refused with it, or wait behind it).
    const entry = entriesOf(pending.turn).find((candidate) => !outcome.written.has(entryIdentity(key, candidate.sequenceNr, candidate.commandId)));
    if (!entry) continue;
    const duplicate = entry.commandId
      ? await sql.query<{ payload: { reply?: unknown } }>('SELECT payload FROM actor_journal WHERE persistence_key = $1 AND command_id = $2', [key, entry.commandId])
      : [];
    refused.set(pending, duplicate.length ? new DuplicateCommandError(key, entry.commandId!, duplicate[0].payload?.reply ?? null) : new JournalConflictError(key, entry.sequenceNr));
  }
  return refused;
}

/** Writes everything but the journal for the turns that passed their fence and conflict checks. */
async function writeEffects(sql: SqlQueryable, turns: TurnWrite[], projectors: ReadonlyMap<string, Projector>): Promise<void> {
  if (turns.length === 0) return;
  await insertOutbox(sql, turns);
  await writeReminders(sql, turns);
  await markProcessed(sql, turns);
  await insertSends(sql, turns);
  await writeWorkIndex(sql, turns);
  await project(sql, turns, projectors);
}

async function insertOutbox(sql: SqlQueryable, turns: TurnWrite[]): Promise<void> {
  const rows = turns.flatMap((turn) => turn.outbox.map((row) => ({ turn, row })));
  if (rows.length === 0) return;
  // WITH ORDINALITY + ORDER BY: positions (bigserial) follow the order the turns decided them.
  await sql.query(
    `INSERT INTO actor_outbox (id, shard, subject, payload, headers, persistence_key, actor_seq)
     SELECT id, shard, subject, payload, headers, persistence_key, actor_seq
     FROM unnest($1::text[], $2::int[], $3::text[], $4::jsonb[], $5::jsonb[], $6::text[], $7::bigint[]) WITH ORDINALITY
       AS u(id, shard, subject, payload, headers, persistence_key, actor_seq, ord)
     ORDER BY ord`,
    [
      rows.map(({ row }) => row.id),
      rows.map(({ turn }) => turn.fence.shard),
      rows.map(({ row }) => row.subject),
      rows.map(({ row }) => (row.payloadProjected ? null : JSON.stringify(row.payload))),
      rows.map(({ row }) => JSON.stringify(row.headers)),
      rows.map(({ turn }) => turn.key),
      rows.map(({ row }) => row.actorSeq),
    ],
  );
}

async function writeReminders(sql: SqlQueryable, turns: TurnWrite[]): Promise<void> {
  const fired = turns.filter((turn) => turn.reminderFired);
  if (fired.length) {
    await sql.query(
      `DELETE FROM actor_reminders r USING unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS f(kind, actor_id, name, due_at)
       WHERE r.kind = f.kind AND r.actor_id = f.actor_id AND r.name = f.name AND r.due_at = f.due_at AND ${REMINDER_KEYS('$1', '$2')}`,
      [fired.map((t) => t.kind), fired.map((t) => t.actorId), fired.map((t) => t.reminderFired!.name), fired.map((t) => t.reminderFired!.dueAt)],
    );
  }
  const cancelled = turns.flatMap((turn) => turn.remindersCancelled.map((name) => ({ turn, name })));
  if (cancelled.length) {
    await sql.query(
      `DELETE FROM actor_reminders r USING unnest($1::text[], $2::text[], $3::text[]) AS c(kind, actor_id, name)
       WHERE r.kind = c.kind AND r.actor_id = c.actor_id AND r.name = c.name AND ${REMINDER_KEYS('$1', '$2')}`,
      [cancelled.map((c) => c.turn.kind), cancelled.map((c) => c.turn.actorId), cancelled.map((c) => c.name)],
    );
  }
  // One row per (actor, name): ON CONFLICT DO UPDATE cannot touch a row twice in one statement.
  const set = turns.flatMap((turn) => [...new Map(turn.remindersSet.map((reminder) => [reminder.name, reminder])).values()].map((reminder) => ({ turn, reminder })));
  if (set.length) {
    await sql.query(
      `INSERT INTO actor_reminders (kind, actor_id, name, shard, due_at, next_attempt_at, attempts, payload)
       SELECT kind, actor_id, name, shard, due_at, due_at, 0, payload FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::jsonb[])
         AS s(kind, actor_id, name, shard, due_at, payload)
       ON CONFLICT (kind, actor_id, name) DO UPDATE
         SET due_at = excluded.due_at, next_attempt_at = excluded.due_at, attempts = 0, payload = excluded.payload, shard = excluded.shard`,
      [
        set.map((s) => s.turn.kind),
        set.map((s) => s.turn.actorId),
        set.map((s) => s.reminder.name),
        set.map((s) => s.turn.fence.shard),
        set.map((s) => s.reminder.dueAt),
        set.map((s) => JSON.stringify(s.reminder.payload ?? null)),
      ],
    );
  }
}

async function markProcessed(sql: SqlQueryable, turns: TurnWrite[]): Promise<void> {
  const ids = turns.flatMap((turn) => turn.processedCommandIds);
  if (ids.length) await sql.query(markProcessedStatement('$1'), [ids]);
}

async function insertSends(sql: SqlQueryable, turns: TurnWrite[]): Promise<void> {
  const sends = turns.flatMap((turn) => turn.sends);
  if (sends.length === 0) return;
  // Positions follow send order: receivers apply their commands in position order.
  await sql.query(
    `INSERT INTO actor_commands (id, shard, kind, actor_id, payload)
     SELECT id, shard, kind, actor_id, payload FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::jsonb[]) WITH ORDINALITY
       AS s(id, shard, kind, actor_id, payload, ord)
     ORDER BY ord
     ON CONFLICT (id) DO NOTHING`,
    [sends.map((s) => s.id), sends.map((s) => s.shard), sends.map((s) => s.kind), sends.map((s) => s.actorId), sends.map((s) => JSON.stringify(s.payload))],
  );
}

async function writeWorkIndex(sql: SqlQueryable, turns: TurnWrite[]): Promise<void> {
  const entering = turns.filter((turn) => turn.work === 'enter');
  const leaving = turns.filter((turn) => turn.work === 'leave');
  if (entering.length) {
    await sql.query(
      `INSERT INTO actor_work (kind, actor_id, shard) SELECT * FROM unnest($1::text[], $2::text[], $3::int[])
       ON CONFLICT (kind, actor_id) DO UPDATE SET shard = excluded.shard`,
      [entering.map((t) => t.kind), entering.map((t) => t.actorId), entering.map((t) => t.fence.shard)],
    );
  }
  if (leaving.length) {
    await sql.query(
      'DELETE FROM actor_work w USING unnest($1::text[], $2::text[]) AS l(kind, actor_id) WHERE w.kind = l.kind AND w.actor_id = l.actor_id',
      [leaving.map((t) => t.kind), leaving.map((t) => t.actorId)],
    );
  }
}

async function project(sql: SqlQueryable, turns: TurnWrite[], projectors: ReadonlyMap<string, Projector>): Promise<void> {
  const byKind = new Map<string, Array<{ actorId: string; change: unknown }>>();
  for (const turn of turns) {
    if (turn.changes.length === 0) continue;
    const list = byKind.get(turn.kind) ?? [];
    for (const change of turn.changes) list.push({ actorId: turn.actorId, change });
    byKind.set(turn.kind, list);
  }
  for (const [kind, changes] of byKind) {
    const projector = projectors.get(kind);
    if (!projector) throw new Error(`actor kind ${kind} decided read-model changes but has no projector`);
    await projector(sql, changes);
  }
}
