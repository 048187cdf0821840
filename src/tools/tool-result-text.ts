// The text of a tool result: read or cut to TOOL_RESULT_MAX_BYTES of UTF-8
// (never splitting a character), and cleared of the secret values the call
// used, so a tool that echoes its credentials cannot hand them to the model,
// to events or to webhook receivers.
import type { Readable } from 'node:stream';
import { TOOL_RESULT_MAX_BYTES } from './tool-call-outcome';

export const REDACTED_SECRET = '[redacted]';
/**
 * Shorter values are not redacted: replacing every "42" in an answer would
 * mangle it, and a value that short protects nothing anyway.
 */
export const MIN_REDACTED_LENGTH = 4;

export interface CappedText {
  text: string;
  truncated: boolean;
}

/** Decodes UTF-8; when `cut`, a character split by the cut is dropped rather than mangled. */
function decode(bytes: Buffer, cut: boolean): string {
  return new TextDecoder('utf-8').decode(bytes, { stream: cut });
}

/** The first `maxBytes` bytes of the text's UTF-8 (at a character boundary). */
export function capText(text: string, maxBytes = TOOL_RESULT_MAX_BYTES): CappedText {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text, truncated: false };
  return { text: decode(bytes.subarray(0, maxBytes), true), truncated: true };
}

/**
 * Reads a body up to `maxBytes` and stops (destroying the stream, so no more
 * of a large answer is transferred).
 */
export async function readCapped(body: Readable, maxBytes = TOOL_RESULT_MAX_BYTES): Promise<CappedText> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of body) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    if (size + bytes.length > maxBytes) {
      chunks.push(bytes.subarray(0, maxBytes - size));
      size = maxBytes;
      truncated = true;
      break;
    }
    chunks.push(bytes);
    size += bytes.length;
  }
  if (truncated) body.destroy();
  return { text: decode(Buffer.concat(chunks, size), truncated), truncated };
}

/** The forms a value can take in what a tool echoes: as sent in a header, and as sent in a URL. */
function formsOf(values: Iterable<string>): string[] {
  const forms = new Set<string>();
  for (const value of values) {
    if (value.length < MIN_REDACTED_LENGTH) continue;
    forms.add(value);
    forms.add(encodeURIComponent(value));
  }
  // Longest first, so a value containing another is replaced whole.
  return [...forms].sort((a, b) => b.length - a.length);
}

/** Replaces every occurrence of the values; a cut text also loses a trailing start of one. */
export function redactSecrets(text: string, values: Iterable<string>, cut = false): string {
  const forms = formsOf(values);
  if (forms.length === 0) return text;
  let redacted = text;
  for (const form of forms) redacted = redacted.split(form).join(REDACTED_SECRET);
  if (!cut) return redacted;
  for (const form of forms) {
    for (let length = form.length - 1; length >= MIN_REDACTED_LENGTH; length--) {
      if (redacted.endsWith(form.slice(0, length))) return redacted.slice(0, redacted.length - length) + REDACTED_SECRET;
    }
  }
  return redacted;
}

/** Redacts, then cuts again if redaction lengthened the text past the limit (redacting the new end too). */
export function redactCapped(result: CappedText, values: Iterable<string>, maxBytes = TOOL_RESULT_MAX_BYTES): CappedText {
  const list = [...values];
  const redacted = redactSecrets(result.text, list, result.truncated);
  const recut = capText(redacted, maxBytes);
  if (!recut.truncated) return { text: redacted, truncated: result.truncated };
  return { text: capText(redactSecrets(recut.text, list, true), maxBytes).text, truncated: true };
}
