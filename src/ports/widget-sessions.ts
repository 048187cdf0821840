// Widget sessions as the widget host sees them (api-decisions.md "Widgets"):
// a visitor's short-lived bearer token, minted server-to-server by the
// customer, checked on every request to a widget hostname. The widgets area
// (src/widgets) mints and verifies tokens and keeps each session's tenant,
// subject and sealed secrets; the widget host (http/widget-host) only asks
// this port who a token belongs to.
import type { WorkspaceStatus } from '../auth/workspace-access';

/** Who a verified widget session token speaks for. */
export interface WidgetSessionPrincipal {
  /** `wsess_…`: the session, named on every objective it creates. */
  sessionId: string;
  widgetId: string;
  accountId: string;
  workspaceId: string;
  /** The workspace's status when the token was verified: always ENABLED (an archived or disabled workspace's tokens are refused). */
  workspaceStatus: WorkspaceStatus;
  /** The profile that minted the session (its objectives' `metadata.profileId`); '' when the row keeps none. */
  profileId: string;
  /** The widget's agent: the only agent the session runs. */
  agentId: string;
  /** The tenant and subject the customer asserted when minting the session (ids), or null. */
  tenantId: string | null;
  subjectId: string | null;
  /** The widget's `allowVisitorApprovals`: the visitor may approve or deny tool calls. */
  allowVisitorApprovals: boolean;
  expiresAt: Date;
}

export interface WidgetSessionVerifier {
  /**
   * The session a token speaks for, when it was minted for the widget whose
   * hostname is `hostname` (the token's audience), is unexpired and not
   * revoked (its widget or session deleted).
   * @throws UnauthenticatedError otherwise (one message for every reason a token is refused)
   * @throws PermissionDeniedError when the session's workspace is archived or disabled (as the API answers for it)
   */
  verify(token: string, hostname: string): Promise<WidgetSessionPrincipal>;
  /**
   * The widget served under `hostname` (case-insensitive), or null: the widget host answers only for these.
   * Asked on every request the node serves (API requests too), so it answers from a short-lived memo, null answers included.
   */
  widgetByHostname(hostname: string): Promise<{ widgetId: string; allowedOrigins: string[]; title: string | null; greeting: string | null; theme: string; allowVisitorApprovals: boolean } | null>;
  /**
   * A session's secrets, opened (`{{secrets.NAME}}` of its objectives' tools); {} for a session with none;
   * null once the session has ended (revoked, expired or swept): its objectives' tools that read secrets then fail
   * rather than read the workspace's. Never logged.
   */
  sessionSecrets(sessionId: string): Promise<Record<string, string> | null>;
}
