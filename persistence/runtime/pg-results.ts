// Driver helpers for the runtime's repositories: recognises a unique
// violation on one of our named constraints, unwraps UPDATE … RETURNING rows.

/** True when `error` is pg's 23505 (unique violation) on `constraint`. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const driver = (error as { driverError?: unknown })?.driverError ?? error;
  const fields = driver as { code?: string; constraint?: string };
  return fields?.code === '23505' && fields.constraint === constraint;
}

/** Rows of an `UPDATE … RETURNING`: TypeORM's postgres driver answers `[rows, affectedCount]` for UPDATE and DELETE. */
export function returnedRows<Row>(result: unknown): Row[] {
  const pair = result as [Row[], number];
  return Array.isArray(pair[0]) ? pair[0] : (result as Row[]);
}
