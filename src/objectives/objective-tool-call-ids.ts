// The objective's own id for each tool call (issue 24 item 5). A provider's
// ids are not to be trusted to be unique: some repeat an id within one
// response or reuse `call_0` every turn. The objective's id is what approve,
// deny, the events and the `tool.call` effect (whose id is the Idempotency-Key
// the tool receives) use, so it must never name two calls. It is the
// provider's id when that is new to the objective and fit for a URL path and a
// header, else that id (made fit) with the first free `_<n>` suffix; the
// provider's id is kept for the conversation sent back to the model.

/** Longest id kept as it came (the approve and deny paths take up to 128 characters). */
const MAX_KEPT_ID = 96;

function usableBase(providerId: string): string {
  const base = providerId.replace(/[^A-Za-z0-9_.-]/gu, '_').slice(0, MAX_KEPT_ID);
  return base === '' ? 'call' : base;
}

/**
 * The objective's ids for one model response's calls, in order, none of them
 * in `known` (every id the objective gave out before) nor repeated.
 */
export function objectiveToolCallIds(known: readonly string[], providerIds: readonly string[]): string[] {
  const taken = new Set(known);
  return providerIds.map((providerId) => {
    const base = usableBase(providerId);
    let id = base;
    for (let suffix = 2; taken.has(id); suffix++) id = `${base}_${suffix}`;
    taken.add(id);
    return id;
  });
}
