import assert from 'node:assert/strict';
import { InvalidArgumentError } from '../../src/errors';
import { MEMORY_KEY_MAX_LENGTH, memoryKeyProblem, validateMemoryKey } from '../../src/memory/memory-key';

describe('memoryKeyProblem(key)', () => {
  it('accepts every allowed character (rule 1)', () => {
    for (const key of ['abc', 'ABC123', "a!b-c_d.e*f'g(h)i/j", 'skills/pdf.extract', 'x', "(*)!'"]) {
      assert.equal(memoryKeyProblem(key), null, key);
    }
  });

  it('refuses a character outside the allowed set and names it (rule 1)', () => {
    assert.equal(memoryKeyProblem('a b'), `contains " "; only ASCII letters, digits and ! - _ . * ' ( ) / are allowed`);
    assert.equal(memoryKeyProblem('a:b'), `contains ":"; only ASCII letters, digits and ! - _ . * ' ( ) / are allowed`);
    assert.equal(memoryKeyProblem('clé'), `contains "é"; only ASCII letters, digits and ! - _ . * ' ( ) / are allowed`);
    assert.equal(memoryKeyProblem('a\\b'), `contains "\\\\"; only ASCII letters, digits and ! - _ . * ' ( ) / are allowed`);
    for (const character of ['#', '?', '%', '&', '+', '=', '~', '@', '"', ',', ';', '\n', '\u0000']) {
      assert.notEqual(memoryKeyProblem(`a${character}b`), null, JSON.stringify(character));
    }
  });

  it('refuses a key beginning or ending with a slash (rule 2)', () => {
    assert.equal(memoryKeyProblem('/abc'), "must not begin with '/'");
    assert.equal(memoryKeyProblem('abc/'), "must not end with '/'");
    assert.equal(memoryKeyProblem('/'), "must not begin with '/'");
  });

  it('refuses a double slash (rule 3)', () => {
    assert.equal(memoryKeyProblem('a//b'), "must not contain '//'");
  });

  it('refuses the reserved prefixes service/ and system/ (rule 4)', () => {
    assert.equal(memoryKeyProblem('service/x'), 'must not begin with the reserved prefix "service/"');
    assert.equal(memoryKeyProblem('system/x'), 'must not begin with the reserved prefix "system/"');
  });

  it('treats the reserved prefixes case-sensitively and only as prefixes (rule 5)', () => {
    assert.equal(memoryKeyProblem('System/x'), null);
    assert.equal(memoryKeyProblem('services/x'), null);
    assert.equal(memoryKeyProblem('my/system/x'), null);
    assert.equal(memoryKeyProblem('system'), null);
  });

  it('refuses an empty key and one over the length limit', () => {
    assert.equal(memoryKeyProblem(''), 'must not be empty');
    assert.equal(memoryKeyProblem('a'.repeat(MEMORY_KEY_MAX_LENGTH)), null);
    assert.equal(memoryKeyProblem('a'.repeat(MEMORY_KEY_MAX_LENGTH + 1)), `must be at most ${MEMORY_KEY_MAX_LENGTH} characters`);
  });
});

describe('validateMemoryKey(key, field)', () => {
  it('throws InvalidArgumentError naming spec.key by default', () => {
    assert.throws(
      () => validateMemoryKey('a//b'),
      (error: unknown) => {
        assert.ok(error instanceof InvalidArgumentError);
        assert.equal(error.code, 'INVALID_ARGUMENT');
        assert.equal(error.message, "spec.key: must not contain '//'");
        assert.deepEqual(error.fieldViolations, [{ field: 'spec.key', description: "must not contain '//'" }]);
        return true;
      },
    );
  });

  it('names the given field', () => {
    assert.throws(() => validateMemoryKey('/x', 'key'), { message: "key: must not begin with '/'" });
  });

  it('returns for a valid key', () => {
    assert.doesNotThrow(() => validateMemoryKey('skills/pdf'));
  });
});
