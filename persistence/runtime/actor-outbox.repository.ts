// The outbox: events written with actor state, waiting for the relay to
// publish them. Rows are read in write order (position, a database sequence:
// per actor it is the order of its turns, whatever the clocks of the nodes
// that wrote them) and kept after publication (published_at set) until
// retention purges them. A row whose payload its kind's read model stores
// (OutgoingEvent.payloadProjected) keeps none (payload NULL): a read gives it
// back from there, as the read model holds it then.
import type { ProjectedPayloadReader } from '../../src/ports/actor-behavior';
import { kindOfPersistenceKey } from '../../src/sharding/addressing';
import type { RuntimeDatabase } from './runtime-database';

/**
 * "Not published yet", written so that the planner cannot answer it from the
 * partial index of unpublished rows (ix_actor_outbox_unpublished): rows marked
 * by id are found by primary key. Through that index a mark read every entry
 * it holds, the published rows' dead entries among them until a vacuum (a
 * bitmap scan never marks them dead), so its cost grew with the rows
 * published since the last vacuum.
 */
export const STILL_UNPUBLISHED = '(published_at IS NULL) IS TRUE';

/** One event waiting for publication. */
export interface OutboxEvent {
  id: string;
  shard: number;
  subject: string;
  /**
   * undefined: the row keeps no payload and its kind's read model no longer
   * holds one (the row's content was deleted); there is nothing to publish.
   */
  payload: unknown;
  headers: Record<string, string>;
  /** The table keeps no payload for this row: `payload` came from memory or from the kind's read model. */
  payloadProjected?: true;
  /** The actor's persistence key (null for rows written before stage 2). */
  actorKey: string | null;
  actorSeq: number | null;
  createdAt: Date;
}

/** Reads and marks outbox rows. */
export class ActorOutboxRepository {
  constructor(
    private readonly database: RuntimeDatabase,
    /** Where each kind's read model gives back the payloads its rows keep none of (ActorKind.projectedPayloads). */
    private readonly projectedPayloads: ReadonlyMap<string, ProjectedPayloadReader> = new Map(),
  ) {}

  /** How many events of these actors (persistence keys) wait for publication: few rows, read through the index of unpublished ones. */
  async countUnpublishedOf(actorKeys: readonly string[]): Promise<number> {
    if (actorKeys.length === 0) return 0;
    const [row] = await this.database.query<{ count: string }>(
      'SELECT count(*) AS count FROM actor_outbox WHERE published_at IS NULL AND persistence_key = ANY($1::text[])',
      [actorKeys],
    );
    return Number(row?.count ?? 0);
  }

  /**
   * Unpublished events of the given shards in write order, skipping the actors in `excludedKeys`,
   * each with its payload (read back from its kind's read model when the row keeps none).
   * @throws Error when a row keeps no payload and its kind has no reader on this node (nothing is lost: it stays unpublished)
   */
  async listUnpublished(shards: number[], limit: number, excludedKeys: string[] = []): Promise<OutboxEvent[]> {
    if (shards.length === 0) return [];
    const rows = await this.database.query<{
      id: string;
      shard: number;
      subject: string;
      payload: unknown;
      /** SQL NULL (a JSON null payload reads as null too). */
      projected: boolean;
      headers: Record<string, string> | null;
      persistence_key: string | null;
      actor_seq: string | null;
      created_at: Date;
    }>(
      `SELECT id, shard, subject, payload, payload IS NULL AS projected, headers, persistence_key, actor_seq, created_at FROM actor_outbox
       WHERE published_at IS NULL AND shard = ANY($1) AND (persistence_key IS NULL OR persistence_key <> ALL($3::text[]))
       ORDER BY position LIMIT $2`,
      [shards, limit, excludedKeys],
    );
    const events: OutboxEvent[] = rows.map((row) => ({
      id: row.id,
      shard: row.shard,
      subject: row.subject,
      payload: row.payload,
      headers: row.headers ?? {},
      ...(row.projected ? { payloadProjected: true as const } : {}),
      actorKey: row.persistence_key,
      actorSeq: row.actor_seq === null ? null : Number(row.actor_seq),
      createdAt: row.created_at,
    }));
    await this.readProjectedPayloads(events.filter((event) => event.payloadProjected));
    return events;
  }

  /** Fills in the payloads of rows that keep none from their kinds' read models (one read per kind); undefined for one no longer there. */
  private async readProjectedPayloads(events: OutboxEvent[]): Promise<void> {
    const byKind = new Map<string, OutboxEvent[]>();
    for (const event of events) {
      // A payload left out only by a kind with a reader (entity.actor.ts), so a row without one has a key.
      const kind = kindOfPersistenceKey(event.actorKey ?? '');
      byKind.set(kind, [...(byKind.get(kind) ?? []), event]);
    }
    for (const [kind, ofKind] of byKind) {
      const read = this.projectedPayloads.get(kind);
      if (!read) throw new Error(`outbox rows of kind ${kind} keep no payload and this node has no reader for them`);
      const payloads = new Map((await read(this.database, ofKind.map((event) => event.id))).map((row) => [row.id, row.payload]));
      for (const event of ofKind) event.payload = payloads.get(event.id);
    }
  }

  /** Marks events published. */
  async markPublished(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.database.query(`UPDATE actor_outbox SET published_at = now() WHERE id = ANY($1) AND ${STILL_UNPUBLISHED}`, [ids]);
  }

  /** Seconds since the oldest unpublished event of the given shards was written (0 when none). */
  async lagSeconds(shards: number[]): Promise<number> {
    if (shards.length === 0) return 0;
    const rows = await this.database.query<{ lag: number | null }>(
      'SELECT EXTRACT(EPOCH FROM now() - min(created_at))::double precision AS lag FROM actor_outbox WHERE published_at IS NULL AND shard = ANY($1)',
      [shards],
    );
    return rows[0].lag ?? 0;
  }
}
