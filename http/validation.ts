// Input validation at the edge: ajv compiles each declared schema once; its
// errors become INVALID_ARGUMENT with one field violation per problem.
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { InvalidArgumentError, type FieldViolation } from '../src/errors';
import { toFieldViolations } from '../src/schemas/field-violations';

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({ allErrors: true, coerceTypes, useDefaults: false, strict: false });
  addFormats(ajv);
  return ajv;
}

// Bodies are JSON: types must match exactly. Paths and queries are strings on
// the wire, so those schemas coerce ("10" → 10, "true" → true).
const bodyAjv = makeAjv(false);
const textAjv = makeAjv('array');

export type Validator = (value: unknown) => unknown;

/**
 * Finds the first value Postgres cannot store: a string holding a NUL
 * character, or a number that is not finite (JSON.parse turns a literal such
 * as 1e400 into Infinity), returning its field path and the problem.
 */
function unstorableField(value: unknown, path: string): FieldViolation | null {
  if (typeof value === 'string') return value.includes('\u0000') ? { field: path, description: 'must not contain NUL characters' } : null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : { field: path, description: 'must be a finite number' };
  if (value === null || typeof value !== 'object') return null;
  for (const [key, child] of Object.entries(value)) {
    const childPath = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    const found = unstorableField(key, childPath) ?? unstorableField(child, childPath);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Compiles a schema into a validator that returns the (possibly coerced) value.
 * @param where `body`, `query` or `path`: decides coercion and the field prefix
 */
export function compileValidator(schema: TSchema, where: 'body' | 'query' | 'path'): Validator {
  const validate: ValidateFunction = (where === 'body' ? bodyAjv : textAjv).compile(schema);
  return (value: unknown) => {
    const unstorable = unstorableField(value, '');
    if (unstorable !== null) throw InvalidArgumentError.forField(unstorable.field || where, unstorable.description);
    if (validate(value)) return value;
    const violations = toFieldViolations(validate.errors ?? [], '');
    const first = violations[0] ?? { field: where, description: 'is invalid' };
    throw new InvalidArgumentError(`${first.field}: ${first.description}`, violations);
  };
}
