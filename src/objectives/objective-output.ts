// The service-provided `emit_output` tool (api-decisions.md "Tools and tool
// sets"): offered when the agent has an outputDefinition; its arguments,
// valid against that definition, are the objective's `info.output`. A
// provider needs an object schema for tool parameters, so a definition of
// another type is offered wrapped as `{output: <definition>}` and unwrapped
// before validation.
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { CompiledSchemas } from '../schemas/compiled-schemas';
import type { ChatToolDefinition } from './chat-model-types';

export const EMIT_OUTPUT_TOOL_NAME = 'emit_output';

/** Checks one output against a definition: null when valid, else a description for the model. */
export type OutputValidator = (definition: Record<string, unknown>, output: unknown) => string | null;

function isObjectSchema(definition: Record<string, unknown>): boolean {
  return definition.type === 'object';
}

export function emitOutputToolDefinition(definition: Record<string, unknown>): ChatToolDefinition {
  return {
    name: EMIT_OUTPUT_TOOL_NAME,
    description: 'Emit the final structured output of this objective. Call it once, with arguments that match the schema; it ends the objective.',
    parameters: isObjectSchema(definition)
      ? definition
      : { type: 'object', properties: { output: definition }, required: ['output'], additionalProperties: false },
  };
}

/** The output the model meant, from the call's arguments; a JSON syntax error is reported as such. */
export function outputFromArguments(definition: Record<string, unknown>, rawArguments: string): { output: unknown } | { problem: string } {
  let parsed: unknown;
  try {
    parsed = rawArguments.trim() === '' ? {} : JSON.parse(rawArguments);
  } catch (error) {
    return { problem: `arguments are not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (isObjectSchema(definition)) return { output: parsed };
  if (typeof parsed !== 'object' || parsed === null || !('output' in parsed)) return { problem: 'arguments must be an object with an "output" field' };
  return { output: (parsed as { output: unknown }).output };
}

// Compiled validators by definition text: a definition arrives as a new object
// after every replay, and compiling it again on each emit_output is wasteful.
const MAX_CACHED_VALIDATORS = 256;
const validators = new CompiledSchemas(() => addFormats(new Ajv({ allErrors: true, strict: false })), MAX_CACHED_VALIDATORS);

/** The default OutputValidator: ajv, all errors, formats. */
export const ajvOutputValidator: OutputValidator = (definition, output) => {
  const validate = validators.validatorFor(definition);
  if (validate(output)) return null;
  return validators.ajv.errorsText(validate.errors, { dataVar: 'output' });
};
