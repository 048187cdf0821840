// JSON Schema → fast-check arbitraries, for the subset the served OpenAPI
// document uses in request bodies and parameters (type, properties, required,
// additionalProperties: false, patternProperties, anyOf, const, format,
// min/maxLength, pattern, minimum/maximum, items, maxItems). Values are kept
// small; the mutations of request-generator.ts make them huge on purpose.
import fc from 'fast-check';

/** The JSON Schema keywords the converter understands (others are ignored). */
export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  patternProperties?: Record<string, JsonSchema>;
  anyOf?: JsonSchema[];
  const?: unknown;
  format?: string;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
}

/**
 * A better-than-random arbitrary for a named property (real ids, time zones,
 * durations), or undefined to use the schema alone. The converter still mixes
 * in schema-only values, so hints never hide the rest of the domain.
 */
export type PropertyHint = (name: string, schema: JsonSchema) => fc.Arbitrary<unknown> | undefined;

export interface SchemaArbitraryOptions {
  hint?: PropertyHint;
  /** Longest generated string. @default 24 */
  maxStringLength?: number;
}

const MAX_DEPTH = 8;

function stringArbitrary(schema: JsonSchema, options: SchemaArbitraryOptions): fc.Arbitrary<string> {
  if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern));
  if (schema.format === 'email') return fc.emailAddress();
  if (schema.format === 'date-time') {
    return fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString());
  }
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? Infinity, options.maxStringLength ?? 24));
  return fc.string({ minLength, maxLength, unit: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...'abcxyz-_.019 ') }, { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) }) });
}

function numberArbitrary(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const min = schema.minimum ?? -1_000_000;
  const max = schema.maximum ?? 1_000_000;
  const within = integer ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  return fc.oneof({ weight: 4, arbitrary: within }, { weight: 1, arbitrary: fc.constantFrom(min, max) });
}

function objectArbitrary(schema: JsonSchema, options: SchemaArbitraryOptions, depth: number): fc.Arbitrary<unknown> {
  const properties = schema.properties ?? {};
  const names = Object.keys(properties);
  const pattern = Object.values(schema.patternProperties ?? {})[0];
  if (names.length === 0) {
    const value = pattern ? schemaArbitrary(pattern, options, depth + 1) : fc.jsonValue({ maxDepth: 2 });
    return fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), value, { maxKeys: 3 });
  }
  const model = Object.fromEntries(names.map((name) => [name, propertyArbitrary(name, properties[name], options, depth + 1)]));
  return fc.record(model, { requiredKeys: (schema.required ?? []).filter((name) => name in model) });
}

function propertyArbitrary(name: string, schema: JsonSchema, options: SchemaArbitraryOptions, depth: number): fc.Arbitrary<unknown> {
  const hinted = options.hint?.(name, schema);
  const plain = schemaArbitrary(schema, options, depth);
  return hinted ? fc.oneof({ weight: 4, arbitrary: hinted }, { weight: 1, arbitrary: plain }) : plain;
}

/**
 * An arbitrary of values valid by `schema` (as far as the schema alone can
 * say: the service's own rules, such as label syntax, are for it to check).
 */
export function schemaArbitrary(schema: JsonSchema, options: SchemaArbitraryOptions = {}, depth = 0): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((branch) => schemaArbitrary(branch, options, depth + 1)));
  if (depth > MAX_DEPTH) return fc.constant(null);
  switch (schema.type) {
    case 'string':
      return stringArbitrary(schema, options);
    case 'integer':
      return numberArbitrary(schema, true);
    case 'number':
      return numberArbitrary(schema, false);
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const item = schema.items ? schemaArbitrary(schema.items, options, depth + 1) : fc.jsonValue({ maxDepth: 1 });
      return fc.array(item, { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) });
    }
    case 'object':
      return objectArbitrary(schema, options, depth);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}
