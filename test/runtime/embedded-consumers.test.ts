// In embedded mode (no NATS) the runtime's events go to the embedded event
// log in the database, and durable consumers read them with the guarantees of
// JetStream: an actor's events reach a consumer once each, in the actor's
// order, and a consumer restarted with the same durable name goes on where
// the acknowledged ones end.
import assert from 'node:assert/strict';
import type { DataSource } from 'typeorm';
import { startActorRuntime, type ActorRuntime } from '../../actors';
import type { ConsumedEvent } from '../../src/ports/event-consumer';
import { createDataSource } from '../../persistence/data-source';
import { counterKind } from '../support/cluster-counter';
import { eventually, silentLogger } from '../support/cluster-harness';
import { createTestDatabase, type TestDatabase } from '../support/database';

describe('actor runtime (embedded mode): durable consumers of the event log', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let runtime: ActorRuntime;

  const start = () => startActorRuntime({ dataSource, kinds: [counterKind], options: { shardCount: 8, outboxPollMs: 50 }, logger: silentLogger });

  before(async () => {
    database = await createTestDatabase();
    dataSource = createDataSource({ url: database.url, poolSize: 4 });
    await dataSource.initialize();
    runtime = await start();
  });

  after(async () => {
    await runtime.stop();
    await dataSource.destroy();
    await database.drop();
  });

  it('delivers an actor\'s events once each, in its order, and resumes after a restart', async () => {
    const sequences: string[] = [];
    const reader = (event: ConsumedEvent) => {
      sequences.push(event.headers['Agentrt-Actor-Sequence']);
      return event.ack();
    };
    const spec = { stream: 'AGENTRT_EVENTS', durableName: 'embedded-reader', filterSubject: 'agentrt.events.counter.logged' };
    await runtime.consume(spec, reader);
    await runtime.ask('counter', 'logged', { type: 'emit', count: 3 });
    await eventually(() => sequences.length === 3, 'first events consumed');
    await runtime.stop();
    runtime = await start();
    await runtime.ask('counter', 'logged', { type: 'emit', count: 2 });
    await runtime.consume(spec, reader);
    await eventually(() => sequences.length === 5, 'later events consumed after the restart');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(sequences, ['1', '2', '3', '4', '5']);
  });
});
