// The widget host's static files (http/widget-host/assets): read once,
// compressed once (gzip and brotli, kept next to the plain bytes), answered
// with an ETag and the encoding the client accepts. The files are a small
// fixed set, so compressing them ahead beats compressing every answer (which
// is why no compression middleware is used); SSE and JSON answers are left as
// they are.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type Koa from 'koa';

/** The page, its loader, and what `GET /assets/<file>` may serve: every other file of the folder with one of these types. */
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json']);
/** Names `GET /assets/<file>` answers for: no slash, no dot first, so no path leaves the folder. */
const ASSET_NAME = /^[a-z0-9][a-z0-9._-]{0,99}$/i;
/** Served at `/` and `/widget.js`, not under /assets. */
export const PAGE_FILE = 'chat.html';
export const LOADER_FILE = 'widget.js';

export interface Asset {
  type: string;
  etag: string;
  identity: Buffer;
  gzip?: Buffer;
  br?: Buffer;
}

/**
 * The assets folder, beside this module: in the source tree, or in dist/
 * where `npm run build` copies it (the image ships dist/ only). The source
 * tree's is the fallback for a dist/ compiled without the copy.
 */
export function assetsDirectory(): string {
  const candidates = [join(__dirname, 'assets'), join(__dirname, '..', '..', '..', 'http', 'widget-host', 'assets')];
  return candidates.find((candidate) => existsSync(join(candidate, PAGE_FILE))) ?? candidates[0];
}

/** Bytes made ready to serve: ETag of the content, compressed forms when worth it. */
export function prepareAsset(body: Buffer, type: string, compressible: boolean): Asset {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  if (!compressible || body.length < 256) return { type, etag, identity: body };
  return {
    type, etag, identity: body,
    gzip: gzipSync(body, { level: 9 }),
    br: brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  };
}

/** The folder's servable files by name, read and compressed now. */
export function loadAssets(directory: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(directory)) return assets;
  for (const name of readdirSync(directory)) {
    const extension = extname(name).toLowerCase();
    if (!ASSET_NAME.test(name) || !TYPES[extension]) continue;
    assets.set(name, prepareAsset(readFileSync(join(directory, name)), TYPES[extension], COMPRESSIBLE.has(extension)));
  }
  return assets;
}

/** Whether `name` may be asked for under /assets (checked before the map, so odd names never reach it). */
export function isAssetName(name: string): boolean {
  return ASSET_NAME.test(name) && name !== PAGE_FILE && name !== LOADER_FILE;
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
