// A flow holding a transaction reads and writes through it, whichever handle it
// uses (the data source, its manager, repositories); other flows keep using the
// pool. On the embedded PGlite this is what keeps such a flow from waiting on
// itself; on Postgres it lets it see its own uncommitted writes.
import assert from 'node:assert/strict';
import { ulid } from 'ulid';
import { startTestApi, type TestApi } from '../support/api';

describe('queries inside a transaction', () => {
  let api: TestApi;
  const table = `probe_${ulid().toLowerCase()}`;
  before(async () => {
    api = await startTestApi();
    await api.dataSource.query(`CREATE TABLE ${table} (id int)`);
  });
  after(async () => {
    await api.dataSource.query(`DROP TABLE ${table}`);
    await api.close();
  });

  const count = async (run: (sql: string) => Promise<Array<{ n: number }>>) => (await run(`SELECT count(*)::int AS n FROM ${table}`))[0].n;

  it('run in the transaction of the calling flow, through every handle', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // Started outside the transaction: its continuation runs on the pool.
    const outside = gate.then(() => count((sql) => api.dataSource.query(sql)));
    await assert.rejects(
      api.dataSource.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${table} VALUES (1)`);
        assert.equal(await count((sql) => api.dataSource.query(sql)), 1, 'dataSource.query sees the uncommitted row');
        assert.equal(await count((sql) => api.dataSource.manager.query(sql)), 1, 'dataSource.manager sees it');
        const nested = await api.dataSource.transaction(async () => count((sql) => api.dataSource.query(sql)));
        assert.equal(nested, 1, 'a nested transaction joins the open one');
        release();
        assert.equal(await outside, 0, 'another flow does not see the uncommitted row');
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.equal(await count((sql) => api.dataSource.query(sql)), 0, 'the rollback undid the row');
  });
});
