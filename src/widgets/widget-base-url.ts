// The widget base URL (api-decisions.md "Widgets"): `https://<hostname>`, or
// the AGENTRT_WIDGET_BASE_URL template (`http://{hostname}:8080` in
// development and tests) with the hostname filled in.

export const HOSTNAME_PLACEHOLDER = '{hostname}';

/** The base URL of the widget served at `hostname` (no trailing slash). */
export function widgetBaseUrl(template: string | undefined, hostname: string): string {
  return template === undefined ? `https://${hostname}` : template.replaceAll(HOSTNAME_PLACEHOLDER, hostname);
}

/** The chat page of a session: the token in the fragment, so it never reaches a server log. */
export function sessionWidgetUrl(template: string | undefined, hostname: string, token: string): string {
  return `${widgetBaseUrl(template, hostname)}/#session=${token}`;
}
