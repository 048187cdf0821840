// Fresh Postgres databases for tests: each test run (or suite that needs its
// own) gets a new, uniquely named database on the local server, migrated, and
// dropped afterwards.
import { Client } from 'pg';
import { ulid } from 'ulid';
import { createDataSource, runMigrationsLocked } from '../../persistence/data-source';

/** The server tests use; override with TEST_POSTGRES_URL. */
export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Creates an empty database and applies every migration. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `agentrt_test_${ulid().toLowerCase()}`;
  const admin = new Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = withDatabase(TEST_POSTGRES_URL, name);
  const dataSource = createDataSource({ url, poolSize: 2 });
  await dataSource.initialize();
  await runMigrationsLocked(dataSource);
  await dataSource.destroy();
  return {
    url,
    name,
    async drop() {
      const client = new Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
