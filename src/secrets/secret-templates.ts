// Secret names and `{{secrets.NAME}}` templates (api-decisions.md "Secrets and
// provider keys"): the name rule lives here once, so every name a secret can
// have is one a template can reference.
import { InvalidArgumentError } from '../errors';

/** A secret name: a letter or underscore, then up to 127 letters, digits or underscores. */
export const SECRET_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const TEMPLATE = /\{\{\s*secrets\.([A-Za-z0-9_]+)\s*\}\}/g;

/**
 * Checks a secret name.
 * @throws InvalidArgumentError naming `field` when the name breaks the rule
 */
export function validateSecretName(name: string, field = 'metadata.name'): void {
  if (!SECRET_NAME_PATTERN.test(name)) {
    throw InvalidArgumentError.forField(
      field,
      'a secret name must start with a letter or underscore and contain only letters, digits and underscores (at most 128 characters), so that {{secrets.NAME}} can reference it',
    );
  }
}

/** The distinct secret names `{{secrets.NAME}}` templates in `text` reference, in order of appearance. */
export function secretNamesIn(text: string): string[] {
  return [...new Set([...text.matchAll(TEMPLATE)].map((match) => match[1]))];
}

/** Replaces every `{{secrets.NAME}}` whose name is in `values`; others are left as they are. */
export function renderSecretTemplates(text: string, values: ReadonlyMap<string, string>): string {
  return text.replace(TEMPLATE, (template, name: string) => values.get(name) ?? template);
}
