// Stored records of the widgets area (api-decisions.md "Widgets"): widgets, and
// the sessions customers mint for their visitors. A session's secrets are one
// sealed record (src/crypto), never plaintext; nothing here is sent as is.
import type { MetadataRecord } from '../accounts/records';

/** How the chat page looks; AUTO follows the visitor's `prefers-color-scheme`. */
export const WIDGET_THEMES = ['THEME_LIGHT', 'THEME_DARK', 'THEME_AUTO'] as const;
export type WidgetTheme = (typeof WIDGET_THEMES)[number];
/** The theme of a widget created without one (or with THEME_UNSPECIFIED). */
export const DEFAULT_WIDGET_THEME: WidgetTheme = 'THEME_AUTO';

export interface WidgetRecord extends MetadataRecord {
  workspaceId: string;
  agentId: string;
  /** Lower-case DNS hostname, unique across every account. */
  hostname: string;
  /** Exact origins (`scheme://host[:port]`), normalised as URL.origin writes them. */
  allowedOrigins: string[];
  title: string | null;
  greeting: string | null;
  theme: WidgetTheme;
  allowVisitorApprovals: boolean;
}

export interface WidgetSessionRecord {
  /** `wsess_…`: the JWT's `sub`. */
  id: string;
  widgetId: string;
  accountId: string;
  workspaceId: string;
  tenantId: string | null;
  subjectId: string | null;
  /** The sealed JSON object of the session's secrets; null when it has none. */
  secretsCiphertext: string | null;
  profileId: string | null;
  expiresAt: Date;
  createdAt: Date;
}
