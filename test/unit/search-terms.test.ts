import assert from 'node:assert/strict';
import { InvalidArgumentError } from '../../src/errors';
import { discoveryTerms, parseSearchTypes } from '../../src/search/search.service';

describe('parseSearchTypes', () => {
  it('returns every type when absent or empty', () => {
    assert.deepEqual(parseSearchTypes(undefined), ['agents', 'tools', 'tool_sets', 'memory_entries', 'objectives']);
    assert.deepEqual(parseSearchTypes(' , '), ['agents', 'tools', 'tool_sets', 'memory_entries', 'objectives']);
  });

  it('keeps the listed types once each', () => {
    assert.deepEqual(parseSearchTypes('tools, agents,tools'), ['tools', 'agents']);
  });

  it('accepts objectives (named by api-decisions.md)', () => {
    assert.deepEqual(parseSearchTypes('agents,objectives'), ['agents', 'objectives']);
    assert.deepEqual(parseSearchTypes('objectives'), ['objectives']);
  });

  it('throws InvalidArgumentError naming types for an unknown type', () => {
    assert.throws(() => parseSearchTypes('agents,widgets'), (error: InvalidArgumentError) =>
      error instanceof InvalidArgumentError
      && error.message === 'types: unknown type "widgets" (one of agents, tools, tool_sets, memory_entries, objectives)'
      && error.fieldViolations[0].field === 'types');
  });
});

describe('discoveryTerms', () => {
  it('keeps distinct lower-case words of letters and digits only', () => {
    assert.deepEqual(discoveryTerms(['Send the INVOICE!', 'invoice & refund | !x:*', 'Überweisung 2fa']), ['send', 'the', 'invoice', 'refund', 'x', 'überweisung', '2fa']);
  });

  it('returns nothing for text without words', () => {
    assert.deepEqual(discoveryTerms(['', '  ', '!?&|']), []);
  });

  it('keeps at most 64 words of at most 64 characters', () => {
    const many = Array.from({ length: 100 }, (_, index) => `w${index}`).join(' ');
    assert.equal(discoveryTerms([many]).length, 64);
    assert.deepEqual(discoveryTerms(['a'.repeat(65)]), []);
  });
});
