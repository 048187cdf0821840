// What every chaos scenario checks once its load has stopped and the system is
// quiet, each check printing its figures:
// - every objective created once (retries under one Idempotency-Key), terminal and COMPLETED;
// - events numbered 1..N without gaps, FINALIZED last;
// - each tool effect once per tool call id: the runtime promises at-least-once
//   execution under a stable Idempotency-Key (the tool call id), sent again
//   only when a node died, lost its lease or could not record the answer with
//   the call in flight; the tool de-duplicates by key, so each effect is
//   applied once. Checked: every key is a persisted tool call id, every call
//   reached the tool, one TOOL_RESULT per call, no call sent twice outside a
//   fault window;
// - one webhook delivery per persisted event (but those a scenario excuses,
//   named with the reason), every request verified by `standardwebhooks`, per
//   receiver that accepts: distinct webhook-ids = events, every delivery
//   COMPLETED, first receipts in sequence order per objective; the 410
//   receiver: every delivery DISABLED, nothing received after its first 410;
// - the API's answers: no 5xx (nor connection failure) outside the fault
//   windows, and, when the scenario asks, nothing but 503 inside them.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiRecord, ChaosCluster } from './cluster';
import type { ToolRequest } from './effect-tool';
import { LOAD_PREFIX, type ObjectiveLoad } from './load';
import { countBy, say, seconds, stamp } from './log';
import type { ReceiverKind } from './receivers';

const QUIESCE_TIMEOUT_MS = 180_000;
/** Everything terminal and nothing changing for this long: what is missing will not come. */
const STUCK_MS = 30_000;
/** Requests to the 410 receiver may still arrive this long after its first 410 (the endpoint's other heads already in flight). */
const GONE_GRACE_MS = 2_000;

interface Check {
  name: string;
  figures: string;
  pass: boolean;
}

/** The checks of one scenario, in the order they ran. */
export class Checks {
  readonly list: Check[] = [];

  add(name: string, pass: boolean, figures: string): void {
    this.list.push({ name, figures, pass });
  }

  /** Prints the fault windows, the checks and the nodes' warnings. @returns true when every check passed */
  report(scenario: string, cluster: ChaosCluster): boolean {
    console.log(`\n[${scenario}] fault windows:`);
    for (const window of cluster.windows.list) console.log(`  ${stamp(window.start)} → ${stamp(window.end)}  ${window.name}`);
    console.log(`\n[${scenario}] checks:`);
    for (const check of this.list) console.log(`  ${check.pass ? 'PASS' : 'FAIL'}  ${check.name}\n        ${check.figures}`);
    const failed = this.list.filter((check) => !check.pass).length;
    const problems = cluster.nodes.map((node) => `${node.name}: ${node.problems().length}`).join(', ');
    console.log(`\nwarnings and errors logged by the nodes' current starts: ${problems}`);
    for (const node of cluster.nodes) {
      const messages = Object.entries(countBy(node.problems().map((line) => String(line.msg))) as Record<string, number>).sort(([, a], [, b]) => b - a);
      for (const [message, n] of messages.slice(0, 12)) console.log(`  ${node.name} ×${n}  ${message.slice(0, 200)}`);
    }
    console.log(failed === 0 ? `\nscenario "${scenario}" PASSED (${this.list.length} checks)` : `\nscenario "${scenario}" FAILED: ${failed} of ${this.list.length} checks`);
    return failed === 0;
  }
}

/**
 * Waits until every objective and delivery is terminal and no tool call is
 * open, and every event has its delivery (or nothing changed for STUCK_MS:
 * the missing ones will not come, and the checks say which).
 * @returns false when that did not happen within QUIESCE_TIMEOUT_MS
 */
export async function waitQuiet(cluster: ChaosCluster): Promise<boolean> {
  const deadline = Date.now() + QUIESCE_TIMEOUT_MS;
  let lastSaid = 0;
  let lastFigures = '';
  let sameSince = Date.now();
  for (;;) {
    try {
      const [state] = await cluster.query<{ open: number; events: number; deliveries: number; pending: number }>(`
        SELECT (SELECT count(*)::int FROM objectives WHERE status NOT IN ('OBJECTIVE_STATUS_COMPLETED', 'OBJECTIVE_STATUS_FAILED', 'OBJECTIVE_STATUS_CANCELLED')) AS open,
               (SELECT count(*)::int FROM objective_events) AS events,
               (SELECT count(*)::int FROM webhook_deliveries) AS deliveries,
               (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'WEBHOOK_DELIVERY_STATUS_PENDING') AS pending`);
      const figures = `${state.open} objectives not terminal, ${state.events} events, ${state.deliveries} deliveries (${state.pending} pending), ${cluster.tool.open()} tool calls open`;
      if (figures !== lastFigures) {
        lastFigures = figures;
        sameSince = Date.now();
      }
      const settled = state.open === 0 && state.pending === 0 && cluster.tool.open() === 0;
      if (settled && state.events === state.deliveries) {
        say(`quiet: ${figures}`);
        return true;
      }
      if (settled && Date.now() - sameSince > STUCK_MS) {
        say(`quiet, with events that never became deliveries: ${figures}, unchanged for ${STUCK_MS / 1000} s`);
        return true;
      }
      if (Date.now() - lastSaid > 10_000) {
        say(`waiting: ${figures}`);
        lastSaid = Date.now();
      }
    } catch (error) {
      say(`waiting: database read failed: ${(error as Error).message}`);
    }
    if (Date.now() > deadline) {
      say(`NOT quiet after ${QUIESCE_TIMEOUT_MS / 1000} s`);
      return false;
    }
    await sleep(1_000);
  }
}

export function checkQuiescence(checks: Checks, quiet: boolean): void {
  checks.add('quiescence: every objective terminal, every delivery terminal', quiet, quiet ? 'reached' : `not reached within ${QUIESCE_TIMEOUT_MS / 1000} s`);
}

/** The load's objectives each created once; every objective (the load's and any other the scenario made) COMPLETED. */
export async function checkObjectives(checks: Checks, cluster: ChaosCluster, load: ObjectiveLoad): Promise<void> {
  const attempted = load.created.size + load.failures.length;
  const byStatus = await cluster.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM objectives GROUP BY status ORDER BY status');
  const total = byStatus.reduce((sum, row) => sum + row.n, 0);
  const completed = byStatus.find((row) => row.status === 'OBJECTIVE_STATUS_COMPLETED')?.n ?? 0;
  const [ofLoad] = await cluster.query<{ n: number; doubled: number }>(`
    SELECT count(*)::int AS n, (SELECT count(*)::int FROM (SELECT external_id FROM objectives WHERE external_id LIKE $1 GROUP BY external_id HAVING count(*) > 1) twice) AS doubled
    FROM objectives WHERE external_id LIKE $1`, [`${LOAD_PREFIX}%`]);
  const others = total - ofLoad.n;
  checks.add('objectives created (each once, through retries with the same Idempotency-Key)',
    load.failures.length === 0 && ofLoad.n === attempted && ofLoad.doubled === 0,
    `${attempted} requested, ${load.created.size} created, ${load.failures.length} creation failures${load.failures.length ? ` (first: #${load.failures[0].index} ${load.failures[0].why})` : ''}, ${ofLoad.n} in the database, ${ofLoad.doubled} external ids twice${others ? `; ${others} other objectives (probes)` : ''}`);
  checks.add('every objective terminal and COMPLETED', completed === total && total > 0,
    `${completed}/${total} COMPLETED; by status: ${byStatus.map((row) => `${row.status.replace('OBJECTIVE_STATUS_', '')} ${row.n}`).join(', ')}`);
}

export async function checkEventNumbering(checks: Checks, cluster: ChaosCluster): Promise<void> {
  const [numbering] = await cluster.query<{ objectives: number; events: number; gapped: number; unfinished: number; silent: number }>(`
    WITH per AS (SELECT objective_id, count(*) AS n, count(DISTINCT sequence) AS d, min(sequence) AS lo, max(sequence) AS hi FROM objective_events GROUP BY objective_id),
         last AS (SELECT DISTINCT ON (objective_id) objective_id, type FROM objective_events ORDER BY objective_id, sequence DESC)
    SELECT (SELECT count(*)::int FROM per) AS objectives,
           (SELECT coalesce(sum(n), 0)::int FROM per) AS events,
           (SELECT count(*)::int FROM per WHERE n <> d OR lo <> 1 OR hi <> n) AS gapped,
           (SELECT count(*)::int FROM last WHERE replace(type, 'OBJECTIVE_EVENT_TYPE_', '') <> 'FINALIZED') AS unfinished,
           (SELECT count(*)::int FROM objectives o WHERE NOT EXISTS (SELECT 1 FROM objective_events e WHERE e.objective_id = o.id)) AS silent`);
  checks.add('events numbered 1..N without gaps per objective, FINALIZED last',
    numbering.gapped === 0 && numbering.unfinished === 0 && numbering.silent === 0,
    `${numbering.events} events over ${numbering.objectives} objectives; ${numbering.gapped} with a gap or a repeat, ${numbering.unfinished} not ending in FINALIZED, ${numbering.silent} objectives without events`);
}

/** The tool's keys that received more than one request, each with its requests in arrival order. */
export function resentCalls(cluster: ChaosCluster): ToolRequest[][] {
  return [...cluster.tool.byKey.values()].filter((requests) => requests.length > 1);
}

export async function checkToolCalls(checks: Checks, cluster: ChaosCluster): Promise<void> {
  const { tool, windows } = cluster;
  // The event type column holds TOOL_CALLED or OBJECTIVE_EVENT_TYPE_TOOL_CALLED; the call id is wherever the event's data keeps it.
  const calls = await cluster.query<{ id: string }>(`
    SELECT jsonb_path_query_first(data, 'strict $.**.toolCallId') #>> '{}' AS id FROM objective_events
    WHERE replace(type, 'OBJECTIVE_EVENT_TYPE_', '') = 'TOOL_CALLED'`);
  const callIds = new Set(calls.map((row) => row.id));
  const results = await cluster.query<{ id: string; type: string }>(`
    SELECT jsonb_path_query_first(data, 'strict $.**.toolCallId') #>> '{}' AS id, replace(type, 'OBJECTIVE_EVENT_TYPE_', '') AS type FROM objective_events
    WHERE replace(type, 'OBJECTIVE_EVENT_TYPE_', '') IN ('TOOL_RESULT', 'TOOL_ERROR')`);
  const resultsPerCall = new Map<string, number>();
  for (const row of results) resultsPerCall.set(row.id, (resultsPerCall.get(row.id) ?? 0) + 1);
  const toolErrors = results.filter((row) => row.type === 'TOOL_ERROR').length;
  const keys = [...tool.byKey.keys()];
  const strangers = keys.filter((key) => !callIds.has(key)).length;
  const unsent = [...callIds].filter((id) => !tool.byKey.has(id)).length;
  const notOneResult = [...callIds].filter((id) => resultsPerCall.get(id) !== 1).length;
  const resent = resentCalls(cluster);
  const resentAfterAnswer = resent.filter((requests) => requests.some((request) => request.afterAnswer)).length;
  const resentOutside = resent.filter((requests) => requests.slice(1).some((request) => !windows.overlaps(request.receivedAt, request.receivedAt))).length;
  const resentDuring = countBy(resent.map((requests) => windows.at(requests[1].receivedAt)?.name ?? 'no fault window'));
  checks.add('tool calls: each persisted call reached the tool under its own id, one result each',
    strangers === 0 && unsent === 0 && notOneResult === 0 && toolErrors === 0 && tool.keyless === 0 && callIds.size === calls.length,
    `${calls.length} TOOL_CALLED (${callIds.size} distinct ids), ${keys.length} distinct Idempotency-Keys at the tool, ${strangers} keys not a persisted call, ${unsent} calls never sent, ${notOneResult} calls without exactly one result, ${toolErrors} TOOL_ERROR, ${tool.keyless} requests without a key`);
  checks.add('each tool effect once per tool call id (at-least-once sends, same key; re-sends only in fault windows)',
    resentOutside === 0 && strangers === 0,
    `${tool.requests.length} requests for ${keys.length} keys: effects applied ${keys.length} (once per key); ${resent.length} keys sent more than once (${resentDuring}), ${resentAfterAnswer} of them after the tool had answered (the answer lost), ${resentOutside} re-sent outside a fault window`);
}

/**
 * One delivery per persisted event and what each receiver got.
 * @param excused events allowed to have no delivery and no receipt, each with why (the scenario lost them on purpose)
 */
export async function checkWebhooks(checks: Checks, cluster: ChaosCluster, excused: ReadonlyMap<string, string> = new Map(), excusedAccount = ''): Promise<void> {
  const { receivers, windows } = cluster;
  const events = await cluster.query<{ id: string; agent_id: string; objective_id: string; sequence: number; created_at: Date }>(
    'SELECT e.id, o.agent_id, e.objective_id, e.sequence, e.created_at FROM objective_events e JOIN objectives o ON o.id = e.objective_id');
  const deliveries = await cluster.query<{ id: string; agent_id: string; objective_event_id: string; status: string; attempt_count: number }>(
    'SELECT id, agent_id, objective_event_id, status, attempt_count FROM webhook_deliveries');
  const unsigned = receivers.receipts.filter((receipt) => !receipt.verified);
  checks.add('every webhook request verified with standardwebhooks',
    unsigned.length === 0,
    `${receivers.receipts.length} requests, ${unsigned.length} not verified${unsigned.length ? ` (first: ${unsigned[0].error})` : ''}`);
  const perEvent = new Map<string, number>();
  for (const delivery of deliveries) perEvent.set(delivery.objective_event_id, (perEvent.get(delivery.objective_event_id) ?? 0) + 1);
  const undelivered = events.filter((event) => !perEvent.has(event.id));
  const missing = undelivered.filter((event) => !excused.has(event.id));
  const excusedMissing = undelivered.length - missing.length;
  const eventsWithTwo = [...perEvent.values()].filter((n) => n > 1).length;
  const named = missing.slice(0, 10).map((event) => {
    const at = event.created_at.getTime();
    const window = windows.at(at);
    return `${event.id} (${event.objective_id} #${event.sequence}, persisted at ${stamp(at)}${window ? `, during "${window.name}"` : ''})`;
  });
  const reasons = countBy(undelivered.filter((event) => excused.has(event.id)).map((event) => excused.get(event.id)!));
  checks.add(`one delivery per persisted event (none dropped${excusedAccount || excused.size ? ' but those excused' : ''}, none doubled)`, missing.length === 0 && eventsWithTwo === 0,
    `${events.length} events, ${deliveries.length} deliveries, ${missing.length} events without a delivery${named.length ? `: ${named.join('; ')}` : ''}${excused.size ? `; ${excusedMissing} excused (${reasons})` : ''}, ${eventsWithTwo} events with more than one${excusedAccount ? `; ${excusedAccount}` : ''}`);

  for (const kind of cluster.options.receiverKinds) {
    const agentIds = new Set(cluster.agents.filter((agent) => agent.kind === kind).map((agent) => agent.id));
    const kindEvents = events.filter((event) => agentIds.has(event.agent_id));
    const expected = kindEvents.filter((event) => !(excused.has(event.id) && !perEvent.has(event.id)));
    const kindDeliveries = deliveries.filter((delivery) => agentIds.has(delivery.agent_id));
    const deliveryIds = new Set(kindDeliveries.map((delivery) => delivery.id));
    const receipts = receivers.receipts.filter((receipt) => receipt.kind === kind && receipt.verified);
    const statuses = countBy(kindDeliveries.map((delivery) => delivery.status.replace('WEBHOOK_DELIVERY_STATUS_', '')));
    const attempts = kindDeliveries.reduce((sum, delivery) => sum + delivery.attempt_count, 0);
    if (kind === 'gone') {
      const goneAt = receivers.firstGoneAt();
      const late = goneAt === undefined ? 0 : receipts.filter((receipt) => receipt.receivedAt > goneAt + GONE_GRACE_MS).length;
      const disabled = kindDeliveries.filter((delivery) => delivery.status === 'WEBHOOK_DELIVERY_STATUS_DISABLED').length;
      checks.add('receiver "gone" (410): every delivery DISABLED, nothing sent after the first 410',
        disabled === kindDeliveries.length && kindDeliveries.length === expected.length && expected.length > 0 && late === 0 && goneAt !== undefined,
        `${kindEvents.length} events, ${kindDeliveries.length} deliveries (${statuses}), ${receipts.length} requests received (${new Set(receipts.map((r) => r.webhookId)).size} ids), ${late} more than ${GONE_GRACE_MS / 1000} s after the first 410`);
      continue;
    }
    checkAcceptingReceiver(checks, cluster, kind, { kindEvents, expected: expected.length, kindDeliveries, deliveryIds, statuses: String(statuses), attempts });
  }
}

function checkAcceptingReceiver(
  checks: Checks,
  cluster: ChaosCluster,
  kind: ReceiverKind,
  figures: { kindEvents: unknown[]; expected: number; kindDeliveries: Array<{ status: string }>; deliveryIds: Set<string>; statuses: string; attempts: number },
): void {
  const { kindEvents, expected, kindDeliveries, deliveryIds, statuses, attempts } = figures;
  const receipts = cluster.receivers.receipts.filter((receipt) => receipt.kind === kind && receipt.verified);
  const accepted = receipts.filter((receipt) => receipt.status >= 200 && receipt.status < 300);
  const acceptedIds = new Set(accepted.map((receipt) => receipt.webhookId));
  const allIds = new Set(receipts.map((receipt) => receipt.webhookId));
  const unknownIds = [...allIds].filter((id) => !deliveryIds.has(id)).length;
  const idsPerEvent = new Map<string, Set<string>>();
  for (const receipt of receipts) {
    const ids = idsPerEvent.get(receipt.eventId ?? '') ?? new Set<string>();
    ids.add(receipt.webhookId);
    idsPerEvent.set(receipt.eventId ?? '', ids);
  }
  const eventsWithTwoIds = [...idsPerEvent.values()].filter((ids) => ids.size > 1).length;
  const completedDeliveries = kindDeliveries.filter((delivery) => delivery.status === 'WEBHOOK_DELIVERY_STATUS_COMPLETED').length;
  const repeats = accepted.length - acceptedIds.size;
  const firstAccepted = new Set<string>();
  let repeatsOutside = 0;
  for (const receipt of accepted) {
    if (firstAccepted.has(receipt.webhookId) && !cluster.windows.overlaps(receipt.receivedAt, receipt.receivedAt)) repeatsOutside += 1;
    firstAccepted.add(receipt.webhookId);
  }
  const excused = kindEvents.length - expected;
  checks.add(`receiver "${kind}": distinct webhook-ids received = events persisted${excused ? ' (but the excused)' : ''}, every delivery COMPLETED`,
    acceptedIds.size === expected && allIds.size === expected && kindDeliveries.length === expected
      && completedDeliveries === kindDeliveries.length && unknownIds === 0 && eventsWithTwoIds === 0 && expected > 0,
    `${kindEvents.length} events persisted${excused ? ` (${excused} excused)` : ''}, ${acceptedIds.size} distinct webhook-ids accepted (${allIds.size} seen), ${kindDeliveries.length} deliveries (${statuses}, ${attempts} attempts), ${receipts.length} requests (${repeats} repeats of an accepted id, same id, ${repeatsOutside} of them outside the fault windows), ${unknownIds} unknown ids, ${eventsWithTwoIds} events under two ids`);

  // Order: per objective, the first receipt of each sequence comes in increasing sequence order.
  const firsts = new Map<string, number[]>();
  const seen = new Set<string>();
  for (const receipt of receipts) {
    const key = `${receipt.objectiveId}:${receipt.sequence}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const list = firsts.get(receipt.objectiveId ?? '') ?? [];
    list.push(receipt.sequence ?? -1);
    firsts.set(receipt.objectiveId ?? '', list);
  }
  const outOfOrder = [...firsts.values()].filter((list) => list.some((sequence, i) => i > 0 && sequence < list[i - 1])).length;
  const skipping = [...firsts.values()].filter((list) => list[0] !== 1 || list.some((sequence, i) => i > 0 && sequence > list[i - 1] + 1)).length;
  checks.add(`receiver "${kind}": events in order per objective (first receipts in increasing sequence)`, outOfOrder === 0,
    `${firsts.size} objectives, ${outOfOrder} with a sequence received after a later one, ${skipping} with a sequence never received (counted above)`);
}

function describeAnswers(records: ApiRecord[]): string {
  return Object.entries(countBy(records.map((record) => (record.status === 0 ? `no answer (${record.error?.slice(0, 60)})` : String(record.status)))))
    .map(([what, n]) => `${what}: ${n}`).join(', ') || 'none';
}

function firstOf(records: ApiRecord[]): string {
  const [first] = records;
  return first ? `; first: ${first.method} ${first.route} to ${first.node} at ${stamp(first.start)}` : '';
}

/**
 * No 5xx (nor connection failure) outside the fault windows; with
 * `onlyUnavailableInside`, nothing but 503 (no other 5xx, no connection
 * failure or timeout) inside them either.
 */
export function checkApi(checks: Checks, cluster: ChaosCluster, options: { onlyUnavailableInside: boolean }): void {
  const { api, windows } = cluster;
  const failures = api.filter((record) => record.status === 0 || record.status >= 500);
  const inside = failures.filter((record) => windows.overlaps(record.start, record.end));
  const outside = failures.filter((record) => !windows.overlaps(record.start, record.end));
  checks.add('no 5xx (nor connection failure) from the API outside the fault windows', outside.length === 0,
    `${api.length} requests; inside the windows ${inside.length} (${describeAnswers(inside)}); outside ${outside.length}${outside.length ? ` (${describeAnswers(outside)}${firstOf(outside)})` : ''}`);
  if (!options.onlyUnavailableInside) return;
  const answeredInside = api.filter((record) => windows.overlaps(record.start, record.end));
  const wrong = inside.filter((record) => record.status !== 503);
  const slowest = answeredInside.reduce((max, record) => Math.max(max, record.end - record.start), 0);
  checks.add('during the outages the API answers 503 when it cannot serve (never another 5xx, never a connection failure or timeout)', wrong.length === 0,
    `${answeredInside.length} requests inside the windows: ${describeAnswers(answeredInside)}; ${wrong.length} neither 503 nor below 500${wrong.length ? ` (${describeAnswers(wrong)}${firstOf(wrong)})` : ''}; slowest answer ${seconds(slowest)} s`);
}
