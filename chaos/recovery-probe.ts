// The time back to full service after a dependency returns (issue 29,
// "Target": a create accepted and an objective completed within 2 s of the
// dependency's return). From the moment the dependency accepts connections
// again (watched every 20 ms while it starts), a probe per node creates an
// objective through that node's REST API every 100 ms, a fresh
// Idempotency-Key per attempt, and follows the ones accepted until one is
// COMPLETED. It measures two times from the return: the first create
// accepted (2xx), and the first objective created after the return seen
// COMPLETED (through the list, labelled per probe, every 100 ms).
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import type { ChaosCluster } from './cluster';
import { countBy } from './log';
import type { ChaosNode } from './nodes';
import { waitForPort } from '../test/support/private-services';

const ATTEMPT_EVERY_MS = 100;
const FOLLOW_EVERY_MS = 100;
/** A probe gives up this long after the return. */
const PROBE_TIMEOUT_MS = 60_000;
/** Creates of one probe waiting for their answer at once (a node that hangs does not pile up hundreds). */
const MAX_CREATES_IN_FLIGHT = 20;
const WATCH_EVERY_MS = 20;

export type DependencyName = 'postgres' | 'nats';

export interface NodeRecovery {
  node: string;
  /** From the return to the first create answered 2xx; undefined when none within PROBE_TIMEOUT_MS. */
  createAcceptedMs?: number;
  /** From the return to the first probe objective seen COMPLETED. */
  completedMs?: number;
  attempts: number;
  /** The probe's create answers by status ("0" for no answer). */
  answers: string;
}

/**
 * Resolves with the moment the dependency accepts connections: for Postgres a
 * query answered (not only a TCP accept: a starting server refuses sessions),
 * for NATS a TCP accept (nats-server opens its client port once JetStream is
 * up). Start it while the dependency is down.
 */
export async function watchReturn(cluster: ChaosCluster, dependency: DependencyName): Promise<number> {
  if (dependency === 'nats') {
    await waitForPort(cluster.nats.port, 120_000, 'nats-server');
    return Date.now();
  }
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const client = new Client({ connectionString: cluster.postgres.url('agentrt'), connectionTimeoutMillis: 1_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return Date.now();
    } catch {
      // not yet
    } finally {
      await client.end().catch(() => undefined);
    }
    await sleep(WATCH_EVERY_MS);
  }
  throw new Error('Postgres did not accept connections within 120 s');
}

/**
 * Probes one node from `returnedAt` until an objective created after the
 * return is COMPLETED (or PROBE_TIMEOUT_MS).
 * @param tag a label value naming this probe (letters, digits, dashes)
 */
export async function probeRecovery(cluster: ChaosCluster, node: ChaosNode, returnedAt: number, tag: string): Promise<NodeRecovery> {
  const agent = cluster.agents[0];
  const objectives = `/v1/workspaces/${cluster.workspaceId}/objectives`;
  const deadline = returnedAt + PROBE_TIMEOUT_MS;
  const statuses: string[] = [];
  let acceptedAt: number | undefined;
  let completedAt: number | undefined;
  let inFlight = 0;
  let attempts = 0;

  const create = async (attempt: number) => {
    inFlight += 1;
    try {
      const body = { agentId: agent.id, initialMessage: `CALL effect {"probe": "${tag}-${attempt}"}\nSAY done`, metadata: { externalId: `probe-${tag}-${attempt}`, labels: { probe: tag } } };
      const answer = await cluster.request(node, 'POST', objectives, body, { 'idempotency-key': `probe-${tag}-${attempt}` });
      statuses.push(String(answer.status));
      if (answer.status < 300) acceptedAt ??= Date.now();
    } catch {
      statuses.push('0');
    } finally {
      inFlight -= 1;
    }
  };

  const follow = async () => {
    while (completedAt === undefined && Date.now() < deadline) {
      if (acceptedAt !== undefined) {
        try {
          const answer = await cluster.request(node, 'GET', `${objectives}?labels=probe=${tag}&status=OBJECTIVE_STATUS_COMPLETED&limit=1`);
          if (answer.status === 200 && answer.body.items?.length) completedAt = Date.now();
        } catch {
          // counted with the API's answers
        }
      }
      await sleep(FOLLOW_EVERY_MS);
    }
  };

  const following = follow();
  const creations: Array<Promise<void>> = [];
  while (completedAt === undefined && Date.now() < deadline) {
    if (inFlight < MAX_CREATES_IN_FLIGHT) creations.push(create(attempts++));
    await sleep(ATTEMPT_EVERY_MS);
  }
  await following;
  await Promise.all(creations);
  return {
    node: node.name,
    ...(acceptedAt === undefined ? {} : { createAcceptedMs: acceptedAt - returnedAt }),
    ...(completedAt === undefined ? {} : { completedMs: completedAt - returnedAt }),
    attempts,
    answers: String(countBy(statuses)),
  };
}
