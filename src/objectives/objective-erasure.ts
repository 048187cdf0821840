// Tenant and subject erasure of an objective (api-decisions.md "Tenants,
// subjects, uploads"; issue 9 item 9): the metadata stays, the content
// becomes `[erased]`, a running objective stops. The actor erases its own
// state (the `erased` journal event; evolve replaces the content, so a replay
// rebuilds the erased state) and projects `objective_erased`, on which the
// projector replaces the row's and every event row's content. Its children
// are erased too: their data came from its content (they share its tenant and
// subject, so the erasure names them anyway; a second erase is a no-op).
import type { ObjectiveCommand } from './objective.behavior';
import { cancelObjective } from './objective-loop';
import { ERASED } from './objective-state';
import { isTerminal, OBJECTIVE_KIND } from './objective-state';
import type { ObjectiveTurn } from './objective-turn';

/** The CANCELLED reason of an objective stopped by an erasure. */
export const ERASED_CANCEL_REASON = 'erased';

/** Erases once: a second erase records nothing. */
export function eraseObjective(turn: ObjectiveTurn): void {
  if (turn.state.erased) return;
  const running = !isTerminal(turn.state.status);
  // Erased first, so what the stop records (FINALIZED's output) is erased already.
  turn.apply({ type: 'erased', at: turn.now });
  // The running children get `erase` below, which stops them too.
  if (running) cancelObjective(turn, ERASED_CANCEL_REASON, null);
  for (const childId of turn.state.childObjectiveIds) turn.send(OBJECTIVE_KIND, childId, { type: 'erase' } satisfies ObjectiveCommand);
  const config = turn.config;
  turn.project({ type: 'objective_erased', objectiveId: config.objectiveId, workspaceId: config.workspaceId });
  // A snapshot of the erased state lets retention purge the journal entries that hold the content.
  turn.requestSnapshot();
}

/** The fields of an event's data (and of its webhook envelope) that carry content rather than ids, kinds or counts. */
const CONTENT_FIELDS = new Set(['content', 'arguments', 'message', 'memo', 'output', 'reason', 'summary']);

/**
 * An event's `data` (or envelope) with every content field `[erased]`, at any
 * depth, and everything else (ids, types, statuses, usage, metadata) kept.
 */
export function eraseEventContent<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => eraseEventContent(item)) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, field]) => [
      key,
      CONTENT_FIELDS.has(key) && field !== null && field !== undefined ? ERASED : eraseEventContent(field),
    ]),
  ) as T;
}

/** A webhook envelope as sent (JSON text) with its content fields `[erased]`, keys in their order. */
export function eraseEnvelopeText(body: string): string {
  return JSON.stringify(eraseEventContent(JSON.parse(body) as unknown));
}
