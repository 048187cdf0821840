// Whether the node's outside dependencies (Postgres, NATS) are reachable now:
// one place that the parts seeing a failure report to and that /readyz, the
// error handler and the actor client read. It logs one warning when a
// dependency goes away and one line when it is back (with how long it was
// away), never one per failed retry, and exports the state as the gauge
// agentrt_dependency_up{dependency}. A dependency with a probe (Postgres) is
// probed while down until it answers; one without (NATS) is told by its
// client's connection events. The runtime's loops report through
// reportingLogger: a failure they log that is a lost dependency reports it
// instead of adding a warning per retry.
import { Gauge, register } from 'prom-client';
import type { UnavailableError } from '../../src/errors';
import {
  DEPENDENCY_NAMES,
  dependencyUnavailableError,
  unreachableReason,
  type Dependency,
  type DependencyHealthPort,
} from '../../src/ports/dependency-health';
import { withTimeout } from '../../src/with-timeout';
import { isPostgresConnectionFailure } from '../../persistence/runtime/pg-results';
import { isNatsFailure } from '../bus/nats-connection';
import type { RuntimeLogger } from './runtime-logger';

export { DEPENDENCY_NAMES, type Dependency } from '../../src/ports/dependency-health';

const GAUGE_NAME = 'agentrt_dependency_up';
const dependencyUp =
  (register.getSingleMetric(GAUGE_NAME) as Gauge<'dependency'> | undefined) ??
  new Gauge({ name: GAUGE_NAME, help: '1 while the dependency answers, 0 while it is unreachable', labelNames: ['dependency'] });

export interface DependencyHealthOptions {
  logger: RuntimeLogger;
  /** How often a dependency with a probe is probed while down. @default 500 */
  probeIntervalMs?: number;
  /** How long one probe may take before it counts as failed (a server that does not answer at all). @default 2000 */
  probeTimeoutMs?: number;
}

interface Tracked {
  up: boolean;
  downSince: number;
  probe: (() => Promise<void>) | undefined;
  probing: NodeJS.Timeout | undefined;
  waiters: Array<() => void>;
}

export type DependencyListener = (dependency: Dependency, up: boolean) => void;

/** The reachability of the dependencies a node tracks. */
export class DependencyHealth implements DependencyHealthPort {
  private readonly tracked = new Map<Dependency, Tracked>();
  private readonly listeners = new Set<DependencyListener>();
  private readonly probeIntervalMs: number;
  private readonly probeTimeoutMs: number;
  private stopped = false;
  private deadBecause: string | undefined;

  constructor(private readonly options: DependencyHealthOptions) {
    this.probeIntervalMs = options.probeIntervalMs ?? 500;
    this.probeTimeoutMs = options.probeTimeoutMs ?? 2000;
  }

  /** Starts tracking a dependency (up); with a probe, it is probed while down until the probe resolves. */
  track(dependency: Dependency, probe?: () => Promise<void>): void {
    if (this.tracked.has(dependency)) {
      if (probe) this.tracked.get(dependency)!.probe = probe;
      return;
    }
    this.tracked.set(dependency, { up: true, downSince: 0, probe, probing: undefined, waiters: [] });
    dependencyUp.set({ dependency }, 1);
  }

  /** The dependencies tracked. */
  dependencies(): Dependency[] {
    return [...this.tracked.keys()];
  }

  /** True unless the dependency is tracked and down. */
  isUp(dependency: Dependency): boolean {
    return this.tracked.get(dependency)?.up ?? true;
  }

  /** The tracked dependencies that are down now. */
  unavailable(): Dependency[] {
    return [...this.tracked].filter(([, state]) => !state.up).map(([dependency]) => dependency);
  }

  /**
   * Something hinted that the dependency may be gone (a lost session, not a
   * failed query): probes it now and reports it down when the probe fails.
   * Nothing happens for a dependency without a probe or already down.
   */
  verify(dependency: Dependency): void {
    const state = this.tracked.get(dependency);
    if (!state?.probe || !state.up || this.stopped) return;
    withTimeout(state.probe(), this.probeTimeoutMs).catch((error: unknown) => this.down(dependency, error));
  }

  /** Reports the dependency unreachable: the first report of an outage logs a warning; later ones are silent. */
  down(dependency: Dependency, cause?: unknown): void {
    const state = this.tracked.get(dependency);
    if (!state || !state.up || this.stopped) return;
    state.up = false;
    state.downSince = Date.now();
    dependencyUp.set({ dependency }, 0);
    this.options.logger.warn(
      { dependency, ...(cause === undefined ? {} : { err: cause }) },
      `${DEPENDENCY_NAMES[dependency]} is unreachable: requests that need it answer 503 until it is back`,
    );
    this.notify(dependency, false);
    if (state.probe) this.scheduleProbe(dependency, state);
  }

  /** Reports the dependency reachable: after an outage, logs one line with its duration. */
  up(dependency: Dependency): void {
    const state = this.tracked.get(dependency);
    if (!state || state.up) return;
    state.up = true;
    clearTimeout(state.probing);
    state.probing = undefined;
    dependencyUp.set({ dependency }, 1);
    const downForMs = Date.now() - state.downSince;
    this.options.logger.info({ dependency, downForMs }, `${DEPENDENCY_NAMES[dependency]} is reachable again after ${(downForMs / 1000).toFixed(1)} s`);
    for (const wake of state.waiters.splice(0)) wake();
    this.notify(dependency, true);
  }

  /** Resolves once the dependency is up (at once when it is). */
  whenUp(dependency: Dependency): Promise<void> {
    const state = this.tracked.get(dependency);
    if (!state || state.up) return Promise.resolve();
    return new Promise((resolve) => state.waiters.push(resolve));
  }

  /** Calls the listener on every change of state; returns its removal. */
  onChange(listener: DependencyListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The node cannot recover on its own (a client gave up for good): /healthz answers 503, so that its orchestrator restarts it. */
  markDead(reason: string): void {
    this.deadBecause ??= reason;
  }

  /** Why the node must be restarted; undefined while it recovers on its own. */
  deadReason(): string | undefined {
    return this.deadBecause;
  }

  /** The error a request that needs the dependency gets while it is down. */
  unavailableError(dependency: Dependency): UnavailableError {
    return dependencyUnavailableError(dependency);
  }

  /**
   * Why the node is not ready, naming every unreachable dependency
   * ("the message bus (NATS) is unreachable"); undefined when all are up.
   */
  unavailableReason(): string | undefined {
    const down = this.unavailable();
    return down.length === 0 ? undefined : unreachableReason(down);
  }

  /** Stops probing (the node is stopping). */
  stop(): void {
    this.stopped = true;
    for (const state of this.tracked.values()) {
      clearTimeout(state.probing);
      state.probing = undefined;
      for (const wake of state.waiters.splice(0)) wake();
    }
  }

  private scheduleProbe(dependency: Dependency, state: Tracked): void {
    if (this.stopped || state.up) return;
    state.probing = setTimeout(() => {
      state.probing = undefined;
      withTimeout(state.probe!(), this.probeTimeoutMs).then(
        () => this.up(dependency),
        () => this.scheduleProbe(dependency, state),
      );
    }, this.probeIntervalMs);
    state.probing.unref();
  }

  private notify(dependency: Dependency, up: boolean): void {
    for (const listener of this.listeners) {
      try {
        listener(dependency, up);
      } catch (error) {
        this.options.logger.error({ err: error, dependency }, 'dependency listener failed');
      }
    }
  }
}

/**
 * The runtime's logger, reporting to `health`: a warning or an error whose
 * `err` is a broken Postgres connection reports the database down, and one
 * whose `err` is a NATS failure while NATS is known down adds nothing; both
 * are written at debug level, so an outage logs the tracker's one warning
 * rather than one per retry of every loop (balancer, poller, relay, consumers).
 */
export function reportingLogger(logger: RuntimeLogger, health: DependencyHealth): RuntimeLogger {
  const outageOf = (fields: object): Dependency | undefined => {
    const error = (fields as { err?: unknown }).err;
    if (error === undefined) return undefined;
    const tracked = health.dependencies();
    if (tracked.includes('postgres') && isPostgresConnectionFailure(error)) return 'postgres';
    if (tracked.includes('nats') && !health.isUp('nats') && isNatsFailure(error)) return 'nats';
    return undefined;
  };
  const reporting = (level: 'warn' | 'error') => (fields: object, message: string) => {
    const dependency = outageOf(fields);
    if (dependency === undefined) return logger[level](fields, message);
    health.down(dependency, (fields as { err?: unknown }).err);
    logger.debug({ ...fields, dependency }, message);
  };
  return {
    debug: (fields, message) => logger.debug(fields, message),
    info: (fields, message) => logger.info(fields, message),
    warn: reporting('warn'),
    error: reporting('error'),
  };
}
