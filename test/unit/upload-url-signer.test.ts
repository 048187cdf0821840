import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { PermissionDeniedError } from '../../src/errors';
import { UploadUrlSigner } from '../../src/uploads/upload-url-signer';

describe('UploadUrlSigner', () => {
  const now = new Date('2026-11-22T00:00:00Z');
  const later = new Date('2026-11-22T00:15:00Z');
  const sut = new UploadUrlSigner(randomBytes(32));

  it('verifies its own signature before the expiry', () => {
    const parameters = sut.sign('upload_1', later);
    assert.equal(parameters.expires, String(later.getTime() / 1000));
    assert.doesNotThrow(() => sut.verify('upload_1', parameters, now));
  });

  it('refuses the signature at and after the expiry', () => {
    const parameters = sut.sign('upload_1', later);
    assert.throws(() => sut.verify('upload_1', parameters, later), new PermissionDeniedError('the upload URL has expired'));
  });

  it('refuses another upload id, another expiry, another master key and a malformed signature', () => {
    const parameters = sut.sign('upload_1', later);
    const invalid = { name: 'PermissionDeniedError', message: 'the upload URL signature is invalid' };
    assert.throws(() => sut.verify('upload_2', parameters, now), invalid);
    assert.throws(() => sut.verify('upload_1', { ...parameters, expires: String(Number(parameters.expires) + 1) }, now), invalid);
    assert.throws(() => new UploadUrlSigner(randomBytes(32)).verify('upload_1', parameters, now), invalid);
    assert.throws(() => sut.verify('upload_1', { ...parameters, signature: 'abc' }, now), invalid);
  });

  it('refuses missing or non-numeric parameters', () => {
    const unsigned = { name: 'PermissionDeniedError', message: 'the upload URL is not signed (expires and signature are required)' };
    assert.throws(() => sut.verify('upload_1', {}, now), unsigned);
    assert.throws(() => sut.verify('upload_1', { expires: '1e9', signature: 'x' }, now), unsigned);
  });
});
