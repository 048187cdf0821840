// Stored records of the foundation area (accounts, workspaces, profiles,
// memberships, API keys), as the domain sees them. persistence/ maps its
// entity schemas onto these shapes.
import type { WorkspaceStatus } from '../auth/workspace-access';

/** The metadata every resource record carries (spec 2.2). */
export interface MetadataRecord {
  id: string;
  accountId: string;
  name: string;
  externalId: string | null;
  labels: Record<string, string>;
  /** The creator's profile. */
  profileId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface AccountRecord extends MetadataRecord {
  billingEmail: string | null;
  description: string | null;
  domain: string | null;
  webhookSigningSecret: string;
  previousWebhookSigningSecret: string | null;
  webhookSigningSecretRotatedAt: Date | null;
}

export interface WorkspaceRecord extends MetadataRecord {
  description: string | null;
  status: WorkspaceStatus;
}

export const ProfileType = {
  UNSPECIFIED: 'PROFILE_TYPE_UNSPECIFIED',
  USER: 'PROFILE_TYPE_USER',
  API_KEY: 'PROFILE_TYPE_API_KEY',
  SYSTEM: 'PROFILE_TYPE_SYSTEM',
} as const;
export type ProfileType = (typeof ProfileType)[keyof typeof ProfileType];

export interface ProfileRecord extends MetadataRecord {
  type: ProfileType;
  email: string | null;
  displayName: string | null;
  admin: boolean;
  /** USER profiles: the OIDC `sub` bound at first sign-in (null until then). */
  oidcSubject: string | null;
}

export interface WorkspaceMemberRecord {
  id: string;
  workspaceId: string;
  profileId: string;
  addedAt: Date;
  removedAt: Date | null;
}

export const ApiKeyState = {
  UNSPECIFIED: 'STATE_UNSPECIFIED',
  ENABLED: 'STATE_ENABLED',
  DISABLED: 'STATE_DISABLED',
} as const;
export type ApiKeyState = (typeof ApiKeyState)[keyof typeof ApiKeyState];

export interface ApiKeyRecord extends MetadataRecord {
  /** Null for the account's global key. */
  workspaceId: string | null;
  /** The API_KEY profile that represents this key as a principal. */
  principalProfileId: string;
  description: string | null;
  permissions: string[];
  system: boolean;
  state: ApiKeyState;
  tokenVersion: number;
}
