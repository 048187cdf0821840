// What every node hosts on its actor runtime, in one place for the server and
// the tests: the actor kinds (objectives, webhook endpoints, schedules, erasures) bound to the
// node's services, the consumers that feed them (the webhook intake), the
// node's periodic work (the episodic memory and widget session sweepers), and
// the objectives' live feed bound to the runtime's bus.
import type { Services } from '../../src/ports/services';
import type { ActorKind } from '../../src/ports/actor-behavior';
import type { ConsumerHandle } from '../../src/ports/event-consumer';
import type { ActorRuntime } from '../runtime/actor-runtime';
import type { RuntimeLogger } from '../runtime/runtime-logger';
import { createErasureKind } from './erasure.kind';
import { createObjectiveKind } from './objective.kind';
import { createScheduleKind } from './schedule.kind';
import { EpisodicMemorySweeper } from './episodic-memory-sweeper';
import { WidgetSessionSweeper } from './widget-session-sweeper';
import { createWebhookEndpointKind } from './webhook-endpoint.kind';
import { startWebhookIntake } from './webhook-intake';

type KindServices = Pick<
  Services, 'objectiveEffects' | 'objectivesStore' | 'objectives' | 'webhookEffects' | 'webhookDeliveriesStore' | 'schedulesStore' | 'erasureRuntime' | 'eventRetentionMs' | 'widgetVerifier'
    | 'objectiveLive'
    | 'usageStore'
>;
type NodeServices = KindServices & Pick<Services, 'episodicMemory' | 'episodicSweepIntervalMs' | 'widgetSessions'>;

export function nodeKinds(services: KindServices): ActorKind[] {
  return [
    createObjectiveKind({
      ...services.objectiveEffects, store: services.objectivesStore, prepareChild: (input) => services.objectives.prepareChild(input), eventRetentionMs: services.eventRetentionMs,
      sessionSecrets: (sessionId) => services.widgetVerifier.sessionSecrets(sessionId), live: services.objectiveLive,
    }),
    createWebhookEndpointKind({ ...services.webhookEffects, store: services.webhookDeliveriesStore }),
    createScheduleKind({ objectives: services.objectives, store: services.schedulesStore }),
    createErasureKind({
      objectives: services.objectives, deliveries: services.webhookDeliveriesStore, webhookUrlOf: services.webhookEffects.webhookUrlOf, runtime: services.erasureRuntime,
      usage: services.usageStore,
    }),
  ];
}

/** Starts the consumers and the periodic work of a node's runtime, and binds the live feed to it; the runtime stops them when it stops. */
export async function startNodeConsumers(runtime: ActorRuntime, services: NodeServices, logger: RuntimeLogger): Promise<ConsumerHandle[]> {
  services.objectiveLive.bind(runtime);
  const live = { stop: async () => services.objectiveLive.unbind() };
  runtime.stopWith(live);
  const sweeper = new EpisodicMemorySweeper({ episodic: services.episodicMemory, intervalMs: services.episodicSweepIntervalMs, logger });
  sweeper.start();
  runtime.stopWith(sweeper);
  const sessionSweeper = new WidgetSessionSweeper({ sessions: services.widgetSessions, logger });
  sessionSweeper.start();
  runtime.stopWith(sessionSweeper);
  return [await startWebhookIntake({ runtime, webhookUrlOf: services.webhookEffects.webhookUrlOf, logger }), sweeper, sessionSweeper, live];
}
