// What objectives wrote to Postgres beside the size of their conversation
// (issue 24 item 7), for the storage test and bench:objectives: their journal
// entries, snapshots (counted as the runtime writes them: the table keeps only
// the last), outbox payloads and objective_events rows, each as the jsonb
// Postgres writes before compressing it, as JSON text, and as stored after
// compression.
import type { DataSource } from 'typeorm';
import { ActorJournalRepository } from '../../persistence/runtime/actor-journal.repository';
import { OBJECTIVE_KIND } from '../../src/objectives/objective-state';

/** Sums the JSON bytes of the objective snapshots the runtime of this process writes, until stopped. */
export function countSnapshotBytes(): { stop(): { bytes: number; count: number } } {
  const prototype = ActorJournalRepository.prototype;
  const original = prototype.saveSnapshotFenced;
  let bytes = 0;
  let count = 0;
  prototype.saveSnapshotFenced = async function (this: ActorJournalRepository, snapshot, fence) {
    const written = await original.call(this, snapshot, fence);
    if (snapshot.key.startsWith(`${OBJECTIVE_KIND}:`)) {
      bytes += written;
      count += 1;
    }
    return written;
  };
  return {
    stop() {
      prototype.saveSnapshotFenced = original;
      return { bytes, count };
    },
  };
}

/** Bytes per objective in each place, and their sum. */
export interface WrittenBytes {
  journal: number;
  snapshots: number;
  outbox: number;
  objectiveEvents: number;
  total: number;
}

export interface ObjectiveStorage {
  objectives: number;
  /** The text of the conversation: user messages, assistant answers and tool arguments, tool results and errors. */
  conversationBytesPerObjective: number;
  /**
   * The jsonb values written, per objective, as Postgres holds them before
   * compressing (strings unescaped); snapshots as the JSON text the runtime sends.
   */
  bytesWrittenPerObjective: WrittenBytes;
  writtenToConversation: number;
  /** The same values as JSON text (every `"` of a JSON tool result escaped). */
  jsonTextPerObjective: WrittenBytes;
  /** The journal, outbox and event rows as Postgres stored them (pg_column_size: TOAST-compressed), snapshots as text. */
  storedAfterCompressionPerObjective: WrittenBytes;
  storedToConversation: number;
  journalEntriesPerObjective: number;
  snapshotsPerObjective: number;
}

/** text, uncompressed jsonb and stored sizes of a jsonb expression, summed (`|| '{}'` makes a fresh, uncompressed value). */
const sizes = (expression: string, prefix: string) =>
  `sum(octet_length((${expression})::text))::bigint AS ${prefix}_text, sum(pg_column_size((${expression}) || '{}'::jsonb))::bigint AS ${prefix}_jsonb,
   sum(pg_column_size(${expression}))::bigint AS ${prefix}_stored`;

/** What the objectives `ids` wrote, per objective (`snapshots`: from countSnapshotBytes while they ran). */
export async function objectiveStorage(dataSource: DataSource, ids: string[], snapshots: { bytes: number; count: number }): Promise<ObjectiveStorage> {
  const keys = ids.map((id) => `${OBJECTIVE_KIND}:${id}`);
  const [journal] = await dataSource.query(`SELECT count(*)::int AS entries, ${sizes('payload', 'journal')} FROM actor_journal WHERE persistence_key = ANY($1)`, [keys]);
  const [events] = await dataSource.query(`SELECT ${sizes('e.data', 'data')}, ${sizes('e.envelope', 'envelope')} FROM objective_events e WHERE e.objective_id = ANY($1)`, [ids]);
  const [outbox] = await dataSource.query(
    `SELECT ${sizes('o.payload', 'outbox')} FROM actor_outbox o WHERE o.id IN (SELECT e.id FROM objective_events e WHERE e.objective_id = ANY($1))`,
    [ids],
  );
  const [conversation] = await dataSource.query(
    `SELECT sum(octet_length(coalesce(e.data #>> '{userMessage,content}', '')) + octet_length(coalesce(e.data #>> '{assistantMessage,content}', ''))
       + octet_length(coalesce(e.data #>> '{toolResult,content}', '')) + octet_length(coalesce(e.data #>> '{toolError,message}', ''))
       + coalesce((SELECT sum(octet_length(call ->> 'arguments')) FROM jsonb_array_elements(coalesce(e.data #> '{assistantMessage,toolCalls}', '[]')) AS call), 0))::bigint AS text
     FROM objective_events e WHERE e.objective_id = ANY($1)`,
    [ids],
  );
  const per = (value: unknown) => Math.round(Number(value ?? 0) / ids.length);
  const written = (kind: 'text' | 'jsonb' | 'stored'): WrittenBytes => {
    const bytes = {
      journal: per(journal[`journal_${kind}`]),
      snapshots: per(snapshots.bytes),
      outbox: per(outbox[`outbox_${kind}`]),
      objectiveEvents: per(Number(events[`data_${kind}`]) + Number(events[`envelope_${kind}`])),
    };
    return { ...bytes, total: bytes.journal + bytes.snapshots + bytes.outbox + bytes.objectiveEvents };
  };
  const conversationBytes = per(conversation.text);
  const bytesWritten = written('jsonb');
  const stored = written('stored');
  return {
    objectives: ids.length,
    conversationBytesPerObjective: conversationBytes,
    bytesWrittenPerObjective: bytesWritten,
    writtenToConversation: Number((bytesWritten.total / conversationBytes).toFixed(2)),
    jsonTextPerObjective: written('text'),
    storedAfterCompressionPerObjective: stored,
    storedToConversation: Number((stored.total / conversationBytes).toFixed(2)),
    journalEntriesPerObjective: per(journal.entries),
    snapshotsPerObjective: Number((snapshots.count / ids.length).toFixed(1)),
  };
}

/** A builtin/scripted script of `turns` model turns, each one call of `toolName` (a SLEEP 0 line ends a turn's calls), then `SAY done`. */
export function toolTurnsScript(toolName: string, turns: number): string {
  return [...Array.from({ length: turns }, (_, turn) => `CALL ${toolName} {"page":${turn + 1}}`).join('\nSLEEP 0\n').split('\n'), 'SAY done'].join('\n');
}
