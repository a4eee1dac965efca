/**
 * The web pages in a real browser (Debian's Chromium, driven by playwright-core), with
 * every request to another host refused: GraphiQL renders and runs an example, and the
 * dashboard draws the flights-20k flights of two Chicago airports (sent by the importer's
 * sender through the HTTP API; all 20,000 would take minutes to load on the test
 * database) with values that equal the API's answer and a plain loop over the data file,
 * and follows a reading recorded while it is open (the live subscription). A screenshot of the
 * dashboard is written to `test-results/dashboard.png`.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flightReading, readFlights20k } from '../../src/importer/flights.ts';
import { sendAll } from '../../src/importer/send.ts';
import { launchChromium, pageOffline } from '../helpers/browser.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { loadFlights20k } from '../helpers/reference.ts';

/** Where the dashboard's screenshot goes (named in the README). */
const SCREENSHOT = 'test-results/dashboard.png';
const ZONE = 'America/Chicago';
const ORIGINS = ['ORD', 'MDW'];

describe('in a browser, offline', { timeout: 300_000 }, () => {
  let t: TestApp;
  let server: Server;
  let origin: string;
  let browser: Browser;
  /** Distinct (origin, destination) pairs among the loaded flights: one series each. */
  let routes: number;

  beforeAll(async () => {
    t = await openTestApp('browser', { journal: false });
    server = createServer(t.app);
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const flights = (await readFlights20k()).filter((flight) => ORIGINS.includes(flight.origin));
    const [loaded, started] = await Promise.all([
      sendAll(`${origin}/graphql`, flights.map(flightReading), { batchSize: 500, concurrency: 2, idPrefix: 'chicago' }),
      launchChromium(),
    ]);
    expect(loaded.recorded).toBe(flights.length);
    routes = new Set(flights.map((flight) => `${flight.origin}>${flight.destination}`)).size;
    browser = started;
  }, 600_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((closed) => server?.close(closed));
    await t?.close();
  });

  it('renders GraphiQL from this server alone and runs the explore example', async () => {
    const { page, outside } = await pageOffline(browser, origin);
    await page.goto(`${origin}/graphql`, { headers: { accept: 'text/html' } } as never);
    await page.waitForSelector('.graphiql-container', { timeout: 60_000 });
    expect(await page.title()).toContain('tsgraph');
    // The answer as it came over the wire: its keys come in the order the resolvers
    // finished (graphql-yoga's executor), and the response pane renders only the lines
    // in view, so the asynchronous fields (seriesCount, the time fields) may sit below
    // the series list, out of view: they are checked here, and the pane only for the
    // keys resolved at once, which come first.
    const answered = page.waitForResponse(
      (response) => response.url().endsWith('/graphql') && (response.request().postData() ?? '').includes('ExploreTheData'),
      { timeout: 60_000 },
    );
    await page.locator('.graphiql-execute-button').click();
    // More than one operation in the tab: GraphiQL asks which one to run.
    const choice = page.getByRole('menuitem', { name: 'ExploreTheData' });
    if (await choice.isVisible({ timeout: 5_000 }).catch(() => false)) await choice.click();
    const body = (await (await answered).json()) as {
      data: { metrics: { name: string; seriesCount: number; firstReadingAt: string | null }[] };
    };
    const flights = body.data.metrics.find((metric) => metric.name === 'flights');
    expect(flights?.firstReadingAt).toMatch(/^2001-/);
    expect(flights?.seriesCount).toBe(routes);
    const result = page.locator('.graphiql-response');
    await expect.poll(async () => result.innerText(), { timeout: 60_000 }).toContain('"tagKeys"');
    expect(await result.innerText()).toContain('flights');
    expect(outside).toEqual([]);
    await page.context().close();
  });

  it('draws flights-20k with the values the API answers and a plain loop computes', async () => {
    const { page, outside } = await pageOffline(browser, origin);
    const query = new URLSearchParams({
      metric: 'flights',
      field: 'delay',
      tz: ZONE,
      from: '2001-01-01T00:00',
      to: '2001-04-01T00:00',
      points: '100',
      tag: `origin:${ORIGINS.join(',')}`,
    });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    await page.goto(`${origin}/dashboard?${query.toString()}`);
    await page.waitForSelector('body[data-state="drawn"]', { timeout: 60_000 }).catch(async (error: Error) => {
      throw new Error(`${error.message}; status: ${await page.locator('#status').innerText()}; ${problems.join('; ')}`);
    });
    expect(await page.locator('#chart canvas').count()).toBeGreaterThan(0);
    expect(await page.locator('#chart').getAttribute('data-granularity')).toBe('DAY');
    // Words for people: the granularity in the title and the status line, the zone's offset and name in the picker.
    expect(await page.locator('#chart .u-title').innerText()).toBe(`flights · delay · daily buckets (${ZONE})`);
    expect(await page.locator('#status').innerText()).toMatch(/^90 buckets of one day, [\d,]+ readings$/);
    expect(await page.locator('#time-zone').inputValue()).toBe(ZONE);
    const chicago = page.locator(`#time-zones option[value="${ZONE}"]`);
    await expect
      .poll(async () => chicago.getAttribute('label'))
      .toMatch(/^America\/Chicago \(UTC\u22120[56]:00, Central (Standard|Daylight) Time\)$/);
    expect(await page.locator('#time-zones option[value="Asia/Tokyo"]').getAttribute('label')).toMatch(
      /^Asia\/Tokyo \(UTC\+09:00, Japan Standard Time\)$/,
    );
    expect(await page.locator('#time-zone').getAttribute('title')).toBe(await chicago.getAttribute('label'));

    const rows = await page.locator('#values-body tr').evaluateAll((trs) =>
      trs.map((tr) => ({
        start: (tr as HTMLElement).dataset.start!,
        count: Number(tr.querySelector<HTMLElement>('td.count')!.dataset.value),
        avg: tr.querySelector<HTMLElement>('td.avg')!.dataset.value,
        p95: tr.querySelector<HTMLElement>('td.p95')!.dataset.value,
      })),
    );

    // The API, asked directly with the same choices.
    const api = await t.graphql<{ buckets: { buckets: { start: string; count: number; avg: number | null; p95: number | null }[] }[] }>(
      `query($where: [TagFilter!]) { buckets(metric: "flights", field: "delay", from: "2001-01-01T00:00", to: "2001-04-01T00:00",
        timeZone: "${ZONE}", where: $where, granularity: DAY, fill: NULL) { buckets { start count avg p95: percentile(p: 95) } } }`,
      { where: [{ key: 'origin', in: ORIGINS }] },
    );
    expect(api.errors).toBeUndefined();
    const apiBuckets = api.data!.buckets[0]!.buckets;
    expect(rows.map((row) => row.start)).toEqual(apiBuckets.map((bucket) => bucket.start));
    expect(rows.map((row) => row.count)).toEqual(apiBuckets.map((bucket) => bucket.count));
    expect(rows.map((row) => (row.avg === undefined ? null : Number(row.avg)))).toEqual(apiBuckets.map((bucket) => bucket.avg));
    expect(rows.map((row) => (row.p95 === undefined ? null : Number(row.p95)))).toEqual(apiBuckets.map((bucket) => bucket.p95));

    // A plain loop: flights from the two airports by local day in Chicago, 90 days.
    const day = new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit' });
    const byDay = new Map<string, { count: number; sum: number }>();
    for (const flight of loadFlights20k()) {
      if (!ORIGINS.includes(flight.origin)) continue;
      const key = day.format(new Date(flight.time));
      if (key < '2001-01-01' || key >= '2001-04-01') continue;
      const entry = byDay.get(key) ?? { count: 0, sum: 0 };
      entry.count += 1;
      entry.sum += flight.delay;
      byDay.set(key, entry);
    }
    expect(rows).toHaveLength(90);
    for (const row of rows) {
      const key = day.format(new Date(row.start));
      const want = byDay.get(key);
      expect(row.count, key).toBe(want?.count ?? 0);
      if (want) expect(Number(row.avg)).toBeCloseTo(want.sum / want.count, 9);
    }
    expect(rows.reduce((sum, row) => sum + row.count, 0)).toBe([...byDay.values()].reduce((sum, entry) => sum + entry.count, 0));

    mkdirSync('test-results', { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(outside).toEqual([]);
    await page.context().close();
  });

  it('draws in a browser whose language Intl refuses (headless Chromium under LANG=C.UTF-8 reports en-US@posix)', async () => {
    const posix = await launchChromium({ env: { ...process.env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', LANGUAGE: '' } });
    try {
      const { page, outside } = await pageOffline(posix, origin, { locale: null });
      // The browser's own tag, before any page of ours runs: refused by Intl, so without the fallback uPlot throws as it loads.
      const before = await page.evaluate(() => {
        try {
          new Intl.NumberFormat(navigator.language);
          return { language: navigator.language, refused: false };
        } catch {
          return { language: navigator.language, refused: true };
        }
      });
      expect(before).toEqual({ language: 'en-US@posix', refused: true });
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(error.message));
      const query = new URLSearchParams({
        metric: 'flights',
        field: 'delay',
        tz: ZONE,
        from: '2001-01-01T00:00',
        to: '2001-02-01T00:00',
        points: '40',
      });
      await page.goto(`${origin}/dashboard?${query.toString()}`);
      await page.waitForSelector('body[data-state="drawn"]', { timeout: 60_000 }).catch(async (error: Error) => {
        throw new Error(`${error.message}; status: ${await page.locator('#status').innerText()}; ${problems.join('; ')}`);
      });
      expect(problems).toEqual([]);
      expect(await page.locator('#chart canvas').count()).toBeGreaterThan(0);
      expect(await page.locator('#status').innerText()).toMatch(/^31 buckets of one day, [\d,]+ readings$/);
      expect(await page.evaluate(() => navigator.language)).toBe('en-US');
      expect(outside).toEqual([]);
    } finally {
      await posix.close();
    }
  });

  it('follows live updates: a reading recorded while the page is open reaches the chart', async () => {
    const { page, outside } = await pageOffline(browser, origin);
    const query = new URLSearchParams({
      metric: 'flights',
      field: 'delay',
      tz: ZONE,
      from: '2001-03-01T00:00',
      to: '2001-04-01T00:00',
      points: '100',
      tag: 'origin:ORD',
      follow: '1',
    });
    await page.goto(`${origin}/dashboard?${query.toString()}`);
    await page.waitForSelector('body[data-state="drawn"][data-live="on"]', { timeout: 60_000 });
    const lastDay = page.locator('#values-body tr').last();
    await expect.poll(async () => page.locator('#values-body tr').count()).toBeGreaterThan(0);
    const before = Number(await lastDay.locator('td.count').getAttribute('data-value'));

    // 2001-03-31 12:00 in Chicago (CST, UTC-6): the chart's last day.
    const recorded = await t.graphql<{ recordReadings: { applied: number } }>(
      `mutation { recordReadings(readings: [{ metric: "flights", tags: [{ key: "origin", value: "ORD" }, { key: "destination", value: "SFO" }],
        time: "2001-03-31T18:00:00Z", fields: [{ name: "delay", value: 1000 }] }]) { applied } }`,
    );
    expect(recorded.data?.recordReadings.applied).toBe(1);
    await expect
      .poll(async () => Number(await lastDay.locator('td.count').getAttribute('data-value')), { timeout: 30_000 })
      .toBe(before + 1);
    expect(Number(await page.locator('body').getAttribute('data-pushes'))).toBeGreaterThanOrEqual(1);

    // The API's last bucket of the same chart (the finest granularity with at most 100 buckets over March).
    const api = await t.graphql<{ buckets: { granularity: string; buckets: { start: string; count: number; avg: number }[] }[] }>(
      `{ buckets(metric: "flights", field: "delay", from: "2001-03-01T00:00", to: "2001-04-01T00:00", timeZone: "${ZONE}",
        where: [{ key: "origin", in: ["ORD"] }], maxDataPoints: 100, fill: NULL) { granularity buckets { start count avg } } }`,
    );
    expect(api.errors).toBeUndefined();
    const last = api.data!.buckets[0]!.buckets.at(-1)!;
    expect(await lastDay.getAttribute('data-start')).toBe(last.start);
    expect(last.count).toBe(before + 1);
    expect(Number(await lastDay.locator('td.avg').getAttribute('data-value'))).toBe(last.avg);
    // 62 buckets over March: the chart's title says so in words.
    expect(api.data!.buckets[0]!.granularity).toBe('TWELVE_HOURS');
    expect(await page.locator('#chart .u-title').innerText()).toBe(`flights · delay · 12-hour buckets (${ZONE})`);
    expect(await page.locator('#status').innerText()).toMatch(/^62 buckets of 12 hours, [\d,]+ readings · live, updated /);
    expect(outside).toEqual([]);
    await page.context().close();
  });
});
