// The projection of kinds whose every change carries the whole row with a
// revision (webhook deliveries, schedules): ONE upsert fed one JSON array
// (json_to_recordset), where a stored row is replaced only by a higher
// revision, so a turn projected again, or an older write landing late,
// changes nothing. Within a call the newest change of each id is kept (ON
// CONFLICT may touch a row only once per statement).
import type { ProjectionStatement, SqlRunner } from '../../src/ports/actor-behavior';
import { translateDriverError } from './driver-errors';

/** Column name → json_to_recordset type, in the order of the INSERT; the first is the key `id`. */
export type ProjectedColumns = ReadonlyArray<readonly [column: string, type: string]>;

export interface WholeRowProjection<Change> {
  /** The upsert as a statement of the batch's one statement (turn-statement.ts). */
  projection(changes: ReadonlyArray<{ change: Change }>): ProjectionStatement | null;
  /** The same upsert on the turn's transaction. */
  project(sql: SqlRunner, changes: ReadonlyArray<{ change: Change }>): Promise<void>;
  /** The JSON array the upsert takes (exposed for tests). */
  parameter(changes: ReadonlyArray<{ change: Change }>): string;
}

export interface WholeRowProjectionOptions<Change, Row extends { id: string; revision: number }> {
  table: string;
  columns: ProjectedColumns;
  /** The row a change carries; throws for a change of another type (it must fail its turn, not vanish). */
  rowOf(change: Change): Row;
  /** The row's columns by name, as `columns` lists them. */
  columnsOf(row: Row): Record<string, unknown>;
}

export function wholeRowProjection<Change, Row extends { id: string; revision: number }>(options: WholeRowProjectionOptions<Change, Row>): WholeRowProjection<Change> {
  const { table, columns } = options;
  const statement = `
  INSERT INTO ${table} AS stored (${columns.map(([column]) => column).join(', ')})
  SELECT ${columns.map(([column]) => `r.${column}`).join(', ')}
  FROM json_to_recordset($1::json) AS r(${columns.map(([column, type]) => `${column} ${type}`).join(', ')})
  ON CONFLICT (id) DO UPDATE SET ${columns.filter(([column]) => column !== 'id').map(([column]) => `${column} = excluded.${column}`).join(', ')}
    WHERE stored.revision < excluded.revision`;

  function parameter(changes: ReadonlyArray<{ change: Change }>): string {
    const newest = new Map<string, Row>();
    for (const { change } of changes) {
      const row = options.rowOf(change);
      const previous = newest.get(row.id);
      // Changes come in turn order: a later one replaces an earlier one unless it is older.
      if (!previous || previous.revision <= row.revision) newest.set(row.id, row);
    }
    return JSON.stringify([...newest.values()].map(options.columnsOf));
  }

  return {
    parameter,
    projection: (changes) => (changes.length ? { statements: [statement], parameters: [parameter(changes)] } : null),
    async project(sql, changes) {
      if (!changes.length) return;
      try {
        await sql.query(statement, [parameter(changes)]);
      } catch (error) {
        throw translateDriverError(error);
      }
    },
  };
}
