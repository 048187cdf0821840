// The API reference page (GET /docs) in Debian's Chromium, served by the real
// node (startTestApi): Swagger UI renders the node's OpenAPI document, and
// every request the page makes, "Try it out" included, goes to the node's own
// origin. Requests to any other host are recorded and refused (never sent),
// and the test fails on them, on a policy violation and on a script error.
// The node is reached by a hostname, as a user reaches it (Swagger UI treats
// loopback addresses apart: its validator badge skips them).
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import type { BootstrapResult } from '../../src/accounts/account.service';
import { startTestApi, type TestApi } from '../support/api';
import { launchChromium, type TestBrowser } from './support/chromium';

const HOSTNAME = 'api.agentrt.test';

describe('API reference page in Chromium (the node\'s /docs)', function () {
  this.timeout(60_000);
  let api: TestApi;
  let chrome: TestBrowser;
  let context: BrowserContext;
  let page: Page;
  let account: BootstrapResult;
  /** Every request the page made, as `METHOD url`. */
  let requests: string[];
  /** What the test fails on: other hosts, policy violations, script errors. */
  let problems: string[];
  /** The node's origin as the browser reaches it. */
  let origin: string;

  before(async () => {
    api = await startTestApi();
    account = await api.bootstrap();
    origin = `http://${HOSTNAME}:${new URL(api.url).port}`;
    chrome = await launchChromium([HOSTNAME]);
  });
  after(async () => {
    await chrome?.close();
    await api?.close();
  });
  beforeEach(async () => {
    requests = [];
    problems = [];
    context = await chrome.browser.newContext();
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      if (new URL(url).origin === origin) return route.continue();
      problems.push(`a request to another host: ${route.request().method()} ${url}`);
      return route.abort('blockedbyclient');
    });
    context.on('request', (request) => requests.push(`${request.method()} ${request.url()}`));
    page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`script error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`console ${message.type()}: ${message.text()}`);
    });
  });
  afterEach(async () => context?.close());

  const operation = (operationId: string) => page.locator(`#operations-default-${operationId}`);

  it('renders the node\'s operations, loading everything from the node itself', async () => {
    await page.goto(`${origin}/docs`);
    await operation('createObjective').waitFor();
    assert.match(await page.locator('.info .title').innerText(), /^agentrt API/);
    for (const [operationId, method, path] of [
      ['createObjective', 'POST', '/v1/workspaces/{workspaceId}/objectives'],
      ['listObjectives', 'GET', '/v1/workspaces/{workspaceId}/objectives'],
      ['cancelObjective', 'POST', '/v1/workspaces/{workspaceId}/objectives/{id}/cancel'],
    ]) {
      const block = operation(operationId);
      assert.ok(await block.isVisible(), `${operationId} is shown`);
      assert.equal(await block.locator('.opblock-summary-method').innerText(), method);
      assert.equal(await block.locator('.opblock-summary-path').getAttribute('data-path'), path);
    }
    const document = await (await fetch(`${api.url}/v1/openapi.json`)).json() as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.values(document.paths).reduce((count, methods) => count + Object.keys(methods).length, 0);
    assert.equal(await page.locator('.opblock').count(), documented, 'every operation of the document is listed');

    assert.ok(requests.includes(`GET ${origin}/v1/openapi.json`), `the document is read from the node: ${requests.join(', ')}`);
    assert.deepEqual(requests.filter((request) => !request.startsWith(`GET ${origin}/`)), [], 'every request went to the node');
    assert.deepEqual(problems, []);
  });

  it('runs "Try it out" against the node with the bearer token given to Authorize', async () => {
    await page.goto(`${origin}/docs`);
    await page.locator('button.authorize').first().click();
    await page.locator('.auth-container input').fill(account.globalApiKey.token);
    await page.locator('.auth-container button.authorize').click();
    await page.locator('.auth-container button.btn-done, .modal-ux .close-modal').first().click();

    const list = operation('listObjectives');
    await list.locator('.opblock-summary-control').click();
    await list.locator('.try-out__btn').click();
    await list.locator('tr[data-param-name="workspaceId"] input').fill(account.workspaceId);
    await list.locator('.execute').click();
    const status = list.locator('.live-responses-table .response .response-col_status');
    await status.waitFor();
    assert.equal((await status.innerText()).trim(), '200');

    assert.ok(requests.includes(`GET ${origin}/v1/workspaces/${account.workspaceId}/objectives`), requests.join(', '));
    assert.deepEqual(requests.filter((request) => !request.startsWith(`GET ${origin}/`)), [], 'every request went to the node');
    assert.deepEqual(problems, []);
  });
});
