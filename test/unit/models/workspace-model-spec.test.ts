// The field rules of workspace models (src/models/workspace-model-spec.ts):
// which names are family/model ids of the workspace's own, which prices are
// decimal cents, and the prices a call is costed with.
import assert from 'node:assert/strict';
import { AlreadyExistsError, InvalidArgumentError } from '../../../src/errors';
import { MODEL_CATALOG } from '../../../src/models/catalog';
import { checkPrice, checkWorkspaceModelName, pricesOf } from '../../../src/models/workspace-model-spec';

describe('workspace model fields', () => {
  describe('checkWorkspaceModelName()', () => {
    it('accepts family/model ids, with Ollama tags and upper case', () => {
      for (const name of ['local/qwen2.5-7b', 'ollama/llama3.2:3b', 'vLLM/Qwen2.5-7B-Instruct', 'lm_studio/phi-4']) checkWorkspaceModelName(name, MODEL_CATALOG);
    });

    it('refuses other shapes with INVALID_ARGUMENT naming metadata.name', () => {
      for (const name of ['qwen', '/qwen', 'local/', 'local/a/b', 'local/-x', 'lo cal/x', 'local/x y', ':tag/x']) {
        assert.throws(() => checkWorkspaceModelName(name, MODEL_CATALOG), (error: unknown) => {
          assert.ok(error instanceof InvalidArgumentError, name);
          assert.deepEqual(error.fieldViolations.map((violation) => violation.field), ['metadata.name']);
          return true;
        });
      }
    });

    it('keeps the builtin family for the service, in any case', () => {
      for (const name of ['builtin/mine', 'Builtin/scripted2']) {
        assert.throws(() => checkWorkspaceModelName(name, MODEL_CATALOG), { name: 'InvalidArgumentError', message: 'metadata.name: the family "builtin" is reserved for the models the service implements itself' });
      }
    });

    it('refuses a catalog model\'s name with ALREADY_EXISTS', () => {
      assert.throws(() => checkWorkspaceModelName('openai/gpt-4o', MODEL_CATALOG), (error: unknown) => error instanceof AlreadyExistsError && error.message.startsWith('metadata.name: openai/gpt-4o is a catalog model'));
    });
  });

  describe('checkPrice()', () => {
    it('accepts decimal cents as the catalog writes them', () => {
      for (const price of ['0', '15', '3.8', '0.000000001', '999999999']) assert.equal(checkPrice('spec.inputPricePerMillionTokens', price), price);
    });

    it('refuses anything else with INVALID_ARGUMENT naming the field', () => {
      for (const price of ['', '-1', '1e3', '1.', '.5', ' 1', '0x10', 'free', '1234567890']) {
        assert.throws(() => checkPrice('spec.outputPricePerMillionTokens', price), (error: unknown) => {
          assert.ok(error instanceof InvalidArgumentError, price);
          assert.equal(error.message, `spec.outputPricePerMillionTokens: "${price}" is not a price in cents per million tokens: a decimal string of at most 9 digits before the point and 9 after it, such as "0", "15" or "3.8"`);
          return true;
        });
      }
    });
  });

  it('pricesOf() reads the decimal strings as numbers', () => {
    assert.deepEqual(pricesOf({ inputPricePerMillionTokens: '3.8', outputPricePerMillionTokens: '0' }), { inputCentsPerMillionTokens: 3.8, outputCentsPerMillionTokens: 0 });
  });
});
