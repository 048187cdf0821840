// The IPC requests a test drives a cluster node process with.
import type { CounterCommand } from './cluster-counter';

export type NodeRequest =
  | { op: 'ask'; kind: string; id: string; message: unknown; timeoutMs?: number }
  | { op: 'burst'; id: string; count: number; concurrency: number; command: CounterCommand; timeoutMs?: number }
  | { op: 'latencies'; ids: string[]; count: number; concurrency: number; message?: CounterCommand; ratePerSecond?: number }
  | { op: 'activate'; prefix: string; count: number; concurrency: number }
  | { op: 'status' }
  | { op: 'cluster' }
  | { op: 'memory' }
  | { op: 'stop' };

/** What `status` answers. */
export interface NodeStatus {
  nodeId: string;
  owned: number[];
  active: number;
  /** Activations since the process started. */
  activations: number;
  fencedWrites: number;
  leaseLosses: number;
}

/** What `burst` answers: reply values of acknowledged asks, and failures. */
export interface BurstResult {
  acked: number[];
  failed: string[];
}
