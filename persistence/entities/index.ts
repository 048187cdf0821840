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
import { SubjectEntity } from './subject.entity';
import { TenantEntity } from './tenant.entity';
import { MemoryEntryEntity } from './memory-entry.entity';
import { MemoryLayerEntity } from './memory-layer.entity';
import { UploadEntity } from './upload.entity';
import { WorkspaceSecretEntity } from './workspace-secret.entity';
import { AiProviderKeyEntity } from './ai-provider-key.entity';
import { ModelEntity } from './model.entity';
import { AgentEntity } from './agent.entity';
import { AgentVariationEntity } from './agent-variation.entity';
import { FeedbackEntity } from './feedback.entity';
import { ToolEntity } from './tool.entity';
import { ToolSetEntity, ToolSetToolEntity } from './tool-set.entity';
import { VariationAssignmentEntity } from './variation-assignment.entity';
import { VariationMemoryLayerEntity } from './variation-memory-layer.entity';
import { ObjectiveEntity, ObjectiveEventEntity } from './objective.entity';
import { WebhookDeliveryEntity } from './webhook-delivery.entity';
import { ScheduleEntity } from './schedule.entity';
import { WidgetEntity, WidgetSessionEntity } from './widget.entity';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const entities: EntitySchema<any>[] = [
  ...actorRuntimeEntities,
  AccountEntity,
  ApiKeyEntity,
  IdempotencyRecordEntity,
  ProfileEntity,
  WorkspaceMemberEntity,
  WorkspaceEntity,
  SubjectEntity,
  TenantEntity,
  MemoryEntryEntity,
  MemoryLayerEntity,
  UploadEntity,
  WorkspaceSecretEntity,
  AiProviderKeyEntity,
  ModelEntity,
  AgentEntity,
  AgentVariationEntity,
  FeedbackEntity,
  ToolEntity,
  ToolSetEntity,
  ToolSetToolEntity,
  VariationAssignmentEntity,
  VariationMemoryLayerEntity,
  ObjectiveEntity,
  ObjectiveEventEntity,
  WebhookDeliveryEntity,
  ScheduleEntity,
  WidgetEntity,
  WidgetSessionEntity,
];
