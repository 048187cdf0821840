// The nact persistence engine over the Postgres journal (TypeORM repository).
// Recovery reads the latest snapshot and the journal tail; every write goes
// through the fenced repository calls, with the fence passed as nact's extra
// `persist` argument.
import type { ActorJournalRepository, Fence, JournalAppend } from '../../persistence/runtime/actor-journal.repository';
import type { NactEvent, NactEventStream, NactPersistenceEngine, NactSnapshot } from '../nact/nact';

/** What an entity passes as the extra argument of `ctx.persist`. */
export interface PersistExtra {
  fence: Fence;
  append: Omit<JournalAppend, 'key' | 'sequenceNr' | 'payload' | 'tags'>;
}

/** A nact persistence engine backed by ActorJournalRepository. */
export class JournalPersistenceEngine implements NactPersistenceEngine<PersistExtra> {
  /** @param fenceOf the fence of the shard holding a persistence key on this node (for nact-initiated snapshots). */
  constructor(
    private readonly journal: ActorJournalRepository,
    private readonly fenceOf: (key: string) => Fence | undefined,
  ) {}

  events(key: string, offset: number): NactEventStream {
    return {
      reduce: async (reducer, initial) => {
        const entries = await this.journal.listAfter(key, offset);
        const events: NactEvent[] = entries.map((entry) => ({
          data: entry.payload,
          sequenceNumber: entry.sequenceNr,
          key,
          createdAt: entry.createdAt.getTime(),
          isDeleted: false,
          tags: entry.tags,
        }));
        return events.reduce(reducer, initial);
      },
    };
  }

  async latestSnapshot(key: string): Promise<NactSnapshot | undefined> {
    const snapshot = await this.journal.findSnapshot(key);
    if (!snapshot) return undefined;
    return { data: snapshot.payload, sequenceNumber: snapshot.sequenceNr, key, createdAt: snapshot.createdAt.getTime() };
  }

  async takeSnapshot(snapshot: NactSnapshot): Promise<void> {
    const fence = this.fenceOf(snapshot.key);
    if (!fence) throw new Error(`no shard lease for ${snapshot.key}: snapshot not taken`);
    await this.journal.saveSnapshotFenced({ key: snapshot.key, sequenceNr: snapshot.sequenceNumber, payload: snapshot.data }, fence);
  }

  async persist(event: NactEvent, extra?: PersistExtra): Promise<void> {
    if (!extra) throw new Error(`persist of ${event.key} without a fence`);
    await this.journal.appendFenced({ key: event.key, sequenceNr: event.sequenceNumber, payload: event.data, tags: event.tags, ...extra.append }, extra.fence);
  }
}
