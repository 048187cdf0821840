// Every migration class, in order. Add one line per migration file
// (`<epoch-ms>-<PascalName>.ts`); never edit a migration that has shipped.
import type { MigrationInterface } from 'typeorm';
import { ActorRuntime1763780400000 } from './1763780400000-ActorRuntime';
import { Foundation1763776800000 } from './1763776800000-Foundation';
import { WorkspaceData1763784000000 } from './1763784000000-WorkspaceData';
import { MemoryAndUploads1763787600000 } from './1763787600000-MemoryAndUploads';
import { AgentsAndTools1763791200000 } from './1763791200000-AgentsAndTools';
import { TenantsSearchBundles1763794800000 } from './1763794800000-TenantsSearchBundles';
import { ServiceKeys1763798400000 } from './1763798400000-ServiceKeys';
import { UploadChecksum1763802000000 } from './1763802000000-UploadChecksum';
import { ProfileOidcSubject1763805600000 } from './1763805600000-ProfileOidcSubject';
import { ActorRuntimeStage21763809200000 } from './1763809200000-ActorRuntimeStage2';
import { EmbeddedEventLog1763812800000 } from './1763812800000-EmbeddedEventLog';
import { ActorRetentionIndexes1763812900000 } from './1763812900000-ActorRetentionIndexes';
import { Objectives1763816400000 } from './1763816400000-Objectives';
import { WebhookDeliveries1763820000000 } from './1763820000000-WebhookDeliveries';
import { Schedules1763823600000 } from './1763823600000-Schedules';
import { EmbeddedStreamClaim1763827200000 } from './1763827200000-EmbeddedStreamClaim';
import { VariationBudgets1763830800000 } from './1763830800000-VariationBudgets';
import { ClusterId1763830900000 } from './1763830900000-ClusterId';
import { IdempotencyClaimant1763831700000 } from './1763831700000-IdempotencyClaimant';
import { OutboxProjectedPayloads1763832400000 } from './1763832400000-OutboxProjectedPayloads';
import { EpisodicMemoryLayers1763833500000 } from './1763833500000-EpisodicMemoryLayers';
import { Widgets1763834460000 } from './1763834460000-Widgets';
import { WidgetHostObjectiveSessions1763834600000 } from './1763834600000-WidgetHostObjectiveSessions';
import { UsageRollups1763835000000 } from './1763835000000-UsageRollups';
import { UsageRollupEightDayBuckets1763835100000 } from './1763835100000-UsageRollupEightDayBuckets';
import { UsageRollupSlots1763835200000 } from './1763835200000-UsageRollupSlots';
import { WorkspaceModels1763835300000 } from './1763835300000-WorkspaceModels';
import { ModelNamesIgnoreCase1763835400000 } from './1763835400000-ModelNamesIgnoreCase';

export const migrations: Array<new () => MigrationInterface> = [
  Foundation1763776800000,
  ActorRuntime1763780400000,
  WorkspaceData1763784000000,
  MemoryAndUploads1763787600000,
  AgentsAndTools1763791200000,
  TenantsSearchBundles1763794800000,
  ServiceKeys1763798400000,
  UploadChecksum1763802000000,
  ProfileOidcSubject1763805600000,
  ActorRuntimeStage21763809200000,
  EmbeddedEventLog1763812800000,
  ActorRetentionIndexes1763812900000,
  Objectives1763816400000,
  WebhookDeliveries1763820000000,
  Schedules1763823600000,
  EmbeddedStreamClaim1763827200000,
  VariationBudgets1763830800000,
  ClusterId1763830900000,
  IdempotencyClaimant1763831700000,
  OutboxProjectedPayloads1763832400000,
  EpisodicMemoryLayers1763833500000,
  Widgets1763834460000,
  WidgetHostObjectiveSessions1763834600000,
  UsageRollups1763835000000,
  UsageRollupEightDayBuckets1763835100000,
  UsageRollupSlots1763835200000,
  WorkspaceModels1763835300000,
  ModelNamesIgnoreCase1763835400000,
];
