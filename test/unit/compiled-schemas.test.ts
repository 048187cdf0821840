// Schemas compiled at run time (tool inputSchemas, output definitions, the
// write-time check of user schemas) must not pile up inside ajv: ajv keeps
// every schema it compiled in its own cache, which a local map of validators
// does not bound. The test watches every Ajv instance that compiles and counts
// what each one holds after 20 rounds of 300 distinct schemas.
import assert from 'node:assert/strict';
import Ajv from 'ajv';
import { checkJsonSchema } from '../../src/agents/json-schema';
import { ajvOutputValidator } from '../../src/objectives/objective-output';
import { parseToolArguments } from '../../src/tools/tool-arguments';

const ROUNDS = 20;
const PER_ROUND = 300;
/** The most validators a module keeps compiled (tool-arguments keeps the most). */
const MOST_KEPT = 500;

/** What an Ajv instance holds compiled (its private cache: the memory the schemas keep). */
const heldBy = (ajv: Ajv): number => (ajv as unknown as { _cache: Map<unknown, unknown> })._cache.size;

describe('schemas compiled at run time', () => {
  const instances = new Map<Ajv, number>();
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

  it(`holds at most ${MOST_KEPT} compiled schemas per instance after ${ROUNDS} rounds of ${PER_ROUND} distinct ones`, () => {
    for (let round = 0; round < ROUNDS; round++) {
      for (let index = 0; index < PER_ROUND; index++) {
        const field = `f${round}_${index}`;
        const schema = { type: 'object', properties: { [field]: { type: 'string' } }, required: [field] };
        assert.equal(parseToolArguments({ [field]: 1 }, schema).ok, false, 'the compiled validator is used');
        assert.match(ajvOutputValidator(schema, {}) ?? '', new RegExp(field));
        checkJsonSchema('spec.inputSchema', { ...schema, $id: `https://example.com/${field}` });
      }
    }
    assert.equal(instances.size, 3, 'the three modules compiled');
    for (const [ajv, baseline] of instances) {
      const held = heldBy(ajv) - baseline;
      assert.ok(held <= MOST_KEPT, `an Ajv instance holds ${held} compiled schemas after ${ROUNDS * PER_ROUND} distinct ones`);
    }
  });
});
