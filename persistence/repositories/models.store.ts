// ModelsStore over TypeORM: the workspaces' model rows (catalog copies and
// workspace models), the idempotent seed insert (ON CONFLICT DO NOTHING), the
// catalog gap query of the reconcile, and the look-ups that guard deleting a
// provider key or a workspace model (the variations that name a model).
import type { DataSource } from 'typeorm';
import { ModelSource, type ModelRecord, type ModelStatus } from '../../src/models/records';
import type { ModelCountRow, ModelsStore, VariationUsingModel, WorkspaceGap } from '../../src/ports/models-store';
import { ModelEntity } from '../entities/model.entity';
import { registerUniqueMessage } from './driver-errors';
import { fetchPage } from './list-query';
import { recordTable } from './record-table';

// ModelService names the model a new name clashes with before writing; these answer two requests racing for one name.
registerUniqueMessage('uq_models_name', 'metadata.name: the workspace already has a model with this name');
registerUniqueMessage('uq_models_name_ignoring_case', 'metadata.name: the workspace already has a model with this name (names are compared ignoring case)');

const INSERT_BATCH = 200;
const COLUMNS = [
  'id', 'account_id', 'workspace_id', 'name', 'external_id', 'labels', 'profile_id', 'family', 'provider',
  'input_price_per_million_tokens', 'output_price_per_million_tokens', 'max_input_tokens', 'max_output_tokens',
  'status', 'created_at', 'updated_at',
];

function rowValues(row: ModelRecord): unknown[] {
  return [
    row.id, row.accountId, row.workspaceId, row.name, row.externalId, JSON.stringify(row.labels), row.profileId, row.family, row.provider,
    row.inputPricePerMillionTokens, row.outputPricePerMillionTokens, row.maxInputTokens, row.maxOutputTokens,
    row.status, row.createdAt, row.updatedAt,
  ];
}

export function createModelsStore(dataSource: DataSource): ModelsStore {
  const manager = dataSource.manager;
  const models = manager.getRepository(ModelEntity);
  const table = recordTable(manager, ModelEntity);
  return {
    findById: table.findById,
    insert: table.insert,
    update: table.update,
    delete: table.delete,
    findByName: (workspaceId, name) => models.findOneBy({ workspaceId, name }),
    findByNameIgnoringCase: (workspaceId, name) => models.createQueryBuilder('m')
      .where('m.workspace_id = :workspaceId AND lower(m.name) = lower(:name)', { workspaceId, name })
      .getOne(),
    list(workspaceId, page, filter) {
      const query = models.createQueryBuilder('m').where('m.workspace_id = :workspaceId', { workspaceId });
      if (filter.status) query.andWhere('m.status = :status', { status: filter.status });
      if (filter.source === ModelSource.CATALOG) query.andWhere('m.ai_provider_key_id IS NULL');
      if (filter.source === ModelSource.WORKSPACE) query.andWhere('m.ai_provider_key_id IS NOT NULL');
      return fetchPage(query, 'm', page, filter);
    },
    async countModels(workspaceId) {
      const rows: Array<{ provider: string; key: string | null; status: ModelStatus; count: number }> = await manager.query(
        'SELECT provider, ai_provider_key_id AS key, status, count(*)::int AS count FROM models WHERE workspace_id = $1 GROUP BY 1, 2, 3',
        [workspaceId],
      );
      return rows.map((row): ModelCountRow => ({ provider: row.provider, aiProviderKeyId: row.key, status: row.status, count: row.count }));
    },
    listByProviderKey: (providerKeyId, limit) => models.find({ where: { aiProviderKeyId: providerKeyId }, order: { id: 'ASC' }, take: limit }),
    async providerKeysInUse(workspaceId) {
      const rows: Array<{ key: string }> = await manager.query(
        'SELECT DISTINCT ai_provider_key_id AS key FROM models WHERE workspace_id = $1 AND ai_provider_key_id IS NOT NULL',
        [workspaceId],
      );
      return rows.map((row) => row.key);
    },
    variationsUsing(workspaceId, name, limit): Promise<VariationUsingModel[]> {
      return manager.query(
        'SELECT id, name, agent_id AS "agentId" FROM agent_variations WHERE workspace_id = $1 AND model_id = $2 ORDER BY id LIMIT $3',
        [workspaceId, name, limit],
      );
    },
    async insertMissing(rows) {
      let inserted = 0;
      for (let start = 0; start < rows.length; start += INSERT_BATCH) {
        const batch = rows.slice(start, start + INSERT_BATCH);
        const placeholders = batch.map((_, row) => `(${COLUMNS.map((_column, column) => `$${row * COLUMNS.length + column + 1}`).join(', ')})`);
        const result: unknown[] = await manager.query(
          `INSERT INTO models (${COLUMNS.join(', ')}) VALUES ${placeholders.join(', ')} ON CONFLICT DO NOTHING RETURNING id`,
          batch.flatMap(rowValues),
        );
        inserted += result.length;
      }
      return inserted;
    },
    async findGaps(catalogIds) {
      const rows: Array<{ workspace_id: string; account_id: string; missing: string[] }> = await manager.query(
        `SELECT w.id AS workspace_id, w.account_id, array_agg(c.name ORDER BY c.position) AS missing
           FROM workspaces w
           CROSS JOIN unnest($1::text[]) WITH ORDINALITY AS c(name, position)
          WHERE NOT EXISTS (SELECT 1 FROM models m WHERE m.workspace_id = w.id AND lower(m.name) = lower(c.name))
          GROUP BY w.id, w.account_id
          ORDER BY w.id`,
        [catalogIds],
      );
      return rows.map((row): WorkspaceGap => ({ workspaceId: row.workspace_id, accountId: row.account_id, missing: row.missing }));
    },
  };
}
