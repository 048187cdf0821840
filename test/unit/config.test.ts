// Configuration read from the environment (src/config.ts): the event
// retention of OBJECTIVE_EVENTS, a duration with a default and a floor; the
// objectives' default token cap; the episodic sweep's interval; NATS_URL, a
// comma-separated list of servers; the widget base URL template; the widget
// host's visitor limits.
import assert from 'node:assert/strict';
import { ConfigError, loadConfig, parseNatsServers, withoutCredentials } from '../../src/config';

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

describe('loadConfig: AGENTRT_EPISODIC_SWEEP_INTERVAL_MS', () => {
  it('defaults to 60 s and reads milliseconds from 100 up', () => {
    assert.equal(loadConfig({}).episodicSweepIntervalMs, 60_000);
    assert.equal(loadConfig({ AGENTRT_EPISODIC_SWEEP_INTERVAL_MS: '250' }).episodicSweepIntervalMs, 250);
    assert.equal(loadConfig({ AGENTRT_EPISODIC_SWEEP_INTERVAL_MS: '100' }).episodicSweepIntervalMs, 100);
  });

  it('refuses anything but a whole number >= 100, naming the variable', () => {
    for (const raw of ['99', '0', '-1', '1.5', '1m']) {
      assert.throws(
        () => loadConfig({ AGENTRT_EPISODIC_SWEEP_INTERVAL_MS: raw }),
        (error: unknown) => error instanceof ConfigError && error.message === `AGENTRT_EPISODIC_SWEEP_INTERVAL_MS must be an integer >= 100, got "${raw}"`,
        raw,
      );
    }
  });
});

describe('loadConfig: NATS_URL', () => {
  it('reads one server or a comma-separated list, trimmed', () => {
    assert.equal(loadConfig({}).natsUrl, undefined);
    assert.equal(loadConfig({ NATS_URL: 'nats://127.0.0.1:4222' }).natsUrl, 'nats://127.0.0.1:4222');
    assert.equal(loadConfig({ NATS_URL: ' nats://a:4222 , nats://b:4223,c:4224 ' }).natsUrl, 'nats://a:4222,nats://b:4223,c:4224');
    assert.deepEqual(parseNatsServers('nats://a:4222, tls://b:4223 ,ws://c:8080, d'), ['nats://a:4222', 'tls://b:4223', 'ws://c:8080', 'd']);
  });

  it('refuses a malformed entry, naming NATS_URL and the entry, never its password', () => {
    for (const raw of ['nats://a:4222,', 'nats://a:4222,,nats://b:4222', 'http://a:4222', 'nats://a:99999', 'nats://a:4222/path', 'nats://', 'a b:4222']) {
      assert.throws(() => loadConfig({ NATS_URL: raw }), (error: unknown) => error instanceof ConfigError && error.message.startsWith('NATS_URL'), raw);
    }
    assert.throws(() => loadConfig({ NATS_URL: 'nats://a:4222,nats://b:4222' + ',' }), /NATS_URL \(entry 3\)/);
    assert.throws(() => loadConfig({ NATS_URL: 'nats://user:s3cret@a:4222/x' }), (error: unknown) => error instanceof ConfigError && !error.message.includes('s3cret') && error.message.includes('***@a:4222'));
  });

  it('never repeats a password holding a raw / or @ in its refusal', () => {
    for (const [raw, secret] of [['nats://user:p/ss@h:4222', 'p/ss'], ['nats://user:p@s/s@h:4222', 's/s'], ['us/er:p/ss@h:4222', 'us/er']]) {
      assert.throws(
        () => loadConfig({ NATS_URL: raw }),
        (error: unknown) => error instanceof ConfigError && !error.message.includes(secret) && /"(nats:\/\/)?\*\*\*@h:4222"/.test(error.message),
        raw,
      );
    }
  });
});

describe('withoutCredentials', () => {
  it('replaces everything up to the last @ of an address, a password\'s / and @ included', () => {
    assert.equal(withoutCredentials('nats://user:p/ss@h:4222'), 'nats://***@h:4222');
    assert.equal(withoutCredentials('nats://user:p@ss@h:4222'), 'nats://***@h:4222');
    assert.equal(withoutCredentials('tok/en@h:4222'), '***@h:4222');
    assert.equal(withoutCredentials('postgresql://u:p@/db?host=/socket'), 'postgresql://***@/db?host=/socket');
  });

  it('leaves an address without credentials as it is', () => {
    for (const address of ['nats://h:4222', 'h:4222', 'postgres://db.internal:5432/agentrt']) assert.equal(withoutCredentials(address), address);
  });
});

describe('loadConfig: AGENTRT_WIDGET_BASE_URL', () => {
  it('is undefined when unset (widget base URL https://<hostname>)', () => {
    assert.equal(loadConfig({}).widgetBaseUrl, undefined);
  });

  it('takes an http(s) template whose host is {hostname} and nothing after the port', () => {
    assert.equal(loadConfig({ AGENTRT_WIDGET_BASE_URL: 'http://{hostname}:8080' }).widgetBaseUrl, 'http://{hostname}:8080');
    assert.equal(loadConfig({ AGENTRT_WIDGET_BASE_URL: 'https://{hostname}/' }).widgetBaseUrl, 'https://{hostname}');
  });

  it('refuses other values, naming the variable', () => {
    for (const raw of ['http://localhost:8080', 'ftp://{hostname}', 'http://{hostname}:8080/chat', 'http://{hostname}?x=1', 'http://{hostname}#x', 'http://example.com/{hostname}', 'https://{hostname}.w.example.net', 'http://chat-{hostname}:8080', 'http://{hostname}{hostname}', 'not a url {hostname}', 'http://u:p@{hostname}']) {
      assert.throws(() => loadConfig({ AGENTRT_WIDGET_BASE_URL: raw }), (error: unknown) => error instanceof ConfigError && error.message.startsWith('AGENTRT_WIDGET_BASE_URL must be a URL template'), raw);
    }
  });
});

describe('loadConfig: widget visitor limits', () => {
  const names = ['AGENTRT_WIDGET_OBJECTIVES_PER_MINUTE', 'AGENTRT_WIDGET_OBJECTIVES_PER_WIDGET_PER_MINUTE', 'AGENTRT_WIDGET_STREAMS_PER_SESSION'];

  it('defaults to 10 objectives a minute per session, 300 per widget and 2 open streams per session', () => {
    assert.deepEqual(loadConfig({}).widgetVisitors, { objectivesPerMinute: 10, objectivesPerWidgetPerMinute: 300, streamsPerSession: 2 });
    assert.deepEqual(loadConfig({ [names[0]]: '3', [names[1]]: '50', [names[2]]: '1' }).widgetVisitors, { objectivesPerMinute: 3, objectivesPerWidgetPerMinute: 50, streamsPerSession: 1 });
  });

  it('refuses anything but a whole number >= 1, naming the variable', () => {
    for (const name of names) {
      for (const raw of ['0', '-1', '1.5', 'lots']) {
        assert.throws(() => loadConfig({ [name]: raw }), (error: unknown) => error instanceof ConfigError && error.message.includes(name), `${name}=${raw}`);
      }
    }
  });
});

describe('loadConfig: LOG_FORMAT', () => {
  it('is unset by default (chosen by the output), and reads pretty and json', () => {
    assert.equal(loadConfig({}).logFormat, undefined);
    assert.equal(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat, 'pretty');
    assert.equal(loadConfig({ LOG_FORMAT: 'json' }).logFormat, 'json');
  });

  it('refuses anything else, naming the variable', () => {
    for (const raw of ['text', 'JSON', 'pino']) {
      assert.throws(() => loadConfig({ LOG_FORMAT: raw }), (error: unknown) => error instanceof ConfigError && error.message === `LOG_FORMAT must be pretty or json, got "${raw}"`, raw);
    }
  });
});
