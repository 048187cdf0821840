import assert from 'node:assert/strict';
import { FailedPreconditionError, PermissionDeniedError } from '../../src/errors';
import { MemoryLayerService } from '../../src/memory/memory-layer.service';
import { MemoryLayerType, type MemoryLayerRecord } from '../../src/memory/records';
import type { MemoryStore } from '../../src/ports/memory-store';

const workspace = { id: 'ws_1', accountId: 'acc_1', name: 'default', status: 'STATUS_ENABLED' as const };

function layer(overrides: Partial<MemoryLayerRecord> = {}): MemoryLayerRecord {
  const now = new Date();
  return {
    id: 'memlayer_1', accountId: 'acc_1', workspaceId: 'ws_1', name: 'l', externalId: null, labels: {}, profileId: null,
    bundleKey: null, type: MemoryLayerType.SKILLS, description: null, expiresAt: null, systemManaged: false, lastUsedAt: null, episodicKey: null,
    createdAt: now, updatedAt: now, ...overrides,
  };
}

/** A store holding one layer assigned to `assignments` variations; records deletions. */
function storeWith(record: MemoryLayerRecord, assignments: number) {
  const deleted: string[] = [];
  const store = {
    layers: {
      findById: async (id: string) => (id === record.id ? record : null),
      countAssignments: async () => assignments,
      delete: async (id: string) => void deleted.push(id),
    },
  } as unknown as MemoryStore;
  return { store, deleted };
}

describe('MemoryLayerService.delete', () => {
  const profiles = { findById: async () => null, findByIds: async () => new Map() };

  it('refuses a layer still assigned to variations with FAILED_PRECONDITION', async () => {
    const { store, deleted } = storeWith(layer(), 2);
    const sut = new MemoryLayerService(store, profiles);
    await assert.rejects(sut.delete(workspace, 'memlayer_1', false), (error: unknown) => {
      assert.ok(error instanceof FailedPreconditionError);
      assert.equal(error.message, 'memory layer memlayer_1 is assigned to 2 variation(s); remove the assignments or delete with force=true');
      return true;
    });
    assert.deepEqual(deleted, []);
  });

  it('deletes an assigned layer with force', async () => {
    const { store, deleted } = storeWith(layer(), 2);
    await new MemoryLayerService(store, profiles).delete(workspace, 'memlayer_1', true);
    assert.deepEqual(deleted, ['memlayer_1']);
  });

  it('deletes an unassigned layer without force', async () => {
    const { store, deleted } = storeWith(layer(), 0);
    await new MemoryLayerService(store, profiles).delete(workspace, 'memlayer_1', false);
    assert.deepEqual(deleted, ['memlayer_1']);
  });

  it('refuses a system-managed layer even with force', async () => {
    const { store, deleted } = storeWith(layer({ systemManaged: true }), 0);
    await assert.rejects(new MemoryLayerService(store, profiles).delete(workspace, 'memlayer_1', true), PermissionDeniedError);
    assert.deepEqual(deleted, []);
  });
});
