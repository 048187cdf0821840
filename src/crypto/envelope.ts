// Envelope encryption of stored secrets (AES-256-GCM). Each workspace has a
// random 32-byte data key; the data key is stored wrapped by a key derived from
// the master key, and field values are sealed under the data key with an AAD
// naming workspace, resource, row and field, so a ciphertext copied to another
// row, field or workspace fails to open. Pure functions: no storage here.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** Version tag of the sealed-record format `v1.<base64url(iv | tag | ciphertext)>`. */
export const SEALED_VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/** A stored ciphertext could not be opened: wrong key, wrong row or tampered bytes. */
export class DecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DecryptionError';
  }
}

/** Where an encrypted field lives; bound into the ciphertext as AAD. */
export interface FieldRef {
  workspaceId: string;
  /** The resource kind, e.g. `workspace_secret`. */
  resource: string;
  /** The row's id. */
  resourceId: string;
  /** The field, e.g. `spec.value`. */
  field: string;
}

/** AAD of a field value: changing any part of the reference makes opening fail. */
export function fieldAad(ref: FieldRef): string {
  return `agentrt/${SEALED_VERSION}/field/${ref.workspaceId}/${ref.resource}/${ref.resourceId}/${ref.field}`;
}

function dataKeyAad(workspaceId: string): string {
  return `agentrt/${SEALED_VERSION}/data-key/${workspaceId}`;
}

/** The key-encryption key: purpose-bound, derived from the master key with HKDF-SHA256. */
function keyEncryptionKey(masterKey: Buffer): Buffer {
  if (masterKey.length !== KEY_BYTES) throw new Error('the master key must be 32 bytes');
  return Buffer.from(hkdfSync('sha256', masterKey, 'agentrt', 'workspace-data-key-wrap', KEY_BYTES));
}

/** A fresh random data key. */
export function newDataKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/**
 * Seals `plaintext` under `key` with AES-256-GCM and a random 96-bit IV.
 * @returns the versioned record `v1.<base64url(iv | tag | ciphertext)>`
 */
export function seal(key: Buffer, plaintext: Buffer, aad: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return `${SEALED_VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
}

/**
 * Opens a record made by `seal` with the same key and AAD.
 * @throws DecryptionError for an unknown version, a malformed record, a wrong key or AAD, or tampered bytes
 */
export function open(key: Buffer, sealed: string, aad: string): Buffer {
  const dot = sealed.indexOf('.');
  const version = dot > 0 ? sealed.slice(0, dot) : '';
  if (version !== SEALED_VERSION) throw new DecryptionError(`unsupported sealed record version "${version.slice(0, 8)}"`);
  const bytes = Buffer.from(sealed.slice(dot + 1), 'base64url');
  if (bytes.length < IV_BYTES + TAG_BYTES) throw new DecryptionError('sealed record is truncated');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  } catch (error) {
    throw Object.assign(new DecryptionError('sealed record failed authentication (wrong key, wrong row or tampered data)'), { cause: error });
  }
}

/** Wraps a workspace's data key under the master key (bound to the workspace id). */
export function wrapDataKey(masterKey: Buffer, workspaceId: string, dataKey: Buffer): string {
  return seal(keyEncryptionKey(masterKey), dataKey, dataKeyAad(workspaceId));
}

/**
 * Unwraps a workspace's data key.
 * @throws DecryptionError when the master key is not the one that wrapped it, or the record was altered
 */
export function unwrapDataKey(masterKey: Buffer, workspaceId: string, wrapped: string): Buffer {
  const key = open(keyEncryptionKey(masterKey), wrapped, dataKeyAad(workspaceId));
  if (key.length !== KEY_BYTES) throw new DecryptionError('wrapped data key has the wrong length');
  return key;
}

/**
 * Re-wraps a data key from `oldKey` to `newKey` (master-key rotation).
 * @returns the new wrapped record, or null when it is already wrapped by `newKey`
 * @throws DecryptionError when neither key opens it
 */
export function rewrapDataKey(oldKey: Buffer, newKey: Buffer, workspaceId: string, wrapped: string): string | null {
  let dataKey: Buffer;
  try {
    dataKey = unwrapDataKey(oldKey, workspaceId, wrapped);
  } catch (error) {
    if (!(error instanceof DecryptionError)) throw error;
    unwrapDataKey(newKey, workspaceId, wrapped);
    return null;
  }
  return wrapDataKey(newKey, workspaceId, dataKey);
}
