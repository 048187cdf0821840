// The transaction runner on real Postgres: a transaction aborted by a deadlock
// or a serialization failure runs again whole, ABORTED (409) when its retries
// run out, and a transaction nested in another never retries on its own.
import assert from 'node:assert/strict';
import { ulid } from 'ulid';
import type { DataSource } from 'typeorm';
import { createDataSource } from '../../persistence/data-source';
import { runTransaction } from '../../persistence/transaction-runner';
import { AbortedError } from '../../src/errors';
import { sharedTestDatabase } from '../support/global-setup';

/** What pg raises for a serialization failure, as far as the runner looks. */
const serializationFailure = () => Object.assign(new Error('could not serialize access due to concurrent update'), { code: '40001' });

describe('runTransaction', () => {
  let dataSource: DataSource;
  const table = `runner_probe_${ulid().toLowerCase()}`;
  before(async () => {
    dataSource = createDataSource({ url: (await sharedTestDatabase()).url, poolSize: 4 });
    await dataSource.initialize();
    await dataSource.query(`CREATE TABLE ${table} (id int PRIMARY KEY, n int NOT NULL)`);
  });
  beforeEach(async () => {
    await dataSource.query(`TRUNCATE ${table}`);
    await dataSource.query(`INSERT INTO ${table} VALUES (1, 0), (2, 0)`);
  });
  after(async () => {
    await dataSource.query(`DROP TABLE ${table}`);
    await dataSource.destroy();
  });

  const bump = (sql: { query: DataSource['query'] }, id: number) => sql.query(`UPDATE ${table} SET n = n + 1 WHERE id = $1`, [id]);
  const counts = async () => (await dataSource.query(`SELECT n FROM ${table} ORDER BY id`)).map((row: { n: number }) => row.n);

  it('runs a transaction that deadlocks once again, and both commit once', async () => {
    let runs = 0;
    let arrived = 0;
    let bothHoldOne!: () => void;
    const gate = new Promise<void>((resolve) => (bothHoldOne = resolve));
    // Each locks one row, waits until the other holds the other row, then asks for it: Postgres aborts one of them (40P01).
    const crossing = (first: number, second: number) =>
      runTransaction(dataSource, async (tx) => {
        runs += 1;
        await bump(tx, first);
        if ((arrived += 1) === 2) bothHoldOne();
        await gate;
        await bump(tx, second);
        return first;
      }, { baseDelayMs: 1 });
    assert.deepEqual(await Promise.all([crossing(1, 2), crossing(2, 1)]), [1, 2]);
    assert.equal(runs, 3, 'the deadlock victim ran twice, the other once');
    assert.deepEqual(await counts(), [2, 2], 'the victim\'s first run left nothing behind');
  });

  it('answers ABORTED, saying to retry, when every run fails with a serialization failure', async () => {
    let runs = 0;
    const failing = runTransaction(dataSource, async (tx) => {
      runs += 1;
      await bump(tx, 1);
      throw serializationFailure();
    }, { baseDelayMs: 1 });
    await assert.rejects(failing, (error: unknown) => {
      assert.ok(error instanceof AbortedError);
      assert.equal(error.code, 'ABORTED');
      assert.equal(error.message, 'the request conflicted with concurrent changes to the same resources 5 times; retry it');
      assert.equal((error.cause as { code: string }).code, '40001');
      return true;
    });
    assert.equal(runs, 5);
    assert.deepEqual(await counts(), [0, 0], 'every run was rolled back');
  });

  it('does not retry other failures', async () => {
    let runs = 0;
    await assert.rejects(runTransaction(dataSource, async () => {
      runs += 1;
      throw new Error('not a conflict');
    }), /not a conflict/);
    assert.equal(runs, 1);
  });

  it('lets a nested transaction join the outer one without retrying: the outermost runs again whole', async () => {
    let outerRuns = 0;
    let innerRuns = 0;
    const result = await runTransaction(dataSource, async (tx) => {
      outerRuns += 1;
      await bump(tx, 1);
      const innerRunsBefore = innerRuns;
      try {
        return await runTransaction(dataSource, async (inner) => {
          innerRuns += 1;
          assert.equal(inner.queryRunner, tx.queryRunner, 'the nested transaction runs on the outer connection');
          await bump(inner, 2);
          if (outerRuns === 1) throw serializationFailure();
          return 'done';
        });
      } finally {
        assert.equal(innerRuns - innerRunsBefore, 1, 'the nested call ran its work once per outer run');
      }
    }, { baseDelayMs: 1 });
    assert.equal(result, 'done');
    assert.equal(outerRuns, 2);
    assert.equal(innerRuns, 2);
    assert.deepEqual(await counts(), [1, 1], 'only the second run of the whole committed');
  });
});
