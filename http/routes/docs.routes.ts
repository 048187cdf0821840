// The API reference page, public like the OpenAPI document it renders:
// `GET /docs` and the files it loads, `GET /docs/<file>` (http/api-reference).
import Router from '@koa/router';
import { REFERENCE_FILES, REFERENCE_PAGE_POLICY, REFERENCE_PATH, referenceFiles, STARTER_FILE } from '../api-reference';
import { sendAsset } from '../static-assets';

/** The page and our starter revalidate on every load (an upgrade changes them); Swagger UI's own files are kept a while. */
const PAGE_CACHE = 'no-cache';
const FILE_CACHE = 'public, max-age=3600';

export function docsRoutes(): Router {
  const router = new Router();
  router.get(REFERENCE_PATH, async (ctx) => {
    ctx.state.routePath = REFERENCE_PATH;
    const { page } = await referenceFiles();
    ctx.set('Content-Security-Policy', REFERENCE_PAGE_POLICY);
    ctx.set('Referrer-Policy', 'no-referrer');
    sendAsset(ctx, page, PAGE_CACHE);
  });
  // A route per file the page loads, none for other names: any other name under /docs is the API's 404, whatever
  // the method (one `/docs/:file` route would make POST /docs/nothing.js a 405 while GET on it is 404).
  for (const name of REFERENCE_FILES) {
    router.get(`${REFERENCE_PATH}/${name}`, async (ctx) => {
      ctx.state.routePath = `${REFERENCE_PATH}/{file}`;
      const file = (await referenceFiles()).files.get(name)!;
      sendAsset(ctx, file, name === STARTER_FILE ? PAGE_CACHE : FILE_CACHE);
    });
  }
  return router;
}
