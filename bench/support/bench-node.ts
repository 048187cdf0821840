// The benches' node: the real API, and the actor runtime when asked, in this
// process (test/support/api.ts, the tests' in-process node) over the process's
// fresh Postgres database, its rate limits out of the way and its logs quiet.
// close() stops it and drops the database. One start-up for every bench that
// runs a node, so their figures come from the same composition.
import type { DestinationStream } from 'pino';
import type { RuntimeOptions } from '../../actors';
import { startTestApi, type TestApi } from '../../test/support/api';
import type { TestDatabase } from '../../test/support/database';
import { sharedTestDatabase } from '../../test/support/global-setup';

/** Rate limits no bench reaches: a bench measures the work, not the limiter's refusals. */
const UNLIMITED = '1000000';

export interface BenchNodeOptions {
  /** Log level. @default 'silent' */
  logLevel?: string;
  /** Where the log lines go. @default kept in memory (TestApi.logs) */
  logDestination?: DestinationStream;
  /** The API's database pool size. @default 10 */
  poolSize?: number;
  /** The actor runtime, with these settings over the test node's (shard count 16, outbox polled every 50 ms). @default none: objective commands answer UNAVAILABLE */
  runtime?: boolean | Partial<RuntimeOptions>;
  /** NATS for the runtime (cluster mode; give `runtime` a unique subjectPrefix and eventStream). @default none: the in-process bus */
  natsUrl?: string;
  /** Settings beside the unlimited rate limits (AGENTRT_ALLOW_PRIVATE_NETWORK for a loopback tool or receiver). @default none */
  env?: Record<string, string>;
}

export interface BenchNode extends TestApi {
  /** The process's fresh database (the one sharedTestDatabase answers). */
  database: TestDatabase;
  /** Stops the node, then drops the database unless `keepDatabase`. */
  close(options?: { keepDatabase?: boolean }): Promise<void>;
}

/** Starts the bench's node on an ephemeral loopback port. */
export async function startBenchNode(options: BenchNodeOptions = {}): Promise<BenchNode> {
  const database = await sharedTestDatabase();
  const api = await startTestApi({
    database,
    logLevel: options.logLevel ?? 'silent',
    logDestination: options.logDestination,
    poolSize: options.poolSize ?? 10,
    runtime: options.runtime,
    natsUrl: options.natsUrl,
    env: { AGENTRT_RATE_LIMIT_PER_SECOND: UNLIMITED, AGENTRT_RATE_LIMIT_BURST: UNLIMITED, ...options.env },
  }).catch(async (error: unknown) => {
    await database.drop().catch(() => undefined);
    throw error;
  });
  return {
    ...api,
    database,
    async close({ keepDatabase = false } = {}) {
      await api.close();
      if (!keepDatabase) await database.drop();
    },
  };
}
