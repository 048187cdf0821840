// What chaos-run.ts needs of a scenario: its system, set up; its load and
// faults, then its checks once the system is quiet; a stop for an interrupt.
import type { Checks } from './checks';
import type { ChaosCluster } from './cluster';

/** Objectives created per second (CHAOS_RATE). */
export const RATE = Number(process.env.CHAOS_RATE ?? 5);
/** Calm between two faults (CHAOS_PHASE_MS). */
export const PHASE_MS = Number(process.env.CHAOS_PHASE_MS ?? 15_000);
/** A fault window lasts until this long after the run saw the system recovered. */
export const GRACE_MS = 5_000;

export interface ChaosScenario {
  readonly name: string;
  readonly cluster: ChaosCluster;
  setUp(): Promise<void>;
  /** Load, faults, quiescence, then the checks (not yet reported). */
  run(): Promise<Checks>;
  /** Stops the scenario's timers (load, probes) before teardown. */
  stop(): void;
}
