// The one duration grammar of the service: integer units in descending order,
// `d` = 24 h (`90s`, `1h30m`, `1d`), plus `ms` where configuration allows it
// (a shortened webhook retry schedule in tests). Schedule intervals and the
// webhook retry schedule both read it; each words its own errors.

const UNIT_MS = [86_400_000, 3_600_000, 60_000, 1000, 1] as const;
const WITHOUT_MS = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;
const WITH_MS = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;

/** Milliseconds of `text`; `malformed` when empty or off the grammar, `too large` past a safe integer. */
export function readDuration(text: string, options: { milliseconds?: boolean } = {}): number | 'malformed' | 'too large' {
  const match = text === '' ? null : (options.milliseconds ? WITH_MS : WITHOUT_MS).exec(text);
  if (!match) return 'malformed';
  const total = match.slice(1).reduce((sum, amount, index) => sum + (amount === undefined ? 0 : Number(amount) * UNIT_MS[index]), 0);
  return Number.isSafeInteger(total) ? total : 'too large';
}
