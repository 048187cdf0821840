// Write-time check that a user-supplied document is a JSON Schema ajv can
// compile (agent inputDataSchema/outputDefinition, tool inputSchema). Compiled
// with no remote loading, so a schema can never make the service fetch a URL.
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { InvalidArgumentError } from '../errors';
import { compileAndRelease } from '../schemas/compiled-schemas';

const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: true });
addFormats(ajv);

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
    // Compiled to be checked only: ajv keeps nothing of it afterwards.
    compileAndRelease(ajv, schema);
  } catch (error) {
    const problem = error instanceof Error ? error.message : String(error);
    throw InvalidArgumentError.forField(field, `is not a valid JSON Schema: ${problem}`);
  }
}
