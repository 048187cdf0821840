// The arguments a model gave a tool call: parsed (a JSON string, as most
// providers send them, or an object) and validated against the tool's
// inputSchema. A failure is an answer for the model, naming the fields, so it
// can correct itself: never an exception that would fail the objective.
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FieldViolation } from '../errors';
import { CompiledSchemas } from '../schemas/compiled-schemas';
import { toFieldViolations } from '../schemas/field-violations';

/** Field paths start here, so the model reads `arguments.query: is required`. */
const ROOT = 'arguments';
/** Compiles per Ajv instance, and so validators kept: up to twice this (tools change rarely, schemas are small). */
const VALIDATOR_CACHE_LIMIT = 500;

// No coercion and no defaults: the tool receives exactly what the model sent.
const validators = new CompiledSchemas(
  () => addFormats(new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: false })),
  VALIDATOR_CACHE_LIMIT,
);

export type ParsedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; violations: FieldViolation[] };

/**
 * The validator of a schema, compiled once per distinct schema text.
 * @returns null when the schema does not compile (it did when it was stored; a
 * server-listed schema may not): the arguments then go to the tool unchecked
 */
function validatorFor(schema: Record<string, unknown>): ValidateFunction | null {
  try {
    return validators.validatorFor(schema);
  } catch {
    return null;
  }
}

/**
 * Parses the model's arguments and checks them against `inputSchema` (when the tool has one).
 * An empty string or a missing value is `{}`: models send that for a tool without parameters.
 */
export function parseToolArguments(raw: unknown, inputSchema: Record<string, unknown> | null): ParsedArguments {
  let value: unknown = raw;
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) value = {};
  else if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      return { ok: false, violations: [{ field: ROOT, description: 'must be a JSON object; the text is not valid JSON' }] };
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, violations: [{ field: ROOT, description: 'must be a JSON object' }] };
  }
  const validate = inputSchema ? validatorFor(inputSchema) : null;
  if (validate && !validate(value)) return { ok: false, violations: toFieldViolations(validate.errors ?? [], ROOT) };
  return { ok: true, value: value as Record<string, unknown> };
}

/**
 * Checks a JSON value against a stored schema (an agent's inputDataSchema, say),
 * naming fields from `root` (`data.customer.id: is required`).
 * @returns the violations; empty when the value conforms or the schema does not compile
 */
export function schemaViolations(value: unknown, schema: Record<string, unknown>, root: string): FieldViolation[] {
  const validate = validatorFor(schema);
  if (!validate || validate(value)) return [];
  return toFieldViolations(validate.errors ?? [], root);
}
