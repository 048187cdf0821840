// Generic insert/find/update/delete over one entity schema: the four queries
// every table repeats, written once. Reads by id (the hot path: every request
// loads its API key and workspace, every GET its resource) are raw SQL built
// from the entity's metadata, skipping the query builder and TypeORM's query
// runner; entityColumns lets a store join several entities in one statement
// (key + workspace, resource + creator).
import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import type { DataSource, EntityManager, EntitySchema, ObjectLiteral, ValueTransformer } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import type { ProfileRecord } from '../../src/accounts/records';
import type { RecordTable } from '../../src/ports/foundation-store';
import { ProfileEntity } from '../entities/profile.entity';
import { translateDriverError } from './driver-errors';

function fromDatabase(transformer: ValueTransformer | ValueTransformer[], value: unknown): unknown {
  const chain = Array.isArray(transformer) ? [...transformer].reverse() : [transformer];
  return chain.reduce((current, step) => step.from(current), value);
}

/**
 * How each column type reads back from JSON, giving what pg's own parsers
 * give for it: timestamps become Dates (both truncate to the millisecond),
 * float8's NaN and ±Infinity arrive as strings. Bigint columns arrive as JSON
 * numbers, which their entities' transformers take as well as strings.
 */
const JSON_DECODERS: Record<string, (value: unknown) => unknown> = {
  text: (value) => value,
  jsonb: (value) => value,
  boolean: (value) => value,
  integer: (value) => value,
  smallint: (value) => value,
  bigint: (value) => value,
  'double precision': (value) => (typeof value === 'string' ? Number(value) : value),
  timestamptz: (value) => (value === null ? null : new Date(value as string)),
};

/** Postgres takes at most this many arguments in one function call (FUNC_MAX_ARGS). */
const MAX_JSON_ARRAY_ARGUMENTS = 100;

/**
 * One entity's columns in a hand-written SELECT, as one JSON array per row:
 * `json` is the SQL expression (under a table alias), `decode` turns the
 * parsed array back into the record, applying the entity's transformers.
 * A LEFT JOIN that found nothing decodes as null.
 *
 * One JSON column instead of one column per field: pg then parses a single
 * field description and one JSON.parse per row, instead of a description, a
 * name and a type parser per field, which was the largest share of client
 * CPU and of garbage in an authenticated GET (and Postgres sends less).
 */
export interface EntityColumns<T> {
  json: string;
  decode(value: unknown): T | null;
}

export function entityColumns<T extends ObjectLiteral>(manager: EntityManager, entity: EntitySchema<T>, alias: string): EntityColumns<T>;
/** Only the `only` properties (with `id`): less for Postgres to send and pg to parse. */
export function entityColumns<T extends ObjectLiteral, K extends keyof T & string>(
  manager: EntityManager, entity: EntitySchema<T>, alias: string, only: readonly K[],
): EntityColumns<Pick<T, K>>;
export function entityColumns<T extends ObjectLiteral, K extends keyof T & string>(
  manager: EntityManager,
  entity: EntitySchema<T>,
  alias: string,
  only?: readonly K[],
): EntityColumns<Pick<T, K>> {
  const metadata = manager.dataSource.getMetadata(entity);
  // `id` first: its null marks a LEFT JOIN that found nothing.
  const selected = metadata.columns
    .filter((column) => column.propertyName === 'id' || !only || only.includes(column.propertyName as K))
    .sort((a, b) => Number(b.propertyName === 'id') - Number(a.propertyName === 'id'));
  if (selected[0]?.propertyName !== 'id') throw new Error(`${metadata.tableName}: entityColumns needs an id column`);
  if (selected.length > MAX_JSON_ARRAY_ARGUMENTS) throw new Error(`${metadata.tableName}: more than ${MAX_JSON_ARRAY_ARGUMENTS} columns for json_build_array`);
  const columns = selected.map((column) => {
    const decodeType = JSON_DECODERS[String(column.type)];
    if (!decodeType) throw new Error(`${metadata.tableName}.${column.databaseName}: no JSON decoder for column type ${String(column.type)}`);
    const transformer = column.transformer;
    const decode = transformer ? (value: unknown) => fromDatabase(transformer, decodeType(value)) : decodeType;
    return { property: column.propertyName, decode };
  });
  return {
    json: `json_build_array(${selected.map((column) => `${alias}."${column.databaseName}"`).join(', ')})`,
    decode(value) {
      const values = value as unknown[] | null;
      if (!values || values[0] === null) return null;
      const record: Record<string, unknown> = {};
      for (let index = 0; index < columns.length; index++) record[columns[index].property] = columns[index].decode(values[index]);
      return record as Pick<T, K>;
    },
  };
}

/** A read's SQL and the name it is prepared under (derived from the text, so distinct texts never share one). */
export interface ReadStatement {
  name: string;
  text: string;
}

export function readStatement(text: string): ReadStatement {
  return { name: `agentrt_read_${createHash('sha256').update(text).digest('hex').slice(0, 20)}`, text };
}

/** Data sources whose reads run as named prepared statements (usePreparedReads). */
const preparedReadSources = new WeakSet<DataSource>();

/**
 * Lets the reads of readRows on `dataSource` run as named prepared statements:
 * Postgres then parses and plans each once per connection instead of on every
 * request, which was most of its share of an authenticated GET. Only for a
 * Postgres server of the node's own (DATABASE_URL): the embedded PGlite has
 * one session that all connections share, so two of them preparing the same
 * name would collide; a pooler in front of Postgres must keep sessions (or,
 * in transaction mode, support protocol-level prepared statements).
 */
export function usePreparedReads(dataSource: DataSource): void {
  preparedReadSources.add(dataSource);
}

/**
 * Runs a read on the driver's pg pool directly: TypeORM's query runner (made,
 * connected, broadcast to and released around every query) costs about a
 * quarter of the client-side CPU of a one-row read. Inside a transaction (a
 * manager bound to one, or a flow holding one: transaction-context.ts routes
 * `queryRunner` to it) the read goes through the manager, on the
 * transaction's connection, so that it sees the transaction's writes.
 */
export function readRows(manager: EntityManager, statement: ReadStatement, values: unknown[]): Promise<Array<Record<string, unknown>>> {
  if (manager.queryRunner) return manager.query(statement.text, values);
  const pool = (manager.dataSource.driver as PostgresDriver).master as Pool;
  const query = preparedReadSources.has(manager.dataSource) ? { name: statement.name, text: statement.text, values } : { text: statement.text, values };
  return pool.query(query).then((result) => result.rows);
}

/** The table an entity schema maps to, quoted for SQL. */
export function tableOf(manager: EntityManager, entity: EntitySchema<ObjectLiteral>): string {
  return `"${manager.dataSource.getMetadata(entity).tableName}"`;
}

/** `findById` as one raw SQL statement. */
function findByIdQuery<T extends ObjectLiteral>(manager: EntityManager, entity: EntitySchema<T>): (id: string) => Promise<T | null> {
  const columns = entityColumns(manager, entity, 't');
  const statement = readStatement(`SELECT ${columns.json} AS r FROM ${tableOf(manager, entity as EntitySchema<ObjectLiteral>)} t WHERE t."id" = $1`);
  return async (id) => {
    const row = (await readRows(manager, statement, [id]))[0];
    return row ? columns.decode(row.r) : null;
  };
}

/** A resource read with its creator's profile, and any extra per-row figures. */
export interface WithCreator<T, Extra> {
  record: T;
  createdBy: ProfileRecord | null;
  extra: Extra;
}

/**
 * A read by id that also answers the creator's profile (a LEFT JOIN on
 * `profile_id`) and `extra` scalar subqueries over the row aliased `t`
 * (counts for `info`): the whole `info` of a GET in the same round trip.
 * @param extra output name → SQL expression, e.g. `{ variationCount: '(SELECT count(*)::int FROM ... WHERE x = t.id)' }`
 */
export function findWithCreatorQuery<T extends ObjectLiteral & { profileId: string | null }, Extra extends Record<string, unknown> = Record<never, never>>(
  manager: EntityManager,
  entity: EntitySchema<T>,
  extra: { [K in keyof Extra]: string } = {} as { [K in keyof Extra]: string },
): (id: string) => Promise<WithCreator<T, Extra> | null> {
  const resource = entityColumns(manager, entity, 't');
  const creator = entityColumns(manager, ProfileEntity, 'p');
  const extraNames = Object.keys(extra);
  const extras = extraNames.map((name, index) => `${(extra as Record<string, string>)[name]} AS x${index}`);
  const statement = readStatement(`SELECT ${[`${resource.json} AS r`, `${creator.json} AS p`, ...extras].join(', ')}
    FROM ${tableOf(manager, entity as EntitySchema<ObjectLiteral>)} t LEFT JOIN "profiles" p ON p."id" = t."profile_id" WHERE t."id" = $1`);
  return async (id) => {
    const row = (await readRows(manager, statement, [id]))[0];
    const record = row ? resource.decode(row.r) : null;
    if (!row || !record) return null;
    return {
      record,
      createdBy: creator.decode(row.p),
      extra: Object.fromEntries(extraNames.map((name, index) => [name, row[`x${index}`]])) as Extra,
    };
  };
}

/** A RecordTable over `entity`, bound to `manager` (a transaction or the pool). */
export function recordTable<T extends ObjectLiteral & { id: string }>(manager: EntityManager, entity: EntitySchema<T>): RecordTable<T> {
  const repository = manager.getRepository(entity);
  const findById = findByIdQuery(manager, entity);
  return {
    async insert(record) {
      try {
        await repository.insert(record as never);
      } catch (error) {
        throw translateDriverError(error);
      }
      return record;
    },
    findById,
    async update(id, changes) {
      if (Object.keys(changes).length) {
        try {
          await repository.update({ id } as never, changes as never);
        } catch (error) {
          throw translateDriverError(error);
        }
      }
      return findById(id);
    },
    async delete(id) {
      await repository.delete({ id } as never);
    },
  };
}
