// The widget sessions of a node without the widgets area: no hostname is a
// widget's, so every request goes to the API; no token is valid; no session
// has secrets. The widgets area (src/widgets) replaces it in createServices.
import { UnauthenticatedError } from '../../src/errors';
import type { WidgetSessionVerifier } from '../../src/ports/widget-sessions';

export const noWidgets: WidgetSessionVerifier = {
  verify: () => Promise.reject(new UnauthenticatedError('the widget session token is not valid')),
  widgetByHostname: () => Promise.resolve(null),
  sessionSecrets: () => Promise.resolve({}),
};
