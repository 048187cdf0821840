// The Bus contract, shared by MemoryBus and NatsBus: request/reply, no
// responders, timeouts, wildcards, unsubscribe, contained handler failures and
// per-sender ordering.
import assert from 'node:assert/strict';
import { ulid } from 'ulid';
import { NoRespondersError, RequestTimeoutError, type Bus } from '../../src/ports/bus';

/** Registers the contract's tests for a bus made by `create` (closed after each test). */
export function busContract(create: () => Promise<Bus>): void {
  let bus: Bus;
  let prefix: string;

  beforeEach(async () => {
    bus = await create();
    prefix = `contract_${ulid().toLowerCase()}`;
  });

  afterEach(async () => {
    await bus.close();
  });

  it('answers a request from a subscriber', async () => {
    bus.subscribe(`${prefix}.echo`, (message) => message.respond(`echo:${message.data}`));
    assert.equal(await bus.request(`${prefix}.echo`, 'hi', 1000), 'echo:hi');
  });

  it('raises NoRespondersError when nobody listens', async () => {
    await assert.rejects(bus.request(`${prefix}.nobody`, 'x', 1000), (error: Error) => error instanceof NoRespondersError && error.message === `no responders on ${prefix}.nobody`);
  });

  it('raises RequestTimeoutError when the subscriber does not answer', async () => {
    bus.subscribe(`${prefix}.mute`, () => undefined);
    await assert.rejects(bus.request(`${prefix}.mute`, 'x', 100), (error: Error) => error instanceof RequestTimeoutError && error.message === `no reply on ${prefix}.mute within 100 ms`);
  });

  it('matches * and > wildcards', async () => {
    bus.subscribe(`${prefix}.shard.3.>`, (message) => message.respond(`gt:${message.subject}`));
    bus.subscribe(`${prefix}.one.*`, (message) => message.respond(`star:${message.subject}`));
    assert.equal(await bus.request(`${prefix}.shard.3.counter.a`, '', 1000), `gt:${prefix}.shard.3.counter.a`);
    assert.equal(await bus.request(`${prefix}.one.x`, '', 1000), `star:${prefix}.one.x`);
    await assert.rejects(bus.request(`${prefix}.shard.3`, '', 1000), NoRespondersError);
    await assert.rejects(bus.request(`${prefix}.one.x.y`, '', 1000), NoRespondersError);
  });

  it('stops delivering after unsubscribe', async () => {
    const subscription = bus.subscribe(`${prefix}.gone`, (message) => message.respond('here'));
    assert.equal(await bus.request(`${prefix}.gone`, '', 1000), 'here');
    subscription.unsubscribe();
    await assert.rejects(bus.request(`${prefix}.gone`, '', 1000), NoRespondersError);
  });

  it('keeps delivering to every subscription after a handler throws', async () => {
    bus.subscribe(`${prefix}.faulty`, (message) => {
      if (message.data === 'boom') throw new Error('handler failed');
      message.respond(`ok:${message.data}`);
    });
    bus.subscribe(`${prefix}.healthy`, (message) => message.respond('healthy'));
    await assert.rejects(bus.request(`${prefix}.faulty`, 'boom', 200), RequestTimeoutError);
    assert.equal(await bus.request(`${prefix}.faulty`, 'fine', 1000), 'ok:fine');
    assert.equal(await bus.request(`${prefix}.healthy`, '', 1000), 'healthy');
  });

  it('delivers publications of one sender in order', async () => {
    const received: string[] = [];
    bus.subscribe(`${prefix}.ordered`, (message) => received.push(message.data));
    for (let i = 0; i < 100; i++) bus.publish(`${prefix}.ordered`, String(i));
    const deadline = Date.now() + 2000;
    while (received.length < 100 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(received, Array.from({ length: 100 }, (_, i) => String(i)));
  });
}
