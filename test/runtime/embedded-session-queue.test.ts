// The embedded database's one session shared by every socket connection:
// parameterised queries (extended protocol) of several connections at once
// must each get their own answer, and a connection that goes away, or stays
// silent, in the middle of a transaction must not leave the others waiting.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Pool } from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../persistence/embedded-postgres';

describe('embedded database session queue', function () {
  this.timeout(60_000);
  let dataDir: string;
  let embedded: EmbeddedPostgres;
  let pool: Pool;
  const holdTimeouts: number[] = [];

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'agentrt-session-queue-'));
    embedded = await startEmbeddedPostgres({ dataDir, holdTimeoutMs: 1_000, onHoldTimeout: (ms) => holdTimeouts.push(ms) });
    pool = new Pool({ connectionString: embedded.url, max: 4 });
    await pool.query('CREATE TABLE queue_writes (n int, label text); CREATE TABLE queue_probe (id int)');
  });

  after(async () => {
    await pool?.end();
    await embedded?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** `count` transactions, each inserting one row into queue_writes, run in parallel. */
  const transactionalInserts = (count: number) =>
    Array.from({ length: count }, async (_, index) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('INSERT INTO queue_writes VALUES ($1, $2)', [index, 'tx']);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    });

  it('answers parallel parameterised queries each with its own result while transactions come and go', async () => {
    // A transaction holds the session; the messages of other connections queue
    // meanwhile and must not interleave (Parse of one, BEGIN of another...) when it ends.
    const transactions = transactionalInserts(10);
    const values = Array.from({ length: 100 }, (_, index) => index);
    const queries = values.map((value) => pool.query<{ n: number; label: string }>('SELECT $1::int AS n, $2::text AS label', [value, `v${value}`]));
    const [results] = await Promise.all([Promise.all(queries), Promise.all(transactions)]);
    assert.deepEqual(
      results.map((result) => [result.rows[0].n, result.rows[0].label]),
      values.map((value) => [value, `v${value}`]),
    );
    assert.equal((await pool.query('SELECT count(*)::int AS count FROM queue_writes')).rows[0].count, 10);
  });

  it('keeps a failed parameterised query from breaking the queries of other connections', async () => {
    const transactions = transactionalInserts(10);
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, index) => (index % 4 === 0 ? pool.query('SELECT 1 / $1::int AS n', [0]) : pool.query('SELECT $1::int AS n', [index]))),
    );
    await Promise.all(transactions);
    results.forEach((result, index) => {
      if (index % 4 === 0) assert.match(String((result as PromiseRejectedResult).reason), /division by zero/);
      else assert.equal((result as PromiseFulfilledResult<{ rows: Array<{ n: number }> }>).value.rows[0].n, index);
    });
  });

  it('rolls back the transaction of a connection that goes away and serves the others', async () => {
    const client = new Client({ connectionString: embedded.url });
    await client.connect();
    await client.query('BEGIN');
    await client.query('INSERT INTO queue_probe VALUES ($1)', [1]);
    const waiting = pool.query<{ count: string }>('SELECT count(*) AS count FROM queue_probe WHERE id = $1', [1]);
    await client.end();
    const { rows } = await waiting;
    assert.equal(rows[0].count, '0');
  });

  it('closes a connection that holds a transaction open while others wait, rolling it back', async () => {
    const client = new Client({ connectionString: embedded.url });
    client.on('error', () => undefined);
    await client.connect();
    await client.query('BEGIN');
    await client.query('INSERT INTO queue_probe VALUES ($1)', [2]);
    const started = Date.now();
    const waiting = pool.query<{ count: string }>('SELECT count(*) AS count FROM queue_probe WHERE id = $1', [2]);
    // Later arrivals wait too, and must not postpone the timeout.
    const later = [300, 600, 900].map((delay) => new Promise((resolve) => setTimeout(resolve, delay)).then(() => pool.query('SELECT $1::int AS n', [delay])));
    const { rows } = await waiting;
    const waited = Date.now() - started;
    assert.equal(rows[0].count, '0');
    assert.ok(waited >= 900 && waited < 1_700, `the waiting query was answered after the hold timeout, not later (${waited} ms)`);
    await Promise.all(later);
    assert.deepEqual(holdTimeouts, [1_000]);
    await assert.rejects(client.query('COMMIT'), /terminated|not queryable|closed/i);
    await client.end().catch(() => undefined);
  });
});
