import assert from 'node:assert/strict';
import Ajv from 'ajv';
import { MAX_FIELD_VIOLATIONS, toFieldViolations } from '../../src/schemas/field-violations';

describe('field violations', () => {
  it('lists at most MAX_FIELD_VIOLATIONS, the last saying how many more (a body of many unknown keys gets a small answer)', () => {
    const validate = new Ajv({ allErrors: true }).compile({ type: 'object', additionalProperties: false, properties: { name: { type: 'string' } } });
    const body = Object.fromEntries(Array.from({ length: 5000 }, (_, index) => [`unknown${index}`, index]));
    assert.equal(validate(body), false);
    const violations = toFieldViolations(validate.errors ?? [], '');
    assert.equal(violations.length, MAX_FIELD_VIOLATIONS);
    assert.equal(violations[0].field, 'unknown0');
    assert.deepEqual(violations.at(-1), { field: '(body)', description: `and ${5000 - (MAX_FIELD_VIOLATIONS - 1)} more violations, not listed` });
    assert.equal(toFieldViolations((validate(Object.fromEntries([['a', 1], ['b', 2]])), validate.errors ?? []), '').length, 2, 'a few are all listed');
  });
});
