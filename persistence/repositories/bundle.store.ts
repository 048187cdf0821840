// BundleStore over TypeORM: one transaction with the agents/tools and memory
// stores bound to it, an advisory lock per bundle for the transaction,
// savepoints for tentative
// updates, and the reads an apply needs (the bundle's rows and same-named ones),
// which in an apply or delete lock those rows in one order.
import { In, IsNull, type DataSource, type EntityManager, type EntitySchema, type FindOptionsWhere, type ObjectLiteral } from 'typeorm';
import type { BundleScope, BundleStore, BundleTransaction } from '../../src/ports/bundle-store';
import { AgentEntity } from '../entities/agent.entity';
import { AgentVariationEntity } from '../entities/agent-variation.entity';
import { MemoryEntryEntity } from '../entities/memory-entry.entity';
import { MemoryLayerEntity } from '../entities/memory-layer.entity';
import { ToolEntity } from '../entities/tool.entity';
import { ToolSetEntity } from '../entities/tool-set.entity';
import { runTransaction } from '../transaction-runner';
import { agentsStoreOn } from './agents.store';
import { memoryStoreOn } from './memory.store';

/**
 * Rows of the workspace owned by the bundle or named in scope.names, oldest
 * first; with `lock`, locked FOR UPDATE in that (id) order as they are read.
 */
function scoped<T extends ObjectLiteral>(manager: EntityManager, entity: EntitySchema<T>, scope: BundleScope, lock: boolean, extra: FindOptionsWhere<T> = {}): Promise<T[]> {
  const base = { workspaceId: scope.workspaceId, ...extra } as FindOptionsWhere<T>;
  const where: FindOptionsWhere<T>[] = [{ ...base, bundleKey: scope.bundleKey } as FindOptionsWhere<T>];
  if (scope.names.length) where.push({ ...base, name: In([...scope.names]) } as FindOptionsWhere<T>);
  return manager.getRepository(entity).find({ where, order: { id: 'ASC' } as never, ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}) });
}

/**
 * @param lock lock the rows the find* reads return (an apply or a delete). Both
 *   read tools, tool sets, memory layers, then agents, each in id order, before
 *   writing anything, so two of them touching the same rows lock them in one
 *   order and the second waits for the first instead of deadlocking with it.
 */
function transactionOn(tx: EntityManager, dataSource: DataSource, lock: boolean): BundleTransaction {
  let savepoints = 0;
  return {
    agents: agentsStoreOn(tx, dataSource),
    memory: memoryStoreOn(tx, dataSource),
    async tentatively(work) {
      const name = `bundle_step_${(savepoints += 1)}`;
      await tx.query(`SAVEPOINT ${name}`);
      try {
        const { value, keep } = await work();
        await tx.query(keep ? `RELEASE SAVEPOINT ${name}` : `ROLLBACK TO SAVEPOINT ${name}`);
        return value;
      } catch (error) {
        await tx.query(`ROLLBACK TO SAVEPOINT ${name}`);
        throw error;
      }
    },
    findTools: (scope) => scoped(tx, ToolEntity, scope, lock, { sourceToolSetId: IsNull() }),
    findToolSets: (scope) => scoped(tx, ToolSetEntity, scope, lock),
    findMemoryLayers: (scope) => scoped(tx, MemoryLayerEntity, scope, lock),
    findAgents: (scope) => scoped(tx, AgentEntity, scope, lock),
    async variationsOf(agentIds) {
      if (!agentIds.length) return [];
      return tx.getRepository(AgentVariationEntity).find({ where: { agentId: In([...agentIds]) }, order: { id: 'ASC' } });
    },
    async entriesOf(layerIds) {
      if (!layerIds.length) return [];
      return tx.getRepository(MemoryEntryEntity).find({ where: { memoryLayerId: In([...layerIds]) }, order: { id: 'ASC' } });
    },
  };
}

const LOCK_KEY = "hashtext('bundle:' || $1 || ':' || $2)";

export function createBundleStore(dataSource: DataSource): BundleStore {
  return {
    transaction: (work) => runTransaction(dataSource, (tx) => work(transactionOn(tx, dataSource, false))),

    // The lock is transaction-scoped, taken through dataSource.transaction so the
    // work's own reads join the transaction (transaction-context.ts): a
    // connection of its own would deadlock on the embedded database, whose
    // connections share one session. The after-commit work (schedule changes
    // through their actors) runs after the lock is gone: two applies of one
    // bundle serialise their transactions, and the schedule actors each apply
    // their own changes in turn.
    async serialised(workspaceId, bundleKey, work, afterCommit) {
      // A deadlock or serialization failure runs the transaction again whole,
      // lock included; afterCommit runs once, after the commit.
      const value = await runTransaction(dataSource, async (tx) => {
        await tx.query(`SELECT pg_advisory_xact_lock(${LOCK_KEY})`, [workspaceId, bundleKey]);
        return work(transactionOn(tx, dataSource, true));
      });
      return afterCommit(value);
    },
  };
}
