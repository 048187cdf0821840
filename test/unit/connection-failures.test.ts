// The two connection-failure classifiers: Postgres's (persistence/runtime/pg-results.ts) and NATS's
// (actors/bus/nats-connection.ts) never claim each other's errors, so a NATS outage is never reported, logged
// or answered as the database's; Postgres's as a Status error (persistence/runtime/pg-errors.ts).
import assert from 'node:assert/strict';
import { errors as natsErrors } from '@nats-io/nats-core';
import * as jetStream from '@nats-io/jetstream';
import pino from 'pino';
import { isPostgresConnectionFailure } from '../../persistence/runtime/pg-results';
import { postgresUnavailableError } from '../../persistence/runtime/pg-errors';
import { DependencyHealth } from '../../actors/runtime/dependency-health';
import { isNatsFailure } from '../../actors/bus/nats-connection';
import { busUnavailableError } from '../../actors/runtime/actor-client';
import { BusUnavailableError } from '../../src/ports/bus';
import { PublisherUnavailableError } from '../../src/ports/event-publisher';

const refused = (port: number) => Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:${port}`), { code: 'ECONNREFUSED', syscall: 'connect', port });

/** What pg, pg-pool and TypeORM throw when the database goes away. */
const postgresFailures = (): unknown[] => [
  Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
  refused(5432),
  new Error('Connection terminated unexpectedly'),
  { driverError: { code: '08006' }, message: 'query failed' },
  new AggregateError([refused(5432)], 'connect failed'),
  new Error('loading the service key failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) }),
];

type ErrorClass = new (message: string) => Error;

/** Every error class nats.js exports (core and JetStream) but its bad-argument ones, which never carry a socket error. */
const natsErrorClasses = (): Array<[string, ErrorClass]> =>
  [...Object.entries(natsErrors), ...Object.entries(jetStream)]
    .map(([name, value]): [string, unknown] => [name, value])
    .filter((entry): entry is [string, ErrorClass] => typeof entry[1] === 'function' && entry[1].prototype instanceof Error)
    .filter(([name]) => !name.startsWith('Invalid'));

describe('isPostgresConnectionFailure', () => {
  it('recognises what pg and TypeORM throw when the database goes away', () => {
    for (const failure of postgresFailures()) assert.equal(isPostgresConnectionFailure(failure), true, String((failure as Error).message));
  });

  it('does not take a NATS ConnectionError caused by ECONNREFUSED for a lost database', () => {
    // What @nats-io/transport-node throws when the NATS server refuses the connection.
    assert.equal(isPostgresConnectionFailure(new natsErrors.ConnectionError('connection refused', { cause: refused(4222) })), false);
  });

  it('rejects every nats.js error, and our bus and publisher errors, whatever socket error they carry', () => {
    const classes = natsErrorClasses();
    assert.ok(classes.length >= 11, `nats.js's error classes found: ${classes.map(([name]) => name).join(', ')}`);
    for (const [name, ErrorClass] of classes) {
      const failure = Object.assign(new ErrorClass('x'), { cause: refused(4222) });
      assert.equal(isPostgresConnectionFailure(failure), false, name);
    }
    assert.equal(isPostgresConnectionFailure(busUnavailableError(new natsErrors.ConnectionError('connection refused', { cause: refused(4222) }))), false);
    assert.equal(isPostgresConnectionFailure(new BusUnavailableError({ cause: refused(4222) })), false);
    assert.equal(isPostgresConnectionFailure(new PublisherUnavailableError({ cause: refused(4222) })), false);
  });
});

describe('isNatsFailure', () => {
  it('recognises nats.js\'s connection errors, our bus\'s and our publisher\'s', () => {
    for (const failure of [
      new natsErrors.ClosedConnectionError(),
      new natsErrors.DrainingConnectionError(),
      new natsErrors.ConnectionError('connection refused', { cause: refused(4222) }),
      new natsErrors.TimeoutError(),
      busUnavailableError(),
      new PublisherUnavailableError(),
    ]) {
      assert.equal(isNatsFailure(failure), true, failure.name);
    }
  });

  it('does not claim the database\'s errors', () => {
    for (const failure of postgresFailures()) assert.equal(isNatsFailure(failure), false, String((failure as Error).message));
  });
});

describe('postgresUnavailableError', () => {
  it('answers UNAVAILABLE naming the database, with a retry in a second, for what pg and TypeORM throw when it goes away', () => {
    for (const failure of postgresFailures()) {
      const error = postgresUnavailableError(failure);
      assert.equal(error?.code, 'UNAVAILABLE', String((failure as Error).message));
      assert.equal(error.message, 'the database (PostgreSQL) is unreachable; retry shortly');
      assert.equal(error.retryAfterSeconds, 1);
    }
  });

  it('leaves any other failure alone, a NATS connection failure included', () => {
    for (const failure of [new Error('boom'), new natsErrors.ConnectionError('connection refused', { cause: refused(4222) }), null]) {
      assert.equal(postgresUnavailableError(failure), undefined);
    }
  });

  it('reports the lost database to the health tracker', () => {
    const health = new DependencyHealth({ logger: pino({ level: 'silent' }) });
    health.track('postgres');
    try {
      assert.equal(postgresUnavailableError(refused(5432), health)?.code, 'UNAVAILABLE');
      assert.equal(health.isUp('postgres'), false);
    } finally {
      health.stop();
    }
  });
});
