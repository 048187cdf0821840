// Picks the runtime's mode. With a NATS URL: NATS bus, JetStream publication
// and Postgres advisory-lock leases (a cluster node). Without: in-process bus,
// publisher and leases, one node owning every shard (embedded mode, PGlite).
import type { DataSource } from 'typeorm';
import { ConfigError } from '../../src/config';
import type { ActorKind } from '../../src/ports/actor-behavior';
import { RUNTIME_SESSION_SETTINGS, RuntimeDatabase } from '../../persistence/runtime/runtime-database';
import { isInsideTransaction } from '../../persistence/transaction-context';
import { MemoryBus } from '../bus/memory-bus';
import { NatsBus } from '../bus/nats-bus';
import { closeNatsConnection, connectToNats, NatsConnectionWatch } from '../bus/nats-connection';
import { JetStreamPublisher } from '../events/jetstream-publisher';
import { EmbeddedEventLog } from '../events/embedded-event-log';
import { JetStreamConsumers } from '../events/jetstream-consumers';
import { JetStreamTopology } from '../events/jetstream-topology';
import { MemoryLeaseProvider } from '../leases/memory-lease-provider';
import { PgLeaseProvider } from '../leases/pg-lease-provider';
import { defaultRuntimeOptions, type RuntimeOptions } from '../runtime-options';
import { ActorRuntime, type ActorRuntimeDeps } from './actor-runtime';
import type { DependencyHealth } from './dependency-health';
import { tuneHeapForActorRuntime } from './heap-tuning';
import { defaultRuntimeLogger, type RuntimeLogger } from './runtime-logger';

/** How the server starts the runtime. */
export interface StartActorRuntimeOptions {
  /** The node's initialized (and migrated) data source: the runtime opens its own pool to the same database. */
  dataSource: DataSource;
  /** Postgres URL for the lease connection; required with `natsUrl`. @default the data source's URL (embedded) */
  databaseUrl?: string;
  /** NATS servers, comma-separated (`nats://a:4222,nats://b:4222`); unset selects embedded mode. */
  natsUrl?: string;
  /** The actor kinds this node hosts. */
  kinds: ActorKind[];
  /** Runtime options (see runtimeOptionsFromEnv). */
  options?: Partial<RuntimeOptions>;
  logger?: RuntimeLogger;
  /** Told when the NATS connection is lost and back (cluster mode: the dependency "nats"). */
  health?: DependencyHealth;
}

type Ports = Pick<ActorRuntimeDeps, 'bus' | 'leases' | 'publisher' | 'consumers' | 'onStopped' | 'eventsOnBus'>;

/** The URL the data source connects to (every data source of ours is created from one). */
function dataSourceUrl(dataSource: DataSource): string {
  const url = (dataSource.options as { url?: string }).url;
  if (!url) throw new ConfigError('the actor runtime needs a data source created from a URL');
  return url;
}

async function clusterPorts(natsUrl: string, databaseUrl: string, options: RuntimeOptions, logger: RuntimeLogger, health: DependencyHealth | undefined): Promise<Ports> {
  const connection = await connectToNats(natsUrl, options.nodeId);
  const watch = NatsConnectionWatch.of(connection);
  watch.reportTo(health, logger);
  // One topology for the publisher and the consumers: whichever meets a server that lost them declares them all again.
  const topology = new JetStreamTopology(connection, { logger, replicas: options.jetStreamReplicas });
  return {
    bus: new NatsBus(connection, false),
    publisher: new JetStreamPublisher(connection, { logger, topology }),
    consumers: new JetStreamConsumers(connection, { logger, topology }),
    leases: new PgLeaseProvider({ url: databaseUrl, leaseTimeoutMs: options.leaseTimeoutMs, applicationName: `agentrt-lease-${options.nodeId}` }),
    onStopped: () => closeNatsConnection(connection),
    // JetStream publishes on the bus's connection: core subscribers of an event's subject get it too.
    eventsOnBus: true,
  };
}

// Events and durable consumers live in the database: the same guarantees as JetStream, across restarts.
function embeddedPorts(scope: string, database: RuntimeDatabase, logger: RuntimeLogger): Ports {
  const log = new EmbeddedEventLog(database, { logger });
  return { bus: new MemoryBus(), publisher: log, consumers: log, leases: new MemoryLeaseProvider(scope) };
}

/**
 * Starts the actor runtime of this node in cluster or embedded mode.
 * @throws ConfigError when `natsUrl` is set without `databaseUrl` (leases need real Postgres).
 * @throws FailedPreconditionError when the cluster was created with another shard count.
 */
export async function startActorRuntime(setup: StartActorRuntimeOptions): Promise<ActorRuntime> {
  const options = { ...defaultRuntimeOptions(), ...setup.options };
  tuneHeapForActorRuntime();
  if (setup.natsUrl && !setup.databaseUrl) throw new ConfigError('NATS_URL needs DATABASE_URL: shard leases are Postgres advisory locks');
  const logger = setup.logger ?? defaultRuntimeLogger();
  const database = new RuntimeDatabase({
    url: setup.databaseUrl ?? dataSourceUrl(setup.dataSource),
    poolSize: options.databasePoolSize,
    applicationName: `agentrt-runtime-${options.nodeId}`,
    ...(setup.databaseUrl ? { sessionSettings: RUNTIME_SESSION_SETTINGS } : {}),
  });
  let ports: Ports;
  try {
    ports = setup.natsUrl ? await clusterPorts(setup.natsUrl, setup.databaseUrl!, options, logger, setup.health) : embeddedPorts(setup.databaseUrl ?? 'embedded', database, logger);
  } catch (error) {
    await database.close().catch(() => undefined);
    throw error;
  }
  try {
    // No databaseUrl: the embedded PGlite, one node (no takeover to protect), which freezes when an idle timeout expires.
    const journalIdleTimeoutMs = setup.databaseUrl ? undefined : 0;
    return await ActorRuntime.start({
      database, kinds: setup.kinds, options, logger, journalIdleTimeoutMs, insideTransaction: isInsideTransaction, health: setup.health, ...ports,
      // A NATS server may serve other clusters configured alike; the in-process bus serves this node alone.
      clusterScopedNames: Boolean(setup.natsUrl),
    });
  } catch (error) {
    await ports.bus.close().catch(() => undefined);
    await ports.onStopped?.().catch(() => undefined);
    await database.close().catch(() => undefined);
    throw error;
  }
}
