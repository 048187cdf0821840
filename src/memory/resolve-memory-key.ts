// The memory stack rule of spec 2.11: a stack is LIFO; a key is resolved by
// walking the layers from the top down, and the first matching entry wins.
// Pure: the caller loads the layers and their entries.

/** One layer of a stack with the entries it holds, by key. */
export interface StackLayer<Entry> {
  layerId: string;
  entries: ReadonlyMap<string, Entry>;
}

/** Where a key resolved: the winning layer and its entry. */
export interface ResolvedMemoryKey<Entry> {
  layerId: string;
  entry: Entry;
}

/**
 * Resolves `key` against a memory stack.
 * @param stack the layers in push order: the first element is the bottom, the last the top
 * @param key the key, compared exactly (case-sensitive, no path semantics: rules 5 and 7)
 * @returns the entry of the topmost layer holding `key`, or null when no layer holds it
 */
export function resolveMemoryKey<Entry>(stack: readonly StackLayer<Entry>[], key: string): ResolvedMemoryKey<Entry> | null {
  for (let index = stack.length - 1; index >= 0; index -= 1) {
    const layer = stack[index];
    const entry = layer.entries.get(key);
    if (entry !== undefined) return { layerId: layer.layerId, entry };
  }
  return null;
}
