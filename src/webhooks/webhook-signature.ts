// Standard Webhooks signing (interface-spec 6.2): the headers of one delivery
// attempt and their HMAC-SHA256 signatures. It only computes; it never logs,
// and no message it throws carries a secret.
import { createHmac } from 'node:crypto';

const SECRET_PREFIX = 'wh_';
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** The key sizes the Standard Webhooks spec allows; ours are 32 bytes. */
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
/** Year 2286 in unix seconds: anything larger is a timestamp in milliseconds, which receivers reject as "too new". */
const MAX_TIMESTAMP_SECONDS = 9_999_999_999;

export interface WebhookSignatureInput {
  /** The delivery id (`webhook-id`), the same on every attempt. */
  id: string;
  /** The attempt's time in unix seconds (`webhook-timestamp`). */
  timestampSeconds: number;
  /** The exact bytes sent as the request body. */
  body: string;
  /** Signing secrets (`wh_…`): the current one first, then the previous one during the 24 h after a rotation. */
  secrets: readonly string[];
}

/**
 * The HMAC key of a signing secret: the base64-decoded bytes after `wh_`, so
 * `wh_X` is the same key as `whsec_X` in any Standard Webhooks library.
 * @throws Error for a secret that is not `wh_` + strict base64 of 24 to 64 bytes (the message never repeats it)
 */
export function webhookSigningKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : null;
  // Buffer.from(…, 'base64') skips bad characters silently, which would sign with a different key than receivers decode.
  if (encoded === null || !STRICT_BASE64.test(encoded)) throw new Error('malformed webhook signing secret: expected wh_ followed by base64');
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
    throw new Error(`malformed webhook signing secret: its key is ${key.length} bytes, expected ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES}`);
  }
  return key;
}

/**
 * The `webhook-signature` header value: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`
 * for each secret, space-separated, in the order given. A receiver accepts the
 * delivery if any one matches, which is what lets a rotation overlap.
 * @throws Error without secrets, for a malformed secret, an id holding `.` or a timestamp that is not whole unix seconds (fractions, milliseconds)
 */
export function signWebhook(input: WebhookSignatureInput): string {
  if (input.secrets.length === 0) throw new Error('a webhook needs at least one signing secret');
  // A `.` in the id would make "{id}.{timestamp}" ambiguous (Standard Webhooks, "Signature scheme").
  if (input.id === '' || input.id.includes('.')) throw new Error('a webhook id must be non-empty and hold no "."');
  if (!Number.isInteger(input.timestampSeconds) || input.timestampSeconds < 0 || input.timestampSeconds > MAX_TIMESTAMP_SECONDS) throw new Error('a webhook timestamp must be whole unix seconds');
  const signedContent = `${input.id}.${input.timestampSeconds}.${input.body}`;
  return input.secrets.map((secret) => `v1,${createHmac('sha256', webhookSigningKey(secret)).update(signedContent).digest('base64')}`).join(' ');
}

/** The request headers of one delivery attempt, all lower-case. */
export function webhookHeaders(input: WebhookSignatureInput): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestampSeconds),
    'webhook-signature': signWebhook(input),
  };
}
