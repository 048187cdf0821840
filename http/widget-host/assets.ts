// The widget host's static files (http/widget-host/assets): read and
// compressed once at start (http/static-assets answers them). The files are a
// small fixed set, so compressing them ahead beats compressing every answer
// (which is why no compression middleware is used).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { prepareAsset, type Asset } from '../static-assets';

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

/**
 * The assets folder, beside this module: in the source tree, or in dist/
 * where `npm run build` copies it (the image ships dist/ only). The source
 * tree's is the fallback for a dist/ compiled without the copy.
 */
export function assetsDirectory(): string {
  const candidates = [join(__dirname, 'assets'), join(__dirname, '..', '..', '..', 'http', 'widget-host', 'assets')];
  return candidates.find((candidate) => existsSync(join(candidate, PAGE_FILE))) ?? candidates[0];
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
