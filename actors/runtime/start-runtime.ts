// Picks the runtime's mode. With a NATS URL: NATS bus, JetStream publication
// and Postgres advisory-lock leases (a cluster node). Without: in-process bus,
// publisher and leases, one node owning every shard (embedded mode, PGlite).
import { connect } from '@nats-io/transport-node';
import type { DataSource } from 'typeorm';
import { ConfigError } from '../../src/config';
import type { AnyActorBehavior } from '../../src/ports/actor-behavior';
import { MemoryBus } from '../bus/memory-bus';
import { NatsBus } from '../bus/nats-bus';
import { JetStreamPublisher } from '../events/jetstream-publisher';
import { MemoryEventPublisher } from '../events/memory-event-publisher';
import { MemoryLeaseProvider } from '../leases/memory-lease-provider';
import { PgLeaseProvider } from '../leases/pg-lease-provider';
import { defaultRuntimeOptions, type RuntimeOptions } from '../runtime-options';
import { ActorRuntime, type ActorRuntimeDeps } from './actor-runtime';
import type { RuntimeLogger } from './runtime-logger';

/** How the server starts the runtime. */
export interface StartActorRuntimeOptions {
  /** The node's initialized (and migrated) data source. */
  dataSource: DataSource;
  /** Postgres URL for the lease connection; required with `natsUrl`. */
  databaseUrl?: string;
  /** NATS URL; unset selects embedded mode. */
  natsUrl?: string;
  /** The actor kinds this node hosts. */
  behaviors: AnyActorBehavior[];
  /** Runtime options (see runtimeOptionsFromEnv). */
  options?: Partial<RuntimeOptions>;
  logger?: RuntimeLogger;
}

type Ports = Pick<ActorRuntimeDeps, 'bus' | 'leases' | 'publisher' | 'onStopped'>;

async function clusterPorts(natsUrl: string, databaseUrl: string, options: RuntimeOptions): Promise<Ports> {
  const connection = await connect({ servers: natsUrl, name: options.nodeId });
  return {
    bus: new NatsBus(connection, false),
    publisher: new JetStreamPublisher(connection, { stream: options.eventStream, subjects: [`${options.subjectPrefix}.events.>`] }),
    leases: new PgLeaseProvider({ url: databaseUrl, leaseTimeoutMs: options.leaseTimeoutMs, applicationName: `agentrt-lease-${options.nodeId}` }),
    onStopped: () => connection.drain(),
  };
}

function embeddedPorts(scope: string): Ports {
  return { bus: new MemoryBus(), publisher: new MemoryEventPublisher(), leases: new MemoryLeaseProvider(scope) };
}

/**
 * Starts the actor runtime of this node in cluster or embedded mode.
 * @throws ConfigError when `natsUrl` is set without `databaseUrl` (leases need real Postgres).
 * @throws FailedPreconditionError when the cluster was created with another shard count.
 */
export async function startActorRuntime(setup: StartActorRuntimeOptions): Promise<ActorRuntime> {
  const options = { ...defaultRuntimeOptions(), ...setup.options };
  if (setup.natsUrl && !setup.databaseUrl) throw new ConfigError('NATS_URL needs DATABASE_URL: shard leases are Postgres advisory locks');
  const ports = setup.natsUrl ? await clusterPorts(setup.natsUrl, setup.databaseUrl!, options) : embeddedPorts(setup.databaseUrl ?? 'embedded');
  try {
    // No databaseUrl: the embedded PGlite, one node (no takeover to protect), which freezes when an idle timeout expires.
    const journalIdleTimeoutMs = setup.databaseUrl ? undefined : 0;
    return await ActorRuntime.start({ dataSource: setup.dataSource, behaviors: setup.behaviors, options, logger: setup.logger, journalIdleTimeoutMs, ...ports });
  } catch (error) {
    await ports.bus.close().catch(() => undefined);
    await ports.onStopped?.().catch(() => undefined);
    throw error;
  }
}
