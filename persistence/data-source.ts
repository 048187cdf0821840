// The TypeORM data source: one Postgres pool per node, entities and migrations
// registered from their index files. Migrations run under an advisory lock so
// that nodes starting together do not race.
import { DataSource } from 'typeorm';
import { entities } from './entities';
import { migrations } from './migrations';
import { routeQueriesThroughOpenTransactions } from './transaction-context';

export interface DataSourceOptions {
  url: string;
  /** Pool size (default 10). */
  poolSize?: number;
  /** Application name shown in pg_stat_activity. */
  applicationName?: string;
}

/**
 * Creates (but does not connect) the data source for a Postgres URL. Queries a
 * flow issues while it holds a transaction run in that transaction.
 */
export function createDataSource(options: DataSourceOptions): DataSource {
  const dataSource = new DataSource({
    type: 'postgres',
    url: options.url,
    entities,
    migrations,
    migrationsTableName: 'typeorm_migrations',
    synchronize: false,
    logging: false,
    poolSize: options.poolSize ?? 10,
    applicationName: options.applicationName ?? 'agentrt',
  });
  return routeQueriesThroughOpenTransactions(dataSource);
}

// An arbitrary, stable key: "agentrt migrate" as a 32-bit number.
const MIGRATION_LOCK_KEY = 0x61727400;

/**
 * Applies pending migrations while holding a session advisory lock, so only one
 * node migrates at a time and the others find nothing left to do.
 * @returns the names of the migrations applied by this call.
 */
export async function runMigrationsLocked(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((migration) => migration.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await runner.release();
  }
}
