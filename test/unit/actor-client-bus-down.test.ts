// ActorClient (actors/runtime/actor-client.ts) while its bus has lost its
// server: a call to another node's shard waits a moment for the reconnect,
// then answers UNAVAILABLE naming the message bus, rather than retrying for
// the whole ask budget.
import assert from 'node:assert/strict';
import { ActorClient } from '../../actors/runtime/actor-client';
import type { ActorCommandRepository } from '../../persistence/runtime/actor-command.repository';
import { defaultRuntimeOptions } from '../../actors/runtime-options';
import { UnavailableError } from '../../src/errors';
import { RequestTimeoutError, type Bus } from '../../src/ports/bus';
import { silentLogger } from '../support/cluster-harness';

/** A bus that lost its server: a request sent anyway waits out its timeout, as a reconnecting NATS client's does. */
class DisconnectedBus implements Bus {
  requests = 0;
  async request(subject: string, _data: string, timeoutMs: number): Promise<string> {
    this.requests++;
    await new Promise((resolve) => setTimeout(resolve, timeoutMs));
    throw new RequestTimeoutError(subject, timeoutMs);
  }
  publish(): void {}
  subscribe(): { unsubscribe(): void } {
    return { unsubscribe: () => undefined };
  }
  connected(): boolean {
    return false;
  }
  async close(): Promise<void> {}
}

describe('ActorClient while the bus is disconnected', function () {
  // The ask's budget is a minute: only the wait for the bus's return answers within the test's timeout.
  this.timeout(10_000);

  it('answers a remote ask UNAVAILABLE naming the message bus, with Retry-After, without sending it', async () => {
    const bus = new DisconnectedBus();
    const client = new ActorClient({
      bus,
      // An ask stores nothing: the commands are only for durable sends.
      commands: {} as ActorCommandRepository,
      options: { ...defaultRuntimeOptions(), shardCount: 16, askTimeoutMs: 60_000, askAttemptTimeoutMs: 30_000 },
      logger: silentLogger,
      // No shard of this node's: every actor is another node's.
      local: () => null,
    });
    await assert.rejects(client.ask('counter', 'remote', { type: 'get' }), (error: unknown) => {
      assert.ok(error instanceof UnavailableError);
      assert.match(error.message, /the message bus \(NATS\) is unreachable/);
      assert.equal(error.retryAfterSeconds, 1);
      return true;
    });
    assert.equal(bus.requests, 0, 'nothing was sent on the lost connection');
  });
});
