// The text of tool results: the 64 KiB cut at a character boundary, and secret
// redaction (whole values, URL-encoded values, and a start cut off at the end).
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { capText, readCapped, redactCapped, redactSecrets, REDACTED_SECRET } from '../../src/tools/tool-result-text';

describe('tool result text', () => {
  it('cuts at a character boundary, never inside a character', () => {
    const cut = capText('ab€', 4); // € is three bytes: only its first would fit
    assert.deepEqual(cut, { text: 'ab', truncated: true });
    assert.deepEqual(capText('ab€', 5), { text: 'ab€', truncated: false });
  });

  it('reads a stream up to the limit and stops', async () => {
    const body = Readable.from([Buffer.from('hello '), Buffer.from('world, and more')]);
    assert.deepEqual(await readCapped(body, 8), { text: 'hello wo', truncated: true });
    assert.equal(body.destroyed, true);
    assert.deepEqual(await readCapped(Readable.from([Buffer.from('short')]), 8), { text: 'short', truncated: false });
  });

  it('redacts values and their URL-encoded form, but not values too short to protect', () => {
    const values = ['s3cr/et+', 'abc'];
    assert.equal(redactSecrets('h: s3cr/et+ q: s3cr%2Fet%2B abc', values), `h: ${REDACTED_SECRET} q: ${REDACTED_SECRET} abc`);
  });

  it('redacts the start of a value left at the end of a cut text', () => {
    assert.equal(redactSecrets('token=sk_li', ['sk_live_123'], true), `token=${REDACTED_SECRET}`);
    assert.equal(redactSecrets('token=sk_li', ['sk_live_123'], false), 'token=sk_li');
  });

  it('keeps a redacted text within the limit', () => {
    const redacted = redactCapped({ text: 'abcd'.repeat(4), truncated: false }, ['abcd'], 32);
    assert.equal(Buffer.byteLength(redacted.text) <= 32, true);
    assert.equal(redacted.truncated, true);
    assert.ok(!redacted.text.includes('abcd'));
  });
});
