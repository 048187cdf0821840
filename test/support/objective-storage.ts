// What objectives wrote to Postgres beside the size of their conversation
// (issue 24 item 7), for the storage test and bench:objectives: the JSON text
// of their journal entries, snapshots (counted as the runtime writes them: the
// table keeps only the last), outbox payloads (each event's envelope as
// published) and objective_events rows, and what Postgres stored of the rows
// after compressing them.
import type { DataSource } from 'typeorm';
import { EVENT_ENVELOPE_SQL } from '../../persistence/repositories/objectives.store';
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

export interface ObjectiveStorage {
  objectives: number;
  /** The text of the conversation: user messages, assistant answers and tool arguments, tool results and errors. */
  conversationBytesPerObjective: number;
  /** JSON text written, per objective. */
  bytesWrittenPerObjective: { journal: number; snapshots: number; outbox: number; objectiveEvents: number; total: number };
  writtenToConversation: number;
  /** The journal, outbox and event rows as Postgres stored them (pg_column_size: TOAST-compressed). */
  storedAfterCompressionPerObjective: number;
  journalEntriesPerObjective: number;
  snapshotsPerObjective: number;
}

/** What the objectives `ids` wrote, per objective (`snapshots`: from countSnapshotBytes while they ran). */
export async function objectiveStorage(dataSource: DataSource, ids: string[], snapshots: { bytes: number; count: number }): Promise<ObjectiveStorage> {
  const keys = ids.map((id) => `${OBJECTIVE_KIND}:${id}`);
  const [journal] = await dataSource.query(
    'SELECT count(*)::int AS entries, sum(octet_length(payload::text))::bigint AS text, sum(pg_column_size(payload))::bigint AS stored FROM actor_journal WHERE persistence_key = ANY($1)',
    [keys],
  );
  const [events] = await dataSource.query(
    `SELECT sum(octet_length(e.data::text) + octet_length(e.envelope::text))::bigint AS text, sum(pg_column_size(e.data) + pg_column_size(e.envelope))::bigint AS stored,
       sum(octet_length((${EVENT_ENVELOPE_SQL})::text))::bigint AS outbox_text, sum(pg_column_size(${EVENT_ENVELOPE_SQL}))::bigint AS outbox_stored
     FROM objective_events e WHERE e.objective_id = ANY($1)`,
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
  const written = { journal: per(journal.text), snapshots: per(snapshots.bytes), outbox: per(events.outbox_text), objectiveEvents: per(events.text) };
  const total = written.journal + written.snapshots + written.outbox + written.objectiveEvents;
  const conversationBytes = per(conversation.text);
  return {
    objectives: ids.length,
    conversationBytesPerObjective: conversationBytes,
    bytesWrittenPerObjective: { ...written, total },
    writtenToConversation: Number((total / conversationBytes).toFixed(2)),
    storedAfterCompressionPerObjective: per(Number(journal.stored) + Number(events.stored) + Number(events.outbox_stored)),
    journalEntriesPerObjective: per(journal.entries),
    snapshotsPerObjective: Number((snapshots.count / ids.length).toFixed(1)),
  };
}

/** A builtin/scripted script of `turns` model turns, each one call of `toolName` (a SLEEP 0 line ends a turn's calls), then `SAY done`. */
export function toolTurnsScript(toolName: string, turns: number): string {
  return [...Array.from({ length: turns }, (_, turn) => `CALL ${toolName} {"page":${turn + 1}}`).join('\nSLEEP 0\n').split('\n'), 'SAY done'].join('\n');
}
