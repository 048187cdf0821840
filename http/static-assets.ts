// Static files answered from memory: each read once, compressed once (gzip and
// brotli, kept next to the plain bytes), answered with an ETag of its content
// and the encoding the client accepts, 304 on a matching If-None-Match. Used by
// the widget host's page and files and by the API reference page (/docs); SSE
// and JSON answers never go through here.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants as zlib, gzip, gzipSync } from 'node:zlib';
import type Koa from 'koa';

const gzipOffThread = promisify(gzip);
const brotliOffThread = promisify(brotliCompress);
/** Below this, compressing saves too little to be worth an encoding. */
const COMPRESS_MIN_BYTES = 256;
/** Brotli's best quality takes seconds on a megabyte (swagger-ui-bundle.js: 3.9 s against 0.2 s at 9, for 10 % fewer bytes). */
const LARGE_FILE_BROTLI_QUALITY = 9;

export interface Asset {
  type: string;
  etag: string;
  identity: Buffer;
  gzip?: Buffer;
  br?: Buffer;
}

/** A strong ETag of the bytes (their SHA-256, cut to 27 base64url characters). */
function contentTag(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/** Bytes made ready to serve: ETag of the content, compressed forms when worth it (brotli at its best quality: small files only). */
export function prepareAsset(body: Buffer, type: string, compressible: boolean): Asset {
  const etag = contentTag(body);
  if (!compressible || body.length < COMPRESS_MIN_BYTES) return { type, etag, identity: body };
  return {
    type, etag, identity: body,
    gzip: gzipSync(body, { level: 9 }),
    br: brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  };
}

/** As prepareAsset, for large files: compressed on libuv's threads, so the event loop serves other requests meanwhile. */
export async function prepareLargeAsset(body: Buffer, type: string, compressible: boolean): Promise<Asset> {
  const etag = contentTag(body);
  if (!compressible || body.length < COMPRESS_MIN_BYTES) return { type, etag, identity: body };
  const [gzipped, brotli] = await Promise.all([
    gzipOffThread(body, { level: 9 }),
    brotliOffThread(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: LARGE_FILE_BROTLI_QUALITY, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  ]);
  return { type, etag, identity: body, gzip: gzipped, br: brotli };
}

/** The best encoding the client accepts (brotli, then gzip; `q=0` refuses). */
function acceptedEncoding(header: string, asset: Asset): 'br' | 'gzip' | null {
  const accepted = new Set(
    header.split(',').map((part) => part.trim().toLowerCase()).filter((part) => !/;\s*q=0(?:\.0*)?$/.test(part)).map((part) => part.split(';')[0].trim()),
  );
  if (asset.br && accepted.has('br')) return 'br';
  if (asset.gzip && (accepted.has('gzip') || accepted.has('*'))) return 'gzip';
  return null;
}

/** Answers GET/HEAD with `asset`: 304 when If-None-Match names its ETag or is `*` (RFC 9110 13.1.2), else its bytes in the accepted encoding. */
export function sendAsset(ctx: Koa.Context, asset: Asset, cacheControl: string): void {
  ctx.set('Cache-Control', cacheControl);
  ctx.set('ETag', asset.etag);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.vary('Accept-Encoding');
  const match = ctx.get('If-None-Match');
  if (match && (match.trim() === '*' || match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === asset.etag))) {
    ctx.status = 304;
    return;
  }
  const encoding = acceptedEncoding(ctx.get('Accept-Encoding'), asset);
  ctx.type = asset.type;
  if (encoding) ctx.set('Content-Encoding', encoding);
  ctx.body = encoding ? asset[encoding]! : asset.identity;
}
