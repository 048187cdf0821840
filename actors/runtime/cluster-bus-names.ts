// The names a cluster uses on its NATS server, made its own by the cluster id
// kept in its database: two clusters configured alike (the default
// AGENTRT_SUBJECT_PREFIX and AGENTRT_EVENT_STREAM: staging next to production,
// two test runs) share a server without sharing a shard subject, the runtime's
// event stream or a durable consumer. Embedded mode keeps the configured
// names: its bus is in-process and its event log lives in its own database.
import type { RuntimeOptions } from '../runtime-options';

export type BusNames = Pick<RuntimeOptions, 'subjectPrefix' | 'eventStream'>;

/** `<prefix>.<clusterId>` for every subject, `<stream>_<clusterId>` for the runtime's own stream. */
export function clusterBusNames(configured: BusNames, clusterId: string): BusNames {
  return { subjectPrefix: `${configured.subjectPrefix}.${clusterId}`, eventStream: `${configured.eventStream}_${clusterId}` };
}
