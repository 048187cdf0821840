import assert from 'node:assert/strict';
import { normalizeScopes, scopeAllows } from '../../src/auth/scopes';
import { InvalidArgumentError } from '../../src/errors';

describe('normalizeScopes', () => {
  it('drops x:read when x:manage is present and sorts', () => {
    assert.deepEqual(normalizeScopes(['tools:read', 'agents:read', 'tools:manage', 'agents:read']), ['agents:read', 'tools:manage']);
  });
  it('collapses a set containing * to *', () => {
    assert.deepEqual(normalizeScopes(['agents:read', '*']), ['*']);
  });
  it('refuses read on manage-only resources, naming the entry', () => {
    assert.throws(() => normalizeScopes(['agents:read', 'secrets:read']), (error: InvalidArgumentError) => {
      assert.equal(error.code, 'INVALID_ARGUMENT');
      assert.equal(error.fieldViolations[0].field, 'spec.permissions[1]');
      assert.match(error.message, /secrets" supports only the manage verb/);
      return true;
    });
    assert.throws(() => normalizeScopes(['account:read']), /supports only the manage verb/);
  });
  it('refuses unknown resources, verbs and shapes', () => {
    assert.throws(() => normalizeScopes(['robots:read']), /unknown resource "robots"/);
    assert.throws(() => normalizeScopes(['agents:write']), /unknown verb "write"/);
    assert.throws(() => normalizeScopes(['read:agents']), /unknown resource "read"/);
    assert.throws(() => normalizeScopes(['agents']), /not a resource:verb scope/);
    assert.throws(() => normalizeScopes(['agents:read:x']), /not a resource:verb scope/);
  });
});

describe('scopeAllows', () => {
  it('denies by default', () => assert.equal(scopeAllows([], 'agents:read'), false));
  it('lets manage imply read but not the reverse', () => {
    assert.equal(scopeAllows(['agents:manage'], 'agents:read'), true);
    assert.equal(scopeAllows(['agents:read'], 'agents:manage'), false);
  });
  it('grants everything to *', () => assert.equal(scopeAllows(['*'], 'account:manage'), true));
  it('does not leak across resources', () => assert.equal(scopeAllows(['tools:manage'], 'agents:read'), false));
});
