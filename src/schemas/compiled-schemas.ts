// Validators of JSON Schemas users supply at run time (tool inputSchemas,
// agents' output definitions, the write-time check), compiled on Ajv instances
// that are retired after a fixed number of compiles. An Ajv instance keeps
// every schema it ever compiled (its code-generation scope holds each root
// schema, its validator, its patterns; removeSchema frees none of them), so
// the only bound on what ajv holds is a bound on how much one instance
// compiles. A retired instance is collected once no kept validator uses it.
import type Ajv from 'ajv';
import type { AnySchemaObject, ValidateFunction } from 'ajv';

/** A validator and the generation of the instance that compiled it. */
interface Compiled {
  validate: ValidateFunction;
  generation: number;
}

/** Ajv instances made by `createAjv`, a fresh one after every `compilesPerInstance` compiles. */
export class AjvGenerations {
  private instance: Ajv;
  private compiles = 0;
  private generation = 0;

  constructor(
    private readonly createAjv: () => Ajv,
    private readonly compilesPerInstance: number,
  ) {
    this.instance = createAjv();
  }

  /** The instance compiling now (for what does not depend on the instance, such as errorsText). */
  get current(): Ajv {
    return this.instance;
  }

  /**
   * Compiles `schema`. The instance forgets the schema and every `$id` it
   * brought (nested ones too) right away, so one user's `$id` never collides
   * with another's; the compiled function keeps working.
   * @throws what ajv.compile throws for a schema it cannot compile
   */
  compile(schema: AnySchemaObject): Compiled {
    if (this.compiles >= this.compilesPerInstance) {
      this.instance = this.createAjv();
      this.compiles = 0;
      this.generation++;
    }
    const ajv = this.instance;
    // A failed compile may have generated part of its code already: it counts too.
    this.compiles++;
    const knownIds = new Set(Object.keys(ajv.refs));
    try {
      return { validate: ajv.compile(schema), generation: this.generation };
    } finally {
      for (const id of Object.keys(ajv.refs)) if (!knownIds.has(id)) ajv.removeSchema(id);
      ajv.removeSchema(schema);
    }
  }
}

/**
 * Validators compiled once per distinct schema text. Those of the current
 * instance and of the one before are kept (at most 2 x `limit`); when a new
 * instance starts, the validators of the one before it go, and a schema still
 * in use is compiled again on the new instance.
 */
export class CompiledSchemas {
  private readonly instances: AjvGenerations;
  private generation = 0;
  private current = new Map<string, ValidateFunction>();
  private previous = new Map<string, ValidateFunction>();

  constructor(createAjv: () => Ajv, limit: number) {
    this.instances = new AjvGenerations(createAjv, limit);
  }

  /** The Ajv instance compiling now (its errorsText formats the errors of any validator). */
  get ajv(): Ajv {
    return this.instances.current;
  }

  /**
   * The validator of `schema`, compiled on first use.
   * @throws what ajv.compile throws for a schema it cannot compile (nothing is kept then)
   */
  validatorFor(schema: Record<string, unknown>): ValidateFunction {
    const key = JSON.stringify(schema);
    const kept = this.current.get(key) ?? this.previous.get(key);
    if (kept) return kept;
    const { validate, generation } = this.instances.compile(schema);
    if (generation !== this.generation) {
      // The instance before the previous one is then referenced by nothing kept here.
      this.previous = this.current;
      this.current = new Map();
      this.generation = generation;
    }
    this.current.set(key, validate);
    return validate;
  }
}
