// NatsConnectionWatch.endedByDisconnect on a real connection: a call that
// settled leaves nothing behind (a race against one shared "next loss"
// promise kept every publication's result alive until the next outage).
import assert from 'node:assert/strict';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { connect } from '@nats-io/transport-node';
import { NatsConnectionWatch } from '../../actors/bus/nats-connection';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

describe('NatsConnectionWatch.endedByDisconnect', () => {
  it('keeps nothing of a call once it settled', async () => {
    const connection = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
    try {
      const watch = NatsConnectionWatch.of(connection);
      let result: WeakRef<object> | undefined;
      await (async () => {
        const value = { payload: 'x'.repeat(1024) };
        result = new WeakRef(value);
        assert.equal(await watch.endedByDisconnect(Promise.resolve(value)), value);
      })();
      await new Promise((resolve) => setImmediate(resolve));
      collectGarbage();
      assert.equal(result!.deref(), undefined, 'the settled call\'s result is not retained by the watch');
    } finally {
      await connection.close();
    }
  });
});
