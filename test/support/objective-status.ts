// Following an objective through the API until it reaches a status, as a
// client polling GET would: shared by the API suites that run objectives.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

/** The statuses after which an objective runs no more (but for a follow-up after COMPLETED). */
export const TERMINAL_OBJECTIVE_STATUSES = ['OBJECTIVE_STATUS_COMPLETED', 'OBJECTIVE_STATUS_FAILED', 'OBJECTIVE_STATUS_CANCELLED'];

/**
 * Polls `getObjective(id)` until the objective has `status`; another terminal
 * status, or the time running out, fails the assertion with what it shows.
 */
export async function waitForObjectiveStatus<Objective extends { info: { status: string } }>(
  getObjective: (id: string) => Promise<Objective>,
  id: string,
  status: string,
  timeoutMs: number,
): Promise<Objective> {
  const deadline = Date.now() + timeoutMs;
  let objective: Objective;
  for (;;) {
    objective = await getObjective(id);
    if (objective.info.status === status) return objective;
    if (TERMINAL_OBJECTIVE_STATUSES.includes(objective.info.status) || Date.now() > deadline) break;
    await sleep(25);
  }
  assert.fail(`objective ${id} is ${objective.info.status}, expected ${status}: ${JSON.stringify(objective.info)}`);
}
