// Duration strings of schedule intervals (`every`, `offset`): parsing to whole seconds and
// the canonical form echoed back. Pure; knows nothing of clocks or time zones.
import { InvalidArgumentError } from '../errors';
import { readDuration } from '../resource/duration';

const UNITS = [
  ['d', 86_400],
  ['h', 3_600],
  ['m', 60],
  ['s', 1],
] as const;

/**
 * Parses a duration string such as `90s`, `1h30m` or `1d` into whole seconds.
 * Units are integers in descending order (d = 24 h); the string may not be empty.
 * @throws InvalidArgumentError naming `field` when the string does not match the grammar.
 */
export function parseScheduleDuration(text: unknown, field: string): number {
  const ms = typeof text === 'string' ? readDuration(text) : 'malformed';
  if (ms === 'malformed') {
    throw InvalidArgumentError.forField(
      field,
      'must be a duration such as 90s, 15m, 1h30m or 1d (integer units d, h, m, s in that order)',
    );
  }
  if (ms === 'too large') throw InvalidArgumentError.forField(field, 'is too large');
  return ms / 1000;
}

/**
 * Formats whole seconds in canonical form: the largest units first, zero units left out,
 * `0s` for zero (`5400` → `1h30m`, `3600` → `1h`, `86400` → `1d`).
 */
export function formatScheduleDuration(seconds: number): string {
  if (!Number.isSafeInteger(seconds) || seconds < 0) throw new RangeError(`not a duration in seconds: ${seconds}`);
  let rest = seconds;
  let text = '';
  for (const [unit, size] of UNITS) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0) text += `${count}${unit}`;
  }
  return text || '0s';
}
