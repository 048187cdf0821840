import assert from 'node:assert/strict';
import { checkDocument, documentNames } from '../../src/bundles/bundle-document';
import { matchDeclared, resolveReference } from '../../src/bundles/ownership';
import { PlanRecorder, sameConfiguration } from '../../src/bundles/plan';
import { ApiError, FailedPreconditionError, InvalidArgumentError } from '../../src/errors';

const row = (id: string, name: string, bundleKey: string | null) => ({ id, name, bundleKey });

describe('matchDeclared', () => {
  it('matches the bundle\'s own rows, lists the undeclared ones as stale, and leaves others\' rows alone', () => {
    const rows = [row('t1', 'a', 'b1'), row('t2', 'gone', 'b1'), row('t3', 'unrelated', null)];
    const result = matchDeclared('tool', ['a', 'new'], rows, 'b1', false);
    assert.deepEqual([...result.existing.entries()], [['a', rows[0]]]);
    assert.deepEqual(result.stale, [rows[1]]);
    assert.equal(result.adopted.size, 0);
  });

  it('throws FailedPreconditionError naming a same-named row of no bundle or another bundle', () => {
    assert.throws(() => matchDeclared('toolSet', ['x'], [row('ts1', 'x', null)], 'b1', false), (error: FailedPreconditionError) =>
      error instanceof FailedPreconditionError && error.message === 'tool set "x" (ts1) is not owned by any bundle; apply with adopt=true to take it over');
    assert.throws(() => matchDeclared('agent', ['x'], [row('a1', 'x', 'other')], 'b1', false), {
      message: 'agent "x" (a1) is owned by bundle "other"; apply with adopt=true to take it over',
    });
  });

  it('adopts such a row when told, preferring the bundle\'s own', () => {
    const adopted = matchDeclared('tool', ['x'], [row('t1', 'x', null)], 'b1', true);
    assert.equal(adopted.existing.get('x')!.id, 't1');
    assert.deepEqual([...adopted.adopted], ['t1']);
    const own = matchDeclared('tool', ['x'], [row('t1', 'x', null), row('t2', 'x', 'b1')], 'b1', true);
    assert.equal(own.existing.get('x')!.id, 't2');
    assert.equal(own.adopted.size, 0);
  });
});

describe('resolveReference', () => {
  const rows = [row('t1', 'shared', null), row('t2', 'twin', null), row('t3', 'twin', 'x'), row('t4', 'stale', 'b1')];

  it('prefers the bundle\'s declared resource, else the unique row of that name', () => {
    assert.equal(resolveReference('tool', 'f', 'shared', new Map([['shared', 'mine']]), rows, new Set()), 'mine');
    assert.equal(resolveReference('tool', 'f', 'shared', new Map(), rows, new Set()), 't1');
  });

  it('throws InvalidArgumentError naming the field when nothing has the name, or only a row being deleted', () => {
    assert.throws(() => resolveReference('tool', 'agents[0].variations[0].tools[0]', 'missing', new Map(), rows, new Set()), (error: InvalidArgumentError) =>
      error instanceof InvalidArgumentError && error.message === 'agents[0].variations[0].tools[0]: no tool named "missing" in the bundle or the workspace');
    assert.throws(() => resolveReference('tool', 'f', 'stale', new Map(), rows, new Set(['t4'])), InvalidArgumentError);
  });

  it('throws FailedPreconditionError when several rows have the name', () => {
    assert.throws(() => resolveReference('tool', 'f', 'twin', new Map(), rows, new Set()), {
      name: 'FailedPreconditionError',
      message: 'f: 2 tools of the workspace are named "twin"; declare it in the bundle or rename the others',
    });
  });
});

describe('PlanRecorder', () => {
  it('omits the ids of resources a dry run would create and moves touched items to updated', () => {
    const plan = new PlanRecorder(true);
    plan.record('created', 'tool', 'a', 'tool_1');
    plan.record('unchanged', 'toolSet', 's', 'ts_1');
    plan.touch('toolSet', 'ts_1');
    plan.touch('toolSet', 'missing');
    assert.deepEqual(plan.result('k'), {
      bundleKey: 'k', dryRun: true, created: [{ type: 'tool', name: 'a' }], updated: [{ type: 'toolSet', name: 's', id: 'ts_1' }], deleted: [], unchanged: [],
    });
  });
});

describe('sameConfiguration', () => {
  it('ignores updatedAt, info and key order, and sees any other difference', () => {
    const before = { metadata: { id: 'x', name: 'n', updatedAt: '1' }, spec: { a: 1, b: { c: 2 } } };
    assert.ok(sameConfiguration(before, { metadata: { name: 'n', id: 'x', updatedAt: '2' }, spec: { b: { c: 2 }, a: 1 }, info: { n: 1 } } as never));
    assert.ok(!sameConfiguration(before, { metadata: { id: 'x', name: 'n', bundleKey: 'k' }, spec: before.spec } as never));
    assert.ok(!sameConfiguration({ ...before, content: 'a' } as never, { ...before, content: 'b' } as never));
  });
});

describe('checkDocument', () => {
  it('accepts empty schedules, refuses top-level ones and names a duplicate schedule of an agent', () => {
    checkDocument({ schedules: [], agents: [{ metadata: { name: 'a' }, schedules: [] }] });
    assert.throws(() => checkDocument({ schedules: [{}] }), (error: ApiError) => error.code === 'INVALID_ARGUMENT' && error.message.startsWith('schedules: '));
    const nightly = { metadata: { name: 'n' }, spec: { initialMessage: 'm', schedule: { timezone: 'UTC', intervals: [{ every: '1d' }] } } };
    assert.throws(() => checkDocument({ agents: [{ metadata: { name: 'a' }, schedules: [nightly, nightly] }] }), { message: 'agents[0].schedules[1]: the schedule name "n" appears more than once' });
  });

  it('throws InvalidArgumentError naming duplicate entry keys', () => {
    const layer = { metadata: { name: 'l' }, spec: { type: 'MEMORY_LAYER_TYPE_SKILLS' as const }, entries: [{ spec: { key: 'k' } }, { spec: { key: 'k' } }] };
    assert.throws(() => checkDocument({ memoryLayers: [layer] }), { message: 'memoryLayers[0].entries[1]: the entry key "k" appears more than once' });
  });
});

describe('documentNames', () => {
  it('collects declared and referenced names per kind', () => {
    const names = documentNames({
      tools: [{ metadata: { name: 't' }, spec: {} }],
      toolSets: [{ metadata: { name: 's' }, tools: ['t', 'outside'] }],
      agents: [{ metadata: { name: 'a' }, variations: [{ metadata: { name: 'v' }, toolSets: ['s2'], subAgents: ['b'], memoryLayers: ['m'] }] }],
    });
    assert.deepEqual(names, { tools: ['t', 'outside'], toolSets: ['s', 's2'], memoryLayers: ['m'], agents: ['a', 'b'] });
  });
});
