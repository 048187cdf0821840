// Prometheus metrics of the actor runtime, on prom-client's default registry.
// Created once per process (several runtimes in one test process share them).
import { Counter, Gauge, Histogram, register, type Metric } from 'prom-client';

function once<T extends Metric>(name: string, create: () => T): T {
  return (register.getSingleMetric(name) as T | undefined) ?? create();
}

/** The runtime's metrics. */
export const runtimeMetrics = {
  activations: once('agentrt_actor_activations_total', () => new Counter({ name: 'agentrt_actor_activations_total', help: 'Actors activated', labelNames: ['kind'] })),
  passivations: once(
    'agentrt_actor_passivations_total',
    () => new Counter({ name: 'agentrt_actor_passivations_total', help: 'Actors stopped (idle passivation, handoff, crash)', labelNames: ['kind'] }),
  ),
  activeActors: once('agentrt_actor_active', () => new Gauge({ name: 'agentrt_actor_active', help: 'Actors currently active on this node, by kind', labelNames: ['kind'] })),
  mailboxDepth: once('agentrt_actor_mailbox_depth', () => new Gauge({ name: 'agentrt_actor_mailbox_depth', help: 'Messages accepted and not yet handled on this node' })),
  askDuration: once(
    'agentrt_actor_ask_duration_seconds',
    () =>
      new Histogram({
        name: 'agentrt_actor_ask_duration_seconds',
        help: 'Ask latency as seen by the caller, retries included',
        labelNames: ['kind', 'outcome'],
        buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      }),
  ),
  turnDuration: once(
    'agentrt_actor_turn_duration_seconds',
    () =>
      new Histogram({
        name: 'agentrt_actor_turn_duration_seconds',
        help: "The runtime's own time per turn: from the decision to its commit (building the write, group commit, fence, journal, outbox, projection); the behaviour's decide is not in it",
        labelNames: ['kind'],
        buckets: [0.0005, 0.001, 0.0015, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      }),
  ),
  outboxLag: once('agentrt_actor_outbox_lag_seconds', () => new Gauge({ name: 'agentrt_actor_outbox_lag_seconds', help: 'Age of the oldest unpublished event of the shards owned here' })),
  outboxPublished: once('agentrt_actor_outbox_published_total', () => new Counter({ name: 'agentrt_actor_outbox_published_total', help: 'Events published from the outbox' })),
  ownedShards: once('agentrt_actor_owned_shards', () => new Gauge({ name: 'agentrt_actor_owned_shards', help: 'Shards owned by this node' })),
  fencedWrites: once('agentrt_actor_fenced_writes_total', () => new Counter({ name: 'agentrt_actor_fenced_writes_total', help: 'State writes refused because the shard epoch moved on' })),
  leaseLosses: once('agentrt_actor_lease_losses_total', () => new Counter({ name: 'agentrt_actor_lease_losses_total', help: 'Lease sessions lost (self-fencing)' })),
  effectFailures: once('agentrt_actor_effect_failures_total', () => new Counter({ name: 'agentrt_actor_effect_failures_total', help: 'Effect runs that failed (an error, a deadline)', labelNames: ['kind'] })),
  effectsRunning: once('agentrt_actor_effects_running', () => new Gauge({ name: 'agentrt_actor_effects_running', help: 'Effect runs in progress on this node' })),
  staleEffectResults: once(
    'agentrt_actor_stale_effect_results_total',
    () => new Counter({ name: 'agentrt_actor_stale_effect_results_total', help: 'Effect results refused because the shard moved on while the effect ran' }),
  ),
  recoveries: once('agentrt_actor_recoveries_total', () => new Counter({ name: 'agentrt_actor_recoveries_total', help: 'Actors with unfinished work activated after a shard was acquired' })),
};
