import assert from 'node:assert/strict';
import { InvalidArgumentError } from '../../../src/errors';
import { renderSecretTemplates, secretNamesIn, validateSecretName } from '../../../src/secrets/secret-templates';

describe('secret templates', () => {
  describe('validateSecretName()', () => {
    it('accepts names templates can reference', () => {
      for (const name of ['A', '_', 'API_KEY', 'token_2', `a${'b'.repeat(127)}`]) validateSecretName(name);
    });

    it('rejects other names with INVALID_ARGUMENT naming metadata.name', () => {
      for (const name of ['', '1abc', 'my-secret', 'a.b', 'héllo', 'with space', `a${'b'.repeat(128)}`]) {
        assert.throws(
          () => validateSecretName(name),
          (error: unknown) =>
            error instanceof InvalidArgumentError &&
            error.message ===
              'metadata.name: a secret name must start with a letter or underscore and contain only letters, digits and underscores (at most 128 characters), so that {{secrets.NAME}} can reference it',
        );
      }
    });
  });

  describe('secretNamesIn()', () => {
    it('finds distinct names in order, with optional spaces inside the braces', () => {
      assert.deepEqual(secretNamesIn('Bearer {{secrets.TOKEN}} {{ secrets.OTHER }} {{secrets.TOKEN}}'), ['TOKEN', 'OTHER']);
    });

    it('ignores text that is not a secret template', () => {
      assert.deepEqual(secretNamesIn('{{vars.X}} {secrets.Y} {{secrets.}} plain'), []);
    });
  });

  describe('renderSecretTemplates()', () => {
    it('replaces known names and leaves unknown templates as they are', () => {
      const values = new Map([['A', 'one'], ['B', '$&two']]);
      assert.equal(renderSecretTemplates('{{secrets.A}}-{{ secrets.B }}-{{secrets.C}}', values), 'one-$&two-{{secrets.C}}');
    });
  });
});
