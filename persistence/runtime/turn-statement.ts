// A batch of turns as ONE autocommit statement: the fence read (FOR SHARE),
// the journal entries, the outbox rows, reminders, processed and sent durable
// commands, the work index and every kind's projection, each a data-modifying
// CTE fed by its own JSON or array parameters. It either writes everything or
// nothing: a stale epoch makes the final SELECT divide by zero (22012) and a
// journal conflict raises a unique violation, both aborting the statement, and
// the writer then takes the batch through its transaction path, which refuses
// the faulty turns one by one. One round trip instead of BEGIN, five to nine
// statements and COMMIT, with the same fencing: the share lock on the shard
// rows is held until the statement commits, so a takeover's epoch bump waits
// for it or makes it fail. The text depends only on which parts a batch has,
// so it is built, and named, once per shape (statementOfShape).
import { createHash } from 'node:crypto';
import type { ProjectionBuilder } from '../../src/ports/actor-behavior';
import { markProcessedStatement } from './actor-command.repository';
import type { JournalEntryWrite, TurnWrite } from './turn-writer';

/** Every journal entry a write carries, in sequence order. */
export function entriesOf(turn: TurnWrite): JournalEntryWrite[] {
  if (!turn.entry) return turn.followingEntries ?? [];
  return turn.followingEntries?.length ? [turn.entry, ...turn.followingEntries] : [turn.entry];
}

/** The SQLSTATE of the fence check failing (the deliberate division by zero). */
export const STALE_FENCE_SQLSTATE = '22012';

export interface BatchStatement {
  text: string;
  parameters: unknown[];
  /** The prepared statement's name, from the text: one name per statement shape. */
  name: string;
}

/**
 * Journal rows as one JSON array (the fenced insert's rows also name their
 * shard and epoch). A payload the actor serialized already, to weigh its entry
 * (JournalEntryWrite.payloadJson), goes in as that text.
 */
export function journalRowsJson(turns: readonly TurnWrite[], options: { withFence?: boolean } = {}): string {
  const rows: string[] = [];
  for (const turn of turns) {
    const fence = options.withFence ? `,"shard":${JSON.stringify(turn.fence.shard)},"epoch":${JSON.stringify(turn.fence.epoch)}` : '';
    for (const entry of entriesOf(turn)) {
      const payload = entry.payloadJson ?? JSON.stringify(entry.payload) ?? 'null';
      rows.push(`{"persistence_key":${JSON.stringify(turn.key)},"sequence_nr":${JSON.stringify(entry.sequenceNr)},"command_id":${JSON.stringify(entry.commandId)},"payload":${payload}${fence}}`);
    }
  }
  return `[${rows.join(',')}]`;
}

/**
 * Collects CTE bodies and their parameters, numbering the parameters as they
 * come. Each part names itself (`shape`), so a batch of a shape seen before
 * takes the text built for it then and only its parameters are new.
 */
class StatementBuilder {
  readonly ctes: string[] = [];
  readonly parameters: unknown[] = [];
  readonly shape: string[] = [];
  private readonly foreignBodies: Array<{ at: number; bodies: readonly string[]; offset: number }> = [];

  param(value: unknown): string {
    this.parameters.push(value);
    return `$${this.parameters.length}`;
  }

  cte(part: string, body: string): void {
    this.shape.push(part);
    this.ctes.push(body);
  }

  /** Statements written with their own shared $1…$n, renumbered after the parameters taken so far (when the text is built). */
  foreign(bodies: readonly string[], parameters: readonly unknown[]): void {
    this.shape.push(`p${statementsId(bodies)}`);
    this.foreignBodies.push({ at: this.ctes.length, bodies, offset: this.parameters.length });
    this.parameters.push(...parameters);
    this.ctes.push('');
  }

  /** The CTEs, named w0…wn, with the foreign bodies renumbered. */
  namedCtes(): string[] {
    const bodies = [...this.ctes];
    let inserted = 0;
    for (const { at, bodies: foreign, offset } of this.foreignBodies) {
      const renumbered = foreign.map((body) => body.replace(/\$(\d+)/g, (_, number: string) => `$${Number(number) + offset}`));
      bodies.splice(at + inserted, 1, ...renumbered);
      inserted += renumbered.length - 1;
    }
    return bodies.map((body, index) => `w${index} AS (${body})`);
  }
}

/** Ids of projection statement lists by identity: a kind's builder hands the same constant list every time. */
const statementsIds = new WeakMap<readonly string[], number>();
let nextStatementsId = 0;
function statementsId(statements: readonly string[]): number {
  let id = statementsIds.get(statements);
  if (id === undefined) statementsIds.set(statements, (id = nextStatementsId++));
  return id;
}

/** Texts and names of the shapes seen; bounded, should a builder hand a new list each time. */
const shapes = new Map<string, { text: string; name: string }>();
const MAX_SHAPES = 512;

function statementOfShape(shape: string, build: () => string): { text: string; name: string } {
  let statement = shapes.get(shape);
  if (!statement) {
    const text = build();
    statement = { text, name: `agentrt_batch_${createHash('sha1').update(text).digest('hex').slice(0, 16)}` };
    if (shapes.size >= MAX_SHAPES) shapes.clear();
    shapes.set(shape, statement);
  }
  return statement;
}

/**
 * The reminders' key columns as conditions of their own, beside the join with
 * the unnest input: an input of unknown length is estimated at 100 rows, so
 * the generic plan of a statement prepared while actor_reminders was small
 * joined it by hash with the whole primary key index, a cost that grows
 * with the table. These give the planner an index condition instead.
 */
export const REMINDER_KEYS = (kinds: string, actorIds: string) => `r.kind = ANY(${kinds}::text[]) AND r.actor_id = ANY(${actorIds}::text[])`;

const keyOf = (kind: string, actorId: string, name: string) => `${kind}\u0000${actorId}\u0000${name}`;

/**
 * The batch's statement, or null when a kind with changes has no projection
 * builder (or its builder declines these changes).
 */
export function batchStatement(turns: readonly TurnWrite[], projections: ReadonlyMap<string, ProjectionBuilder>): BatchStatement | null {
  const projected = new Map<string, Array<{ actorId: string; change: unknown }>>();
  for (const turn of turns) {
    if (turn.changes.length === 0) continue;
    const list = projected.get(turn.kind) ?? [];
    for (const change of turn.changes) list.push({ actorId: turn.actorId, change });
    projected.set(turn.kind, list);
  }
  const projectionStatements = [];
  for (const [kind, changes] of projected) {
    const builder = projections.get(kind);
    const statement = builder?.(changes);
    if (!statement) return null;
    projectionStatements.push(statement);
  }

  const sql = new StatementBuilder();
  const fences = [...new Map(turns.map((turn) => [`${turn.fence.shard}:${turn.fence.epoch}`, turn.fence])).values()];
  const shards = sql.param([...new Set(fences.map((fence) => fence.shard))]);
  const expected = sql.param(JSON.stringify(fences));
  const head = [
    `fence AS (SELECT shard, epoch FROM actor_shards WHERE shard = ANY(${shards}::int[]) FOR SHARE)`,
    `gate AS (SELECT bool_and(f.epoch IS NOT NULL AND f.epoch = t.epoch) AS ok
      FROM jsonb_to_recordset(${expected}::jsonb) AS t(shard int, epoch bigint) LEFT JOIN fence f ON f.shard = t.shard)`,
  ];

  if (turns.some((turn) => entriesOf(turn).length > 0)) {
    // No ON CONFLICT: a taken sequence number or command id aborts the statement (the transaction path then classifies it).
    sql.cte('journal', `INSERT INTO actor_journal (persistence_key, sequence_nr, command_id, payload)
      SELECT t.persistence_key, t.sequence_nr, t.command_id, t.payload
      FROM jsonb_to_recordset(${sql.param(journalRowsJson(turns))}::jsonb) AS t(persistence_key text, sequence_nr bigint, command_id text, payload jsonb)`);
  }

  const outbox = turns.flatMap((turn) => turn.outbox.map((row) => ({ turn, row })));
  if (!outbox.length) {
    head.push('turn_outbox AS (SELECT NULL::text AS id, NULL::jsonb AS payload WHERE false)');
  } else {
    // One JSON document rather than parallel arrays: a jsonb[] parameter is an array literal, which the
    // driver builds by escaping every quote of every payload, and Postgres parses twice (array, then JSON).
    const rows = outbox.map(({ turn, row }) => ({
      id: row.id, shard: turn.fence.shard, subject: row.subject, payload: row.payload, projected: row.payloadProjected ?? false, headers: row.headers,
      persistence_key: turn.key, actor_seq: row.actorSeq,
    }));
    // Parsed once (MATERIALIZED), read twice: by the insert, and by the projections as turn_outbox, which
    // gives them every payload, also the ones the table does not keep (a projected payload: the projection
    // stores it, OutgoingEvent.payloadProjected).
    head.push(`turn_outbox_input AS MATERIALIZED (SELECT * FROM ROWS FROM (json_to_recordset(${sql.param(JSON.stringify(rows))}::json)
        AS (id text, shard int, subject text, payload jsonb, projected boolean, headers jsonb, persistence_key text, actor_seq bigint)) WITH ORDINALITY
        AS u(id, shard, subject, payload, projected, headers, persistence_key, actor_seq, ord))`);
    // WITH ORDINALITY + ORDER BY: positions (bigserial) follow the order the turns decided them.
    head.push(`turn_outbox_written AS (INSERT INTO actor_outbox (id, shard, subject, payload, headers, persistence_key, actor_seq)
      SELECT id, shard, subject, CASE WHEN projected THEN NULL ELSE coalesce(payload, 'null'::jsonb) END, headers, persistence_key, actor_seq
      FROM turn_outbox_input ORDER BY ord)`);
    head.push('turn_outbox AS (SELECT id, payload FROM turn_outbox_input)');
  }

  // One row per (actor, name) is set; a reminder set in the batch is not also deleted (CTEs must not touch a row twice).
  const set = turns.flatMap((turn) => [...new Map(turn.remindersSet.map((reminder) => [reminder.name, reminder])).values()].map((reminder) => ({ turn, reminder })));
  const setKeys = new Set(set.map(({ turn, reminder }) => keyOf(turn.kind, turn.actorId, reminder.name)));
  const fired = turns.filter((turn) => turn.reminderFired && !setKeys.has(keyOf(turn.kind, turn.actorId, turn.reminderFired.name)));
  if (fired.length) {
    const kinds = sql.param(fired.map((t) => t.kind));
    const actorIds = sql.param(fired.map((t) => t.actorId));
    sql.cte('fired', `DELETE FROM actor_reminders r USING unnest(${kinds}::text[], ${actorIds}::text[],
        ${sql.param(fired.map((t) => t.reminderFired!.name))}::text[], ${sql.param(fired.map((t) => t.reminderFired!.dueAt))}::timestamptz[]) AS f(kind, actor_id, name, due_at)
      WHERE r.kind = f.kind AND r.actor_id = f.actor_id AND r.name = f.name AND r.due_at = f.due_at AND ${REMINDER_KEYS(kinds, actorIds)}`);
  }
  const firedKeys = new Set(fired.map((turn) => keyOf(turn.kind, turn.actorId, turn.reminderFired!.name)));
  const cancelled = turns
    .flatMap((turn) => turn.remindersCancelled.map((name) => ({ turn, name })))
    .filter(({ turn, name }) => !setKeys.has(keyOf(turn.kind, turn.actorId, name)) && !firedKeys.has(keyOf(turn.kind, turn.actorId, name)));
  if (cancelled.length) {
    const kinds = sql.param(cancelled.map((c) => c.turn.kind));
    const actorIds = sql.param(cancelled.map((c) => c.turn.actorId));
    sql.cte('cancelled', `DELETE FROM actor_reminders r USING unnest(${kinds}::text[], ${actorIds}::text[], ${sql.param(cancelled.map((c) => c.name))}::text[]) AS c(kind, actor_id, name)
      WHERE r.kind = c.kind AND r.actor_id = c.actor_id AND r.name = c.name AND ${REMINDER_KEYS(kinds, actorIds)}`);
  }
  if (set.length) {
    sql.cte('set', `INSERT INTO actor_reminders (kind, actor_id, name, shard, due_at, next_attempt_at, attempts, payload)
      SELECT kind, actor_id, name, shard, due_at, due_at, 0, payload
      FROM unnest(${sql.param(set.map((s) => s.turn.kind))}::text[], ${sql.param(set.map((s) => s.turn.actorId))}::text[], ${sql.param(set.map((s) => s.reminder.name))}::text[],
        ${sql.param(set.map((s) => s.turn.fence.shard))}::int[], ${sql.param(set.map((s) => s.reminder.dueAt))}::timestamptz[],
        ${sql.param(set.map((s) => JSON.stringify(s.reminder.payload ?? null)))}::jsonb[]) AS s(kind, actor_id, name, shard, due_at, payload)
      ON CONFLICT (kind, actor_id, name) DO UPDATE
        SET due_at = excluded.due_at, next_attempt_at = excluded.due_at, attempts = 0, payload = excluded.payload, shard = excluded.shard`);
  }

  const processed = turns.flatMap((turn) => turn.processedCommandIds);
  if (processed.length) sql.cte('processed', markProcessedStatement(sql.param(processed)));

  const sends = turns.flatMap((turn) => turn.sends);
  if (sends.length) {
    // Positions follow send order: receivers apply their commands in position order. One JSON document, as the outbox's.
    // A JSON null in the document is SQL NULL in the record: kept a JSON null, as the payload was.
    sql.cte('sends', `INSERT INTO actor_commands (id, shard, kind, actor_id, payload)
      SELECT id, shard, kind, actor_id, coalesce(payload, 'null'::jsonb)
      FROM ROWS FROM (json_to_recordset(${sql.param(JSON.stringify(sends.map((s) => ({ id: s.id, shard: s.shard, kind: s.kind, actor_id: s.actorId, payload: s.payload }))))}::json)
        AS (id text, shard int, kind text, actor_id text, payload jsonb)) WITH ORDINALITY
        AS s(id, shard, kind, actor_id, payload, ord)
      ORDER BY ord
      ON CONFLICT (id) DO NOTHING`);
  }

  const entering = turns.filter((turn) => turn.work === 'enter');
  if (entering.length) {
    sql.cte('entering', `INSERT INTO actor_work (kind, actor_id, shard)
      SELECT * FROM unnest(${sql.param(entering.map((t) => t.kind))}::text[], ${sql.param(entering.map((t) => t.actorId))}::text[], ${sql.param(entering.map((t) => t.fence.shard))}::int[])
      ON CONFLICT (kind, actor_id) DO UPDATE SET shard = excluded.shard`);
  }
  const leaving = turns.filter((turn) => turn.work === 'leave');
  if (leaving.length) {
    sql.cte('leaving', `DELETE FROM actor_work w USING unnest(${sql.param(leaving.map((t) => t.kind))}::text[], ${sql.param(leaving.map((t) => t.actorId))}::text[]) AS l(kind, actor_id)
      WHERE w.kind = l.kind AND w.actor_id = l.actor_id`);
  }

  for (const projection of projectionStatements) sql.foreign(projection.statements, projection.parameters);

  // Evaluated at run time (the divisor comes from the fence read): a stale epoch aborts everything the CTEs wrote.
  const { text, name } = statementOfShape(`${outbox.length ? 'outbox' : '-'},${sql.shape.join(',')}`, () => `WITH ${[...head, ...sql.namedCtes()].join(',\n')}
SELECT 1 / (CASE WHEN (SELECT ok FROM gate) THEN 1 ELSE 0 END) AS written`);
  return { text, parameters: sql.parameters, name };
}
