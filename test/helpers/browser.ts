/**
 * A headless Chromium driven by playwright-core, for the browser tests. No browser is
 * downloaded at test time: the executable is, in this order,
 * - `CHROMIUM_PATH`, when set (any Chromium or Chrome build);
 * - `/usr/bin/chromium`, when present (Debian's `chromium` package);
 * - the Chromium build shipped inside the npm package `@sparticuz/chromium` (a dev
 *   dependency, so `npm install` brings it), unpacked into the temporary directory on
 *   first use (about 3 s).
 * Every request to a host other than the test server is refused and remembered, so a
 * page that needs the internet fails the test instead of waiting for it.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium, preferred over the packaged build when it is installed. */
const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/** Where the browser a run drives comes from, and its executable. */
export interface ChromiumChoice {
  /** `CHROMIUM_PATH`, `system` (Debian's package) or `npm` (`@sparticuz/chromium`). */
  source: 'CHROMIUM_PATH' | 'system' | 'npm';
  executablePath: string;
}

/**
 * Picks the Chromium to drive (see the module comment for the order).
 * @throws Error when `CHROMIUM_PATH` names no file, or when the npm package cannot be
 *   unpacked (e.g. `npm install` was not run): the message says what to do.
 */
export async function chooseChromium(): Promise<ChromiumChoice> {
  const named = process.env.CHROMIUM_PATH;
  if (named) {
    if (!existsSync(named))
      throw new Error(
        `CHROMIUM_PATH names no file (${named}): point it at a Chromium executable, or unset it to use the one npm install brings`,
      );
    return { source: 'CHROMIUM_PATH', executablePath: named };
  }
  if (existsSync(SYSTEM_CHROMIUM)) return { source: 'system', executablePath: SYSTEM_CHROMIUM };
  try {
    const { default: packaged } = await import('@sparticuz/chromium');
    return { source: 'npm', executablePath: await packaged.executablePath() };
  } catch (error) {
    throw new Error(
      `No Chromium to drive: run npm install (it brings @sparticuz/chromium), install Debian's chromium package, or set CHROMIUM_PATH (${String(error)})`,
    );
  }
}

/**
 * Starts headless Chromium with the flags a closed network needs (no background
 * networking, component updates or sync, which would only be refused), and prints which
 * browser the run uses.
 * @param options.env the browser's environment (default: this process's), e.g. a `LANG`.
 * @throws Error from {@link chooseChromium}, or playwright's launch error with the
 *   executable's path in front.
 */
export async function launchChromium(options: { env?: Record<string, string | undefined> } = {}): Promise<Browser> {
  const choice = await chooseChromium();
  try {
    const browser = await chromium.launch({
      executablePath: choice.executablePath,
      ...(options.env === undefined ? {} : { env: options.env }),
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
    console.log(`[browser] Chromium ${browser.version()} from ${choice.source} (${choice.executablePath})`);
    return browser;
  } catch (error) {
    throw new Error(
      `Chromium at ${choice.executablePath} (${choice.source}) did not start (the npm build needs the system's shared libraries, e.g. Debian's libnss3, libgbm1 and libatk-bridge2.0-0; or set CHROMIUM_PATH): ${String(error)}`,
    );
  }
}

/**
 * A page whose requests may reach only `origin`; `outside` lists every other URL it tried.
 * @param options.locale the page's locale: `en-US` by default, null for the browser's own
 *   (under `LANG=C.UTF-8` headless Chromium reports `en-US@posix`, which Intl refuses).
 */
export async function pageOffline(
  browser: Browser,
  origin: string,
  options: { locale?: string | null } = {},
): Promise<{ page: Page; outside: string[] }> {
  const locale = options.locale === undefined ? 'en-US' : options.locale;
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, ...(locale === null ? {} : { locale }) });
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
