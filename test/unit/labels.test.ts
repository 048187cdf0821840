import assert from 'node:assert/strict';
import { labelKeyProblem, labelValueProblem, parseLabelSelector, validateLabels } from '../../src/resource/labels';

describe('label rules', () => {
  it('accepts keys with and without a DNS prefix', () => {
    assert.equal(labelKeyProblem('env'), null);
    assert.equal(labelKeyProblem('example.com/team_a'), null);
    assert.equal(labelKeyProblem('a.b-c.d/x.y'), null);
  });
  it('refuses bad keys with a precise reason', () => {
    assert.match(labelKeyProblem('')!, /must not be empty/);
    assert.match(labelKeyProblem('-env')!, /alphanumerics/);
    assert.match(labelKeyProblem('Example.com/x')!, /DNS subdomain/);
    assert.match(labelKeyProblem(`${'a'.repeat(254)}/x`)!, /1-253/);
    assert.match(labelKeyProblem('x'.repeat(64))!, /at most 63/);
  });
  it('accepts empty and 63-character values, refuses 64 and bad edges', () => {
    assert.equal(labelValueProblem(''), null);
    assert.equal(labelValueProblem('a'.repeat(63)), null);
    assert.match(labelValueProblem('a'.repeat(64))!, /at most 63/);
    assert.match(labelValueProblem('a.')!, /alphanumerics/);
    assert.match(labelValueProblem('a b')!, /alphanumerics/);
  });
  it('names the offending label in the field violation', () => {
    assert.throws(() => validateLabels({ ok: 'yes', 'bad key': 'v' }), (error: { fieldViolations: Array<{ field: string }> }) => {
      assert.equal(error.fieldViolations[0].field, 'metadata.labels.bad key');
      return true;
    });
  });
  it('parses the k=v,k2=v2 selector and refuses pairs without =', () => {
    assert.deepEqual(parseLabelSelector('env=prod,team=a'), { env: 'prod', team: 'a' });
    assert.equal(parseLabelSelector(''), undefined);
    assert.throws(() => parseLabelSelector('env'), /labels: "env" is not a key=value pair/);
  });
});
