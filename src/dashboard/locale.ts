/**
 * The locale the dashboard formats with: the first of the browser's languages that
 * Intl accepts, else `en-US`. A browser may report a tag that is no BCP 47 language tag:
 * headless Chromium under `LANG=C.UTF-8` reports `en-US@posix`, and every Intl
 * constructor given it throws `RangeError: Invalid language tag`, uPlot's among them
 * (it builds a number format from `navigator.language` as it loads), which left the page
 * blank. So when the browser's own tag is refused, `navigator.language` and
 * `navigator.languages` are overridden with the accepted locale (own properties of the
 * page's `navigator`) before uPlot loads: import this module first.
 */

/** Whether Intl accepts `tag` as a locale. */
function accepted(tag: string | undefined): tag is string {
  if (tag === undefined || tag === '') return false;
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

/** The locale the page formats dates, times and numbers with (see the module comment). */
export const LOCALE: string = [...(navigator.languages ?? []), navigator.language].find(accepted) ?? 'en-US';

if (!accepted(navigator.language)) {
  Object.defineProperty(navigator, 'language', { value: LOCALE, configurable: true });
  Object.defineProperty(navigator, 'languages', { value: Object.freeze([LOCALE]), configurable: true });
}
