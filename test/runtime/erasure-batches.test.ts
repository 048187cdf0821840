// An erasure job progresses in checkpointed batches (issue 24 item 9), on the
// embedded runtime over real Postgres: the real erasure kind and job actor,
// with the objectives, the stream purge and the webhook endpoints counted at
// their ports. A node stopping while a batch's step runs past its drain time
// abandons the step, and the next node goes on from the last batch
// journaled: no objective of a finished batch is asked to erase itself
// again, nor purged, nor sent to an endpoint twice; a step that fails is
// retried alone. The job shows its progress meanwhile.
import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import type { ActorRuntime, RuntimeOptions } from '../../actors';
import { createErasureKind } from '../../actors/kinds/erasure.kind';
import { RuntimeErasure } from '../../actors/kinds/runtime-erasure';
import { createDataSource } from '../../persistence/data-source';
import { UnavailableError } from '../../src/errors';
import { objectiveEventsFilter, type ObjectiveEventsAddress } from '../../src/objectives/objective-events';
import type { ErasureTarget } from '../../src/tenants/erasure.behavior';
import { toErasure } from '../../src/tenants/mappers';
import { eventually } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { startEmbeddedTestRuntime } from '../support/embedded-test-runtime';

const OPTIONS: Partial<RuntimeOptions> = { shardCount: 8, reminderPollMs: 50, outboxPollMs: 50, drainTimeoutMs: 300 };
const BATCH_SIZE = 3;
const target: ErasureTarget = { accountId: 'acc_1', workspaceId: 'ws_1', subjectIds: ['sbj_1'] };
/** Ten objectives: batches [1-3] [4-6] [7-9] [10]. */
const objectives: ObjectiveEventsAddress[] = Array.from({ length: 10 }, (_, index) => ({
  objectiveId: `obj_${String(index + 1).padStart(2, '0')}`, accountId: 'acc_1', workspaceId: 'ws_1', agentId: 'agt_1',
}));

describe('erasure job: checkpointed batches (issue 24)', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let dataSource: DataSource;
  let runtime: ActorRuntime;
  const erasures = new RuntimeErasure();

  /** Erase asks per objective, purges per subject filter, endpoint commands by command id. */
  const asks = new Map<string, number>();
  const purges = new Map<string, number>();
  const endpointCommands = new Map<string, number>();
  const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  /** The first node's run of the third batch hangs at its second objective, past the drain time. */
  let hangAt: string | null = 'obj_08';
  let releaseHung!: () => void;
  const hung = new Promise<void>((resolve) => (releaseHung = resolve));
  /** The second batch's purge fails once. */
  let failPurgeOf: string | null = 'obj_04';

  const kind = createErasureKind({
    batchSize: BATCH_SIZE,
    objectives: {
      async eraseObjectivesOf(named, { after, limit }) {
        assert.deepEqual(named, target);
        const batch = objectives.filter((objective) => after === null || objective.objectiveId > after).slice(0, limit);
        for (const { objectiveId } of batch) {
          count(asks, objectiveId);
          if (objectiveId === hangAt) {
            hangAt = null;
            await hung;
          }
        }
        return batch;
      },
    },
    deliveries: { endpointIdsOf: async () => ['endpoint_1'] },
    webhookUrlOf: async () => null,
    usage: { eraseTenant: async () => assert.fail('a subject erasure moves no tenant usage') },
    runtime: {
      pendingObjectiveEvents: async () => 0,
      async purgeObjectiveEvents(filters) {
        if (failPurgeOf && filters.includes(objectiveEventsFilter(objectives.find((objective) => objective.objectiveId === failPurgeOf)!))) {
          failPurgeOf = null;
          throw new UnavailableError('NATS unreachable');
        }
        for (const filter of filters) count(purges, filter);
      },
      async eraseOnWebhookEndpoint(endpointId, _ids, commandId) {
        count(endpointCommands, `${endpointId} ${commandId}`);
      },
    },
  });
  const start = async () => {
    runtime = (await startEmbeddedTestRuntime(database.url, OPTIONS, { kinds: [kind] })).runtime;
    erasures.bind(runtime);
  };

  before(async () => {
    database = await createTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 2 });
    await dataSource.initialize();
    await start();
  });

  after(async () => {
    releaseHung();
    await runtime?.stop();
    await dataSource?.destroy();
    await database?.drop();
  });

  it('goes on from the last batch after its node stopped mid-batch, redoing no finished batch, and shows its progress', async () => {
    const id = 'erasure_batches';
    const accepted = toErasure(await erasures.start(id, target));
    assert.deepEqual(accepted.info.progress, { batchesCompleted: 0, objectivesErased: 0, step: 'ERASURE_STEP_OBJECTIVES' });

    await eventually(() => hangAt === null, 'the third batch is under way');
    const midway = toErasure((await erasures.get(id))!);
    assert.equal(midway.info.status, 'ERASURE_STATUS_RUNNING');
    assert.deepEqual(midway.info.progress, { batchesCompleted: 2, objectivesErased: 6, step: 'ERASURE_STEP_OBJECTIVES' });
    assert.equal(failPurgeOf, null, 'the second batch\'s purge failed once');
    // Three steps per batch, the failed purge and its retry, and the third batch's first step: the retry ran its step alone.
    assert.equal(midway.info.attempts, 3 + 4 + 1);

    // The node stops while the third batch hangs: past the drain time the step is abandoned, and the next node takes the job over.
    await runtime.stop();
    await start();
    await eventually(async () => (await erasures.get(id))?.status === 'ERASURE_STATUS_COMPLETED', 'the job completed on the next node', 30_000);
    const done = toErasure((await erasures.get(id))!);
    assert.equal(done.info.objectiveCount, 10);
    assert.deepEqual(done.info.progress, { batchesCompleted: 4, objectivesErased: 10 });

    const askCounts = Object.fromEntries(objectives.map(({ objectiveId }) => [objectiveId, asks.get(objectiveId) ?? 0]));
    assert.deepEqual(askCounts, {
      obj_01: 1, obj_02: 1, obj_03: 1, obj_04: 1, obj_05: 1, obj_06: 1,
      // The batch under way at the stop is the only one run again.
      obj_07: 2, obj_08: 2, obj_09: 1, obj_10: 1,
    });
    assert.deepEqual(objectives.map((objective) => purges.get(objectiveEventsFilter(objective))), objectives.map(() => 1), 'each objective\'s events purged once');
    assert.deepEqual(
      Object.fromEntries(endpointCommands),
      { [`endpoint_1 erase:${id}:1`]: 1, [`endpoint_1 erase:${id}:2`]: 1, [`endpoint_1 erase:${id}:3`]: 1, [`endpoint_1 erase:${id}:4`]: 1 },
      'one endpoint command per batch',
    );
  });
});
