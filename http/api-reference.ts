// The API reference page (GET /docs): Swagger UI, from the installed
// swagger-ui-dist package, rendering the node's own OpenAPI document. The node
// serves every file the page loads (no CDN), only those, under a policy that
// lets the page reach nothing but the node. The base layout shows no
// validator badge, and validatorUrl null keeps it off should the layout
// change, so the page never asks validator.swagger.io.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { OPENAPI_DOCUMENT_PATH } from './openapi';
import { prepareLargeAsset, type Asset } from './static-assets';

/** Where the page is served; its files are under `${REFERENCE_PATH}/`. */
export const REFERENCE_PATH = '/docs';
/** Our own script: it starts Swagger UI (a strict policy runs no inline script). */
export const STARTER_FILE = 'api-reference.js';
/** What the page needs of swagger-ui-dist, with its type: the rest of the package is never served. */
const SWAGGER_UI_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/**
 * The page's policy: its scripts, styles and images from the node only (Swagger UI's icons are data: URIs), its
 * requests (the OpenAPI document, "Try it out") to the node only, and no framing.
 */
export const REFERENCE_PAGE_POLICY = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
  "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

/** The page: Swagger UI's stylesheet and bundle, then our starter. Absolute paths, so `/docs/` works as `/docs` does. */
function pageHtml(): string {
  const file = (name: string) => `${REFERENCE_PATH}/${name}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>agentrt API reference</title>
<link rel="stylesheet" href="${file('swagger-ui.css')}">
<link rel="icon" type="image/png" href="${file('favicon-32x32.png')}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${file('swagger-ui-bundle.js')}"></script>
<script src="${file(STARTER_FILE)}"></script>
</body>
</html>
`;
}

/** Starts Swagger UI on the node's OpenAPI document (read from the node's own path, never another host's). */
function starterScript(): string {
  return `// Swagger UI on this node's OpenAPI document. validatorUrl null: no request to validator.swagger.io.
window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(OPENAPI_DOCUMENT_PATH)},
  dom_id: '#swagger-ui',
  validatorUrl: null,
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;
}

/**
 * The installed swagger-ui-dist's folder, as Node resolves it from this module: node_modules beside the source
 * tree, or beside dist/ (the image keeps the production dependencies next to dist/).
 */
export function swaggerUiDirectory(): string {
  return dirname(require.resolve('swagger-ui-dist/package.json'));
}

/** The names `GET /docs/<name>` serves: the page's files, nothing else of the package. */
export const REFERENCE_FILES: readonly string[] = [...Object.keys(SWAGGER_UI_FILES), STARTER_FILE];

export interface ReferenceFiles {
  page: Asset;
  /** The page's files by name (what `GET /docs/<name>` answers). */
  files: Map<string, Asset>;
}

async function loadReferenceFiles(): Promise<ReferenceFiles> {
  const directory = swaggerUiDirectory();
  const entries = await Promise.all(Object.entries(SWAGGER_UI_FILES).map(async ([name, type]) =>
    [name, await prepareLargeAsset(await readFile(join(directory, name)), type, type !== 'image/png')] as const));
  const files = new Map<string, Asset>(entries);
  files.set(STARTER_FILE, await prepareLargeAsset(Buffer.from(starterScript()), 'text/javascript; charset=utf-8', true));
  return { page: await prepareLargeAsset(Buffer.from(pageHtml()), 'text/html; charset=utf-8', true), files };
}

let loading: Promise<ReferenceFiles> | undefined;

/**
 * The page and its files, read and compressed on first use (about 2 MB: a node nobody reads the reference of
 * never holds them), then kept for the process: the package does not change while it runs. A failed read is
 * forgotten, so the next request tries again.
 */
export function referenceFiles(): Promise<ReferenceFiles> {
  if (!loading) {
    loading = loadReferenceFiles();
    loading.catch(() => (loading = undefined));
  }
  return loading;
}
