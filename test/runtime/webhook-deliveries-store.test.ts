// The webhook deliveries read model (persistence/repositories/webhook-deliveries.store.ts)
// against the real Postgres database: the projector's one upsert per call on a
// raw pg transaction like the runtime's (revisions order writes, the last
// change of an id in a call wins), and the reads of the port.
import assert from 'node:assert/strict';
import { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { createDataSource } from '../../persistence/data-source';
import { createWebhookDeliveriesStore } from '../../persistence/repositories/webhook-deliveries.store';
import { newId } from '../../src/ids';
import type { SqlRunner } from '../../src/ports/actor-behavior';
import type { WebhookDeliveriesStore } from '../../src/ports/webhook-deliveries-store';
import type { WebhookDeliveryChange, WebhookDeliveryRecord } from '../../src/webhooks/webhook-delivery';
import { sharedTestDatabase } from '../support/global-setup';
import { deliveryChanges, deliveryRecord, seedObjective, type SeededObjective } from '../support/webhook-deliveries';

describe('webhook deliveries store (read model)', () => {
  let dataSource: DataSource;
  let pool: Pool;
  let store: WebhookDeliveriesStore;
  const owner = { accountId: newId('account'), workspaceId: newId('workspace'), agentId: newId('agent') };
  const page = { limit: 50, sortOrder: 'asc' as const };
  let seeded: SeededObjective;

  before(async () => {
    const database = await sharedTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 2 });
    await dataSource.initialize();
    pool = new Pool({ connectionString: database.url, max: 2 });
    await dataSource.query(`INSERT INTO accounts (id, account_id, name, webhook_signing_secret) VALUES ($1, $1, 'acme', 'secret')`, [owner.accountId]);
    await dataSource.query(`INSERT INTO workspaces (id, account_id, name, status) VALUES ($1, $2, $1, 'STATUS_ENABLED')`, [owner.workspaceId, owner.accountId]);
    store = createWebhookDeliveriesStore(dataSource);
  });

  beforeEach(async () => {
    seeded = await seedObjective(dataSource, owner, 4);
  });

  after(async () => {
    await pool?.end();
    await dataSource?.destroy();
  });

  /** Runs the projector as the runtime does: on one raw pg connection, inside a transaction; answers how many statements it sent. */
  async function project(changes: Array<{ actorId: string; change: WebhookDeliveryChange }>): Promise<number> {
    const client = await pool.connect();
    let statements = 0;
    try {
      await client.query('BEGIN');
      const sql: SqlRunner = {
        query: async <Row>(text: string, parameters?: unknown[]) => {
          statements += 1;
          return (await client.query(text, parameters)).rows as Row[];
        },
      };
      await store.project(sql, changes);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
    return statements;
  }

  const delivery = (sequence: number, overrides: Partial<WebhookDeliveryRecord> = {}) =>
    deliveryRecord(owner, seeded.objectiveId, seeded.eventIds[sequence - 1], { sequence, ...overrides });

  const failed: Partial<WebhookDeliveryRecord> = {
    status: 'WEBHOOK_DELIVERY_STATUS_FAILED', attemptCount: 8, lastAttemptAt: '2025-01-06T00:00:00.000Z', latencyMs: 15000, httpStatusCode: 503,
    responseContentLength: 5_000_000_000, responseHeaders: { 'retry-after': '60' }, errorMessage: 'HTTP 503', updatedAt: '2025-01-06T00:00:00.000Z',
  };

  describe('project', () => {
    it('inserts a delivery and replaces it with a higher revision', async () => {
      const first = delivery(1, { externalId: 'order-17', labels: { team: 'ops' }, nextAttemptAt: '2025-01-01T00:00:15.000Z' });
      await project(deliveryChanges([first]));
      assert.deepEqual(await store.get(owner.workspaceId, owner.agentId, first.id), first);
      const second = { ...first, ...failed, nextAttemptAt: null, revision: 2 };
      await project(deliveryChanges([second]));
      assert.deepEqual(await store.get(owner.workspaceId, owner.agentId, first.id), second, 'every column replaced, the bigint length included');
    });

    it('ignores a change whose revision is not newer than the stored one', async () => {
      const newer = delivery(1, { ...failed, revision: 3 });
      await project(deliveryChanges([newer]));
      await project(deliveryChanges([delivery(1, { revision: 2 })]));
      await project(deliveryChanges([delivery(1, { status: 'WEBHOOK_DELIVERY_STATUS_COMPLETED', revision: 3 })]));
      assert.deepEqual(await store.get(owner.workspaceId, owner.agentId, newer.id), newer);
    });

    it('keeps the last change of each id within one call, in one statement', async () => {
      const changes = deliveryChanges([
        delivery(1, { revision: 1 }),
        delivery(2, { revision: 1 }),
        delivery(1, { attemptCount: 1, revision: 2 }),
        delivery(2, { status: 'WEBHOOK_DELIVERY_STATUS_COMPLETED', attemptCount: 1, httpStatusCode: 204, revision: 2 }),
        delivery(1, { ...failed, revision: 3 }),
        delivery(3, { revision: 1 }),
      ]);
      assert.equal(await project(changes), 1, 'one statement for the whole call');
      const rows = await store.list(owner.workspaceId, owner.agentId, { objectiveId: seeded.objectiveId }, page);
      assert.deepEqual(rows.map((row) => [row.sequence, row.status, row.revision]), [
        [1, 'WEBHOOK_DELIVERY_STATUS_FAILED', 3],
        [2, 'WEBHOOK_DELIVERY_STATUS_COMPLETED', 2],
        [3, 'WEBHOOK_DELIVERY_STATUS_PENDING', 1],
      ]);
    });

    it('sends nothing for an empty call', async () => {
      assert.equal(await project([]), 0);
    });

    it('fails on a change type it does not know', async () => {
      const unknown = { actorId: 'x', change: { type: 'webhook_endpoint', delivery: delivery(1) } as unknown as WebhookDeliveryChange };
      await assert.rejects(project([unknown]), /webhook deliveries projector: unknown change type webhook_endpoint/);
    });

    it("goes with its objective's row", async () => {
      const row = delivery(1);
      await project(deliveryChanges([row]));
      await dataSource.query('DELETE FROM objectives WHERE id = $1', [seeded.objectiveId]);
      assert.equal(await store.get(owner.workspaceId, owner.agentId, row.id), null);
    });
  });

  describe('reads', () => {
    it("answers null for another agent's or workspace's delivery", async () => {
      const row = delivery(1);
      await project(deliveryChanges([row]));
      assert.equal(await store.get(owner.workspaceId, newId('agent'), row.id), null);
      assert.equal(await store.get(newId('workspace'), owner.agentId, row.id), null);
      assert.equal(await store.get(owner.workspaceId, owner.agentId, newId('webhookDelivery')), null);
    });

    it('lists in id order both ways, limit + 1 rows', async () => {
      const rows = [1, 2, 3, 4].map((sequence) => delivery(sequence));
      await project(deliveryChanges(rows));
      const ids = rows.map((row) => row.id);
      const filter = { objectiveId: seeded.objectiveId };
      assert.deepEqual((await store.list(owner.workspaceId, owner.agentId, filter, { limit: 2, sortOrder: 'asc' })).map((row) => row.id), ids.slice(0, 3));
      assert.deepEqual(
        (await store.list(owner.workspaceId, owner.agentId, filter, { limit: 2, sortOrder: 'desc', after: ids[3] })).map((row) => row.id),
        [ids[2], ids[1], ids[0]],
      );
    });

    it("answers an event's envelope as JSON, timestamp, type and data first", async () => {
      const body = await store.eventBody(seeded.eventIds[1]);
      assert.deepEqual(Object.keys(JSON.parse(body!)), ['timestamp', 'type', 'data']);
      assert.deepEqual(JSON.parse(body!), seeded.envelopes[1]);
      assert.equal(await store.eventBody(newId('objectiveEvent')), null);
    });
  });
});
