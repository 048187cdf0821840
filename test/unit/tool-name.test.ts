import assert from 'node:assert/strict';
import { modelToolName, uniqueModelToolNames } from '../../src/tools/tool-name';
import { closesCycle } from '../../src/agents/assignment.service';
import { feedbackScore } from '../../src/agents/mappers';
import { checkJsonSchema } from '../../src/agents/json-schema';

describe('modelToolName', () => {
  it('replaces every character outside [A-Za-z0-9_-] with _', () => {
    assert.equal(modelToolName('crm.lookup customer/v2'), 'crm_lookup_customer_v2');
    assert.equal(modelToolName('Ok_name-1'), 'Ok_name-1');
    assert.equal(modelToolName('café 😀'), 'caf___', 'one _ per code point, the emoji included');
  });

  it('cuts the name to 64 characters', () => {
    assert.equal(modelToolName('x'.repeat(100)).length, 64);
  });
});

describe('uniqueModelToolNames', () => {
  it('gives a name taken earlier, or a service tool\'s, the first free suffix', () => {
    assert.deepEqual(
      uniqueModelToolNames(['lookup_v1', 'lookup_v1', 'emit_output', 'lookup_v1_2', 'memory_read', 'search_tools', 'load_skill', 'memory_write']),
      ['lookup_v1', 'lookup_v1_2', 'emit_output_2', 'lookup_v1_2_2', 'memory_read_2', 'search_tools_2', 'load_skill_2', 'memory_write_2'],
    );
  });

  it('keeps a suffixed name within 64 characters', () => {
    const long = 'x'.repeat(64);
    const [first, second] = uniqueModelToolNames([long, long]);
    assert.equal(first, long);
    assert.equal(second, `${'x'.repeat(62)}_2`);
  });
});

describe('closesCycle', () => {
  const edges = [{ agentId: 'a', subAgentId: 'b' }, { agentId: 'b', subAgentId: 'c' }];
  it('detects a cycle through a chain', () => assert.equal(closesCycle(edges, 'c', 'a'), true));
  it('detects self-assignment', () => assert.equal(closesCycle([], 'a', 'a'), true));
  it('allows an edge that closes no cycle', () => assert.equal(closesCycle(edges, 'a', 'c'), false));
});

describe('feedbackScore', () => {
  it('is the Beta(1 + positive, 1 + negative) posterior mean', () => {
    assert.equal(feedbackScore({ positive: 0, negative: 0 }), 0.5);
    assert.equal(feedbackScore({ positive: 3, negative: 1 }), 4 / 6);
    assert.equal(feedbackScore({ positive: 0, negative: 8 }), 0.1);
  });
});

describe('checkJsonSchema', () => {
  it('accepts a valid schema and lets the same $id be used twice', () => {
    checkJsonSchema('s', { $id: 'https://example.com/s', type: 'object' });
    checkJsonSchema('s', { $id: 'https://example.com/s', type: 'object' });
  });

  it('names the field and the problem', () => {
    assert.throws(() => checkJsonSchema('spec.inputSchema', { type: 'object', required: 'x' }), {
      code: 'INVALID_ARGUMENT',
      message: 'spec.inputSchema: is not a valid JSON Schema: schema is invalid: data/required must be array',
    });
  });
});
