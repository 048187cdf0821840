// JetStreamTopology's restore (actors/events/jetstream-topology.ts), on the
// shared NATS: one run for concurrent callers, none for RESTORE_QUIET_MS
// after a run found nothing lost, and what counts as a lost stream or durable.
import assert from 'node:assert/strict';
import { JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { errors as natsErrors, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { isLostTopology, JetStreamTopology, RESTORE_QUIET_MS } from '../../actors/events/jetstream-topology';
import type { RuntimeLogger } from '../../actors/runtime/runtime-logger';
import { StreamNotFoundError } from '../../src/ports/event-consumer';
import { deleteStream, silentLogger, TEST_NATS_URL, uniqueBusNames } from '../support/cluster-harness';

describe('JetStreamTopology.restore', () => {
  let connection: NatsConnection;
  let topology: JetStreamTopology;
  let stream: string;
  let runs: number;
  let warnings: string[];

  before(async () => (connection = await connect({ servers: TEST_NATS_URL })));
  after(async () => connection?.close());

  beforeEach(async () => {
    const names = uniqueBusNames();
    stream = names.eventStream;
    warnings = [];
    const logger: RuntimeLogger = { ...silentLogger, warn: (_fields, message) => void warnings.push(message) };
    topology = new JetStreamTopology(connection, { logger });
    await topology.declareStreams([{ name: stream, subjects: [`${names.subjectPrefix}.events.>`] }]);
    // A run of restore asks for the manager once: counted.
    const manager = topology.manager.bind(topology);
    runs = 0;
    topology.manager = () => {
      runs++;
      return manager();
    };
  });

  afterEach(async () => deleteStream(stream).catch(() => undefined));

  it('runs once for concurrent callers', async () => {
    await Promise.all([topology.restore(), topology.restore(), topology.restore()]);
    assert.equal(runs, 1);
  });

  it('skips for RESTORE_QUIET_MS after a run that found nothing lost, and runs again after', async () => {
    await topology.restore();
    await topology.restore();
    assert.equal(runs, 1, 'the run that found everything in place answers the next callers');
    await new Promise((resolve) => setTimeout(resolve, RESTORE_QUIET_MS + 50));
    await topology.restore();
    assert.equal(runs, 2);
  });

  it('declares a lost stream again, and does not skip the next call', async () => {
    await (await jetstreamManager(connection)).streams.delete(stream);
    await topology.restore();
    assert.deepEqual(warnings, [`NATS lost stream ${stream}; declared again`]);
    assert.equal((await (await jetstreamManager(connection)).streams.info(stream)).config.name, stream);
    await topology.restore();
    assert.equal(runs, 2, 'a run that found something lost saves no later call');
  });
});

describe('isLostTopology', () => {
  const apiError = (code: number, description: string) => new JetStreamApiError({ code: 404, err_code: code, description });

  it('says a stream or durable the server lacks, and a publication nobody captures, are lost topology', () => {
    assert.ok(isLostTopology(new StreamNotFoundError('S')));
    assert.ok(isLostTopology(apiError(10059, 'stream not found')));
    assert.ok(isLostTopology(apiError(10014, 'consumer not found')));
    assert.ok(isLostTopology(new natsErrors.NoRespondersError('agentrt.events.x')));
    assert.ok(isLostTopology(new natsErrors.RequestError('no responders', { cause: new natsErrors.NoRespondersError('agentrt.events.x') })));
    assert.ok(isLostTopology(Object.assign(new Error('jetstream is not enabled'), { name: 'JetStreamNotEnabled' })));
  });

  it('says other failures are not', () => {
    assert.ok(!isLostTopology(apiError(10037, 'no message found')));
    assert.ok(!isLostTopology(new natsErrors.TimeoutError()));
    assert.ok(!isLostTopology(new natsErrors.RequestError('timeout', { cause: new natsErrors.TimeoutError() })));
    assert.ok(!isLostTopology(new natsErrors.ClosedConnectionError()));
    assert.ok(!isLostTopology(new Error('stream not found')));
    assert.ok(!isLostTopology(undefined));
  });
});
