// What chaos-run.ts needs of a scenario: its system, set up; its load and
// faults, then its checks once the system is quiet; a stop for an interrupt.
import type { Checks } from './checks';
import type { ChaosCluster } from './cluster';

export interface ChaosScenario {
  readonly name: string;
  readonly cluster: ChaosCluster;
  setUp(): Promise<void>;
  /** Load, faults, quiescence, then the checks (not yet reported). */
  run(): Promise<Checks>;
  /** Stops the scenario's timers (load, probes) before teardown. */
  stop(): void;
}
