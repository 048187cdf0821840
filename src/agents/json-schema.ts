// Write-time check that a user-supplied document is a JSON Schema ajv can
// compile (agent inputDataSchema/outputDefinition, tool inputSchema). Compiled
// with no remote loading, so a schema can never make the service fetch a URL.
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { InvalidArgumentError } from '../errors';
import { AjvGenerations } from '../schemas/compiled-schemas';

/** Compiles per Ajv instance: what ajv holds of schemas only checked stays within it. */
const COMPILES_PER_INSTANCE = 500;
const checker = new AjvGenerations(() => addFormats(new Ajv({ allErrors: true, strict: false, validateSchema: true })), COMPILES_PER_INSTANCE);

export interface JsonSchemaRules {
  /** Require `type: "object"` at the top (tool parameters, objective data). */
  objectType?: boolean;
}

/**
 * @throws InvalidArgumentError naming `field` and ajv's description of the problem
 */
export function checkJsonSchema(field: string, schema: Record<string, unknown>, rules: JsonSchemaRules = {}): void {
  if (rules.objectType && schema.type !== 'object') {
    throw InvalidArgumentError.forField(field, 'must be a JSON Schema with "type": "object"');
  }
  try {
    // Compiled to be checked only: the validator is dropped.
    checker.compile(schema);
  } catch (error) {
    const problem = error instanceof Error ? error.message : String(error);
    throw InvalidArgumentError.forField(field, `is not a valid JSON Schema: ${problem}`);
  }
}
