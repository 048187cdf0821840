// ajv errors as field violations, one reading for every place that checks a
// JSON value against a schema: request bodies and queries at the edge
// (http/validation.ts), a model's tool arguments (src/tools/tool-arguments.ts),
// an objective's input data. Fields read `prefix.a.b[2]`.
import type { ErrorObject } from 'ajv';
import type { FieldViolation } from '../errors';

function fieldOf(prefix: string, error: ErrorObject): string {
  const segments = error.instancePath.split('/').slice(1).map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'required') segments.push(String(error.params.missingProperty));
  if (error.keyword === 'additionalProperties') segments.push(String(error.params.additionalProperty));
  const path = segments.reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
  return prefix && path ? `${prefix}.${path}` : path || prefix || '(body)';
}

function describe(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'type':
      return `must be of type ${String(error.params.type)}`;
    case 'enum':
      return `must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`;
    case 'pattern':
      return `has an invalid format (must match ${String(error.params.pattern)})`;
    default:
      return error.message ?? 'is invalid';
  }
}

/** Most violations listed in one answer: a body of 50,000 unknown keys must not get a 1 MB error back. */
export const MAX_FIELD_VIOLATIONS = 50;

/**
 * Converts ajv errors into field violations, most specific first and
 * deduplicated; past MAX_FIELD_VIOLATIONS the last one says how many more there were.
 */
export function toFieldViolations(errors: ErrorObject[], prefix: string): FieldViolation[] {
  const seen = new Set<string>();
  const violations: FieldViolation[] = [];
  for (const error of errors) {
    // anyOf/oneOf wrappers repeat what their branches already said.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    const violation = { field: fieldOf(prefix, error), description: describe(error) };
    const key = `${violation.field}|${violation.description}`;
    if (seen.has(key)) continue;
    seen.add(key);
    violations.push(violation);
  }
  if (violations.length <= MAX_FIELD_VIOLATIONS) return violations;
  const more = violations.length - (MAX_FIELD_VIOLATIONS - 1);
  return [...violations.slice(0, MAX_FIELD_VIOLATIONS - 1), { field: prefix || '(body)', description: `and ${more} more violations, not listed` }];
}
