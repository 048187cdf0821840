// Account rows: the top-level tenant, with its webhook signing secret.
import { EntitySchema } from 'typeorm';
import type { AccountRecord } from '../../src/accounts/records';
import { metadataColumns } from './columns';

export const AccountEntity = new EntitySchema<AccountRecord>({
  name: 'Account',
  tableName: 'accounts',
  columns: {
    ...metadataColumns,
    billingEmail: { type: 'text', name: 'billing_email', nullable: true },
    description: { type: 'text', nullable: true },
    domain: { type: 'text', nullable: true },
    webhookSigningSecret: { type: 'text', name: 'webhook_signing_secret' },
    previousWebhookSigningSecret: { type: 'text', name: 'previous_webhook_signing_secret', nullable: true },
    webhookSigningSecretRotatedAt: { type: 'timestamptz', name: 'webhook_signing_secret_rotated_at', nullable: true },
  },
});
