/**
 * GraphiQL works without internet access: the page `/graphql` serves to a browser loads
 * nothing from another host, and opens with the explore tab and the saved examples.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parse, validate } from 'graphql';
import { renderGraphiQL as yogaBuiltInPage } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';

/** Hosts of public CDNs a page might load GraphiQL, fonts or styles from. */
const CDN_HOSTS = [
  'unpkg.com',
  'cdn.jsdelivr.net',
  'esm.sh',
  'cdnjs.cloudflare.com',
  'fonts.googleapis.com',
  'fonts.gstatic.com',
  'cdn.skypack.dev',
];

/** The URLs a page makes the browser load: `src` and `href` of its tags, `url(...)` and `@import` of its styles. */
function assetUrls(html: string): string[] {
  const urls: string[] = [];
  const styles = [...html.matchAll(/<style\b[^>]*>([\s\S]*?)<\/style>/gi)].map((match) => match[1]!);
  // Tags outside scripts and styles (their text may mention tags that are never markup).
  const markup = html.replace(/<script\b[^>]*>[\s\S]*?<\/script>/gi, '<script>').replace(/<style\b[^>]*>[\s\S]*?<\/style>/gi, '<style>');
  for (const tag of markup.matchAll(/<[a-z][^>]*>/gi)) {
    for (const attribute of tag[0].matchAll(/\s(?:src|href|srcset|poster|data)\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))/gi)) {
      urls.push(attribute[2] ?? attribute[3] ?? attribute[4]!);
    }
  }
  for (const css of styles) {
    for (const match of css.matchAll(/url\(\s*(?:"([^"]*)"|'([^']*)'|([^)]*))\s*\)/gi))
      urls.push((match[1] ?? match[2] ?? match[3]!).trim());
    for (const match of css.matchAll(/@import\s+(?:url\()?\s*["']?([^"')\s;]+)/gi)) urls.push(match[1]!);
  }
  return urls;
}

/** True for a URL the browser resolves without another host: inline data, a blob, a fragment, a relative path or the page's own origin. */
function staysHere(url: string, origin: string): boolean {
  if (/^(data|blob):/i.test(url) || url.startsWith('#') || url === '') return true;
  if (url.startsWith('//')) return false;
  if (!/^[a-z][a-z0-9+.-]*:/i.test(url)) return true;
  return new URL(url).origin === origin;
}

/** The options the page hands to GraphiQL (the JSON argument of `renderYogaGraphiQL`). */
function pageOptions(html: string): {
  title?: string;
  headers?: string;
  defaultHeaders?: string;
  defaultTabs?: { query: string; variables?: string; headers?: string }[];
} {
  const json = /renderYogaGraphiQL\(\s*window\.document\.querySelector\('#root'\),\s*(\{.*\}),\s*\);/.exec(html)?.[1];
  expect(json, 'the page passes its options to renderYogaGraphiQL').toBeDefined();
  return JSON.parse(json!);
}

/** The saved examples, read from the repository on their own. */
const examples = () => {
  const dir = new URL('../../schema/examples/', import.meta.url);
  return readdirSync(dir)
    .filter((file) => file.endsWith('.graphql'))
    .map((file) => readFileSync(new URL(file, dir), 'utf8'));
};

async function fetchPage(t: TestApp): Promise<Response> {
  return t.app.fetch('http://yoga/graphql', { headers: { accept: 'text/html' } });
}

describe('GraphiQL offline', () => {
  let t: TestApp;
  let html: string;
  beforeAll(async () => {
    t = await openTestApp('graphiql');
    const response = await fetchPage(t);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    html = await response.text();
  });
  afterAll(() => t.close());

  it('loads no script, style, font or image from another host, and serves what it links to', async () => {
    const urls = assetUrls(html);
    expect(urls.length).toBeGreaterThan(0); // at least the favicon and the inline fonts
    expect(urls.filter((url) => !staysHere(url, 'http://yoga'))).toEqual([]);
    for (const url of urls.filter((url) => !/^(data|blob):/i.test(url) && !url.startsWith('#') && url !== '')) {
      expect((await t.app.fetch(new URL(url, 'http://yoga/graphql').href)).status, url).toBe(200);
    }
    for (const host of CDN_HOSTS) expect(html.includes(host), host).toBe(false);
    expect(html).not.toMatch(/<script\b[^>]*\bsrc=/i);
    expect(html).not.toContain('__TITLE__');
  });

  it('would catch a page that loads GraphiQL from a CDN (graphql-yoga built-in page)', () => {
    const builtIn = yogaBuiltInPage({});
    expect(assetUrls(builtIn).filter((url) => !staysHere(url, 'http://yoga')).length).toBeGreaterThan(0);
  });

  it('is titled tsgraph and opens with the explore tab, then every saved example, each of them valid', () => {
    const options = pageOptions(html);
    expect(options.title).toMatch(/^tsgraph/);
    expect(html).toMatch(/<title>tsgraph[^<]*<\/title>/);
    const tabs = options.defaultTabs!;
    expect(tabs[0]!.query).toContain('query ExploreTheData');
    const saved = examples();
    expect(tabs.length).toBe(saved.length + 1);
    expect(
      tabs
        .slice(1)
        .map((tab) => tab.query)
        .sort(),
    ).toEqual([...saved].sort());
    for (const tab of tabs) {
      expect(validate(schema, parse(tab.query)), tab.query.slice(0, 80)).toEqual([]);
      expect(tab.headers).toBeUndefined();
    }
    expect(options.headers).toBeUndefined();
  });

  it('serves the same page again (rendered once)', async () => {
    expect(await (await fetchPage(t)).text()).toBe(html);
  });
});

describe('GraphiQL with API tokens', () => {
  it('pre-fills the header editor of every tab, and of new tabs, with the Authorization header to complete', async () => {
    const t = await openTestApp('graphiql_tokens', { auth: 'tokens' });
    try {
      const response = await fetchPage(t);
      expect(response.status).toBe(200);
      const options = pageOptions(await response.text());
      const expected = { Authorization: 'Bearer <paste a token>' };
      expect(JSON.parse(options.headers!)).toEqual(expected);
      expect(JSON.parse(options.defaultHeaders!)).toEqual(expected);
      for (const tab of options.defaultTabs!) expect(JSON.parse(tab.headers!)).toEqual(expected);
    } finally {
      await t.close();
    }
  });
});

describe('the explore tab', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp('graphiql_explore');
  });
  afterAll(() => t.close());

  it('lists every metric with its fields, tag keys and series, and the values of a tag key', async () => {
    const readings = [
      { metric: 'cpu', tags: [{ key: 'host', value: 'web-2' }], time: '2024-05-01T08:00:00Z', fields: [{ name: 'user', value: 1 }] },
      {
        metric: 'cpu',
        tags: [
          { key: 'host', value: 'web-1' },
          { key: 'dc', value: 'fra' },
        ],
        time: '2024-05-01T08:01:00Z',
        fields: [{ name: 'system', value: 2 }],
      },
      { metric: 'cpu', tags: [{ key: 'host', value: 'web-1' }], time: '2024-05-02T08:00:00Z', fields: [{ name: 'user', value: 3 }] },
      {
        metric: 'disk',
        tags: [{ key: 'path', value: '/var' }],
        time: '2024-05-03T00:00:00Z',
        fields: [
          { name: 'free', value: 4 },
          { name: 'used', value: 5 },
        ],
      },
    ];
    const recorded = await t.graphql('mutation ($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded } }', {
      readings,
    });
    expect(recorded.errors).toBeUndefined();

    // What the explore tab should show, computed from the readings with plain loops.
    const expected = new Map<string, { fields: Set<string>; tagKeys: Set<string>; series: Set<string>; first: string; last: string }>();
    for (const reading of readings) {
      const entry = expected.get(reading.metric) ?? {
        fields: new Set(),
        tagKeys: new Set(),
        series: new Set(),
        first: reading.time,
        last: reading.time,
      };
      for (const field of reading.fields) entry.fields.add(field.name);
      for (const tag of reading.tags) entry.tagKeys.add(tag.key);
      const key = [...reading.tags]
        .sort((a, b) => (a.key < b.key ? -1 : 1))
        .map((tag) => `${tag.key}=${tag.value}`)
        .join(',');
      entry.series.add(key);
      if (reading.time < entry.first) entry.first = reading.time;
      if (reading.time > entry.last) entry.last = reading.time;
      expected.set(reading.metric, entry);
    }

    const html = await (await fetchPage(t)).text();
    const tab = pageOptions(html).defaultTabs![0]!;
    const explore = await t.app.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: tab.query, operationName: 'ExploreTheData' }),
    });
    const body = (await explore.json()) as {
      errors?: unknown;
      data: {
        metrics: {
          name: string;
          fields: string[];
          tagKeys: string[];
          seriesCount: number;
          firstReadingAt: string;
          lastReadingAt: string;
          series: { tags: { key: string; value: string }[] }[];
        }[];
      };
    };
    expect(body.errors).toBeUndefined();
    expect(body.data.metrics.map((metric) => metric.name)).toEqual([...expected.keys()].sort());
    for (const metric of body.data.metrics) {
      const want = expected.get(metric.name)!;
      expect(metric.fields).toEqual([...want.fields].sort());
      expect(metric.tagKeys).toEqual([...want.tagKeys].sort());
      expect(metric.seriesCount).toBe(want.series.size);
      expect(new Date(metric.firstReadingAt).getTime()).toBe(new Date(want.first).getTime());
      expect(new Date(metric.lastReadingAt).getTime()).toBe(new Date(want.last).getTime());
      const listed = metric.series.map((series) => series.tags.map((tag) => `${tag.key}=${tag.value}`).join(','));
      expect(listed.sort()).toEqual([...want.series].sort());
    }

    const values = await t.app.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: tab.query, operationName: 'TagValues', variables: { metric: 'cpu', key: 'host' } }),
    });
    const hosts = new Set(
      readings
        .filter((reading) => reading.metric === 'cpu')
        .flatMap((reading) => reading.tags.filter((tag) => tag.key === 'host').map((tag) => tag.value)),
    );
    expect(((await values.json()) as { data: { tagValues: string[] } }).data.tagValues).toEqual([...hosts].sort());
    expect(JSON.parse(tab.variables!)).toEqual({ metric: 'flights', key: 'origin' });
  });
});
