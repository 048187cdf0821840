// Signatures of the service's own upload URLs (local storage): HMAC-SHA256 over
// the upload id and the expiry, under a key derived from the master key.
// Verification is constant-time; an expired or altered URL is PERMISSION_DENIED.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { deriveKey } from '../auth/tokens';
import { PermissionDeniedError } from '../errors';

export interface SignedUploadParameters {
  /** Expiry in Unix seconds. */
  expires: string;
  /** base64url HMAC-SHA256. */
  signature: string;
}

export class UploadUrlSigner {
  private readonly key: Uint8Array;

  constructor(masterKey: Buffer) {
    this.key = deriveKey(masterKey, 'upload-url');
  }

  /** Query parameters that authorise a PUT of upload `uploadId` until `expiresAt`. */
  sign(uploadId: string, expiresAt: Date): SignedUploadParameters {
    const expires = String(Math.floor(expiresAt.getTime() / 1000));
    return { expires, signature: this.digest(uploadId, expires).toString('base64url') };
  }

  /**
   * Checks a signed URL's parameters at `now`.
   * @throws PermissionDeniedError when a parameter is missing, the signature does not match, or the URL expired
   */
  verify(uploadId: string, parameters: Partial<SignedUploadParameters>, now: Date): void {
    const { expires, signature } = parameters;
    if (!expires || !signature || !/^\d{1,15}$/.test(expires)) {
      throw new PermissionDeniedError('the upload URL is not signed (expires and signature are required)');
    }
    const expected = this.digest(uploadId, expires);
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new PermissionDeniedError('the upload URL signature is invalid');
    }
    if (Number(expires) * 1000 <= now.getTime()) throw new PermissionDeniedError('the upload URL has expired');
  }

  private digest(uploadId: string, expires: string): Buffer {
    return createHmac('sha256', this.key).update(`upload:${uploadId}:${expires}`).digest();
  }
}
