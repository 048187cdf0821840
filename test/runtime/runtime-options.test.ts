// Reading the runtime's knobs from the environment.
import assert from 'node:assert/strict';
import { defaultRuntimeOptions, runtimeOptionsFromEnv } from '../../actors';
import { ConfigError } from '../../src/config';

describe('runtimeOptionsFromEnv', () => {
  it('uses the defaults when nothing is set', () => {
    const { nodeId, ...options } = runtimeOptionsFromEnv({});
    const { nodeId: _other, ...defaults } = defaultRuntimeOptions();
    assert.match(nodeId, /^node_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.deepEqual(options, defaults);
    assert.equal(options.shardCount, 256);
    assert.equal(options.leaseTimeoutMs, 15_000);
  });

  it('reads every variable', () => {
    const options = runtimeOptionsFromEnv({
      AGENTRT_NODE_ID: 'node_x',
      AGENTRT_SHARD_COUNT: '64',
      AGENTRT_LEASE_TIMEOUT_MS: '3000',
      AGENTRT_PASSIVATE_AFTER_MS: '1000',
      AGENTRT_SNAPSHOT_EVERY: '10',
      AGENTRT_ASK_TIMEOUT_MS: '9000',
      AGENTRT_DRAIN_TIMEOUT_MS: '4000',
      AGENTRT_SUBJECT_PREFIX: 'test',
      AGENTRT_EVENT_STREAM: 'TEST_EVENTS',
      AGENTRT_JETSTREAM_REPLICAS: '3',
    });
    assert.deepEqual(
      [options.nodeId, options.shardCount, options.leaseTimeoutMs, options.passivateAfterMs, options.snapshotEvery, options.askTimeoutMs, options.drainTimeoutMs, options.subjectPrefix, options.eventStream, options.jetStreamReplicas],
      ['node_x', 64, 3000, 1000, 10, 9000, 4000, 'test', 'TEST_EVENTS', 3],
    );
  });

  it('names the variable of a malformed value', () => {
    assert.throws(() => runtimeOptionsFromEnv({ AGENTRT_SHARD_COUNT: 'many' }), (error: ConfigError) => {
      return error instanceof ConfigError && error.message === 'AGENTRT_SHARD_COUNT must be an integer >= 1, got "many"';
    });
    assert.throws(() => runtimeOptionsFromEnv({ AGENTRT_LEASE_TIMEOUT_MS: '100' }), ConfigError);
    for (const raw of ['0', '1.5', 'three']) {
      assert.throws(() => runtimeOptionsFromEnv({ AGENTRT_JETSTREAM_REPLICAS: raw }), { name: 'ConfigError', message: `AGENTRT_JETSTREAM_REPLICAS must be an integer >= 1, got "${raw}"` });
    }
    assert.equal(runtimeOptionsFromEnv({}).jetStreamReplicas, 1);
    assert.equal(runtimeOptionsFromEnv({ AGENTRT_JETSTREAM_REPLICAS: '5' }).jetStreamReplicas, 5);
    assert.throws(() => runtimeOptionsFromEnv({ AGENTRT_JETSTREAM_REPLICAS: '7' }), { name: 'ConfigError', message: 'AGENTRT_JETSTREAM_REPLICAS must be at most 5 (JetStream\'s maximum), got "7"' });
  });
});
