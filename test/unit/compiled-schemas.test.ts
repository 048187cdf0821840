// Schemas compiled at run time (tool inputSchemas, output definitions, the
// write-time check of user schemas) must not pile up inside ajv: an Ajv
// instance keeps what it compiled in its cache, in its refs (every `$id`,
// nested ones too) and in its code-generation scope (each root schema and
// validator), none of which a local map of validators bounds. The test
// watches every Ajv instance that compiles and counts what each one holds
// after 20 rounds of 300 distinct schemas, each with nested `$id`s.
import assert from 'node:assert/strict';
import Ajv from 'ajv';
import { checkJsonSchema } from '../../src/agents/json-schema';
import { ajvOutputValidator } from '../../src/objectives/objective-output';
import { parseToolArguments } from '../../src/tools/tool-arguments';

const ROUNDS = 20;
const PER_ROUND = 300;
/** The most schemas a module compiles on one instance (tool-arguments and the write-time check: 500). */
const MOST_KEPT = 500;
/** An instance that checks schemas (validateSchema) compiles ajv's meta-schemas on first use: 6 of them. */
const META_SCHEMAS = 6;

interface AjvInternals {
  _cache: Map<unknown, unknown>;
  refs: Record<string, unknown>;
  schemas: Record<string, unknown>;
  scope: { _scope: Record<string, unknown[]> };
}

/** What an Ajv instance holds: compiled schemas, known ids, and the schemas its generated code refers to. */
function heldBy(ajv: Ajv) {
  const internals = ajv as unknown as AjvInternals;
  return {
    cache: internals._cache.size,
    refs: Object.keys(internals.refs).length + Object.keys(internals.schemas).length,
    scopeSchemas: internals.scope._scope.schema?.length ?? 0,
  };
}

describe('schemas compiled at run time', () => {
  const instances = new Map<Ajv, ReturnType<typeof heldBy>>();
  const compile = Ajv.prototype.compile;
  before(() => {
    Ajv.prototype.compile = function compileWatched(this: Ajv, ...args: Parameters<Ajv['compile']>) {
      // What the instance held before its first run-time compile: its meta-schemas.
      if (!instances.has(this)) instances.set(this, heldBy(this));
      return compile.apply(this, args);
    } as Ajv['compile'];
  });
  after(() => {
    Ajv.prototype.compile = compile;
  });

  it(`holds at most ${MOST_KEPT} compiled schemas per instance after ${ROUNDS} rounds of ${PER_ROUND} distinct ones`, function () {
    // 18,000 compilations: about 8 s on a quiet 2-core box, past mocha's default 20 s when the box is busy.
    this.timeout(120_000);
    for (let round = 0; round < ROUNDS; round++) {
      for (let index = 0; index < PER_ROUND; index++) {
        const field = `f${round}_${index}`;
        const schema = {
          type: 'object',
          properties: { [field]: { $id: `https://example.com/nested/${field}`, type: 'string' } },
          required: [field],
        };
        assert.equal(parseToolArguments({ [field]: 1 }, schema).ok, false, 'the compiled validator is used');
        assert.match(ajvOutputValidator(schema, {}) ?? '', new RegExp(field));
        checkJsonSchema('spec.inputSchema', { ...schema, $id: `https://example.com/${field}` });
      }
    }
    assert.ok(instances.size >= 3, 'the three modules compiled');
    for (const [ajv, baseline] of instances) {
      const held = heldBy(ajv);
      for (const kind of ['cache', 'refs', 'scopeSchemas'] as const) {
        const grown = held[kind] - baseline[kind];
        assert.ok(grown <= MOST_KEPT + META_SCHEMAS, `an Ajv instance holds ${grown} more ${kind} after ${ROUNDS * PER_ROUND} distinct schemas`);
      }
    }
  });
});
