// BundleStore over TypeORM: one transaction with the agents/tools and memory
// stores bound to it, an advisory lock per bundle held from the transaction's
// start until the work after its commit ends, savepoints for tentative
// updates, and the reads an apply needs (the bundle's rows and same-named ones).
import { In, IsNull, type DataSource, type EntityManager, type EntitySchema, type FindOptionsWhere, type ObjectLiteral } from 'typeorm';
import type { BundleScope, BundleStore, BundleTransaction } from '../../src/ports/bundle-store';
import { AgentEntity } from '../entities/agent.entity';
import { AgentVariationEntity } from '../entities/agent-variation.entity';
import { MemoryEntryEntity } from '../entities/memory-entry.entity';
import { MemoryLayerEntity } from '../entities/memory-layer.entity';
import { ToolEntity } from '../entities/tool.entity';
import { ToolSetEntity } from '../entities/tool-set.entity';
import { agentsStoreOn } from './agents.store';
import { memoryStoreOn } from './memory.store';

/** Rows of the workspace owned by the bundle or named in scope.names, oldest first. */
function scoped<T extends ObjectLiteral>(manager: EntityManager, entity: EntitySchema<T>, scope: BundleScope, extra: FindOptionsWhere<T> = {}): Promise<T[]> {
  const base = { workspaceId: scope.workspaceId, ...extra } as FindOptionsWhere<T>;
  const where: FindOptionsWhere<T>[] = [{ ...base, bundleKey: scope.bundleKey } as FindOptionsWhere<T>];
  if (scope.names.length) where.push({ ...base, name: In([...scope.names]) } as FindOptionsWhere<T>);
  return manager.getRepository(entity).find({ where, order: { id: 'ASC' } as never });
}

function transactionOn(tx: EntityManager, dataSource: DataSource): BundleTransaction {
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
    findTools: (scope) => scoped(tx, ToolEntity, scope, { sourceToolSetId: IsNull() }),
    findToolSets: (scope) => scoped(tx, ToolSetEntity, scope),
    findMemoryLayers: (scope) => scoped(tx, MemoryLayerEntity, scope),
    findAgents: (scope) => scoped(tx, AgentEntity, scope),
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
    transaction: (work) => dataSource.transaction((tx) => work(transactionOn(tx, dataSource))),

    // A session-level advisory lock on the transaction's own connection: it
    // outlives the commit, so the after-commit work runs under it too, and the
    // apply holds one connection, as a plain transaction would.
    async serialised(workspaceId, bundleKey, work, afterCommit) {
      const runner = dataSource.createQueryRunner();
      await runner.connect();
      try {
        await runner.query(`SELECT pg_advisory_lock(${LOCK_KEY})`, [workspaceId, bundleKey]);
        try {
          await runner.startTransaction();
          let value: Awaited<ReturnType<typeof work>>;
          try {
            value = await work(transactionOn(runner.manager, dataSource));
            await runner.commitTransaction();
          } catch (error) {
            if (runner.isTransactionActive) await runner.rollbackTransaction();
            throw error;
          }
          return await afterCommit(value);
        } finally {
          await runner.query(`SELECT pg_advisory_unlock(${LOCK_KEY})`, [workspaceId, bundleKey]);
        }
      } finally {
        await runner.release();
      }
    },
  };
}
