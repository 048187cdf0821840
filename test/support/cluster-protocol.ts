// The IPC requests a test drives a cluster node process with.
import type { CounterCommand } from './cluster-counter';

export type NodeRequest =
  | { op: 'ask'; kind: string; id: string; message: unknown; timeoutMs?: number }
  | { op: 'burst'; id: string; count: number; concurrency: number; command: CounterCommand; timeoutMs?: number }
  | { op: 'latencies'; ids: string[]; count: number; concurrency: number; message?: CounterCommand; ratePerSecond?: number }
  | { op: 'activate'; prefix: string; count: number; concurrency: number }
  | { op: 'status' }
  | { op: 'cluster' }
  /** Effect runs of these ids, once their handler has a value, wait for `releaseEffects` or the end of the next `freeze` before they return it. */
  | { op: 'holdEffects'; effectIds: string[] }
  /** Lets the held runs of these ids return their values now (answers the ids released). */
  | { op: 'releaseEffects'; effectIds: string[] }
  /**
   * The process stops itself (SIGSTOP) from inside this request, with the held
   * effect runs' values ready; after SIGCONT it first lets those runs report
   * (before the event loop runs anything else, e.g. the lease watchdog), then answers.
   */
  | { op: 'freeze' }
  | { op: 'memory' }
  | { op: 'stop' };

/** What `status` answers. */
export interface NodeStatus {
  nodeId: string;
  /** The runtime's subject prefix and event stream in force: the configured ones with the cluster id. */
  bus: { subjectPrefix: string; eventStream: string };
  owned: number[];
  active: number;
  /** Activations since the process started. */
  activations: number;
  fencedWrites: number;
  leaseLosses: number;
  /** Effect results this node refused to record because the shard moved on while the effect ran. */
  staleEffectResults: number;
  /** Effect runs in progress on this node now. */
  effectsRunning: number;
  /** Actors with unfinished work activated after this node acquired shards. */
  recoveries: number;
  /** Effect handler runs that ended in this process, in the order they ended. */
  effectRuns: EffectRunRecord[];
  /** Effect ids whose runs have a value and wait (see holdEffects). */
  heldEffects: string[];
  /** The shards this node started handing off while it kept running (a rebalance), as its balancer logged them. */
  handoffsStarted: number[];
  /** This process's wall clock (Date.now(), skewed when AGENTRT_TEST_CLOCK_SKEW_MS is set). */
  now: number;
}

/** One effect handler run as the node process saw it end. */
export interface EffectRunRecord {
  actorId: string;
  effectId: string;
  attempt: number;
  /** ok: the handler returned a value; failed: it threw (aborted: its signal was aborted). */
  outcome: 'ok' | 'failed' | 'aborted';
}

/** What `freeze` answers once the process runs again. */
export interface FreezeResult {
  /** How long the process was stopped (wall clock). */
  stoppedMs: number;
  /** Effect ids whose held runs were let go to report. */
  released: string[];
}

/** What `burst` answers: reply values of acknowledged asks, and failures. */
export interface BurstResult {
  acked: number[];
  failed: string[];
}
