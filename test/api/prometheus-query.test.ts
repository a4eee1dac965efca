/**
 * Prometheus' HTTP query API (`/api/v1/query`, `/api/v1/query_range` and the look-ups)
 * read by real clients: samples remote-written by the npm client `prometheus-remote-write`
 * over a socket, queried by the npm client `prometheus-query` (GET and POST), and the
 * request sequences Grafana's data source sends (test/fixtures/grafana). Every answer is
 * checked against a plain loop over the samples with Prometheus' definitions
 * (`helpers/promql-reference.ts`), in the log's tail and after folding, and against
 * cases of Prometheus' own data-driven tests (`promql/promqltest/testdata/functions.test`).
 */
import { readFileSync } from 'node:fs';
import { PrometheusDriver } from 'prometheus-query';
import { pushTimeseries } from 'prometheus-remote-write';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { serveOnLoopback, type Loopback } from '../helpers/loopback.ts';
import { refHistogramQuantile, refInstant, refRange, refSumBy, type RefSeries } from '../helpers/promql-reference.ts';
import { random } from '../helpers/random.ts';
import { databaseSnapshot } from '../helpers/snapshot.ts';
import { createTokens, useTokensOnce } from '../helpers/tokens.ts';

let t: TestApp;
let server: Loopback;
let tokens: Record<'reader' | 'writer' | 'temps' | 'admin', string>;

const MINUTE = 60_000;
/** 2024-06-01T10:00:00Z. */
const T0 = Date.UTC(2024, 5, 1, 10);
const SPAN_MINUTES = 40;
const series: RefSeries[] = [];
const LE = ['0.1', '0.25', '0.5', '1', '+Inf'];

/** The samples written: counters every 15 s (one with a reset), gauges every 20 s, histogram buckets every minute, none on a minute boundary. */
function makeSamples(): void {
  const next = random(46);
  for (const path of ['/a', '/b', '/c']) {
    for (const instance of ['web-1', 'web-2']) {
      const samples: { t: number; v: number }[] = [];
      let value = Math.floor(next() * 50);
      const offset = 1_000 + Math.floor(next() * 13_000) + 7;
      for (let i = 0; i < (SPAN_MINUTES * MINUTE) / 15_000; i++) {
        value += Math.floor(next() * 20);
        if (path === '/b' && instance === 'web-1' && i === 70) value = 3;
        samples.push({ t: T0 + offset + i * 15_000, v: value });
      }
      series.push({ labels: { __name__: 'http_requests_total', path, instance }, samples });
    }
  }
  for (const room of ['kitchen', 'hall']) {
    const samples: { t: number; v: number }[] = [];
    for (let i = 0; i < (SPAN_MINUTES * MINUTE) / 20_000; i++)
      samples.push({ t: T0 + 3_100 + i * 20_000, v: Math.round((15 + next() * 10) * 4) / 4 + (room === 'kitchen' ? 0.01 : 0.02) });
    series.push({ labels: { __name__: 'temperature', room }, samples });
  }
  const counts = LE.map(() => 0);
  const bucketSamples = LE.map(() => [] as { t: number; v: number }[]);
  for (let minute = 0; minute < SPAN_MINUTES; minute++) {
    for (let n = 0; n < 20; n++) {
      const observed = next() * 1.2;
      LE.forEach((le, i) => {
        if (le === '+Inf' || observed <= Number(le)) counts[i]! += 1;
      });
    }
    LE.forEach((_le, i) => {
      bucketSamples[i]!.push({ t: T0 + 11_000 + minute * MINUTE, v: counts[i]! });
    });
  }
  LE.forEach((le, i) => {
    series.push({ labels: { __name__: 'latency_seconds_bucket', le }, samples: bucketSamples[i]! });
  });
}

const key = (labels: Record<string, string>) =>
  JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((name) => [name, labels[name]]),
  );
const without = (labels: Record<string, string>, ...names: string[]) =>
  Object.fromEntries(Object.entries(labels).filter(([name]) => !names.includes(name)));
const named = (name: string) => series.filter((entry) => entry.labels.__name__ === name);

beforeAll(async () => {
  t = await openTestApp('promquery', { auth: 'tokens', journal: false });
  tokens = await createTokens(t.store, [
    ['reader', 'read', []],
    ['writer', 'write', []],
    ['temps', 'read', ['temp']],
    ['admin', 'admin', []],
  ]);
  await useTokensOnce(t, tokens);
  server = await serveOnLoopback(t.app);
  makeSamples();
  const result = await pushTimeseries(
    series.map((entry) => ({
      labels: entry.labels as { __name__: string },
      samples: entry.samples.map((s) => ({ value: s.v, timestamp: s.t })),
    })),
    { url: `${server.url}/api/v1/write`, headers: { authorization: `Bearer ${tokens.writer}` }, fetch: globalThis.fetch as never },
  );
  expect(result.status).toBe(204);
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

/** A `prometheus-query` client of the server with `token` as Basic authentication's password, POST first like Grafana. */
const client = (token: string, preferPost = true) =>
  new PrometheusDriver({ endpoint: server.url, auth: { username: 'grafana', password: token }, preferPost });

/** One range query through the client: series by their label key, each a map from time (ms) to value. */
async function range(query: string, start: number, end: number, stepSeconds: number, preferPost = true) {
  const answer = await client(tokens.reader, preferPost).rangeQuery(query, new Date(start), new Date(end), stepSeconds);
  const out = new Map<string, Map<number, number>>();
  for (const entry of answer.result) {
    const labels = { ...(entry.metric.labels as Record<string, string>), ...(entry.metric.name ? { __name__: entry.metric.name } : {}) };
    out.set(key(labels), new Map(entry.values.map((sample: { time: Date; value: number }) => [sample.time.getTime(), sample.value])));
  }
  return out;
}

/** The expected series of a query at `times`: label key -> time -> value, from `compute` over each time. */
function expected(times: number[], compute: (time: number) => { labels: Record<string, string>; value: number | undefined }[]) {
  const out = new Map<string, Map<number, number>>();
  for (const time of times) {
    for (const { labels, value } of compute(time)) {
      if (value === undefined) continue;
      const k = key(labels);
      if (!out.has(k)) out.set(k, new Map());
      out.get(k)!.set(time, value);
    }
  }
  return out;
}

function expectClose(actual: Map<string, Map<number, number>>, wanted: Map<string, Map<number, number>>, what: string): void {
  expect([...actual.keys()].sort(), `${what}: series`).toEqual([...wanted.keys()].sort());
  for (const [k, values] of wanted) {
    const got = actual.get(k)!;
    expect([...got.keys()], `${what} ${k}: times`).toEqual([...values.keys()]);
    for (const [time, value] of values) {
      const answer = got.get(time)!;
      if (Number.isNaN(value)) expect(answer, `${what} ${k} at ${time}`).toBeNaN();
      else
        expect(Math.abs(answer - value), `${what} ${k} at ${new Date(time).toISOString()}: ${answer} vs ${value}`).toBeLessThanOrEqual(
          1e-9 * Math.max(1, Math.abs(value)),
        );
    }
  }
}

const START = T0 + 10 * MINUTE;
const END = T0 + 38 * MINUTE;
const TIMES = Array.from({ length: (END - START) / MINUTE + 1 }, (_, i) => START + i * MINUTE);

/** Each expression with its plain-loop answer at a time. */
const CASES: [string, (time: number) => { labels: Record<string, string>; value: number | undefined }[]][] = [
  ...(['rate', 'increase', 'resets'] as const).flatMap((func) =>
    ([1, 2, 5] as const).map((minutes): [string, (time: number) => { labels: Record<string, string>; value: number | undefined }[]] => [
      `${func}(http_requests_total[${minutes}m])`,
      (time) =>
        named('http_requests_total').map((entry) => ({
          labels: without(entry.labels, '__name__'),
          value: refRange(func, entry, time, minutes * MINUTE),
        })),
    ]),
  ),
  // irate needs the last two samples: exact where a minute holds one (the histogram's buckets), see below for more.
  [
    'irate(latency_seconds_bucket[3m])',
    (time) =>
      named('latency_seconds_bucket').map((entry) => ({
        labels: without(entry.labels, '__name__'),
        value: refRange('irate', entry, time, 3 * MINUTE),
      })),
  ],
  ...(['delta', 'avg_over_time', 'sum_over_time', 'min_over_time', 'max_over_time', 'count_over_time'] as const).map(
    (func): [string, (time: number) => { labels: Record<string, string>; value: number | undefined }[]] => [
      `${func}(temperature[5m])`,
      (time) =>
        named('temperature').map((entry) => ({
          labels: without(entry.labels, '__name__'),
          value: refRange(func, entry, time, 5 * MINUTE),
        })),
    ],
  ),
  [
    'last_over_time(temperature[2m])',
    (time) => named('temperature').map((entry) => ({ labels: entry.labels, value: refRange('last_over_time', entry, time, 2 * MINUTE) })),
  ],
  ['temperature', (time) => named('temperature').map((entry) => ({ labels: entry.labels, value: refInstant(entry, time) }))],
  [
    'temperature offset 5m',
    (time) => named('temperature').map((entry) => ({ labels: entry.labels, value: refInstant(entry, time - 5 * MINUTE) })),
  ],
  [
    'http_requests_total{path=~"/a|/b", instance!="web-2"}',
    (time) =>
      named('http_requests_total')
        .filter((entry) => ['/a', '/b'].includes(entry.labels.path!) && entry.labels.instance !== 'web-2')
        .map((entry) => ({ labels: entry.labels, value: refInstant(entry, time) })),
  ],
  [
    '{__name__=~"temp.*", room!~"k.*"}',
    (time) =>
      named('temperature')
        .filter((entry) => entry.labels.room === 'hall')
        .map((entry) => ({ labels: entry.labels, value: refInstant(entry, time) })),
  ],
  [
    'sum by(path) (rate(http_requests_total[5m]))',
    (time) =>
      [
        ...refSumBy(
          named('http_requests_total').map((entry) => ({ labels: entry.labels, value: refRange('rate', entry, time, 5 * MINUTE) })),
          ['path'],
        ),
      ].map(([k, value]) => ({ labels: JSON.parse(k) as Record<string, string>, value })),
  ],
  [
    'sum(rate(http_requests_total{path="/a"}[5m])) / sum(rate(http_requests_total[5m]))',
    (time) => {
      const all = named('http_requests_total').map((entry) => ({
        path: entry.labels.path,
        value: refRange('rate', entry, time, 5 * MINUTE)!,
      }));
      const part = all.filter((entry) => entry.path === '/a').reduce((a, b) => a + b.value, 0);
      return [{ labels: {}, value: part / all.reduce((a, b) => a + b.value, 0) }];
    },
  ],
  [
    'avg without(instance) (increase(http_requests_total[2m]))',
    (time) => {
      const groups = new Map<string, number[]>();
      for (const entry of named('http_requests_total')) {
        const value = refRange('increase', entry, time, 2 * MINUTE);
        if (value !== undefined) groups.set(entry.labels.path!, [...(groups.get(entry.labels.path!) ?? []), value]);
      }
      return [...groups].map(([path, values]) => ({ labels: { path }, value: values.reduce((a, b) => a + b, 0) / values.length }));
    },
  ],
  ...(['min', 'max', 'count'] as const).map(
    (op): [string, (time: number) => { labels: Record<string, string>; value: number | undefined }[]] => [
      `${op} by(instance) (http_requests_total)`,
      (time) =>
        ['web-1', 'web-2'].map((instance) => {
          const values = named('http_requests_total')
            .filter((entry) => entry.labels.instance === instance)
            .flatMap((entry) => refInstant(entry, time) ?? []);
          return { labels: { instance }, value: op === 'count' ? values.length : op === 'min' ? Math.min(...values) : Math.max(...values) };
        }),
    ],
  ),
  [
    'histogram_quantile(0.9, sum by(le) (rate(latency_seconds_bucket[5m])))',
    (time) => {
      const buckets = named('latency_seconds_bucket').map((entry) => ({
        le: entry.labels.le === '+Inf' ? Infinity : Number(entry.labels.le),
        count: refRange('rate', entry, time, 5 * MINUTE),
      }));
      if (buckets.some((bucket) => bucket.count === undefined)) return [];
      return [{ labels: {}, value: refHistogramQuantile(0.9, buckets as { le: number; count: number }[]) }];
    },
  ],
  [
    'temperature > bool 20',
    (time) =>
      named('temperature').map((entry) => ({
        labels: { room: entry.labels.room! },
        value: refInstant(entry, time) === undefined ? undefined : refInstant(entry, time)! > 20 ? 1 : 0,
      })),
  ],
  [
    'temperature >= 20',
    (time) =>
      named('temperature').map((entry) => ({
        labels: entry.labels,
        value: (refInstant(entry, time) ?? -1) >= 20 ? refInstant(entry, time) : undefined,
      })),
  ],
  [
    'temperature - on(room) avg_over_time(temperature[10m])',
    (time) =>
      named('temperature').map((entry) => ({
        labels: { room: entry.labels.room! },
        value: refInstant(entry, time)! - refRange('avg_over_time', entry, time, 10 * MINUTE)!,
      })),
  ],
  [
    'abs(delta(temperature[5m])) * 2 + 1',
    (time) =>
      named('temperature').map((entry) => ({
        labels: { room: entry.labels.room! },
        value: Math.abs(refRange('delta', entry, time, 5 * MINUTE)!) * 2 + 1,
      })),
  ],
  [
    'clamp_min(clamp_max(temperature, 22), 18)',
    (time) =>
      named('temperature').map((entry) => ({
        labels: { room: entry.labels.room! },
        value: Math.max(Math.min(refInstant(entry, time)!, 22), 18),
      })),
  ],
  [
    'round(temperature, 0.5)',
    (time) =>
      named('temperature').map((entry) => ({
        labels: { room: entry.labels.room! },
        value: Math.floor(refInstant(entry, time)! * 2 + 0.5) / 2,
      })),
  ],
  [
    'topk(1, temperature)',
    (time) => {
      const values = named('temperature').map((entry) => ({ labels: entry.labels, value: refInstant(entry, time)! }));
      const top = values.reduce((a, b) => (b.value > a.value ? b : a));
      return [top];
    },
  ],
  [
    'bottomk(1, max_over_time(temperature[3m]))',
    (time) => {
      const values = named('temperature').map((entry) => ({
        labels: without(entry.labels, '__name__'),
        value: refRange('max_over_time', entry, time, 3 * MINUTE)!,
      }));
      return [values.reduce((a, b) => (b.value < a.value ? b : a))];
    },
  ],
  [
    'label_replace(temperature, "floor", "$1", "room", "(k).*")',
    (time) =>
      named('temperature').map((entry) => ({
        labels: entry.labels.room === 'kitchen' ? { ...entry.labels, floor: 'k' } : entry.labels,
        value: refInstant(entry, time),
      })),
  ],
  [
    'temperature and temperature > 20',
    (time) =>
      named('temperature').map((entry) => ({
        labels: entry.labels,
        value: (refInstant(entry, time) ?? -1) > 20 ? refInstant(entry, time) : undefined,
      })),
  ],
  [
    'temperature unless temperature > 20',
    (time) =>
      named('temperature').map((entry) => ({
        labels: entry.labels,
        value: (refInstant(entry, time) ?? 99) > 20 ? undefined : refInstant(entry, time),
      })),
  ],
  [
    'temperature > 22 or temperature < 18',
    (time) =>
      named('temperature').map((entry) => {
        const value = refInstant(entry, time);
        return { labels: entry.labels, value: value !== undefined && (value > 22 || value < 18) ? value : undefined };
      }),
  ],
  ['vector(time())', (time) => [{ labels: {}, value: time / 1000 }]],
  [
    'vector(1) + scalar(count(temperature))',
    (time) => [{ labels: {}, value: 1 + named('temperature').filter((entry) => refInstant(entry, time) !== undefined).length }],
  ],
];

describe('range queries through prometheus-query, against a plain loop over the samples', () => {
  for (const phase of ['in the tail', 'after folding'] as const) {
    it(`answers every function and operator of the subset exactly at minute steps (${phase})`, async () => {
      if (phase === 'after folding') expect(await t.settle()).toBeGreaterThan(0);
      for (const [query, compute] of CASES) {
        expectClose(await range(query, START, END, 60, phase === 'in the tail'), expected(TIMES, compute), query);
      }
    });
  }

  it('answers windows of whole minutes at a 5-minute step from 5-minute buckets, exactly', async () => {
    const times = Array.from({ length: 6 }, (_, i) => START + i * 5 * MINUTE);
    const query = 'rate(http_requests_total[10m])';
    const compute = (time: number) =>
      named('http_requests_total').map((entry) => ({
        labels: without(entry.labels, '__name__'),
        value: refRange('rate', entry, time, 10 * MINUTE),
      }));
    expectClose(await range(query, START, START + 25 * MINUTE, 300), expected(times, compute), query);
  });

  it('answers irate of a minute of four samples from its first and last: the average rate of its last minute', async () => {
    const answer = await range('irate(http_requests_total[2m])', START, END, 60);
    for (const entry of named('http_requests_total')) {
      const got = answer.get(key(without(entry.labels, '__name__')))!;
      for (const time of TIMES) {
        const inMinute = entry.samples.filter((sample) => sample.t >= time - MINUTE && sample.t < time);
        let increase = 0;
        for (let i = 1; i < inMinute.length; i++)
          increase += inMinute[i]!.v >= inMinute[i - 1]!.v ? inMinute[i]!.v - inMinute[i - 1]!.v : inMinute[i]!.v;
        const seconds = (inMinute[inMinute.length - 1]!.t - inMinute[0]!.t) / 1000;
        expect(got.get(time)).toBeCloseTo(increase / seconds, 9);
      }
    }
  });

  it('answers a 15 s step from the minute buckets covering each window: within the share of one bucket', async () => {
    const start = START + 15_000;
    const answer = await range('sum_over_time(temperature[5m])', start, start + 5 * MINUTE, 15);
    const times = Array.from({ length: 21 }, (_, i) => start + i * 15_000);
    for (const entry of named('temperature')) {
      const got = answer.get(key({ room: entry.labels.room! }))!;
      for (const time of times) {
        const exact = refRange('sum_over_time', entry, time, 5 * MINUTE)!;
        // Readings of one minute are at most 3 of the 15 in a window.
        expect(Math.abs(got.get(time)! - exact)).toBeLessThanOrEqual(3 * 25);
      }
    }
  });
});

describe("cases of Prometheus' data-driven tests (promqltest functions.test), samples on minute boundaries", () => {
  // `load 5m` series: a sample every 5 minutes from 0, exactly on the minute.
  const base = Date.UTC(2024, 6, 1);
  const load = (name: string, labels: Record<string, string>, values: number[]) => ({
    labels: { __name__: name, ...labels },
    samples: values.map((value, i) => ({ value, timestamp: base + i * 5 * MINUTE })),
  });
  const expand = (start: number, step: number, times: number) => Array.from({ length: times + 1 }, (_, i) => start + i * step);

  beforeAll(async () => {
    const loaded = [
      load('case_http_requests', { path: '/foo' }, [1, 2, 3, 0, 1, 0, 0, 1, 2, 0]),
      load('case_http_requests', { path: '/bar' }, [1, 2, 3, 4, 5, 1, 2, 3, 4, 5]),
      load('case_http_requests', { path: '/biz' }, [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]),
      load('case_requests_total', { path: '/foo' }, expand(0, 10, 10)),
      load('case_requests_total', { path: '/bar' }, [...expand(0, 18, 5), ...expand(0, 18, 5)]),
      load('case_requests_total', { path: '/dings' }, expand(10, 10, 10)),
      load('case_requests_total', { path: '/bumms' }, expand(1, 10, 10)),
    ];
    const result = await pushTimeseries(loaded as never, {
      url: `${server.url}/api/v1/write`,
      headers: { authorization: `Bearer ${tokens.writer}` },
      fetch: globalThis.fetch as never,
    });
    expect(result.status).toBe(204);
  });

  const instant = async (query: string, minutes: number) => {
    const answer = await client(tokens.reader).instantQuery(query, new Date(base + minutes * MINUTE));
    return Object.fromEntries(
      answer.result.map((entry: { metric: { labels: { path: string } }; value: { value: number } }) => [
        entry.metric.labels.path,
        entry.value.value,
      ]),
    );
  };

  it('resets() over windows of 5 to 50 minutes', async () => {
    expect(await instant('resets(case_http_requests[5m])', 50)).toEqual({});
    expect(await instant('resets(case_http_requests[10m])', 50)).toEqual({ '/foo': 0, '/bar': 0, '/biz': 0 });
    expect(await instant('resets(case_http_requests[20m])', 50)).toEqual({ '/foo': 1, '/bar': 0, '/biz': 0 });
    expect(await instant('resets(case_http_requests[32m])', 50)).toEqual({ '/foo': 2, '/bar': 1, '/biz': 0 });
    expect(await instant('resets(case_http_requests[50m])', 50)).toEqual({ '/foo': 3, '/bar': 1, '/biz': 0 });
  });

  it('increase() with its extrapolation, stopped at zero for counters', async () => {
    expect(await instant('increase(case_requests_total[50m])', 50)).toEqual({ '/foo': 100, '/bar': 160, '/dings': 100, '/bumms': 100 });
    const wide = await instant('increase(case_requests_total[100m])', 50);
    expect(wide['/foo']).toBeCloseTo(100, 9);
    expect(wide['/bar']).toBeCloseTo(162, 9);
    expect(wide['/dings']).toBeCloseTo(105, 9);
    expect(wide['/bumms']).toBeCloseTo(101, 9);
  });

  it('after folding, the same answers', async () => {
    await t.settle();
    expect(await instant('resets(case_http_requests[32m])', 50)).toEqual({ '/foo': 2, '/bar': 1, '/biz': 0 });
    expect(await instant('increase(case_requests_total[50m])', 50)).toEqual({ '/foo': 100, '/bar': 160, '/dings': 100, '/bumms': 100 });
  });
});

describe("the requests Grafana's data source sends", () => {
  const fixtures = JSON.parse(readFileSync(new URL('../fixtures/grafana/prometheus-requests.json', import.meta.url), 'utf8')) as Record<
    string,
    { method: string; path: string; form?: Record<string, string>; query?: Record<string, string> }[]
  >;
  const step = 60;
  const values = {
    '{time}': String(END / 1000),
    '{start}': String(Math.floor(START / 1000 / step) * step),
    '{end}': String(Math.floor(END / 1000 / step) * step),
    '{step}': String(step),
    '{rateInterval}': '1m0s',
    '{interval}': '1m',
  };
  const fill = (text: string) => Object.entries(values).reduce((out, [name, value]) => out.replaceAll(name, value), text);
  const send = async (request: { method: string; path: string; form?: Record<string, string>; query?: Record<string, string> }) => {
    const url = new URL(request.path, server.url);
    for (const [name, value] of Object.entries(request.query ?? {})) url.searchParams.set(name, fill(value));
    const body =
      request.form === undefined
        ? undefined
        : new URLSearchParams(Object.entries(request.form).map(([name, value]) => [name, fill(value)]));
    const answer = await fetch(url, {
      method: request.method,
      headers: {
        authorization: `Basic ${Buffer.from(`grafana:${tokens.reader}`).toString('base64')}`,
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body,
    });
    return { status: answer.status, body: (await answer.json()) as { status: string; data: unknown } };
  };

  it("'Save & test': 1+1 answers the scalar 2, then buildinfo a Prometheus version", async () => {
    const [health, build] = [await send(fixtures.healthCheck![0]!), await send(fixtures.healthCheck![1]!)];
    expect(health).toEqual({ status: 200, body: { status: 'success', data: { resultType: 'scalar', result: [END / 1000, '2'] } } });
    expect(build.status).toBe(200);
    expect((build.body.data as { version: string }).version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('the metric browser: names, metadata, labels, label values and series of the stored series', async () => {
    const [names, metadata, labels, paths, found] = await Promise.all(fixtures.metricBrowser!.map(send));
    expect(names!.body.data).toEqual([
      'case_http_requests',
      'case_requests_total',
      'http_requests_total',
      'latency_seconds_bucket',
      'temperature',
    ]);
    expect((metadata!.body.data as Record<string, { type: string }[]>).http_requests_total).toEqual([
      { type: 'counter', help: '', unit: '' },
    ]);
    expect((metadata!.body.data as Record<string, { type: string }[]>).temperature![0]!.type).toBe('gauge');
    expect(labels!.body.data).toEqual(['__name__', 'instance', 'path']);
    expect(paths!.body.data).toEqual(['/a', '/b', '/c']);
    expect(found!.body.data).toEqual([
      { __name__: 'http_requests_total', instance: 'web-1', path: '/a' },
      { __name__: 'http_requests_total', instance: 'web-2', path: '/a' },
    ]);
  });

  it('a panel with $__rate_interval and $__interval, as the plain loop computes it; exemplars empty', async () => {
    const [rates, temperatures, exemplars] = [
      await send(fixtures.panel![0]!),
      await send(fixtures.panel![1]!),
      await send(fixtures.panel![2]!),
    ];
    type Matrix = { resultType: string; result: { metric: Record<string, string>; values: [number, string][] }[] };
    const toMap = (data: Matrix) =>
      new Map(data.result.map((entry) => [key(entry.metric), new Map(entry.values.map(([time, value]) => [time * 1000, Number(value)]))]));
    expect((rates.body.data as Matrix).resultType).toBe('matrix');
    expectClose(
      toMap(rates.body.data as Matrix),
      expected(TIMES, (time) =>
        [
          ...refSumBy(
            named('http_requests_total').map((entry) => ({ labels: entry.labels, value: refRange('rate', entry, time, MINUTE) })),
            ['path'],
          ),
        ].map(([k, value]) => ({ labels: JSON.parse(k) as Record<string, string>, value })),
      ),
      'rate panel',
    );
    expectClose(
      toMap(temperatures.body.data as Matrix),
      expected(TIMES, (time) =>
        named('temperature').map((entry) => ({
          labels: without(entry.labels, '__name__'),
          value: refRange('avg_over_time', entry, time, MINUTE),
        })),
      ),
      'avg_over_time panel',
    );
    expect(exemplars.body).toEqual({ status: 'success', data: [] });
  });
});

describe('errors in Prometheus shape, nothing written', () => {
  const get = async (path: string, token: string | null = tokens.reader) => {
    const answer = await fetch(new URL(path, server.url), { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
    return { status: answer.status, body: (await answer.json()) as { status: string; errorType?: string; error?: string } };
  };
  const q = (query: string) => encodeURIComponent(query);
  const window = `start=${START / 1000}&end=${END / 1000}`;

  it('bad PromQL, unsupported parts, bad parameters and the step limit: bad_data (400)', async () => {
    const before = await databaseSnapshot(t.store.db);
    for (const [path, message] of [
      [`/api/v1/query_range?query=${q('rate(x[5m')}&${window}&step=60`, /parse error/],
      [`/api/v1/query_range?query=${q('x[5m:1m]')}&${window}&step=60`, /subquery/i],
      [`/api/v1/query_range?query=${q('a / on(x) group_left b')}&${window}&step=60`, /group_left/],
      [`/api/v1/query_range?query=${q('predict_linear(x[5m], 60)')}&${window}&step=60`, /predict_linear/],
      [`/api/v1/query_range?query=${q('rate(x)')}&${window}&step=60`, /expected type range vector/],
      [`/api/v1/query_range?query=${q('up')}&${window}&step=0`, /zero or negative/],
      [`/api/v1/query_range?query=${q('up')}&start=0&end=${END / 1000}&step=1`, /11,000 points/],
      [`/api/v1/query_range?query=${q('up')}&start=abc&end=1&step=1`, /cannot parse "abc"/],
      ['/api/v1/series', /no match\[\]/],
    ] as const) {
      const answer = await get(path);
      expect(answer.status, path).toBe(400);
      expect(answer.body.status).toBe('error');
      expect(answer.body.errorType).toBe('bad_data');
      expect(answer.body.error).toMatch(message);
    }
    expect(await databaseSnapshot(t.store.db)).toEqual(before);
  });

  it('no token 401 unauthorized; a token without read, or a metric outside its prefixes, 403 forbidden', async () => {
    expect(await get(`/api/v1/query?query=temperature&time=${END / 1000}`, null)).toMatchObject({
      status: 401,
      body: { errorType: 'unauthorized' },
    });
    expect(await get(`/api/v1/query?query=temperature&time=${END / 1000}`, tokens.writer)).toMatchObject({
      status: 403,
      body: { errorType: 'forbidden' },
    });
    expect(await get(`/api/v1/query?query=http_requests_total&time=${END / 1000}`, tokens.temps)).toMatchObject({
      status: 403,
      body: { errorType: 'forbidden' },
    });
    const allowed = await get(`/api/v1/query?query=${q('{__name__=~".+"}')}&time=${END / 1000}`, tokens.temps);
    expect(allowed.status).toBe(200);
    const names = new Set(
      (allowed.body as unknown as { data: { result: { metric: { __name__: string } }[] } }).data.result.map(
        (entry) => entry.metric.__name__,
      ),
    );
    expect([...names]).toEqual(['temperature']);
    expect((await get('/api/v1/label/__name__/values', tokens.temps)).body).toEqual({ status: 'success', data: ['temperature'] });
  });

  it("over the request's bucket budget: execution (422) naming MAX_BUCKETS' code, before any pipeline runs", async () => {
    const small = await openTestApp('promquery_budget', { maxBuckets: 500, journal: false });
    try {
      await small.app.fetch('http://x/write?db=x&precision=ms', {
        method: 'POST',
        body: `gauge,host=a value=1 ${T0 + 5_000}\ngauge,host=b value=2 ${T0 + 5_000}`,
      });
      small.resetCommands();
      const answer = await small.app.fetch(
        `http://x/api/v1/query_range?query=gauge&start=${T0 / 1000}&end=${(T0 + 400 * MINUTE) / 1000}&step=60`,
      );
      expect(answer.status).toBe(422);
      expect(await answer.json()).toMatchObject({
        status: 'error',
        errorType: 'execution',
        error: expect.stringContaining('TOO_MANY_BUCKETS'),
      });
      expect(small.targets.filter((target) => target === `aggregate ${small.store.seriesDays.collectionName}`)).toEqual([]);
    } finally {
      await small.close();
    }
  });
});
