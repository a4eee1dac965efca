/**
 * Debian's Chromium driven by playwright-core, for the browser tests: no browser is
 * downloaded; `CHROMIUM_PATH` names the executable (default `/usr/bin/chromium`, from
 * the `chromium` package that `.ci/run` installs). Every request to a host other than
 * the test server is refused and remembered, so a page that needs the internet fails
 * the test instead of waiting for it.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/** The Chromium executable the tests drive. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Starts headless Chromium with the flags a closed network needs (no background
 * networking, component updates or sync, which would only be refused).
 * @throws Error naming the missing executable and how to install it.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`No Chromium at ${CHROMIUM_PATH}: install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A page whose requests may reach only `origin`; `outside` lists every other URL it tried. */
export async function pageOffline(browser: Browser, origin: string): Promise<{ page: Page; outside: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const outside: string[] = [];
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith('data:') || url.startsWith('blob:')) await route.continue();
    else {
      outside.push(url);
      await route.abort('blockedbyclient');
    }
  });
  return { page: await context.newPage(), outside };
}
