// Configuration read from the environment (src/config.ts): the event
// retention of OBJECTIVE_EVENTS, a duration with a default and a floor; the
// objectives' default token cap.
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config';

describe('loadConfig: AGENTRT_EVENT_RETENTION', () => {
  it('defaults to 7 days and reads the service\'s durations', () => {
    assert.equal(loadConfig({}).eventRetentionMs, 7 * 86_400_000);
    assert.equal(loadConfig({ AGENTRT_EVENT_RETENTION: '1d12h' }).eventRetentionMs, 36 * 3_600_000);
    assert.equal(loadConfig({ AGENTRT_EVENT_RETENTION: '90m' }).eventRetentionMs, 90 * 60_000);
  });

  it('refuses a malformed value, milliseconds and anything under a minute, naming the variable', () => {
    for (const raw of ['week', '7', '500ms', '30s', '-1d']) {
      assert.throws(() => loadConfig({ AGENTRT_EVENT_RETENTION: raw }), (error: unknown) => error instanceof ConfigError && error.message.includes('AGENTRT_EVENT_RETENTION'), raw);
    }
  });
});

describe('loadConfig: AGENTRT_OBJECTIVE_MAX_TOKENS', () => {
  it('defaults to 10,000,000 tokens; 0 turns the default cap off', () => {
    assert.equal(loadConfig({}).objectives.defaultMaxTokens, 10_000_000);
    assert.equal(loadConfig({ AGENTRT_OBJECTIVE_MAX_TOKENS: '250000' }).objectives.defaultMaxTokens, 250_000);
    assert.equal(loadConfig({ AGENTRT_OBJECTIVE_MAX_TOKENS: '0' }).objectives.defaultMaxTokens, 0);
  });

  it('refuses anything but a whole number >= 0, naming the variable', () => {
    for (const raw of ['-1', '1.5', 'lots']) {
      assert.throws(() => loadConfig({ AGENTRT_OBJECTIVE_MAX_TOKENS: raw }), (error: unknown) => error instanceof ConfigError && error.message.includes('AGENTRT_OBJECTIVE_MAX_TOKENS'), raw);
    }
  });
});
