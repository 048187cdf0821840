// Public surface of the actor runtime. Other folders import only from here.
export { startActorRuntime, type StartActorRuntimeOptions } from './runtime/start-runtime';
export { ActorRuntime, type ActorRuntimeDeps } from './runtime/actor-runtime';
export { readClusterStatus, type ClusterStatus } from './runtime/cluster-status';
export { type CallOptions } from './runtime/actor-client';
export { type RuntimeLogger } from './runtime/runtime-logger';
export { defaultRuntimeOptions, runtimeOptionsFromEnv, type RuntimeOptions } from './runtime-options';
export { runtimeMetrics } from './metrics';
export { DependencyHealth, DEPENDENCY_NAMES, type Dependency, type DependencyListener } from './runtime/dependency-health';
export { MemoryBus } from './bus/memory-bus';
export { NatsBus } from './bus/nats-bus';
export { closeNatsConnection, connectToNats, NATS_RECONNECT_OPTIONS, natsConnectionOptions, NatsConnectionWatch } from './bus/nats-connection';
export { MemoryLeaseProvider } from './leases/memory-lease-provider';
export { PgLeaseProvider, type PgLeaseProviderOptions } from './leases/pg-lease-provider';
export { MemoryEventPublisher } from './events/memory-event-publisher';
export { JetStreamPublisher, type JetStreamPublisherOptions } from './events/jetstream-publisher';
export { EmbeddedEventLog, type EmbeddedEventLogOptions } from './events/embedded-event-log';
export { JetStreamConsumers, type JetStreamConsumersOptions } from './events/jetstream-consumers';
export { JetStreamTopology, type JetStreamTopologyOptions } from './events/jetstream-topology';
