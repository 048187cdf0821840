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
}
