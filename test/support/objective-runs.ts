// Running one objective through the API to its end, as a client would: create
// it, poll GET until it runs no more, then read its events. Shared by the API
// suites that run objectives and then look at what they emitted.
import assert from 'node:assert/strict';
import type { TestApi } from './api';
import { eventually } from './cluster-harness';
import { TERMINAL_OBJECTIVE_STATUSES } from './objective-status';

/* eslint-disable @typescript-eslint/no-explicit-any */

export interface FinishedObjective {
  id: string;
  objective: any;
  /** Its events in sequence order, as GET .../events returns them. */
  events: any[];
  /** Its events of one type, `TOOL_RESULT` for OBJECTIVE_EVENT_TYPE_TOOL_RESULT. */
  of(type: string): any[];
}

/** The events of one objective, with a filter by type. */
export async function objectiveEvents(api: TestApi, ws: { workspaceId: string; token: string }, id: string): Promise<Pick<FinishedObjective, 'events' | 'of'>> {
  const response = await api.request('GET', `/v1/workspaces/${ws.workspaceId}/objectives/${id}/events?limit=1000`, { token: ws.token });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  const events = response.body.items as any[];
  return { events, of: (type: string) => events.filter((event) => event.data.type === `OBJECTIVE_EVENT_TYPE_${type}`) };
}

/** Creates an objective from `body` and waits (up to `timeoutMs`) until it is COMPLETED, FAILED or CANCELLED. */
export async function runObjective(api: TestApi, ws: { workspaceId: string; token: string }, body: Record<string, unknown>, timeoutMs = 20_000): Promise<FinishedObjective> {
  const base = `/v1/workspaces/${ws.workspaceId}/objectives`;
  const response = await api.request('POST', base, { token: ws.token, body });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  const id = response.body.metadata.id as string;
  let objective: any;
  await eventually(async () => {
    const current = await api.request('GET', `${base}/${id}`, { token: ws.token });
    assert.equal(current.status, 200, JSON.stringify(current.body));
    objective = current.body;
    return TERMINAL_OBJECTIVE_STATUSES.includes(objective.info.status);
  }, `objective ${id} finished`, timeoutMs);
  return { id, objective, ...(await objectiveEvents(api, ws, id)) };
}
