// The rules of a workspace model's fields (api-decisions.md "Extensions"):
// its name is a `family/model` id of its own (no catalog model's, in any case,
// and not in the `builtin` family the service implements itself), and its
// prices are decimal cents per million tokens as the catalog writes them.
// Pure checks: no I/O.
import { AlreadyExistsError, InvalidArgumentError } from '../errors';
import type { CatalogModel } from './catalog';
import type { ModelPrices } from './model-usage';
import type { ModelRecord } from './records';

/** A family and a model part, each starting with a letter or digit; `:` allowed in the model part (Ollama tags). */
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._:-]*$/;
/** Up to 9 integer and 9 fractional digits: "0", "15", "3.8". */
const PRICE = /^\d{1,9}(\.\d{1,9})?$/;
/** The family of the models the service implements (builtin/scripted): the model router keeps it for itself. */
const RESERVED_FAMILY = 'builtin';

/** True when two model names are the same but for case: names are unique that way, so neither hides the other. */
function sameModelName(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** `(names are compared ignoring case)` when `taken` differs from `name` in case only, for the ALREADY_EXISTS messages. */
export function caseNote(name: string, taken: string): string {
  return name === taken ? '' : ' (names are compared ignoring case)';
}

/**
 * Checks a workspace model's `metadata.name`.
 * @throws InvalidArgumentError naming `metadata.name` for a malformed name or the builtin family
 * @throws AlreadyExistsError when a catalog model has that name, in any case
 */
export function checkWorkspaceModelName(name: string, catalog: readonly CatalogModel[]): void {
  if (!MODEL_NAME.test(name)) {
    throw InvalidArgumentError.forField('metadata.name', `"${name}" is not a family/model id such as "local/qwen2.5-7b" (letters, digits, ".", "_" and "-"; ":" too after the slash)`);
  }
  if (name.slice(0, name.indexOf('/')).toLowerCase() === RESERVED_FAMILY) {
    throw InvalidArgumentError.forField('metadata.name', `the family "${RESERVED_FAMILY}" is reserved for the models the service implements itself`);
  }
  const catalogModel = catalog.find((model) => sameModelName(model.id, name));
  if (catalogModel) {
    const what = name === catalogModel.id ? `${name} is a catalog model` : `${name} is the catalog model ${catalogModel.id}${caseNote(name, catalogModel.id)}`;
    throw new AlreadyExistsError(`metadata.name: ${what}; give the workspace model a name of its own (such as "local/${name.slice(name.indexOf('/') + 1)}")`);
  }
}

/**
 * Checks a price field (`spec.inputPricePerMillionTokens`, `spec.outputPricePerMillionTokens`).
 * @throws InvalidArgumentError naming the field
 */
export function checkPrice(field: string, value: string): string {
  if (!PRICE.test(value)) {
    throw InvalidArgumentError.forField(field, `"${value}" is not a price in cents per million tokens: a decimal string of at most 9 digits before the point and 9 after it, such as "0", "15" or "3.8"`);
  }
  return value;
}

/** A model's prices as numbers, for costing its calls. */
export function pricesOf(record: Pick<ModelRecord, 'inputPricePerMillionTokens' | 'outputPricePerMillionTokens'>): ModelPrices {
  return { inputCentsPerMillionTokens: Number(record.inputPricePerMillionTokens), outputCentsPerMillionTokens: Number(record.outputPricePerMillionTokens) };
}

/** True for a model the workspace added (served through one of its provider keys). */
export function isWorkspaceModel(record: Pick<ModelRecord, 'aiProviderKeyId'>): record is { aiProviderKeyId: string } {
  return record.aiProviderKeyId !== null;
}
