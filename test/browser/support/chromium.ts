// Debian's Chromium driven by playwright-core (no browser is ever downloaded).
// Widget hostnames and the visitors' sites resolve to this machine through
// --host-resolver-rules, so tests use real origins such as http://widget.test:<port>.
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface TestBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/** Launches Chromium with `hostnames` all mapped to 127.0.0.1 (Playwright gives it a fresh, temporary user data dir). */
export async function launchChromium(hostnames: string[]): Promise<TestBrowser> {
  const rules = hostnames.map((name) => `MAP ${name} 127.0.0.1`).join(', ');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      `--host-resolver-rules=${rules}`,
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
    },
  };
}
