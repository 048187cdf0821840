import assert from 'node:assert/strict';
import { WebhookConnectWarnings } from '../../../src/webhooks/webhook-connect-warnings';
import type { WebhookAttemptOutcome } from '../../../src/webhooks/webhook-sender';

const ENDPOINT_A = 'agent_01JA0000000000000000000000:0123456789abcdef';
const ENDPOINT_B = 'agent_01JB0000000000000000000000:fedcba9876543210';
const URL = 'https://hooks.example.com:8443/in?token=tok_SECRET';

const refused: WebhookAttemptOutcome = {
  ok: false, httpStatusCode: 0, latencyMs: 1, responseContentLength: null, responseHeaders: null, gone: false, errorMessage: 'connection refused', connectFailed: true,
};
const serverError: WebhookAttemptOutcome = { ok: false, httpStatusCode: 500, latencyMs: 1, responseContentLength: 0, responseHeaders: {}, gone: false, errorMessage: 'HTTP 500' };
const delivered: WebhookAttemptOutcome = { ok: true, httpStatusCode: 204, latencyMs: 1, responseContentLength: 0, responseHeaders: {}, gone: false };

function capture() {
  const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
  return { lines, logger: { warn: (fields: object, message: string) => void lines.push({ fields: fields as Record<string, unknown>, message }) } };
}

describe('WebhookConnectWarnings', () => {
  it('warns once per endpoint however many attempts fail to connect', () => {
    const { lines, logger } = capture();
    const warnings = new WebhookConnectWarnings(logger);
    for (let attempt = 0; attempt < 5; attempt++) warnings.record(ENDPOINT_A, URL, refused);
    assert.equal(lines.length, 1);
    assert.deepEqual(lines[0].fields, {
      endpointId: ENDPOINT_A, agentId: 'agent_01JA0000000000000000000000', receiverHost: 'hooks.example.com:8443', reason: 'connection refused',
    });
    assert.match(lines[0].message, /^webhook deliveries cannot reach the receiver/);
    assert.ok(!JSON.stringify(lines).includes('tok_SECRET'), 'the URL\'s query is never logged');
  });

  it('warns for each endpoint on its own', () => {
    const { lines, logger } = capture();
    const warnings = new WebhookConnectWarnings(logger);
    warnings.record(ENDPOINT_A, URL, refused);
    warnings.record(ENDPOINT_B, URL, refused);
    warnings.record(ENDPOINT_A, URL, refused);
    assert.deepEqual(lines.map((line) => line.fields.endpointId), [ENDPOINT_A, ENDPOINT_B]);
  });

  it('warns again when an endpoint fails anew after a success, not after an HTTP error', () => {
    const { lines, logger } = capture();
    const warnings = new WebhookConnectWarnings(logger);
    warnings.record(ENDPOINT_A, URL, refused);
    warnings.record(ENDPOINT_A, URL, serverError);
    warnings.record(ENDPOINT_A, URL, refused);
    assert.equal(lines.length, 1);
    warnings.record(ENDPOINT_A, URL, delivered);
    warnings.record(ENDPOINT_A, URL, refused);
    assert.equal(lines.length, 2);
  });

  it('does not warn for failures after the receiver was reached', () => {
    const { lines, logger } = capture();
    const warnings = new WebhookConnectWarnings(logger);
    warnings.record(ENDPOINT_A, URL, serverError);
    warnings.record(ENDPOINT_A, URL, { ...serverError, httpStatusCode: 0, errorMessage: 'timed out after 15000 ms' });
    assert.equal(lines.length, 0);
  });

  it('forgets the oldest endpoint past its capacity, which may then be warned about again', () => {
    const { lines, logger } = capture();
    const warnings = new WebhookConnectWarnings(logger, 1);
    warnings.record(ENDPOINT_A, URL, refused);
    warnings.record(ENDPOINT_B, URL, refused);
    warnings.record(ENDPOINT_B, URL, refused);
    warnings.record(ENDPOINT_A, URL, refused);
    assert.deepEqual(lines.map((line) => line.fields.endpointId), [ENDPOINT_A, ENDPOINT_B, ENDPOINT_A]);
  });
});
