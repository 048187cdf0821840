// A short-lived memo for hot lookups that may be a little stale (an agent's
// webhook URL, an account's signing secrets on every webhook attempt): one
// load per key per `ttlMs`, concurrent callers sharing the load in flight.
// A failed load is not kept, so the next call tries again.

export interface ExpiringMemoOptions {
  ttlMs: number;
  /** Entries kept at most; the oldest go first. @default 10000 */
  maxEntries?: number;
  now?: () => number;
}

/** A memoised lookup; `clear` forgets every entry, `forget` one key's (the source changed). */
export type ExpiringMemo<Value> = ((key: string) => Promise<Value>) & { clear(): void; forget(key: string): void };

export function expiringMemo<Value>(load: (key: string) => Promise<Value>, options: ExpiringMemoOptions): ExpiringMemo<Value> {
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, { value: Promise<Value>; expiresAt: number }>();
  const lookup = (key: string): Promise<Value> => {
    const entry = entries.get(key);
    if (entry && entry.expiresAt > now()) return entry.value;
    entries.delete(key);
    const value = load(key);
    entries.set(key, { value, expiresAt: now() + options.ttlMs });
    value.catch(() => {
      if (entries.get(key)?.value === value) entries.delete(key);
    });
    // Map keeps insertion order: the first key is the oldest.
    if (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
    return value;
  };
  return Object.assign(lookup, { clear: () => entries.clear(), forget: (key: string) => void entries.delete(key) });
}
