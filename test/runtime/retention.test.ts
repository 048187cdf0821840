// Retention on real Postgres: exactly the journal entries covered by a
// snapshot and older than the window, the outbox rows published before the
// window and the commands processed before it are deleted, in batches of at
// most batchSize; nothing unpublished, unprocessed, uncovered or young is
// touched; a node finding the retention lock taken deletes nothing; the
// sweeper loops batches to the end, logs a failure and sweeps again, and
// stop() waits for the batch in progress.
import assert from 'node:assert/strict';
import { Client } from 'pg';
import { RetentionSweeper, type SweepCounts } from '../../actors/runtime/retention-sweeper';
import type { RuntimeLogger } from '../../actors/runtime/runtime-logger';
import {
  ActorRetentionRepository,
  JOURNAL_PURGE_START,
  RETENTION_LOCK_KEY,
  type JournalPurgeCursor,
  type PurgeBatch,
} from '../../persistence/runtime/actor-retention.repository';
import { RuntimeDatabase } from '../../persistence/runtime/runtime-database';
import { eventually, silentLogger } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';

const WINDOW_MS = 3_600_000;
const OLD = "now() - interval '2 hours'";
const YOUNG = "now() - interval '1 minute'";

/** One actor's journal as the fixture writes it: entries 1..entries, the first `oldEntries` past the window. */
interface JournalFixture {
  key: string;
  entries: number;
  oldEntries: number;
  snapshotAt: number | null;
}

const JOURNALS: JournalFixture[] = [
  // Covered up to 5, all old: 1..5 go, 6..8 (after the snapshot) stay.
  { key: 'counter:snapshotted', entries: 8, oldEntries: 8, snapshotAt: 5 },
  // No snapshot: nothing goes, however old.
  { key: 'counter:never-snapshotted', entries: 8, oldEntries: 8, snapshotAt: null },
  // Covered up to 4 but only 1..2 are old: 3..4 stay until they leave the window.
  { key: 'counter:recent', entries: 6, oldEntries: 2, snapshotAt: 4 },
  // A snapshot whose covered entries are all gone already (a later sweep).
  { key: 'counter:purged-before', entries: 0, oldEntries: 0, snapshotAt: 3 },
  // Many actors, so small batches cross keys and stop inside them.
  ...Array.from({ length: 12 }, (_, i) => ({ key: `counter:many-${String(i).padStart(2, '0')}`, entries: i + 1, oldEntries: i, snapshotAt: i % 3 === 0 ? null : i })),
];

function expectedSurvivors(): string[] {
  return JOURNALS.flatMap((journal) =>
    Array.from({ length: journal.entries }, (_, i) => i + 1)
      .filter((seq) => journal.snapshotAt === null || seq > journal.snapshotAt || seq > journal.oldEntries)
      .map((seq) => `${journal.key}#${seq}`),
  ).sort();
}

const EXPECTED_JOURNAL_DELETES = JOURNALS.reduce((sum, journal) => sum + journal.entries, 0) - expectedSurvivors().length;

describe('retention', () => {
  let database: TestDatabase;
  let runtimeDatabase: RuntimeDatabase;
  let retention: ActorRetentionRepository;

  const sql = <Row>(text: string, parameters?: unknown[]) => runtimeDatabase.query<Row>(text, parameters);

  async function seed(): Promise<void> {
    await sql('TRUNCATE actor_journal, actor_snapshots, actor_outbox, actor_commands');
    for (const journal of JOURNALS) {
      for (let seq = 1; seq <= journal.entries; seq++) {
        await sql(`INSERT INTO actor_journal (persistence_key, sequence_nr, payload, created_at) VALUES ($1, $2, $3, ${seq <= journal.oldEntries ? OLD : YOUNG})`, [
          journal.key,
          seq,
          JSON.stringify({ seq }),
        ]);
      }
      if (journal.snapshotAt !== null) await sql('INSERT INTO actor_snapshots (persistence_key, sequence_nr, payload) VALUES ($1, $2, $3)', [journal.key, journal.snapshotAt, '{}']);
    }
    const outbox: Array<[string, string | null]> = [
      ...Array.from({ length: 5 }, (_, i): [string, string] => [`published-old-${i}`, OLD]),
      ['published-young-0', YOUNG],
      ['published-young-1', YOUNG],
      ['unpublished-0', null],
      ['unpublished-1', null],
    ];
    for (const [id, publishedAt] of outbox) {
      await sql(`INSERT INTO actor_outbox (id, shard, subject, payload, created_at, published_at) VALUES ($1, 0, 'agentrt.events.counter.x', '{}', ${OLD}, ${publishedAt ?? 'NULL'})`, [id]);
    }
    for (const [id, processedAt] of outbox.map(([id, at]): [string, string | null] => [id.replace('published', 'processed'), at])) {
      await sql(`INSERT INTO actor_commands (id, shard, kind, actor_id, payload, created_at, processed_at) VALUES ($1, 0, 'counter', 'x', '{}', ${OLD}, ${processedAt ?? 'NULL'})`, [id]);
    }
  }

  const journalRows = async () =>
    (await sql<{ entry: string }>("SELECT persistence_key || '#' || sequence_nr AS entry FROM actor_journal")).map((row) => row.entry).sort();
  const ids = async (table: 'actor_outbox' | 'actor_commands') => (await sql<{ id: string }>(`SELECT id FROM ${table} ORDER BY id`)).map((row) => row.id);

  /** Follows the journal cursor to the end, checking every batch stays within batchSize. */
  async function purgeWholeJournal(batchSize: number): Promise<{ deleted: number; batches: number }> {
    let cursor: JournalPurgeCursor | null = JOURNAL_PURGE_START;
    let deleted = 0;
    let batches = 0;
    while (cursor) {
      const batch = await retention.purgeJournal(WINDOW_MS, batchSize, cursor);
      assert.equal(batch.busy, false);
      assert.ok(batch.deleted <= batchSize, `batch of ${batch.deleted} rows with batchSize ${batchSize}`);
      deleted += batch.deleted;
      batches++;
      cursor = batch.next;
    }
    return { deleted, batches };
  }

  /** Calls `purge` until a batch deletes fewer than batchSize rows; answers each batch's count. */
  async function purgeAll(purge: () => Promise<PurgeBatch>, batchSize: number): Promise<number[]> {
    const counts: number[] = [];
    for (;;) {
      const batch = await purge();
      assert.equal(batch.busy, false);
      counts.push(batch.deleted);
      if (batch.deleted < batchSize) return counts;
    }
  }

  before(async () => {
    database = await createTestDatabase();
    runtimeDatabase = new RuntimeDatabase({ url: database.url, poolSize: 4 });
    retention = new ActorRetentionRepository(runtimeDatabase);
  });

  after(async () => {
    await runtimeDatabase.close();
    await database.drop();
  });

  beforeEach(seed);

  describe('journal', () => {
    for (const batchSize of [1, 2, 3, 7, 1000]) {
      it(`deletes exactly the old entries covered by a snapshot (batchSize ${batchSize})`, async () => {
        const { deleted } = await purgeWholeJournal(batchSize);
        assert.equal(deleted, EXPECTED_JOURNAL_DELETES);
        assert.deepEqual(await journalRows(), expectedSurvivors());
      });
    }

    it('keeps every entry of an actor without a snapshot and every entry after the snapshot', async () => {
      await purgeWholeJournal(1000);
      const rows = await journalRows();
      assert.deepEqual(
        rows.filter((row) => row.startsWith('counter:never-snapshotted#')),
        Array.from({ length: 8 }, (_, i) => `counter:never-snapshotted#${i + 1}`).sort(),
      );
      assert.deepEqual(
        rows.filter((row) => row.startsWith('counter:snapshotted#')),
        ['counter:snapshotted#6', 'counter:snapshotted#7', 'counter:snapshotted#8'],
      );
      assert.deepEqual(
        rows.filter((row) => row.startsWith('counter:recent#')),
        [3, 4, 5, 6].map((seq) => `counter:recent#${seq}`),
      );
    });

    it('stops a full batch inside a key and resumes right after its last victim', async () => {
      const first = await retention.purgeJournal(WINDOW_MS, 2, JOURNAL_PURGE_START);
      assert.equal(first.deleted, 2);
      assert.ok(first.next);
      const second = await retention.purgeJournal(WINDOW_MS, 2, first.next);
      assert.equal(second.deleted, 2);
      assert.ok(second.next!.key > first.next.key || (second.next!.key === first.next.key && second.next!.sequenceNr > first.next.sequenceNr));
    });

    it('finds nothing more on a second sweep', async () => {
      await purgeWholeJournal(4);
      assert.deepEqual(await purgeWholeJournal(4), { deleted: 0, batches: Math.ceil((JOURNALS.filter((journal) => journal.snapshotAt !== null).length + 1) / 4) });
    });
  });

  describe('outbox and commands', () => {
    it('deletes outbox rows published before the window, in batches, and nothing else', async () => {
      assert.deepEqual(await purgeAll(() => retention.purgeOutbox(WINDOW_MS, 2), 2), [2, 2, 1]);
      assert.deepEqual(await ids('actor_outbox'), ['published-young-0', 'published-young-1', 'unpublished-0', 'unpublished-1']);
    });

    it('deletes commands processed before the window, in batches, and nothing else', async () => {
      assert.deepEqual(await purgeAll(() => retention.purgeCommands(WINDOW_MS, 2), 2), [2, 2, 1]);
      assert.deepEqual(await ids('actor_commands'), ['processed-young-0', 'processed-young-1', 'unprocessed-0', 'unprocessed-1']);
    });

    it('deletes nothing when the window covers every row', async () => {
      assert.deepEqual(await retention.purgeOutbox(3 * WINDOW_MS, 100), { deleted: 0, busy: false });
      assert.deepEqual(await retention.purgeCommands(3 * WINDOW_MS, 100), { deleted: 0, busy: false });
      assert.equal((await ids('actor_outbox')).length, 9);
    });
  });

  describe('one node at a time', () => {
    it('deletes nothing and reports busy while another session holds the retention lock', async () => {
      const otherNode = new Client({ connectionString: database.url });
      await otherNode.connect();
      try {
        await otherNode.query('SELECT pg_advisory_lock($1)', [RETENTION_LOCK_KEY]);
        assert.deepEqual(await retention.purgeOutbox(WINDOW_MS, 100), { deleted: 0, busy: true });
        assert.deepEqual(await retention.purgeCommands(WINDOW_MS, 100), { deleted: 0, busy: true });
        assert.deepEqual(await retention.purgeJournal(WINDOW_MS, 100), { deleted: 0, busy: true, next: JOURNAL_PURGE_START });
        const sweeper = new RetentionSweeper({ retention, windowMs: WINDOW_MS, batchSize: 2, intervalMs: 60_000, logger: silentLogger });
        assert.deepEqual(await sweeper.sweepOnce(), { journal: 0, outbox: 0, commands: 0 });
        assert.equal((await ids('actor_outbox')).length, 9);
        assert.equal((await journalRows()).length, JOURNALS.reduce((sum, journal) => sum + journal.entries, 0));
        await otherNode.query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK_KEY]);
        assert.deepEqual(await sweeper.sweepOnce(), { journal: EXPECTED_JOURNAL_DELETES, outbox: 5, commands: 5 });
      } finally {
        await otherNode.end();
      }
    });
  });

  describe('RetentionSweeper', () => {
    it('sweeps every table to the end in small batches, then finds nothing', async () => {
      const sweeper = new RetentionSweeper({ retention, windowMs: WINDOW_MS, batchSize: 2, intervalMs: 60_000, logger: silentLogger });
      assert.deepEqual(await sweeper.sweepOnce(), { journal: EXPECTED_JOURNAL_DELETES, outbox: 5, commands: 5 });
      assert.deepEqual(await sweeper.sweepOnce(), { journal: 0, outbox: 0, commands: 0 });
      assert.deepEqual(await journalRows(), expectedSurvivors());
    });

    it('logs a failed sweep and sweeps again at the next interval', async () => {
      const warnings: string[] = [];
      const logger: RuntimeLogger = { ...silentLogger, warn: (_fields, message) => warnings.push(message) };
      let journalCalls = 0;
      class FailingOnce extends ActorRetentionRepository {
        override async purgeJournal(windowMs: number, batchSize: number, from?: JournalPurgeCursor) {
          if (++journalCalls === 1) throw new Error('connection lost');
          return super.purgeJournal(windowMs, batchSize, from);
        }
      }
      const sweeper = new RetentionSweeper({ retention: new FailingOnce(runtimeDatabase), windowMs: WINDOW_MS, batchSize: 1000, intervalMs: 10, logger });
      sweeper.start();
      try {
        await eventually(async () => (await ids('actor_outbox')).length === 4, 'the sweep after the failure purged the outbox');
      } finally {
        await sweeper.stop();
      }
      assert.deepEqual(warnings, ['retention sweep failed; retrying at the next interval']);
      assert.deepEqual(await journalRows(), expectedSurvivors());
    });

    it('stop() waits for the batch in progress and ends the sweep after it', async () => {
      const events: string[] = [];
      let releaseBatch!: () => void;
      const batchReleased = new Promise<void>((resolve) => (releaseBatch = resolve));
      let outboxCalls = 0;
      class BlockingOutbox extends ActorRetentionRepository {
        override async purgeOutbox(): Promise<PurgeBatch> {
          outboxCalls++;
          events.push('outbox batch started');
          await batchReleased;
          events.push('outbox batch ended');
          // A full batch: without stop() the sweeper would ask for another one.
          return { deleted: 1, busy: false };
        }
      }
      const sweeper = new RetentionSweeper({ retention: new BlockingOutbox(runtimeDatabase), windowMs: WINDOW_MS, batchSize: 1, intervalMs: 60_000, logger: silentLogger });
      const sweep = sweeper.sweepOnce();
      await eventually(() => outboxCalls === 1, 'the outbox batch started');
      const stopped = sweeper.stop().then(() => events.push('stopped'));
      releaseBatch();
      await stopped;
      const counts: SweepCounts = await sweep;
      assert.deepEqual(events, ['outbox batch started', 'outbox batch ended', 'stopped']);
      assert.equal(outboxCalls, 1);
      assert.equal(counts.outbox, 1);
      assert.equal(counts.commands, 0);
    });
  });
});
