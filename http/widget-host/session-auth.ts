// The widget session token on /api requests: `Authorization: Bearer <token>`,
// whose audience must be the hostname the request came on.
import type Koa from 'koa';
import { UnauthenticatedError } from '../../src/errors';
import type { WidgetSessionPrincipal, WidgetSessionVerifier } from '../../src/ports/widget-sessions';
import { widgetRequestOf } from './widget-site';

const BEARER = /^Bearer\s+([A-Za-z0-9._~+/=-]{1,4096})$/;

/**
 * The session the request's token speaks for.
 * @throws UnauthenticatedError for a missing, malformed, expired, revoked or foreign token (never naming the token)
 */
export async function authenticateSession(ctx: Koa.Context, widgets: Pick<WidgetSessionVerifier, 'verify'>): Promise<WidgetSessionPrincipal> {
  const match = BEARER.exec(ctx.get('Authorization').trim());
  if (!match) throw new UnauthenticatedError('a widget session token is required (Authorization: Bearer <token>)');
  const { hostname, site } = widgetRequestOf(ctx);
  const session = await widgets.verify(match[1], hostname);
  // The verifier checked the audience; a session of another widget on this hostname cannot be, but costs nothing to refuse.
  if (session.widgetId !== site.widgetId) throw new UnauthenticatedError('the widget session token is not valid');
  return session;
}
