import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { register, type Gauge } from 'prom-client';
import { DependencyHealth, reportingLogger, type Dependency } from '../../actors/runtime/dependency-health';
import { createLogger } from '../../src/logger';
import { errors as natsErrors } from '@nats-io/nats-core';
import { PublisherUnavailableError } from '../../src/ports/event-publisher';
import { busUnavailableError } from '../../actors/runtime/actor-client';

interface LogLine {
  level: number;
  msg: string;
  dependency?: string;
  downForMs?: number;
  err?: { message: string };
}

/** The production logger writing into an array. */
function capturingLogger() {
  const lines: LogLine[] = [];
  const logger = createLogger({ level: 'debug', destination: new Writable({ write(chunk, _encoding, done) { lines.push(JSON.parse(String(chunk)) as LogLine); done(); } }) });
  return { logger, lines };
}

async function gauge(dependency: Dependency): Promise<number | undefined> {
  const metric = register.getSingleMetric('agentrt_dependency_up') as Gauge<'dependency'>;
  return (await metric.get()).values.find((value) => value.labels.dependency === dependency)?.value;
}

describe('DependencyHealth', () => {
  let health: DependencyHealth | undefined;
  afterEach(() => health?.stop());

  it('logs one warning for an outage reported many times, and sets the gauge to 0', async () => {
    const { logger, lines } = capturingLogger();
    health = new DependencyHealth({ logger });
    health.track('postgres');
    assert.equal(await gauge('postgres'), 1);
    for (let report = 0; report < 5; report += 1) health.down('postgres', new Error(`connect ECONNREFUSED (${report})`));
    const warnings = lines.filter((line) => line.level === 40);
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0].dependency, 'postgres');
    assert.match(warnings[0].msg, /the database \(PostgreSQL\) is unreachable/);
    assert.equal(warnings[0].err?.message, 'connect ECONNREFUSED (0)');
    assert.equal(health.isUp('postgres'), false);
    assert.deepEqual(health.unavailable(), ['postgres']);
    assert.equal(await gauge('postgres'), 0);
  });

  it('verify: reports the dependency down only when its probe fails, and then probes until it is back', async () => {
    const { logger, lines } = capturingLogger();
    health = new DependencyHealth({ logger, probeIntervalMs: 10 });
    let reachable = true;
    health.track('postgres', async () => {
      if (!reachable) throw new Error('connect ECONNREFUSED');
    });
    health.verify('postgres');
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(health.isUp('postgres'), true, 'a probe that answers changes nothing');
    reachable = false;
    health.verify('postgres');
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(health.isUp('postgres'), false, 'a probe that fails reports it down');
    assert.equal(lines.filter((line) => line.level === 40).length, 1);
    reachable = true;
    await health.whenUp('postgres');
    assert.equal(lines.filter((line) => /reachable again/.test(line.msg)).length, 1);
  });

  it('logs one line with the duration when it is back, and sets the gauge to 1', async () => {
    const { logger, lines } = capturingLogger();
    health = new DependencyHealth({ logger });
    health.track('nats');
    health.down('nats');
    const waiting = health.whenUp('nats');
    health.up('nats');
    health.up('nats');
    await waiting;
    const back = lines.filter((line) => line.level === 30);
    assert.equal(back.length, 1);
    assert.equal(back[0].dependency, 'nats');
    assert.match(back[0].msg, /^the message bus \(NATS\) is reachable again after \d+\.\d s$/);
    assert.equal(typeof back[0].downForMs, 'number');
    assert.equal(health.isUp('nats'), true);
    assert.equal(await gauge('nats'), 1);
  });

  it('probes a dependency while it is down until the probe answers, then reports it up', async () => {
    const { logger, lines } = capturingLogger();
    health = new DependencyHealth({ logger, probeIntervalMs: 5 });
    let probes = 0;
    health.track('postgres', async () => {
      probes += 1;
      if (probes < 3) throw new Error('still down');
    });
    health.down('postgres', new Error('gone'));
    await health.whenUp('postgres');
    assert.equal(probes, 3);
    assert.equal(health.isUp('postgres'), true);
    assert.equal(lines.filter((line) => line.level === 40).length, 1);
    assert.equal(lines.filter((line) => /reachable again/.test(line.msg)).length, 1);
  });

  it('counts a probe that never answers as failed and probes again', async () => {
    const { logger } = capturingLogger();
    health = new DependencyHealth({ logger, probeIntervalMs: 5, probeTimeoutMs: 20 });
    let probes = 0;
    health.track('postgres', () => {
      probes += 1;
      return probes === 1 ? new Promise<void>(() => undefined) : Promise.resolve();
    });
    health.down('postgres');
    await health.whenUp('postgres');
    assert.equal(probes, 2);
  });

  it('names every unreachable dependency', () => {
    health = new DependencyHealth({ logger: capturingLogger().logger });
    health.track('postgres');
    health.track('nats');
    assert.equal(health.unavailableReason(), undefined);
    health.down('nats');
    assert.equal(health.unavailableReason(), 'the message bus (NATS) is unreachable');
    health.down('postgres');
    assert.equal(health.unavailableReason(), 'the database (PostgreSQL) and the message bus (NATS) are unreachable');
    const error = health.unavailableError('nats');
    assert.equal(error.code, 'UNAVAILABLE');
    assert.equal(error.retryAfterSeconds, 1);
  });

  it('logs nothing and releases its waiters once stopped', async () => {
    const { logger, lines } = capturingLogger();
    health = new DependencyHealth({ logger });
    health.track('postgres');
    health.down('postgres');
    const waiting = health.whenUp('postgres');
    health.stop();
    await waiting;
    health.up('postgres');
    health.down('postgres');
    assert.equal(lines.filter((line) => line.level === 40).length, 1, 'the one warning from before the stop');
  });
});

describe('reportingLogger', () => {
  it('turns the runtime loops\' warnings about a lost database into one outage warning, and passes other warnings on', () => {
    const { logger, lines } = capturingLogger();
    const health = new DependencyHealth({ logger });
    health.track('postgres');
    health.track('nats');
    const runtimeLogger = reportingLogger(logger, health);
    for (let round = 0; round < 3; round += 1) {
      runtimeLogger.warn({ err: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }) }, 'reminder poll failed');
      runtimeLogger.error({ err: new Error('Connection terminated unexpectedly') }, 'shard balancing round failed');
    }
    runtimeLogger.warn({ err: new Error('a projector refused the change') }, 'turn failed');
    health.stop();
    assert.equal(health.isUp('postgres'), false);
    const warnings = lines.filter((line) => line.level >= 40);
    assert.deepEqual(warnings.map((line) => [line.dependency, line.msg.replace(/:.*/, '')]), [['postgres', 'the database (PostgreSQL) is unreachable'], [undefined, 'turn failed']]);
    assert.equal(lines.filter((line) => line.level === 20 && line.msg === 'reminder poll failed').length, 3, 'kept at debug level');
  });

  it('quiets a NATS failure while NATS is known down only', () => {
    const { logger, lines } = capturingLogger();
    const health = new DependencyHealth({ logger });
    health.track('nats');
    const runtimeLogger = reportingLogger(logger, health);
    const closed = Object.assign(new Error('closed connection'), { name: 'ClosedConnectionError' });
    runtimeLogger.warn({ err: closed }, 'outbox publication failed; retrying');
    health.down('nats');
    runtimeLogger.warn({ err: closed }, 'outbox publication failed; retrying');
    // The relay's own word for the same outage (its publisher refuses while the connection is lost).
    runtimeLogger.warn({ err: new PublisherUnavailableError() }, 'event streams unreachable; the outbox is published once they are back');
    health.stop();
    assert.deepEqual(lines.filter((line) => line.level >= 40).map((line) => line.msg.replace(/:.*/, '')), ['outbox publication failed; retrying', 'the message bus (NATS) is unreachable']);
  });

  it('writes the bus\'s unavailable answer at debug while NATS is known down (the webhook intake logs one per event in flight)', () => {
    const { logger, lines } = capturingLogger();
    const health = new DependencyHealth({ logger });
    health.track('postgres');
    health.track('nats');
    const runtimeLogger = reportingLogger(logger, health);
    const message = 'webhook intake could not hand an objective event to its endpoint; it comes back';
    runtimeLogger.warn({ err: busUnavailableError() }, message);
    health.down('nats');
    for (let event = 0; event < 5; event += 1) runtimeLogger.warn({ err: busUnavailableError(new natsErrors.ClosedConnectionError()) }, message);
    health.stop();
    assert.deepEqual(lines.filter((line) => line.level >= 40).map((line) => line.msg.replace(/:.*/, '')), [message, 'the message bus (NATS) is unreachable']);
    assert.equal(lines.filter((line) => line.level === 20 && line.msg === message).length, 5);
  });

  it('does not report the database down for a NATS connection refused (its cause is a socket error, as pg\'s are)', () => {
    const { logger, lines } = capturingLogger();
    const health = new DependencyHealth({ logger });
    health.track('postgres');
    health.track('nats');
    const runtimeLogger = reportingLogger(logger, health);
    const refused = new natsErrors.ConnectionError('connection refused', {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4222'), { code: 'ECONNREFUSED' }),
    });
    runtimeLogger.warn({ err: refused }, 'durable consumer failed');
    runtimeLogger.warn({ err: busUnavailableError(refused) }, 'webhook intake could not hand an objective event to its endpoint; it comes back');
    health.stop();
    assert.equal(health.isUp('postgres'), true);
    assert.equal(lines.filter((line) => line.dependency === 'postgres').length, 0);
  });
});
