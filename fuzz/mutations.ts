// Hostile variants of a schema-valid JSON body, path value, query or header
// set: wrong types, missing and unknown fields, huge and deep bodies, unicode
// edge cases, odd number literals, malformed JSON and wrong content types.
// Each is an arbitrary, so a seed reproduces it.
import fc from 'fast-check';

type Json = unknown;
type Path = Array<string | number>;

/** Marks a value that is spliced into the JSON text as a raw literal. */
const RAW = '\u0000fuzz-raw:';

/** A body as sent: raw text, its content type and how the text is encoded. */
export interface RawBody {
  text: string;
  contentType?: string;
  /** latin1 turns every char above 0x7f into one byte: invalid UTF-8. @default 'utf8' */
  encoding?: 'utf8' | 'latin1';
}

/** Every node of a JSON value, as paths from the root (the root first). */
export function nodePaths(value: Json, path: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [path];
  const children = Object.entries(value as Record<string, Json>).flatMap(([key, child]) => nodePaths(child, [...path, Array.isArray(value) ? Number(key) : key]));
  return [path, ...children];
}

function clone(value: Json): Json {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

/** Returns a copy of `root` with the node at `path` replaced (or deleted when `replacement` is undefined). */
function replaceAt(root: Json, path: Path, replacement: Json | undefined): Json {
  if (path.length === 0) return replacement;
  const copy = clone(root) as Record<string | number, Json>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, Json>;
  const last = path[path.length - 1];
  if (replacement === undefined && Array.isArray(parent)) parent.splice(Number(last), 1);
  else if (replacement === undefined) delete parent[last];
  else Object.defineProperty(parent, last, { value: replacement, enumerable: true, writable: true, configurable: true });
  return copy;
}

/** JSON text of `value` with every RAW marker spliced in as its literal. */
export function serialize(value: Json): string {
  const text = JSON.stringify(value) ?? '';
  return text.replace(/"\\u0000fuzz-raw:((?:[^"\\]|\\.)*)"/g, (_match, literal: string) => JSON.parse(`"${literal}"`) as string);
}

const raw = (literal: string) => `${RAW}${literal}`;

const pick = <T>(items: T[]) => fc.nat().map((index) => items[index % items.length]);

const WRONG_TYPES: Json[] = [null, true, 0, -1, 1.5, '', 'text', [], [null], {}, { nested: {} }, '1', 'true'];

export const UNICODE_EDGES = [
  '\u0000', 'nul\u0000inside', '\ud800', 'lone\udfffsurrogate', '\ufeffbom', '\u202eright-to-left', 'e\u0301', '👩‍👩‍👧‍👦',
  '\uffff\ufffe', '𝕳𝖊𝖑𝖑𝖔', 'ﬀ', '\u2028\u2029', '\t\r\n', 'İı', 'a'.repeat(64) + '\u0000', ' ', '\u200b', 'Ω≈ç√∫', '{{secrets.X}}', '../../etc/passwd', '%00', "'; DROP TABLE agents; --",
];

const ODD_NUMBERS = ['1e400', '-1e400', '-0', '1.0', '1e-400', '123456789012345678901234567890', '9007199254740993', '0.1', '-1', '1E2', '2147483648', '-2147483649', '0x10', 'NaN', 'Infinity', '01', '1.', '.5', '+1'];

/** A mutated body: `valid` changed at one of its nodes, or rewritten as text. */
export function bodyMutation(kind: string, valid: Json): fc.Arbitrary<RawBody> {
  const paths = nodePaths(valid);
  const at = pick(paths);
  const objects = paths.filter((path) => path.reduce<Json>((node, key) => (node as Record<string | number, Json>)[key], valid) instanceof Object);
  const json = (value: Json) => ({ text: serialize(value) });
  switch (kind) {
    case 'wrongType':
      return fc.tuple(at, pick(WRONG_TYPES)).map(([path, value]) => json(replaceAt(valid, path, value)));
    case 'missingField':
      return at.map((path) => json(path.length ? replaceAt(valid, path, undefined) : {}));
    case 'unknownField':
      return fc.tuple(pick(objects.length ? objects : [[]]), pick(['unknownField', '__proto__', 'constructor', 'prototype', '', 'metadata.name', 'x'.repeat(300), '\u0000']), fc.jsonValue({ maxDepth: 2 }))
        .map(([path, key, value]) => json(replaceAt(valid, [...path, key], value ?? null)));
    case 'hugeBody':
      return fc.tuple(at, fc.constantFrom(5_000, 70_000, 300_000, 1_100_000), fc.constantFrom('string', 'array', 'object')).map(([path, size, shape]) => {
        if (shape === 'string') return json(replaceAt(valid, path, 'x'.repeat(size)));
        if (shape === 'array') return json(replaceAt(valid, path, Array.from({ length: size / 10 }, (_v, index) => index)));
        return json(replaceAt(valid, path, Object.fromEntries(Array.from({ length: size / 20 }, (_v, index) => [`k${index}`, index]))));
      });
    case 'deepBody':
      return fc.tuple(at, fc.constantFrom(50, 99, 100, 101, 5_000, 100_000), fc.boolean()).map(([path, depth, arrays]) => {
        const [open, close] = arrays ? ['[', ']'] : ['{"a":', '}'];
        return json(replaceAt(valid, path, raw(`${open.repeat(depth)}1${close.repeat(depth)}`)));
      });
    case 'unicode':
      return fc.tuple(at, pick(UNICODE_EDGES), fc.boolean(), fc.boolean()).map(([path, text, asKey, latin1]) => ({
        ...json(asKey && objects.length ? replaceAt(valid, [...objects[0], text], text) : replaceAt(valid, path, text)),
        encoding: latin1 ? 'latin1' : 'utf8',
      }));
    case 'oddNumber':
      return fc.tuple(at, pick(ODD_NUMBERS)).map(([path, literal]) => json(replaceAt(valid, path, raw(literal))));
    case 'malformedJson':
      return malformed(serialize(valid));
    case 'contentType':
      return pick(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonx', 'json', 'application/json; charset=utf-16',
        'APPLICATION/JSON', 'application/merge-patch+json', 'application/json, text/plain', '*/*', 'application/', '']).map((contentType) => ({ text: serialize(valid), contentType }));
    default:
      return fc.constant(json(valid));
  }
}

function malformed(text: string): fc.Arbitrary<RawBody> {
  return fc.oneof(
    fc.nat({ max: Math.max(0, text.length - 1) }).map((cut) => ({ text: text.slice(0, cut) || '{' })),
    fc.constantFrom(`${text} x`, `${text}${text}`, text.replace(/}$/, ',}'), text.replace(/"/g, "'"), `\ufeff${text}`, `${text}\u0000`, `/* c */${text}`, `{"a":1,"a":2}`,
      'null', '[]', '"string"', '42', 'true', '{', '}', '{"metadata":', 'undefined', '{"a":NaN}', '{"a":undefined}', '\u0000', ' '.repeat(1000), '{"a":"\\ud800"}', '{"a":"\\u00"}', '{"a":"\\x41"}')
      .map((body) => ({ text: body })),
  );
}

/** Path values that are not ids: traversal, encodings, injections, huge. */
export const MALFORMED_IDS = [
  'not-an-id', '..', '%2e%2e', '%2F', '%00', '%FF', '%E0%A4%A', '%ED%A0%80', '%F0%9F%92%A9', 'a'.repeat(3000), '%20', 'null', 'undefined', '0', '-1', '1e400',
  encodeURIComponent("'; DROP TABLE accounts; --"), 'agent_01arz3ndektsv4rrffq69g5fav', 'agent_01ARZ3NDEKTSV4RRFFQ69G5FA', 'agent_01ARZ3NDEKTSV4RRFFQ69G5FAVX', 'ws_%00', '%7B%7D', '*',
];

/** Query strings a client should never send: wrong types, repeats, broken percent-encoding, huge values. */
export function queryMutation(names: string[]): fc.Arbitrary<string> {
  const name = pick(names.length ? names : ['limit']);
  return fc.oneof(
    fc.tuple(name, pick(['abc', 'maybe', '-1', '0', '1e99', '99999999999999999999', '1.5', '', 'true', 'null', '[]', '%00', '%', '%zz', '%E0%A4%A', 'a'.repeat(5000), encodeURIComponent('\u202e\u0000'), encodeURIComponent('👩‍👩‍👧‍👦')]))
      .map(([key, value]) => `${key}=${value}`),
    fc.tuple(name, fc.nat(), fc.nat()).map(([key, a, b]) => `${key}=${a}&${key}=${b}`),
    fc.constantFrom('unknown=1', '__proto__=1', 'constructor[prototype][admin]=1', '=', '&&&', 'limit', `${'x'.repeat(300)}=1`, 'a[b]=c'),
  );
}
