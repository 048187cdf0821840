// Mocha root hooks: one fresh, migrated database for the whole run, shared by
// the API suites (each test isolates itself with its own account). Suites that
// need a database of their own call createTestDatabase() directly.
import { createTestDatabase, type TestDatabase } from './database';

let shared: TestDatabase | undefined;
let pending: Promise<TestDatabase> | undefined;

/** The run's shared database, created on first use. */
export async function sharedTestDatabase(): Promise<TestDatabase> {
  pending ??= createTestDatabase().then((database) => (shared = database));
  return pending;
}

export const mochaHooks = {
  async afterAll(this: unknown) {
    if (shared && !process.env.KEEP_TEST_DATABASE) await shared.drop();
  },
};
