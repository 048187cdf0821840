// The embedded database's connection budget: the pools of an embedded node
// (the API's and the actor runtime's) plus the rooms kept free never ask for
// more connections than the socket server accepts, a runtime pool that would
// not fit is refused naming its variable, and the server really serves every
// pool at its maximum at once (while it refuses the connection past its limit,
// which is what a pool must never meet).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { defaultRuntimeOptions } from '../../actors';
import { createDataSource } from '../../persistence/data-source';
import {
  EMBEDDED_MAX_CONNECTIONS,
  embeddedConnectionBudget,
  embeddedRuntimePoolLimit,
  startEmbeddedPostgres,
  type EmbeddedConnectionBudget,
  type EmbeddedPostgres,
} from '../../persistence/embedded-postgres';
import { RuntimeDatabase } from '../../persistence/runtime/runtime-database';
import { ConfigError } from '../../src/config';

function total(budget: EmbeddedConnectionBudget): number {
  return budget.apiPoolSize + budget.runtimePoolSize + budget.operatorConnections + budget.closingConnections;
}

describe('embedded database connection budget', function () {
  this.timeout(60_000);

  describe('the rule', () => {
    it('fits the runtime pool at its default size, and every part together within the server limit', () => {
      const budget = embeddedConnectionBudget(defaultRuntimeOptions().databasePoolSize);
      assert.equal(budget.serverConnections, EMBEDDED_MAX_CONNECTIONS);
      assert.equal(budget.runtimePoolSize, defaultRuntimeOptions().databasePoolSize);
      assert.ok(total(budget) <= budget.serverConnections, `${total(budget)} connections budgeted, ${budget.serverConnections} served`);
      assert.ok(budget.operatorConnections >= 1, 'room is kept for an operator’s psql');
    });

    it('accepts every runtime pool size up to the limit, and the parts never exceed the server', () => {
      for (let size = 1; size <= embeddedRuntimePoolLimit(); size += 1) {
        const budget = embeddedConnectionBudget(size);
        assert.ok(total(budget) <= budget.serverConnections, `runtime pool ${size}: ${total(budget)} > ${budget.serverConnections}`);
      }
    });

    it('refuses a runtime pool past the limit with a ConfigError naming AGENTRT_RUNTIME_POOL_SIZE and the most it may be', () => {
      const limit = embeddedRuntimePoolLimit();
      assert.throws(
        () => embeddedConnectionBudget(limit + 1),
        (error: unknown) =>
          error instanceof ConfigError && error.message.includes('AGENTRT_RUNTIME_POOL_SIZE') && error.message.includes(`is ${limit + 1}`) && error.message.includes(`at most ${limit}`),
      );
    });

    it('sizes the runtime pool from the server limit it is given', () => {
      assert.equal(embeddedRuntimePoolLimit(EMBEDDED_MAX_CONNECTIONS + 4), embeddedRuntimePoolLimit() + 4);
      assert.throws(() => embeddedConnectionBudget(embeddedRuntimePoolLimit(), EMBEDDED_MAX_CONNECTIONS - 1), ConfigError);
    });
  });

  describe('against the socket server', () => {
    const budget = embeddedConnectionBudget(defaultRuntimeOptions().databasePoolSize);
    let dataDir: string;
    let embedded: EmbeddedPostgres;
    let dataSource: DataSource | undefined;
    let runtimeDatabase: RuntimeDatabase | undefined;
    const clients: Client[] = [];

    before(async () => {
      dataDir = await mkdtemp(path.join(tmpdir(), 'agentrt-budget-'));
      embedded = await startEmbeddedPostgres({ dataDir, maxConnections: budget.serverConnections });
    });

    after(async () => {
      await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
      await runtimeDatabase?.close();
      if (dataSource?.isInitialized) await dataSource.destroy();
      await embedded?.stop();
      await rm(dataDir, { recursive: true, force: true });
    });

    async function connectClient(): Promise<Client> {
      const client = new Client({ connectionString: embedded.url });
      // A connection the server drops emits 'error' after connect; the query reports it.
      client.on('error', () => undefined);
      clients.push(client);
      await client.connect();
      await client.query('SELECT 1');
      return client;
    }

    it('serves both pools at their maximum and the operator’s connections at once', async () => {
      dataSource = createDataSource({ url: embedded.url, poolSize: budget.apiPoolSize });
      await dataSource.initialize();
      runtimeDatabase = new RuntimeDatabase({ url: embedded.url, poolSize: budget.runtimePoolSize });
      // Three times as many queries as connections: each pool opens every connection it may.
      const burst = [
        ...Array.from({ length: budget.apiPoolSize * 3 }, () => dataSource!.query('SELECT 1 AS one')),
        ...Array.from({ length: budget.runtimePoolSize * 3 }, () => runtimeDatabase!.query('SELECT 1 AS one')),
        ...Array.from({ length: budget.operatorConnections }, () => connectClient()),
      ];
      const outcomes = await Promise.allSettled(burst);
      assert.deepEqual(outcomes.filter((outcome) => outcome.status === 'rejected'), []);
    });

    it('refuses a connection past its limit (what the budget keeps every pool from meeting)', async () => {
      // Pools and operator hold apiPoolSize + runtimePoolSize + operatorConnections; the closing room fills the rest.
      for (let n = 0; n < budget.closingConnections; n += 1) await connectClient();
      await assert.rejects(connectClient(), /ECONNRESET|Connection terminated|too many/i);
    });
  });
});
