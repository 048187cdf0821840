// Label rules of spec section 2.2 and the `labels=k=v,k2=v2` list filter: the one
// place these rules live.
import { InvalidArgumentError, type FieldViolation } from '../errors';

/** 0-63 alphanumerics, with '-', '_' or '.' allowed between alphanumerics. */
const LABEL_VALUE = /^([A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)?$/;
/** DNS subdomain: dot-separated lower-case labels of 1-63 characters. */
const DNS_SUBDOMAIN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
export const MAX_LABELS = 64;

/** Describes what is wrong with a label key, or returns null when it is valid. */
export function labelKeyProblem(key: string): string | null {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined) {
    if (prefix.length === 0 || prefix.length > 253) return 'label key prefix must be 1-253 characters';
    if (!DNS_SUBDOMAIN.test(prefix)) return 'label key prefix must be a DNS subdomain';
  }
  if (name.length === 0) return 'label key name must not be empty';
  if (name.length > 63) return 'label key name must be at most 63 characters';
  if (!LABEL_VALUE.test(name)) return "label key name must be alphanumerics with '-', '_' or '.' between them";
  return null;
}

/** Describes what is wrong with a label value, or returns null when it is valid. */
export function labelValueProblem(value: string): string | null {
  if (value.length > 63) return 'label value must be at most 63 characters';
  if (!LABEL_VALUE.test(value)) return "label value must be alphanumerics with '-', '_' or '.' between them";
  return null;
}

/**
 * Validates a label map (spec 2.2, limits of section 8).
 * @throws InvalidArgumentError naming every offending `field.key`.
 */
export function validateLabels(labels: Record<string, string> | undefined, field = 'metadata.labels'): void {
  if (!labels) return;
  const violations: FieldViolation[] = [];
  const keys = Object.keys(labels);
  if (keys.length > MAX_LABELS) violations.push({ field, description: `at most ${MAX_LABELS} labels are allowed` });
  for (const key of keys) {
    const keyProblem = labelKeyProblem(key);
    if (keyProblem) violations.push({ field: `${field}.${key}`, description: keyProblem });
    const value = labels[key];
    const valueProblem = typeof value === 'string' ? labelValueProblem(value) : 'label value must be a string';
    if (valueProblem) violations.push({ field: `${field}.${key}`, description: valueProblem });
  }
  if (violations.length) {
    throw new InvalidArgumentError(`${violations[0].field}: ${violations[0].description}`, violations);
  }
}

/**
 * Parses the `labels` list filter: `k=v,k2=v2`, every pair must match (AND).
 * @throws InvalidArgumentError naming the `labels` query parameter.
 */
export function parseLabelSelector(raw: string | undefined): Record<string, string> | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const selector: Record<string, string> = {};
  for (const pair of raw.split(',')) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw InvalidArgumentError.forField('labels', `"${pair}" is not a key=value pair`);
    selector[pair.slice(0, equals).trim()] = pair.slice(equals + 1).trim();
  }
  validateLabels(selector, 'labels');
  return selector;
}
