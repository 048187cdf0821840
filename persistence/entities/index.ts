// Every TypeORM entity schema of the service, registered with the data source.
// Add one line per entity file.
import type { EntitySchema } from 'typeorm';
import { actorRuntimeEntities } from './actor-runtime.entity';
import { AccountEntity } from './account.entity';
import { ApiKeyEntity } from './api-key.entity';
import { IdempotencyRecordEntity } from './idempotency-record.entity';
import { ProfileEntity } from './profile.entity';
import { WorkspaceMemberEntity } from './workspace-member.entity';
import { WorkspaceEntity } from './workspace.entity';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const entities: EntitySchema<any>[] = [
  ...actorRuntimeEntities,
  AccountEntity,
  ApiKeyEntity,
  IdempotencyRecordEntity,
  ProfileEntity,
  WorkspaceMemberEntity,
  WorkspaceEntity,
];
