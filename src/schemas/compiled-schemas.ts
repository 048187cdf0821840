// Validators of JSON Schemas users supply at run time (tool inputSchemas,
// agents' output definitions), compiled once per distinct schema text and kept
// up to a limit, least recently used first out. Ajv keeps every schema it
// compiles in its own cache (keyed by the schema object), so forgetting a
// validator locally frees nothing: an evicted schema is removed from ajv too.
import type Ajv from 'ajv';
import type { AnySchemaObject, ValidateFunction } from 'ajv';

export class CompiledSchemas {
  private readonly validators = new Map<string, { schema: AnySchemaObject; validate: ValidateFunction }>();

  constructor(
    readonly ajv: Ajv,
    private readonly limit: number,
  ) {}

  /**
   * The validator of `schema`, compiled on first use.
   * @throws what ajv.compile throws for a schema it cannot compile (nothing is kept then)
   */
  validatorFor(schema: Record<string, unknown>): ValidateFunction {
    const key = JSON.stringify(schema);
    const cached = this.validators.get(key);
    if (cached) {
      // Map order is use order: the first entry is the least recently used.
      this.validators.delete(key);
      this.validators.set(key, cached);
      return cached.validate;
    }
    const validate = compileAndRelease(this.ajv, schema, { keep: true });
    if (this.validators.size >= this.limit) {
      const [oldestKey, oldest] = this.validators.entries().next().value as [string, { schema: AnySchemaObject }];
      this.validators.delete(oldestKey);
      this.ajv.removeSchema(oldest.schema);
    }
    this.validators.set(key, { schema, validate });
    return validate;
  }
}

/**
 * Compiles `schema` with `ajv`; ajv forgets it right away unless `keep`, and
 * forgets its `$id` in any case, so one user's `$id` never collides with
 * another's (the compiled function keeps working).
 * @throws what ajv.compile throws
 */
export function compileAndRelease(ajv: Ajv, schema: AnySchemaObject, options: { keep?: boolean } = {}): ValidateFunction {
  let kept = false;
  try {
    const validate = ajv.compile(schema);
    kept = options.keep === true;
    return validate;
  } finally {
    if (typeof schema.$id === 'string') ajv.removeSchema(schema.$id);
    if (!kept) ajv.removeSchema(schema);
  }
}
