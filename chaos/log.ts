// The chaos run's timeline: every line it prints starts with the seconds since
// the run began, so the nodes' logs and the printed figures line up.
export const STARTED = Date.now();

/** `+  12.3s`: the time since the run began. */
export const stamp = (at = Date.now()): string => `+${((at - STARTED) / 1000).toFixed(1).padStart(6)}s`;

export const say = (message: string): void => console.log(`${stamp()}  ${message}`);

/** Milliseconds as seconds with one decimal. */
export const seconds = (ms: number): string => (ms / 1000).toFixed(1);

export function countBy(values: string[]): Record<string, number> & { toString(): string } {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  Object.defineProperty(counts, 'toString', { value: () => Object.entries(counts).map(([key, n]) => `${key} ${n}`).join(', ') || 'none', enumerable: false });
  return counts;
}
