// The actor runtime's own connection pool. The runtime never goes through the
// request data source: that one routes a flow's queries into the caller's
// open transaction (transaction-context.ts), so a turn taken during a request
// transaction would join it and a rollback would erase an entry already
// answered. Here every turn runs on a pool no request transaction can reach.
import { Pool, type PoolClient } from 'pg';

/** Runs one SQL statement; answers the rows (RETURNING rows for writes). */
export interface SqlQueryable {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query<Row = any>(sql: string, parameters?: unknown[]): Promise<Row[]>;
}

export interface RuntimeDatabaseOptions {
  url: string;
  /** @default 8 */
  poolSize?: number;
  applicationName?: string;
}

/** A pg pool with row-returning queries and explicit transactions. */
export class RuntimeDatabase implements SqlQueryable {
  private readonly pool: Pool;

  constructor(options: RuntimeDatabaseOptions) {
    this.pool = new Pool({ connectionString: options.url, max: options.poolSize ?? 8, application_name: options.applicationName ?? 'agentrt-runtime' });
    // An idle client whose server went away emits 'error' on the pool; without a listener that would crash the node.
    this.pool.on('error', () => undefined);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async query<Row = any>(sql: string, parameters?: unknown[]): Promise<Row[]> {
    const result = await this.pool.query(sql, parameters);
    return result.rows as Row[];
  }

  /**
   * Runs `work` in one transaction on one connection; commits when it
   * resolves, rolls back when it throws. A connection that broke is discarded.
   */
  async transaction<T>(work: (sql: SqlQueryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    // A backend terminated while the client is checked out emits 'error' on the client; the failing query reports it.
    const ignore = () => undefined;
    client.on('error', ignore);
    let broken: unknown;
    try {
      await client.query('BEGIN');
      const result = await work(clientQueryable(client));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      broken = await client.query('ROLLBACK').then(
        () => undefined,
        (rollbackError: unknown) => rollbackError,
      );
      throw error;
    } finally {
      client.off('error', ignore);
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

function clientQueryable(client: PoolClient): SqlQueryable {
  return {
    query: async (sql, parameters) => (await client.query(sql, parameters)).rows,
  };
}
