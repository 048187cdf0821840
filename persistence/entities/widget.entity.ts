// Widget rows (migration Widgets): the spec's fields as columns, so the
// hostname carries its unique index. Widget session rows hold their secrets
// sealed (src/crypto), never plaintext.
import { EntitySchema } from 'typeorm';
import type { WidgetRecord, WidgetSessionRecord } from '../../src/widgets/records';
import { metadataColumns } from './columns';

export const WidgetEntity = new EntitySchema<WidgetRecord>({
  name: 'Widget',
  tableName: 'widgets',
  columns: {
    ...metadataColumns,
    workspaceId: { type: 'text', name: 'workspace_id' },
    agentId: { type: 'text', name: 'agent_id' },
    hostname: { type: 'text' },
    allowedOrigins: { type: 'jsonb', name: 'allowed_origins' },
    title: { type: 'text', nullable: true },
    greeting: { type: 'text', nullable: true },
    theme: { type: 'text' },
    allowVisitorApprovals: { type: 'boolean', name: 'allow_visitor_approvals' },
  },
});

export const WidgetSessionEntity = new EntitySchema<WidgetSessionRecord>({
  name: 'WidgetSession',
  tableName: 'widget_sessions',
  columns: {
    id: { type: 'text', primary: true },
    widgetId: { type: 'text', name: 'widget_id' },
    accountId: { type: 'text', name: 'account_id' },
    workspaceId: { type: 'text', name: 'workspace_id' },
    tenantId: { type: 'text', name: 'tenant_id', nullable: true },
    subjectId: { type: 'text', name: 'subject_id', nullable: true },
    secretsCiphertext: { type: 'text', name: 'secrets_ciphertext', nullable: true },
    profileId: { type: 'text', name: 'profile_id', nullable: true },
    expiresAt: { type: 'timestamptz', name: 'expires_at' },
    createdAt: { type: 'timestamptz', name: 'created_at' },
  },
});
