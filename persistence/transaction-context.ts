// Routes every query issued inside a transaction's async flow through that
// transaction's connection. Without it, code holding a transaction that reads
// through the pool (a model lookup, creator profiles) waits on a second
// connection: on Postgres it does not see its own uncommitted writes, and on
// the embedded PGlite, which serialises a transaction against every other
// connection, it waits forever.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager } from 'typeorm';

const openTransaction = new AsyncLocalStorage<EntityManager>();

/** The manager of the transaction open in this async flow, if it is still usable. */
function activeTransaction(): EntityManager | undefined {
  const manager = openTransaction.getStore();
  return manager && !manager.queryRunner?.isReleased ? manager : undefined;
}

type TransactionCallback = (manager: EntityManager) => Promise<unknown>;

/** Wraps the callback of `transaction(fn)` / `transaction(isolation, fn)` so its flow knows its manager. */
function withContext(args: unknown[]): unknown[] {
  // DataSource.transaction always passes two arguments, the second undefined
  // when the first is the callback: wrap whichever is the function.
  return args.map((arg) =>
    typeof arg === 'function' ? (manager: EntityManager) => openTransaction.run(manager, () => (arg as TransactionCallback)(manager)) : arg,
  );
}

/**
 * Installs the routing on a data source (before stores take its manager):
 * `dataSource.manager`, `dataSource.query` and `dataSource.transaction` then
 * use the open transaction of the calling flow when there is one.
 */
export function routeQueriesThroughOpenTransactions(dataSource: DataSource): DataSource {
  const base = dataSource.manager;
  const routed = new Proxy(base, {
    get(target, property, receiver) {
      const transaction = activeTransaction();
      const source = transaction ?? target;
      const value = Reflect.get(source, property, transaction ?? receiver);
      if (property === 'transaction' && typeof value === 'function') {
        return (...args: unknown[]) => value.apply(transaction ?? receiver, withContext(args));
      }
      // Without a transaction, methods run with the proxy as `this`, so the
      // repositories they create keep routing through it.
      return typeof value === 'function' && transaction ? value.bind(transaction) : value;
    },
  });
  Object.defineProperty(dataSource, 'manager', { value: routed, configurable: true, writable: true });
  const query = dataSource.query.bind(dataSource);
  Object.defineProperty(dataSource, 'query', {
    configurable: true,
    writable: true,
    value: (sql: string, parameters?: unknown[], queryRunner?: Parameters<DataSource['query']>[2]) =>
      query(sql, parameters, queryRunner ?? activeTransaction()?.queryRunner),
  });
  return dataSource;
}

/**
 * True while the calling async flow holds an open transaction of a routed
 * data source. The actor runtime refuses calls from there (see ActorClient).
 */
export function isInsideTransaction(): boolean {
  return activeTransaction() !== undefined;
}
