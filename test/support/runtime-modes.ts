// The two ways an API suite starts a node with its actor runtime: embedded
// (in-process bus) and cluster mode (the NATS bus, as production runs), so a
// suite runs its representative cases against real NATS too without copying
// them (issue 27: each item against real Postgres and NATS). Cluster mode
// runs on bus names of its own, deleted when the node closes.
import { startTestApi, type TestApi, type TestApiOptions } from './api';
import { deleteStream, deleteWebhookIntakeDurables, TEST_NATS_URL, uniqueBusNames } from './cluster-harness';

export interface RuntimeMode {
  name: string;
  /** Every case of a suite runs in this mode; otherwise only the ones it marks representative. */
  everyCase: boolean;
  start(options?: Omit<TestApiOptions, 'runtime' | 'natsUrl'>): Promise<TestApi>;
}

export const EMBEDDED_MODE: RuntimeMode = {
  name: 'embedded runtime',
  everyCase: true,
  start: (options = {}) => startTestApi({ ...options, runtime: true }),
};

export const CLUSTER_MODE: RuntimeMode = {
  name: 'cluster mode over NATS',
  everyCase: false,
  async start(options = {}) {
    const busNames = uniqueBusNames();
    const api = await startTestApi({ ...options, runtime: busNames, natsUrl: TEST_NATS_URL });
    const close = api.close.bind(api);
    api.close = async () => {
      await close();
      await deleteWebhookIntakeDurables(busNames.subjectPrefix).catch(() => undefined);
      await deleteStream(busNames.eventStream).catch(() => undefined);
    };
    return api;
  },
};

export const RUNTIME_MODES: readonly RuntimeMode[] = [EMBEDDED_MODE, CLUSTER_MODE];

/**
 * `it` for the cases a suite runs in every mode, and `it` for the rest in
 * the modes that run every case (in the others they are not defined at all).
 */
export function casesOf(mode: RuntimeMode): { representative: Mocha.TestFunction; everyCase: (title: string, run: Mocha.Func | Mocha.AsyncFunc) => void } {
  return {
    representative: it,
    everyCase: (title, run) => {
      if (mode.everyCase) it(title, run);
    },
  };
}
