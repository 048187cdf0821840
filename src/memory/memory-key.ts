// The memory entry key rules of spec 2.12, in one place. Keys are opaque,
// case-sensitive strings (rules 5 and 7): nothing here normalises them.
import { InvalidArgumentError } from '../errors';

/** Longest key accepted (the spec sets none; docs/api.md states this one). */
export const MEMORY_KEY_MAX_LENGTH = 512;
/** Rule 4: keys may not begin with these. */
export const RESERVED_KEY_PREFIXES = ['service/', 'system/'] as const;

/** Rule 1: ASCII alphanumerics and ! - _ . * ' ( ) /. */
const ALLOWED_CHARACTER = /^[A-Za-z0-9!\-_.*'()/]$/;

/** Describes the first rule `key` breaks, or returns null for a valid key. */
export function memoryKeyProblem(key: string): string | null {
  if (key.length === 0) return 'must not be empty';
  if (key.length > MEMORY_KEY_MAX_LENGTH) return `must be at most ${MEMORY_KEY_MAX_LENGTH} characters`;
  const bad = [...key].find((character) => !ALLOWED_CHARACTER.test(character));
  if (bad !== undefined) {
    return `contains ${JSON.stringify(bad)}; only ASCII letters, digits and ! - _ . * ' ( ) / are allowed`;
  }
  if (key.startsWith('/')) return "must not begin with '/'";
  if (key.endsWith('/')) return "must not end with '/'";
  if (key.includes('//')) return "must not contain '//'";
  const reserved = RESERVED_KEY_PREFIXES.find((prefix) => key.startsWith(prefix));
  if (reserved) return `must not begin with the reserved prefix "${reserved}"`;
  return null;
}

/**
 * Checks every key rule of spec 2.12.
 * @throws InvalidArgumentError naming `field` (default `spec.key`) and the rule broken
 */
export function validateMemoryKey(key: string, field = 'spec.key'): void {
  const problem = memoryKeyProblem(key);
  if (problem) throw InvalidArgumentError.forField(field, problem);
}
