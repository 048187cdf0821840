// The client options of a node's NATS connection (actors/bus/nats-connection.ts):
// every server of NATS_URL's list, and a client that never stops reconnecting.
import assert from 'node:assert/strict';
import { natsConnectionOptions } from '../../actors/bus/nats-connection';
import { ConfigError } from '../../src/config';

describe('natsConnectionOptions', () => {
  it('connects to every server of the list and reconnects without a limit, soon, and notices a silent server within seconds', () => {
    const options = natsConnectionOptions('nats://a:4222, nats://b:4223', 'node_x');
    assert.deepEqual(options.servers, ['nats://a:4222', 'nats://b:4223']);
    assert.equal(options.name, 'node_x');
    assert.equal(options.maxReconnectAttempts, -1, 'never gives up');
    assert.ok(options.reconnectTimeWait! + options.reconnectJitter! <= 1000, 'an attempt at least every second');
    assert.ok(options.reconnectJitter! > 0, 'jittered, so that the nodes do not reconnect in one wave');
    assert.ok(options.pingInterval! * (options.maxPingOut! + 1) <= 30_000, 'a server that stopped answering is noticed within 30 s');
  });

  it('keeps reconnecting through authorisation errors (a server restarted a while with other credentials)', () => {
    assert.equal(natsConnectionOptions('nats://a:4222', 'node_x').ignoreAuthErrorAbort, true);
  });

  it('gives the client the credentials of the addresses (it ignores them there), decoded, and the addresses without them', () => {
    const options = natsConnectionOptions('nats://agent%40rt:p%3Ass@a:4222,b:4223', 'node_x');
    assert.deepEqual(options.servers, ['nats://a:4222', 'b:4223']);
    assert.deepEqual([options.user, options.pass], ['agent@rt', 'p:ss']);
    const token = natsConnectionOptions('tls://s3cret@a:4222', 'node_x');
    assert.deepEqual([token.servers, token.token, token.user], [['tls://a:4222'], 's3cret', undefined]);
    assert.throws(() => natsConnectionOptions('nats://u:first-secret@a:4222,nats://u:second-secret@b:4222', 'node_x'), (error: unknown) => error instanceof ConfigError && !/secret/.test(error.message));
  });

  it('refuses a malformed list, naming NATS_URL', () => {
    assert.throws(() => natsConnectionOptions('nats://a:4222,,', 'node_x'), (error: unknown) => error instanceof ConfigError && error.message.startsWith('NATS_URL'));
  });
});
