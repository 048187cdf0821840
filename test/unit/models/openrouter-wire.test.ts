// The pure parts of the OpenRouter client: Retry-After, key redaction, error
// bodies, the SSE reader and the ErrorInfo that carries a model error's type
// through an effect failure.
import assert from 'node:assert/strict';
import { ModelCallError, ModelCallErrorType, modelCallErrorTypeOf, modelCallFailureOf } from '../../../src/models/model-call-error';
import { parseProviderError, parseRetryAfter, redactKey } from '../../../src/models/openrouter-errors';
import { SseDataReader } from '../../../src/models/openrouter-wire';

describe('OpenRouter wire helpers', () => {
  describe('parseRetryAfter', () => {
    const now = Date.parse('2027-03-14T07:00:00Z');

    it('reads delay seconds, an HTTP date, and retry-after-ms first', () => {
      assert.equal(parseRetryAfter({ 'retry-after': '3' }, now), 3000);
      assert.equal(parseRetryAfter({ 'retry-after': '0.5' }, now), 500);
      assert.equal(parseRetryAfter({ 'retry-after': 'Sun, 14 Mar 2027 07:00:05 GMT' }, now), 5000);
      assert.equal(parseRetryAfter({ 'retry-after-ms': '250', 'retry-after': '3' }, now), 250);
    });

    it('reads a date in the past as no wait, and nothing readable as undefined', () => {
      assert.equal(parseRetryAfter({ 'retry-after': 'Sun, 14 Mar 2027 06:59:00 GMT' }, now), 0);
      assert.equal(parseRetryAfter({ 'retry-after': 'soon' }, now), undefined);
      assert.equal(parseRetryAfter({}, now), undefined);
    });
  });

  describe('redactKey', () => {
    it('removes the key and anything shaped like a key', () => {
      const key = 'sk-or-v1-abcdef0123456789';
      assert.equal(redactKey(`bad key ${key}, also sk-or-v1-abc***789 and Bearer ${key}`, key), 'bad key [redacted], also [redacted] and Bearer [redacted]');
    });
  });

  describe('parseProviderError', () => {
    it("reads OpenRouter's body, a bare error string, and plain text", () => {
      assert.deepEqual(parseProviderError('{"error":{"code":429,"message":"slow down","metadata":{"provider_name":"x"}}}'), { message: 'slow down', code: 429, metadata: { provider_name: 'x' } });
      assert.deepEqual(parseProviderError('{"error":"nope"}'), { message: 'nope' });
      assert.deepEqual(parseProviderError('<html>\n  Bad Gateway\n</html>'), { message: '<html> Bad Gateway </html>' });
    });
  });

  describe('SseDataReader', () => {
    it('joins data lines of one event, skips comments and other fields, and handles CRLF and split chunks', () => {
      const reader = new SseDataReader();
      const events = [
        ...reader.push(': keep-alive\r\nevent: message\r\ndata: {"a":'),
        ...reader.push('1}\r\n\r\ndata: line one\ndata: line two\n\nid: 7\ndata:[DONE]'),
        ...reader.end(),
      ];
      assert.deepEqual(events, ['{"a":1}', 'line one\nline two', '[DONE]']);
    });
  });

  describe('modelCallErrorTypeOf', () => {
    it('finds the type in the details an effect failure keeps; the runtime deadline is TIMED_OUT, anything else its code', () => {
      const error = new ModelCallError(ModelCallErrorType.RATE_LIMITED, 'slow down', { retryable: true, retryAfterMs: 2000, status: 429 });
      const failure = { code: error.code, message: error.message, details: error.details };
      assert.equal(modelCallErrorTypeOf(failure), 'RATE_LIMITED');
      assert.deepEqual(error.details, [{
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'RATE_LIMITED',
        domain: 'models.agentrt',
        metadata: { retryable: 'true', retryAfterMs: '2000', status: '429' },
      }]);
      assert.equal(modelCallErrorTypeOf({ code: 'DEADLINE_EXCEEDED', message: 'effect model.call passed its 120000 ms deadline' }), 'TIMED_OUT');
      assert.equal(modelCallErrorTypeOf({ code: 'INTERNAL', message: 'the keyring is down' }), 'INTERNAL');
    });
  });

  describe('modelCallFailureOf', () => {
    const crossed = (error: ModelCallError) => modelCallFailureOf({ code: error.code, message: error.message, details: error.details });

    it('reads back what the provider said across the effect boundary: retryable, Retry-After, status, usage', () => {
      const usage = { promptTokens: 12, completionTokens: 3, costCents: 0.25 };
      assert.deepEqual(crossed(new ModelCallError(ModelCallErrorType.RATE_LIMITED, 'slow down', { retryable: true, retryAfterMs: 45_000, status: 429, usage })), {
        type: 'RATE_LIMITED', message: 'slow down', retryable: true, retryAfterMs: 45_000, status: 429, usage,
      });
      assert.deepEqual(crossed(new ModelCallError(ModelCallErrorType.PROVIDER_KEY_REFUSED, 'refused', { status: 401 })), {
        type: 'PROVIDER_KEY_REFUSED', message: 'refused', retryable: false, status: 401,
      });
    });

    it('a time-out is retryable, the client\'s or the runtime\'s; an unavailable service or an aborted call too; other codes not', () => {
      assert.equal(crossed(new ModelCallError(ModelCallErrorType.TIMED_OUT, 'no answer')).retryable, true);
      assert.equal(crossed(new ModelCallError(ModelCallErrorType.CANCELLED, 'the node stopped')).retryable, true);
      assert.equal(modelCallFailureOf({ code: 'CANCELLED', message: 'aborted' }).retryable, true);
      assert.equal(modelCallFailureOf({ code: 'DEADLINE_EXCEEDED', message: 'passed its deadline' }).retryable, true);
      assert.equal(modelCallFailureOf({ code: 'UNAVAILABLE', message: 'the keyring is down' }).retryable, true);
      assert.equal(modelCallFailureOf({ code: 'INTERNAL', message: 'a bug' }).retryable, false);
    });
  });
});
