// Checks the plans of real statements on large tables: capture the statements
// a code path sends (text and values, from every pg client of the process),
// then, inside a transaction that is rolled back, copy the rows of the tables
// it touches until each holds many (new values in their unique columns), take
// their statistics, and EXPLAIN each statement as a prepared statement's
// generic plan (the plan a named statement settles on, with parameters
// unknown). A scan that reads a large table whole turns a statement whose
// cost should follow its input into one that follows the table's size.
// countStatements counts what a code path sends, for tests that bound it.
import pg from 'pg';

/** A statement as a pg client sent it. */
export interface CapturedStatement {
  text: string;
  values: unknown[];
  /** The application_name of the client's connection (the runtime's pool: `agentrt-runtime-<node>`). */
  applicationName: string;
}

/**
 * Calls `observe` with each statement every pg client of the process sends
 * until the returned function is called.
 */
export function observeStatements(observe: (statement: CapturedStatement) => void): () => void {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
    const text = typeof config === 'string' ? config : (config as { text?: string } | undefined)?.text;
    const values = (typeof config === 'object' && config && (config as { values?: unknown[] }).values) || (Array.isArray(rest[0]) ? rest[0] : []);
    const applicationName = (this as { connectionParameters?: { application_name?: string } }).connectionParameters?.application_name ?? '';
    if (text) observe({ text, values: values as unknown[], applicationName });
    return original.call(this, config, ...rest);
  };
  return () => {
    prototype.query = original;
  };
}

/** Records the statements every pg client of the process sends until `stop`, each text once. */
export function captureStatements(): { stop(): CapturedStatement[] } {
  const captured = new Map<string, CapturedStatement>();
  const stop = observeStatements((statement) => {
    if (!captured.has(statement.text)) captured.set(statement.text, statement);
  });
  return {
    stop() {
      stop();
      return [...captured.values()];
    },
  };
}

/** Counts the statements matching `pattern` that every pg client of the process sends until `stop`. */
export function countStatements(pattern: RegExp): { count(): number; stop(): number } {
  let count = 0;
  const stop = observeStatements((statement) => {
    if (pattern.test(statement.text)) count += 1;
  });
  return {
    count: () => count,
    stop() {
      stop();
      return count;
    },
  };
}

/** A statement whose plan Postgres would compile with JIT at every execution (a plan priced above jit_above_cost). */
export interface JitCompiled {
  statement: string;
  applicationName: string;
}

/** A scan of a large table in a statement's plan. */
export interface TableScan {
  statement: string;
  applicationName: string;
  table: string;
  node: string;
  index: string | null;
  /**
   * False for an index scan that walks the whole index (no index condition): under enable_seqscan off, a seq scan
   * in disguise. On filled tables a walk of a partial index counts as keyed: it holds only the rows its predicate
   * names (the open objectives, say), so its cost grows with those, not with the table, and the estimate judges how
   * many they are (on small tables, where no estimate can, it does not).
   */
  keyed: boolean;
  estimatedRows: number;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Plan Rows': number;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

const NOT_PLANNED = /^\s*(BEGIN|COMMIT|ROLLBACK|SET|SHOW|RESET|START|SAVEPOINT|RELEASE|LISTEN|UNLISTEN|NOTIFY|LOCK|DEALLOCATE|PREPARE|EXPLAIN|CREATE|DROP|ALTER|TRUNCATE|ANALYZE|VACUUM)\b/i;

export interface PlanCheckOptions {
  /** Rows each table is filled to (copies of its rows); 0 leaves the tables as they are. @default 20000 */
  rows?: number;
  /** Session settings under which the statements of clients whose application_name starts with `prefix` are planned. */
  settingsOf?: { prefix: string; settings: Readonly<Record<string, string>> };
}

/**
 * Fills `tables` (copies of their rows), takes their statistics, then
 * explains every statement; answers the scans of those tables, the full ones
 * among them, and the statements that could not be prepared. Nothing is
 * kept: the transaction is rolled back.
 */
export async function explainOnLargeTables(
  databaseUrl: string,
  statements: CapturedStatement[],
  tables: string[],
  options: PlanCheckOptions = {},
): Promise<{ scans: TableScan[]; fullScans: TableScan[]; jitCompiled: JitCompiled[]; explained: number; unprepared: string[]; sizes: Record<string, number> }> {
  const rows = options.rows ?? 20_000;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const sizes: Record<string, number> = {};
  const scans: TableScan[] = [];
  const jitCompiled: JitCompiled[] = [];
  const unprepared: string[] = [];
  let explained = 0;
  try {
    await client.query('BEGIN');
    // Copies need not satisfy foreign keys (their checks are triggers, off for a replica).
    await client.query("SET LOCAL session_replication_role = 'replica'");
    for (const table of tables) {
      sizes[table] = await fill(client, table, rows).catch((error: Error) => {
        throw new Error(`statement plans: filling ${table}: ${error.message}`);
      });
    }
    for (const table of tables) await client.query(`ANALYZE ${table}`);
    const partialIndexes = rows === 0 ? new Set<string>() : new Set(((await client.query('SELECT indexrelid::regclass::text AS name FROM pg_index WHERE indpred IS NOT NULL')).rows as Array<{ name: string }>)
      .map((row) => row.name));
    await client.query("SET LOCAL plan_cache_mode = 'force_generic_plan'");
    for (const statement of statements) {
      if (NOT_PLANNED.test(statement.text)) continue;
      const text = statement.text.replace(/\s+/g, ' ').trim();
      await client.query('SAVEPOINT explain_one');
      const settings = options.settingsOf && statement.applicationName.startsWith(options.settingsOf.prefix) ? options.settingsOf.settings : {};
      for (const [name, value] of Object.entries(settings)) await client.query(`SELECT set_config($1, $2, true)`, [name, value]);
      try {
        await client.query(`PREPARE plan_check AS ${statement.text}`);
      } catch {
        unprepared.push(statement.text);
        await client.query('ROLLBACK TO SAVEPOINT explain_one');
        await client.query('RELEASE SAVEPOINT explain_one');
        continue;
      }
      const literals = statement.values.map((value) => literal(client, value));
      const [{ 'QUERY PLAN': plans }] = (await client.query(`EXPLAIN (FORMAT JSON) EXECUTE plan_check${literals.length ? `(${literals.join(', ')})` : ''}`)).rows as Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode; JIT?: unknown }> }>;
      if (plans[0].JIT) jitCompiled.push({ statement: text, applicationName: statement.applicationName });
      await client.query('DEALLOCATE plan_check');
      // Rolled back to the savepoint: the settings end with the statement.
      await client.query('ROLLBACK TO SAVEPOINT explain_one');
      await client.query('RELEASE SAVEPOINT explain_one');
      explained += 1;
      collectScans(plans[0].Plan, false, (node) => {
        const table = node['Relation Name'];
        if (!table || !(table in sizes)) return;
        scans.push({ statement: text, applicationName: statement.applicationName, table, node: node['Node Type'], index: node['Index Name'] ?? null,
          keyed: !node['Node Type'].startsWith('Index') || node['Index Cond'] !== undefined || partialIndexes.has(node['Index Name'] ?? ''),
          estimatedRows: node['Plan Rows'] });
      });
    }
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    await client.end();
  }
  // On filled tables an estimate of more than a tenth of the table is a full read too; small tables are judged by their
  // seq scans and their index scans without a condition (what a session without seq scans plans in their place).
  const fullScans = scans.filter((scan) => scan.node === 'Seq Scan' || !scan.keyed || (rows > 0 && scan.estimatedRows > sizes[scan.table] / 10));
  return { scans, fullScans, jitCompiled, explained, unprepared, sizes };
}

/** The scans of tables (not the tables a statement modifies), but those under a Limit (which read only what the limit takes); a bitmap scan's index is its child's. */
function collectScans(node: PlanNode, underLimit: boolean, visit: (node: PlanNode) => void): void {
  const limited = underLimit || node['Node Type'] === 'Limit';
  if (!limited && node['Relation Name'] && node['Node Type'].endsWith('Scan')) {
    const bitmapIndex = node['Node Type'] === 'Bitmap Heap Scan' ? node.Plans?.find((child) => child['Index Name'])?.['Index Name'] : undefined;
    visit(bitmapIndex ? { ...node, 'Index Name': bitmapIndex } : node);
  }
  for (const child of node.Plans ?? []) collectScans(child, limited, visit);
}

function literal(client: pg.Client, value: unknown): string {
  return value === null || value === undefined ? 'NULL' : client.escapeLiteral(textOf(value));
}

/** The text form of a parameter, as pg sends it: arrays as array literals, dates in ISO form, objects as JSON. */
function textOf(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) {
    const element = (item: unknown) => (item === null || item === undefined ? 'NULL' : `"${textOf(item).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`);
    return `{${value.map(element).join(',')}}`;
  }
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A copy's value of a unique column: text gets a suffix, numbers an offset, times a shift. */
function copiedValue(column: string, type: string): string {
  if (type === 'integer' || type === 'smallint') return `x.${column} + i * 1000`;
  if (/int|numeric/.test(type)) return `x.${column} + i::bigint * 1000000000`;
  if (/timestamp/.test(type)) return `x.${column} + i * interval '1 millisecond'`;
  return `x.${column} || '~' || i`;
}

/**
 * Copies the table's rows until it holds at least `rows`: each copy takes new
 * values in the columns of its unique indexes (text gets a suffix, numbers an
 * offset), keeping the columns that reference other tables where an index has
 * others (a stream's messages stay in their stream).
 */
async function fill(client: pg.Client, table: string, rows: number): Promise<number> {
  const [{ count }] = (await client.query(`SELECT count(*)::int AS count FROM ${table}`)).rows as Array<{ count: number }>;
  if (rows === 0) return count;
  if (count === 0) throw new Error(`statement plans: ${table} has no row to copy; run the code path that writes it first`);
  const copies = Math.ceil(Math.max(0, rows - count) / count);
  if (copies === 0) return count;
  const indexes = (await client.query(
    `SELECT i.indexrelid, array_agg(a.attname::text ORDER BY a.attnum) AS columns,
            array_agg(a.atttypid::regtype::text ORDER BY a.attnum) AS types,
            array_agg(EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conrelid = i.indrelid AND c.contype = 'f' AND a.attnum = ANY(c.conkey)) ORDER BY a.attnum) AS referencing
     FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY((i.indkey::int2[])[0:i.indnkeyatts - 1])
     WHERE i.indrelid = $1::regclass AND i.indisunique GROUP BY i.indexrelid`,
    [table],
  )).rows as Array<{ columns: string[]; types: string[]; referencing: boolean[] }>;
  const changed = new Map<string, string>();
  for (const index of indexes) {
    const own = index.columns.filter((_, position) => !index.referencing[position]);
    const picked = own.length ? own : index.columns.filter((_, position) => /int|numeric/.test(index.types[position]));
    for (const column of picked) {
      const type = index.types[index.columns.indexOf(column)];
      changed.set(column, copiedValue(column, type));
    }
  }
  // Generated columns compute themselves.
  const columns = ((await client.query(
    "SELECT array_agg(attname::text ORDER BY attnum) AS list FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = ''",
    [table],
  )).rows[0] as { list: string[] }).list;
  const values = columns.map((column) => changed.get(column) ?? `x.${column}`);
  await client.query(`INSERT INTO ${table} (${columns.join(', ')}) SELECT ${values.join(', ')} FROM ${table} x, generate_series(1, ${copies}) AS i`);
  return count * (copies + 1);
}
