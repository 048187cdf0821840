// The actor runtime's own connection pool. The runtime never goes through the
// request data source: that one routes a flow's queries into the caller's
// open transaction (transaction-context.ts), so a turn taken during a request
// transaction would join it and a rollback would erase an entry already
// answered. Here every turn runs on a pool no request transaction can reach.
import { Pool, type PoolClient } from 'pg';

/** How a statement is sent. */
export interface StatementOptions {
  /**
   * Prepares the statement once per connection under this name, so later runs
   * skip parsing and planning (a hot statement with CTEs plans in about as
   * long as it runs). One name, one text, forever.
   */
  preparedAs?: string;
}

/** Runs one SQL statement; answers the rows (RETURNING rows for writes). */
export interface SqlQueryable {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query<Row = any>(sql: string, parameters?: unknown[]): Promise<Row[]>;
}

/** The runtime pool and its transactions: statements can be prepared. */
export interface PreparingQueryable extends SqlQueryable {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query<Row = any>(sql: string, parameters?: unknown[], options?: StatementOptions): Promise<Row[]>;
}

const connectionNumbers = new WeakMap<PoolClient, number>();
let connectionsNumbered = 0;

/**
 * The query of a statement on `client`. A prepared statement's name carries the
 * connection's number: the embedded database serves every connection from one
 * session (embedded-session-queue.ts), where two connections preparing the
 * same name would collide.
 */
function statement(client: PoolClient, text: string, values: unknown[] | undefined, options: StatementOptions | undefined) {
  if (!options?.preparedAs) return { text, values };
  let number = connectionNumbers.get(client);
  if (number === undefined) connectionNumbers.set(client, (number = ++connectionsNumbered));
  return { name: `${options.preparedAs}_${number}`, text, values };
}

export interface RuntimeDatabaseOptions {
  url: string;
  /** @default 8 */
  poolSize?: number;
  applicationName?: string;
  /** Settings of every session of the pool (RUNTIME_SESSION_SETTINGS on a Postgres server). @default none */
  sessionSettings?: Readonly<Record<string, string>>;
}

/**
 * The runtime's sessions never plan a sequential scan where an index serves.
 * Its statements reach rows by key, and take their input as JSON documents or
 * arrays, which the planner estimates at 10 to 100 rows whatever they hold;
 * prepared, they keep a generic plan made once. On a table that was small when
 * the plan was made (a new install, a table emptied and refilled as reminders
 * and queues are), or that holds many dead rows, that plan was a sequential
 * scan joined by hash, whose cost then grew with the table: measured, a batch
 * deleting 13 reminders read 2,269 rows in 5.8 ms. A statement without an
 * index path still scans: the setting only prices the scan out, so high that
 * the plan would pass jit_above_cost and be compiled with JIT at every run
 * (measured: the membership's DELETE of stale nodes, a one-row table, took
 * 50-360 ms); JIT is off too, as it should be for short statements anyway.
 * Not for the embedded PGlite: its one session serves the API too.
 */
export const RUNTIME_SESSION_SETTINGS: Readonly<Record<string, string>> = { enable_seqscan: 'off', jit: 'off' };

/** A pg pool with row-returning queries and explicit transactions. */
export class RuntimeDatabase implements PreparingQueryable {
  private readonly pool: Pool;

  constructor(options: RuntimeDatabaseOptions) {
    const settings = Object.entries(options.sessionSettings ?? {}).map(([name, value]) => `-c ${name}=${value}`).join(' ');
    this.pool = new Pool({
      connectionString: options.url, max: options.poolSize ?? 8, application_name: options.applicationName ?? 'agentrt-runtime', ...(settings ? { options: settings } : {}),
    });
    // An idle client whose server went away emits 'error' on the pool; without a listener that would crash the node.
    this.pool.on('error', () => undefined);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async query<Row = any>(sql: string, parameters?: unknown[], options?: StatementOptions): Promise<Row[]> {
    if (!options?.preparedAs) return (await this.pool.query(sql, parameters)).rows as Row[];
    const client = await this.pool.connect();
    // As in pool.query: a backend terminated meanwhile emits 'error' on the client (the query reports it), and a client whose query failed is not reused.
    const ignore = () => undefined;
    client.on('error', ignore);
    let failure: Error | undefined;
    try {
      return (await client.query(statement(client, sql, parameters, options))).rows as Row[];
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      client.off('error', ignore);
      client.release(failure);
    }
  }

  /**
   * Runs `work` in one transaction on one connection; commits when it
   * resolves, rolls back when it throws. A connection that broke is discarded.
   */
  async transaction<T>(work: (sql: PreparingQueryable) => Promise<T>): Promise<T> {
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

function clientQueryable(client: PoolClient): PreparingQueryable {
  return {
    query: async (sql, parameters, options) => (await client.query(statement(client, sql, parameters, options))).rows,
  };
}
