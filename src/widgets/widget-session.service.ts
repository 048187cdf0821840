// Widget sessions (api-decisions.md "Widgets"): minted server-to-server by the
// customer for one visitor, asserting the visitor's tenant and subject and
// carrying per-visitor secrets; the visitor's short-lived token is a JWT for
// the widget's hostname. This class is also the WidgetSessionVerifier the
// widget host asks on every request: a token verifies only while its session
// row exists and is unexpired, its widget exists and its workspace is ENABLED
// (not archived or disabled), so deleting the widget or the session (or
// erasing its tenant or subject) revokes it at once.
// Secret values are sealed at rest under the workspace's data key, never
// returned, logged or put into an error message.
import type { Principal } from '../auth/principal';
import { checkWorkspaceActive, type WorkspaceRef } from '../auth/workspace-access';
import type { FieldRef } from '../crypto/envelope';
import type { WorkspaceKeyring } from '../crypto/workspace-keyring';
import { AbortedError, InvalidArgumentError, NotFoundError, UnauthenticatedError } from '../errors';
import { newId } from '../ids';
import type { WidgetSessionPrincipal, WidgetSessionVerifier } from '../ports/widget-sessions';
import type { WidgetsStore } from '../ports/widgets-store';
import { expiringMemo, type ExpiringMemo } from '../resource/expiring-memo';
import { MAX_SESSION_SECRETS, SESSION_TTL_DEFAULT_SECONDS, SESSION_TTL_MAX_SECONDS, type CreateWidgetSessionBody, type WidgetSession } from '../schemas/widgets.schema';
import { validateSecretName } from '../secrets/secret-templates';
import type { TenantService } from '../tenants/tenant.service';
import type { WidgetRecord } from './records';
import { sessionWidgetUrl } from './widget-base-url';
import type { WidgetService } from './widget.service';
import type { WidgetTokens } from './widget-tokens';

/** The one answer for every refused token: expired, foreign, tampered, revoked, not ours. */
export const INVALID_WIDGET_TOKEN = 'invalid or expired widget session token';
/** How long widgetByHostname keeps an answer; a change on this node forgets it at once. */
export const WIDGET_BY_HOSTNAME_TTL_MS = 1000;

type HostedWidget = Awaited<ReturnType<WidgetSessionVerifier['widgetByHostname']>>;

/** The AAD reference of a session's secrets: bound to its workspace and row. */
function secretsRef(workspaceId: string, sessionId: string): FieldRef {
  return { workspaceId, resource: 'widget_session', resourceId: sessionId, field: 'secrets' };
}

export interface WidgetSessionServiceOptions {
  /** AGENTRT_WIDGET_BASE_URL (config.widgetBaseUrl). */
  baseUrlTemplate?: string;
  /** The clock of minting and verification. @default () => new Date() */
  now?: () => Date;
}

export class WidgetSessionService implements WidgetSessionVerifier {
  private readonly now: () => Date;
  private readonly hosted: ExpiringMemo<HostedWidget>;

  constructor(
    private readonly store: WidgetsStore,
    private readonly widgets: Pick<WidgetService, 'find' | 'findWithAgent'>,
    private readonly tenants: Pick<TenantService, 'assert'>,
    private readonly keyring: WorkspaceKeyring,
    private readonly tokens: WidgetTokens,
    private readonly options: WidgetSessionServiceOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.hosted = expiringMemo(async (hostname) => {
      const widget = await this.store.widgets.findByHostname(hostname);
      return widget ? hostedWidget(widget) : null;
    }, { ttlMs: WIDGET_BY_HOSTNAME_TTL_MS });
  }

  /**
   * Mints a session of the widget: upserts the tenant and subject, seals the
   * secrets, stores the session and signs its token.
   * @throws NotFoundError when the widget is not the workspace's
   * @throws FailedPreconditionError when the widget's agent was deleted (the session could start no conversation)
   * @throws InvalidArgumentError naming `tenant.…`, `subject.…`, `secrets.<NAME>` or `ttlSeconds` (never a secret's value)
   * @throws AbortedError when the widget's hostname changed (or the widget was deleted) while minting
   */
  async create(principal: Principal, workspace: WorkspaceRef, widgetId: string, body: CreateWidgetSessionBody): Promise<WidgetSession> {
    const widget = await this.widgets.findWithAgent(workspace, widgetId);
    const ttlSeconds = checkTtl(body.ttlSeconds);
    const secrets = checkSecrets(body.secrets);
    const { tenant, subject } = await this.tenants.assert(workspace, { tenant: body.tenant, subject: body.subject }, { profileId: principal.profileId });
    const id = newId('widgetSession');
    const now = this.now();
    // Whole seconds: the token's `exp` and the row's expiry are one instant.
    const expiresAt = new Date((Math.floor(now.getTime() / 1000) + ttlSeconds) * 1000);
    const secretsCiphertext = secrets ? await this.keyring.encrypt(secretsRef(workspace.id, id), JSON.stringify(secrets)) : null;
    const inserted = await this.store.sessions.insert({
      id, widgetId: widget.id, accountId: workspace.accountId, workspaceId: workspace.id,
      tenantId: tenant?.id ?? null, subjectId: subject?.id ?? null, secretsCiphertext, profileId: principal.profileId, expiresAt, createdAt: now,
    }, widget.hostname);
    // The widget moved (or went) since it was read: a token for its old hostname must not outlive the move.
    if (!inserted) throw new AbortedError('the widget changed while the session was minted (its hostname, or it was deleted); mint the session again');
    const token = await this.tokens.issue(id, widget.hostname, expiresAt);
    return {
      sessionId: id,
      token,
      expiresAt: expiresAt.toISOString(),
      widgetUrl: sessionWidgetUrl(this.options.baseUrlTemplate, widget.hostname, token),
      ...(tenant ? { tenantId: tenant.id } : {}),
      ...(subject ? { subjectId: subject.id } : {}),
    };
  }

  /**
   * Revokes one session: its token stops verifying at once.
   * @throws NotFoundError when the widget or the session is not the workspace's
   */
  async revoke(workspace: WorkspaceRef, widgetId: string, sessionId: string): Promise<void> {
    const widget = await this.widgets.find(workspace, widgetId);
    const session = await this.store.sessions.findById(sessionId);
    if (!session || session.widgetId !== widget.id) throw NotFoundError.resource('widget session', sessionId);
    await this.store.sessions.delete(session.id);
  }

  /**
   * Deletes at most `limit` sessions that have expired (the node's sweeper,
   * actors/kinds/widget-session-sweeper.ts). Housekeeping only: verification
   * refuses an expired session whether or not its row is gone.
   */
  deleteExpired(limit: number): Promise<number> {
    return this.store.sessions.deleteExpired(this.now(), limit);
  }

  async verify(token: string, hostname: string): Promise<WidgetSessionPrincipal> {
    const now = this.now();
    const audience = hostname.toLowerCase();
    let sessionId: string;
    try {
      sessionId = await this.tokens.verify(token, audience, now);
    } catch (error) {
      throw new UnauthenticatedError(INVALID_WIDGET_TOKEN, { cause: error });
    }
    const found = await this.store.sessions.findWithWidget(sessionId);
    if (!found || found.widget.hostname !== audience || found.session.expiresAt.getTime() <= now.getTime()) {
      throw new UnauthenticatedError(INVALID_WIDGET_TOKEN);
    }
    const { session, widget, workspaceStatus } = found;
    // As the API answers every request on an archived or disabled workspace (authorizeWorkspace).
    checkWorkspaceActive({ id: session.workspaceId, status: workspaceStatus });
    return {
      sessionId: session.id,
      widgetId: widget.id,
      accountId: session.accountId,
      workspaceId: session.workspaceId,
      workspaceStatus,
      profileId: session.profileId ?? '',
      agentId: widget.agentId,
      tenantId: session.tenantId,
      subjectId: session.subjectId,
      allowVisitorApprovals: widget.allowVisitorApprovals,
      expiresAt: session.expiresAt,
    };
  }

  /**
   * Cached for WIDGET_BY_HOSTNAME_TTL_MS: a widget deleted or changed through
   * another node answers its old self for at most that long (this node's
   * changes show at once); sessions of a deleted widget are refused at once
   * whatever this cache says (verify reads the session with its widget).
   */
  widgetByHostname(hostname: string): Promise<HostedWidget> {
    return this.hosted(hostname.toLowerCase());
  }

  /** The widget service's change hook: forget a hostname's cached answer. */
  forgetHostname(hostname: string): void {
    this.hosted.forget(hostname.toLowerCase());
  }

  async sessionSecrets(sessionId: string): Promise<Record<string, string> | null> {
    const session = await this.store.sessions.findById(sessionId);
    if (!session || session.expiresAt.getTime() <= this.now().getTime()) return null;
    if (!session.secretsCiphertext) return {};
    return JSON.parse(await this.keyring.decrypt(secretsRef(session.workspaceId, session.id), session.secretsCiphertext)) as Record<string, string>;
  }
}

function hostedWidget(widget: WidgetRecord): NonNullable<HostedWidget> {
  return {
    widgetId: widget.id,
    allowedOrigins: widget.allowedOrigins,
    title: widget.title,
    greeting: widget.greeting,
    theme: widget.theme,
    allowVisitorApprovals: widget.allowVisitorApprovals,
  };
}

/** @throws InvalidArgumentError naming `ttlSeconds` (the schema checks it too; services are called from elsewhere) */
function checkTtl(value: number | undefined): number {
  if (value === undefined) return SESSION_TTL_DEFAULT_SECONDS;
  if (!Number.isInteger(value) || value < 1 || value > SESSION_TTL_MAX_SECONDS) {
    throw InvalidArgumentError.forField('ttlSeconds', `must be an integer from 1 to ${SESSION_TTL_MAX_SECONDS}`);
  }
  return value;
}

/** The secrets with valid names, or null for none; errors name the field, never the value. */
function checkSecrets(secrets: Record<string, string> | undefined): Record<string, string> | null {
  if (secrets === undefined) return null;
  const names = Object.keys(secrets);
  if (names.length > MAX_SESSION_SECRETS) throw InvalidArgumentError.forField('secrets', `must hold at most ${MAX_SESSION_SECRETS} secrets`);
  for (const name of names) {
    validateSecretName(name, `secrets.${name.slice(0, 128)}`);
    if (typeof secrets[name] !== 'string') throw InvalidArgumentError.forField(`secrets.${name}`, 'must be a string');
  }
  return names.length ? { ...secrets } : null;
}
