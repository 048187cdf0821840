// Seeded fuzz requests from the served OpenAPI document: for each operation a
// fast-check arbitrary of requests whose path ids are real ids of resources
// the fuzzer created (so requests reach the handlers), ids of another account,
// missing or malformed ids; query values and JSON bodies valid by the schema;
// then one mutation (mutations.ts). Some cases are concurrent pairs of writes
// on the same rows. Case `i` of seed `s` is always the same request.
import fc from 'fast-check';
import { bodyMutation, MALFORMED_IDS, queryMutation, serialize, UNICODE_EDGES, type RawBody } from './mutations';
import { isWrite, parameterKind, type Operation, type Parameter } from './operations';
import { schemaArbitrary, type JsonSchema, type PropertyHint } from './schema-arbitrary';

/** Ids the generator may put in paths and bodies. */
export interface IdPools {
  /** Ids of resources the fuzzer created, by kind (`agent`, `agentvar`, `ws`, `bundle`, …). */
  stable: Record<string, string[]>;
  /** One id per kind from another account: every use must answer 4xx. */
  foreign: Record<string, string>;
  /** Kinds the runner creates on demand for a `{{fresh:kind}}` placeholder. */
  creatable: string[];
}

/**
 * Whose credential a request carries: `owner` is the natural full-access
 * credential for the route (resolved by the runner), `global` the account's
 * global key, `foreign` another account's key, `anonymous` none, `header`
 * an Authorization header set by the request itself.
 */
export type PrincipalKind = 'owner' | 'global' | 'foreign' | 'anonymous' | 'header';

export interface FuzzRequest {
  operationId: string;
  method: string;
  /** Path and query; may hold `{{fresh:kind}}` placeholders the runner fills. */
  target: string;
  headers: Record<string, string | string[]>;
  principal: PrincipalKind;
  body?: RawBody;
  /** The mutation applied (`valid` for none). */
  mutation: string;
  stream: boolean;
  /** The path names another account's resource: a 2xx would be a tenant leak. */
  namesForeign: boolean;
}

export type FuzzCase = { kind: 'single'; request: FuzzRequest } | { kind: 'pair'; requests: [FuzzRequest, FuzzRequest] };

export const freshPlaceholder = (kind: string) => `{{fresh:${kind}}}`;

const BODY_MUTATIONS = ['wrongType', 'missingField', 'unknownField', 'hugeBody', 'deepBody', 'unicode', 'oddNumber', 'malformedJson', 'contentType'];
const OTHER_MUTATIONS = ['badId', 'foreignId', 'badQuery', 'badHeader', 'badAuth'];

/** Body property names that hold ids of a kind, or other values worth drawing from a short list. */
const ID_PROPERTIES: Record<string, string> = {
  agentId: 'agent', toolId: 'tool', toolSetId: 'toolset', memoryLayerId: 'memlayer', variationId: 'agentvar', variation_id: 'agentvar',
  uploadId: 'upload', profileId: 'prof', tenantId: 'tenant', subjectId: 'subject', scheduleId: 'sched', objectiveId: 'obj', parentObjectiveId: 'obj',
};
const DURATIONS = ['1s', '90s', '15m', '1h30m', '1d', '0s', '-1s', '1y', ''];
const SCOPES = ['*', 'agents:read', 'agents:manage', 'objectives:manage', 'secrets:manage', 'account:manage', 'secrets:read', 'nope:read', ''];
// Outbound URLs never resolve (RFC 6761) or are refused as private: a tool set sync answers at once instead of waiting on the network.
const URLS = ['https://fuzz.invalid/mcp', 'http://127.0.0.1:9/mcp', 'https://127.0.0.1:9/{{secrets.FUZZ}}', 'ftp://127.0.0.1/x', 'not a url', 'http://169.254.169.254/latest/meta-data'];

function propertyHint(pools: IdPools): PropertyHint {
  const ids = (kind: string) => (pools.stable[kind]?.length ? fc.constantFrom(...pools.stable[kind]) : undefined);
  return (name) => {
    if (ID_PROPERTIES[name]) return ids(ID_PROPERTIES[name]);
    if (name === 'memoryLayerIds') return ids('memlayer')?.map((id) => [id]);
    if (name === 'modelId') return fc.constantFrom('builtin/scripted', 'openai/gpt-4o', 'nope/none');
    if (name === 'timezone') return fc.constantFrom('UTC', 'Europe/Berlin', 'America/New_York', 'Mars/Olympus', '+01:00');
    if (['every', 'offset', 'catchupWindow', 'episodicMemoryTtl'].includes(name)) return fc.constantFrom(...DURATIONS);
    if (name === 'permissions') return fc.array(fc.constantFrom(...SCOPES), { maxLength: 3 });
    if (/url$/i.test(name)) return fc.constantFrom(...URLS);
    if (name === 'name') return fc.string({ minLength: 1, maxLength: 16 }).map((suffix) => `fuzz-${suffix}`);
    if (name === 'labels') return fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/), fc.stringMatching(/^[a-z0-9-]{0,8}$/), { maxKeys: 2 });
    if (name === 'updateMask') return fc.constantFrom('metadata.name', 'spec', 'metadata.labels,spec.description', '', 'nope', 'metadata.name,,,', '*');
    if (name === 'email') return fc.emailAddress();
    return undefined;
  };
}

interface PathChoice {
  text: string;
  foreign: boolean;
}

/** One path parameter's value: mostly a real id, sometimes another account's, a missing or a malformed one. */
function pathValue(parameter: Parameter, pools: IdPools, mode: IdMode): fc.Arbitrary<PathChoice> {
  const kind = parameterKind(parameter);
  const stable = pools.stable[kind] ?? [];
  const missing = parameter.schema.pattern ? fc.stringMatching(new RegExp(parameter.schema.pattern)) : fc.string({ minLength: 1, maxLength: 40 }).map(encodeURIComponent);
  const plain = (text: fc.Arbitrary<string>) => text.map((value) => ({ text: value, foreign: false }));
  if (mode === 'fresh' && pools.creatable.includes(kind)) return fc.constant({ text: freshPlaceholder(kind), foreign: false });
  if (mode === 'foreignId' && pools.foreign[kind]) return fc.constant({ text: pools.foreign[kind], foreign: true });
  if (mode === 'badId') {
    return plain(fc.oneof(missing, fc.constantFrom(...MALFORMED_IDS), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).map(encodeURIComponent)));
  }
  return plain(stable.length ? fc.constantFrom(...stable) : missing);
}

type IdMode = 'real' | 'fresh' | 'badId' | 'foreignId';

/** Values of path parameters by name; `modes` says how to fill each (default `real`). */
function pathValues(parameters: Parameter[], pools: IdPools, modes: Record<string, IdMode>): fc.Arbitrary<Record<string, PathChoice>> {
  return fc.tuple(...parameters.map((parameter) => pathValue(parameter, pools, modes[parameter.name] ?? 'real')))
    .map((choices) => Object.fromEntries(parameters.map((parameter, index) => [parameter.name, choices[index]])));
}

function fillPath(template: string, values: Record<string, PathChoice>): PathChoice {
  const text = template.replace(/\{([A-Za-z0-9_]+)\}/g, (_match, name: string) => values[name].text);
  return { text, foreign: Object.keys(values).some((name) => template.includes(`{${name}}`) && values[name].foreign) };
}

function pathArbitrary(operation: Operation, pools: IdPools, modes: Record<string, IdMode>): fc.Arbitrary<PathChoice> {
  return pathValues(operation.pathParams, pools, modes).map((values) => fillPath(operation.path, values));
}

function queryValue(schema: JsonSchema): fc.Arbitrary<string> {
  return schemaArbitrary(schema, { maxStringLength: 12 }).map((value) => encodeURIComponent(typeof value === 'string' ? value : JSON.stringify(value)));
}

/** A query string with some of the declared parameters, valid by their schemas, plus a mutation for `badQuery`. */
function queryArbitrary(operation: Operation, mutate: boolean): fc.Arbitrary<string> {
  const parts = operation.query.map((parameter) => {
    const part = queryValue(parameter.schema).map((value) => `${parameter.name}=${value}`);
    // A required parameter is always sent (fast-check refuses an option that is never absent).
    return parameter.required ? part : fc.option(part, { freq: 2 });
  });
  const extra = mutate ? queryMutation(operation.query.map((parameter) => parameter.name)) : fc.constant(null);
  return fc.tuple(fc.tuple(...parts), extra).map(([chosen, mutation]) => {
    const query = [...chosen, mutation].filter((part): part is string => Boolean(part)).join('&');
    return query ? `?${query}` : '';
  });
}

const HUGE_HEADER = 'a'.repeat(20_000);

function headerMutation(pools: IdPools): fc.Arbitrary<Record<string, string | string[]>> {
  const manyHeaders = Object.fromEntries(Array.from({ length: 150 }, (_v, index) => [`x-fuzz-${index}`, 'v'.repeat(90)]));
  return fc.constantFrom<Record<string, string | string[]>>(
    { 'idempotency-key': 'k'.repeat(300) }, { 'idempotency-key': 'cl\u00e9' }, { 'idempotency-key': ' ' },
    { 'if-match': 'garbage' }, { 'if-match': '2000-01-01T00:00:00.000Z' }, { 'if-match': '*' }, { 'if-match': '"etag"' },
    { 'x-workspace-id': 'garbage' }, { 'x-workspace-id': pools.foreign.ws ?? 'ws_x' }, { 'x-workspace-id': 'ws_01ARZ3NDEKTSV4RRFFQ69G5FAV' }, { 'x-workspace-id': ['a', 'b'] },
    { 'x-fuzz-huge': HUGE_HEADER }, manyHeaders, { accept: 'application/xml' }, { 'content-encoding': 'gzip' }, { 'x-request-id': 'r\u00ffq'.repeat(300) },
    { 'last-event-id': '-1' }, { 'last-event-id': 'x'.repeat(500) }, { 'x-forwarded-for': '127.0.0.1, evil' }, { expect: '100-continue' },
  );
}

const BAD_AUTHORIZATION = [
  '', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Bearer not-a-token', `Bearer ${'a'.repeat(8000)}`, 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
  'Bearer eyJ.eyJ.sig', 'Bearer agrt_\u00e9', 'Bearer a b c', 'Token x',
];

interface AuthChoice {
  principal: PrincipalKind;
  headers: Record<string, string | string[]>;
}

function authMutation(): fc.Arbitrary<AuthChoice> {
  return fc.oneof<fc.Arbitrary<AuthChoice>[]>(
    fc.constantFrom<PrincipalKind>('anonymous', 'foreign', 'global').map((principal) => ({ principal, headers: {} })),
    fc.constantFrom(...BAD_AUTHORIZATION).map((value) => ({ principal: 'header' as const, headers: { authorization: value } })),
    fc.constant<AuthChoice>({ principal: 'header', headers: { authorization: ['Bearer a', 'Bearer b'] } }),
  );
}

function validBody(operation: Operation, pools: IdPools): fc.Arbitrary<unknown> {
  return operation.body ? schemaArbitrary(operation.body, { hint: propertyHint(pools) }) : fc.constant(undefined);
}

function bodyArbitrary(operation: Operation, pools: IdPools, mutation: string): fc.Arbitrary<RawBody | undefined> {
  if (!operation.body) {
    if (mutation !== 'unexpectedBody') return fc.constant(undefined);
    return fc.oneof(fc.jsonValue({ maxDepth: 2 }).map((value) => ({ text: serialize(value) })), fc.constantFrom(...UNICODE_EDGES).map((text) => ({ text, contentType: 'text/plain' })));
  }
  return validBody(operation, pools).chain((valid) => fc.option(bodyMutation(mutation, valid), { freq: 20, nil: undefined }).map((body) => body ?? { text: serialize(valid) }));
}

function mutationsOf(operation: Operation): string[] {
  return ['valid', 'valid', 'valid', 'valid', 'valid', ...(operation.body ? BODY_MUTATIONS : ['unexpectedBody']), ...OTHER_MUTATIONS];
}

/** The id modes of a single request: DELETEs take a fresh resource so the stable ones survive for later requests. */
function idModes(operation: Operation, mutation: string, target: number): Record<string, IdMode> {
  const modes: Record<string, IdMode> = {};
  const last = operation.pathParams[operation.pathParams.length - 1];
  if (last && operation.method === 'DELETE') modes[last.name] = 'fresh';
  const aimed = operation.pathParams[target % Math.max(1, operation.pathParams.length)];
  if (aimed && (mutation === 'badId' || mutation === 'foreignId')) modes[aimed.name] = mutation;
  return modes;
}

function singleArbitrary(operation: Operation, pools: IdPools): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(fc.constantFrom(...mutationsOf(operation)), fc.nat()).chain(([mutation, target]) =>
    fc.record({
      path: pathArbitrary(operation, pools, idModes(operation, mutation, target)),
      query: queryArbitrary(operation, mutation === 'badQuery'),
      body: bodyArbitrary(operation, pools, mutation),
      headers: mutation === 'badHeader' ? headerMutation(pools) : fc.constant({}),
      auth: mutation === 'badAuth' ? authMutation() : fc.constant({ principal: 'owner' as PrincipalKind, headers: {} }),
    }).map(({ path, query, body, headers, auth }) => ({
      operationId: operation.operationId,
      method: operation.method,
      target: `${path.text}${query}`,
      headers: { ...headers, ...auth.headers },
      principal: auth.principal,
      body,
      mutation,
      stream: operation.stream,
      namesForeign: path.foreign,
    })),
  );
}

/** The path up to and including its last parameter: writes under the same prefix touch the same rows. */
function rowPrefix(operation: Operation): string {
  const last = operation.path.lastIndexOf('}');
  return operation.path.slice(0, last + 1);
}

/** Two writes on the same rows, sent at once: same ids (a fresh one for the row both aim at), valid bodies. */
function pairArbitrary(writes: Operation[], pools: IdPools): fc.Arbitrary<FuzzCase> {
  return fc.constantFrom(...writes).chain((first) => {
    const partners = writes.filter((candidate) => candidate.path.startsWith(rowPrefix(first)));
    return fc.tuple(fc.constant(first), fc.constantFrom(...partners), fc.boolean());
  }).chain(([first, second, sameBody]) => {
    // The second path starts with the first's prefix, so its parameters include the first's.
    const shared = first.pathParams[first.pathParams.length - 1];
    return fc.tuple(pathValues(second.pathParams, pools, { [shared.name]: 'fresh' }), validBody(first, pools), validBody(second, pools)).map(([values, firstBody, secondBody]) => {
      const request = (operation: Operation, body: unknown): FuzzRequest => ({
        operationId: operation.operationId, method: operation.method, target: fillPath(operation.path, values).text, headers: {}, principal: 'owner',
        mutation: 'concurrentPair', stream: false, namesForeign: false, body: operation.body ? { text: serialize(body) } : undefined,
      });
      const secondValue = sameBody && first.operationId === second.operationId ? firstBody : secondBody;
      return { kind: 'pair' as const, requests: [request(first, firstBody), request(second, secondValue)] as [FuzzRequest, FuzzRequest] };
    });
  });
}

/** Mixes a run seed and a case index into the seed of that case. */
export function caseSeed(seed: number, index: number): number {
  return (Math.imul(seed ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b)) | 0;
}

/** Generates the cases of a run; case `index` depends only on the seed, the document and the pools' order. */
export class RequestGenerator {
  private readonly singles: Array<fc.Arbitrary<FuzzRequest>>;
  private readonly pairs: fc.Arbitrary<FuzzCase>;

  constructor(readonly operations: Operation[], pools: IdPools, private readonly pairEvery = 12) {
    this.singles = operations.map((operation) => singleArbitrary(operation, pools));
    const writes = operations.filter((operation) => isWrite(operation) && operation.pathParams.length > 0 && operation.auth === 'bearer' && !operation.path.includes('/account/'));
    this.pairs = pairArbitrary(writes, pools);
  }

  /** Case `index` of the run with `seed`: every operation in turn, with a concurrent pair every `pairEvery` cases. */
  case(seed: number, index: number): FuzzCase {
    const options = { seed: caseSeed(seed, index), numRuns: 1 };
    if (index % this.pairEvery === this.pairEvery - 1) return fc.sample(this.pairs, options)[0];
    const operation = Math.floor(index / this.pairEvery) * (this.pairEvery - 1) + (index % this.pairEvery);
    return { kind: 'single', request: fc.sample(this.singles[operation % this.singles.length], options)[0] };
  }
}
