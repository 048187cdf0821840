// SecretsStore over TypeORM: workspace secrets, AI provider keys and the data
// keys that encrypt them. One query per method; paging through fetchPage.
import { In, type DataSource } from 'typeorm';
import type { SecretsStore } from '../../src/ports/secrets-store';
import { AiProviderKeyEntity } from '../entities/ai-provider-key.entity';
import { WorkspaceSecretEntity } from '../entities/workspace-secret.entity';
import { createDataKeyStore } from './data-key.store';
import { registerUniqueMessage } from './driver-errors';
import { fetchPage } from './list-query';
import { recordTable } from './record-table';

registerUniqueMessage('uq_workspace_secrets_name', 'a workspace secret with this name already exists in the workspace');

export function createSecretsStore(dataSource: DataSource): SecretsStore {
  const manager = dataSource.manager;
  const secrets = manager.getRepository(WorkspaceSecretEntity);
  const providerKeys = manager.getRepository(AiProviderKeyEntity);
  return {
    secrets: {
      ...recordTable(manager, WorkspaceSecretEntity),
      list: (workspaceId, page, filter) => fetchPage(secrets.createQueryBuilder('s').where('s.workspace_id = :workspaceId', { workspaceId }), 's', page, filter),
      findByNames: (workspaceId, names) => secrets.findBy({ workspaceId, name: In(names) }),
      async markUsed(ids, at) {
        await manager.query('UPDATE workspace_secrets SET last_used_at = $2 WHERE id = ANY($1)', [ids, at]);
      },
    },
    providerKeys: {
      ...recordTable(manager, AiProviderKeyEntity),
      list: (workspaceId, page, filter) => fetchPage(providerKeys.createQueryBuilder('k').where('k.workspace_id = :workspaceId', { workspaceId }), 'k', page, filter),
      listForProvider: (workspaceId, provider) =>
        providerKeys
          .createQueryBuilder('k')
          .where('k.workspace_id = :workspaceId AND k.provider = :provider', { workspaceId, provider })
          .orderBy('k.promotional', 'ASC')
          .addOrderBy('k.id', 'DESC')
          .getMany(),
    },
    dataKeys: createDataKeyStore(dataSource),
  };
}
