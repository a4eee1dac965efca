/**
 * Compares the PromQL answers of this server with a real Prometheus, where one is
 * installed (Debian's package `prometheus`; not needed by `npm test`): the same samples
 * are remote-written into a Prometheus started with its remote-write receiver and into
 * the app (embedded database, or `MONGODB_URI`), then both are asked the same
 * `query_range` expressions at minute steps; the script prints, per expression, the
 * points compared and the largest relative difference. `promtool query` (the same
 * package) is then run against this server as a client: `instant`, `range`, `labels`,
 * `series`.
 *
 *   npx tsx scripts/compare-prometheus.ts
 *   npx tsx scripts/compare-prometheus.ts --prometheus /path/to/prometheus --promtool /path/to/promtool
 *
 * Prometheus before 3.0 selects `[t - range, t]` where 3.0 selects `(t - range, t]`, and
 * applies the zero-point limit of a counter's extrapolation before the 1.1-interval rule
 * where 3.0 applies it after; no sample here lies on a window's edge, so only the second
 * can show.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import getPort from 'get-port';
import { pushTimeseries } from 'prometheus-remote-write';
import { benchApp, format, progressLog, seededRandom, serveApp, table, withScratchStore } from './bench/harness/index.ts';

const options = new Command()
  .option('--prometheus <path>', 'the Prometheus binary', 'prometheus')
  .option('--promtool <path>', 'the promtool binary', 'promtool')
  .parse()
  .opts<{ prometheus: string; promtool: string }>();
const log = progressLog('compare-prometheus');

const version = spawnSync(options.prometheus, ['--version'], { encoding: 'utf8' });
if (version.error !== undefined || version.status !== 0) {
  console.log(
    `No Prometheus at ${options.prometheus} (${version.error?.message ?? version.stderr}); install Debian's package prometheus, or give --prometheus.`,
  );
  process.exit(0);
}

const MINUTE = 60_000;
/** The samples start an hour ago, on a minute (a fresh Prometheus takes samples this recent). */
const T0 = Math.floor((Date.now() - 60 * MINUTE) / MINUTE) * MINUTE;

type Series = { labels: { __name__: string; [name: string]: string }; samples: { value: number; timestamp: number }[] };

/** Counters every 15 s with a reset, gauges every 20 s, classic-histogram buckets every minute; none on a minute boundary. */
function samples(): Series[] {
  const next = seededRandom(46);
  const out: Series[] = [];
  for (const path of ['/a', '/b', '/c']) {
    for (const instance of ['web-1', 'web-2']) {
      let value = Math.floor(next() * 50);
      const offset = 1_000 + Math.floor(next() * 13_000) + 7;
      const list = [];
      for (let i = 0; i < 200; i++) {
        value += Math.floor(next() * 20);
        if (path === '/b' && instance === 'web-1' && i === 70) value = 3;
        list.push({ value, timestamp: T0 + offset + i * 15_000 });
      }
      out.push({ labels: { __name__: 'http_requests_total', path, instance }, samples: list });
    }
  }
  for (const room of ['kitchen', 'hall']) {
    const list = [];
    for (let i = 0; i < 150; i++)
      list.push({ value: Math.round((15 + next() * 10) * 4) / 4 + (room === 'kitchen' ? 0.01 : 0.02), timestamp: T0 + 3_100 + i * 20_000 });
    out.push({ labels: { __name__: 'temperature', room }, samples: list });
  }
  const bounds = ['0.1', '0.25', '0.5', '1', '+Inf'];
  const counts = bounds.map(() => 0);
  const buckets = bounds.map(() => [] as { value: number; timestamp: number }[]);
  for (let minute = 0; minute < 50; minute++) {
    for (let n = 0; n < 20; n++) {
      const observed = next() * 1.2;
      bounds.forEach((le, i) => {
        if (le === '+Inf' || observed <= Number(le)) counts[i]! += 1;
      });
    }
    bounds.forEach((_le, i) => {
      buckets[i]!.push({ value: counts[i]!, timestamp: T0 + 11_000 + minute * MINUTE });
    });
  }
  bounds.forEach((le, i) => {
    out.push({ labels: { __name__: 'latency_seconds_bucket', le }, samples: buckets[i]! });
  });
  return out;
}

const EXPRESSIONS = [
  'rate(http_requests_total[5m])',
  'increase(http_requests_total[2m])',
  'resets(http_requests_total[10m])',
  'irate(latency_seconds_bucket[3m])',
  'delta(temperature[5m])',
  'avg_over_time(temperature[5m])',
  'sum_over_time(temperature[5m])',
  'min_over_time(temperature[5m])',
  'max_over_time(temperature[5m])',
  'count_over_time(temperature[5m])',
  'last_over_time(temperature[2m])',
  'temperature',
  'temperature offset 5m',
  'sum by(path) (rate(http_requests_total[5m]))',
  'sum(rate(http_requests_total{path="/a"}[5m])) / sum(rate(http_requests_total[5m]))',
  'avg without(instance) (increase(http_requests_total[2m]))',
  'max by(instance) (http_requests_total)',
  'count(temperature)',
  'topk(1, temperature)',
  'histogram_quantile(0.9, sum by(le) (rate(latency_seconds_bucket[5m])))',
  'temperature > bool 20',
  'temperature - on(room) avg_over_time(temperature[10m])',
  'clamp_min(clamp_max(temperature, 22), 18)',
  'round(temperature, 0.5)',
  'label_replace(temperature, "floor", "$1", "room", "(k).*")',
];

/** Waits until `url` answers 200, at most `ms`. */
async function ready(url: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) throw new Error(`${url} did not become ready`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

type Matrix = { metric: Record<string, string>; values: [number, string][] }[];

async function rangeQuery(base: string, query: string, start: number, end: number): Promise<Matrix> {
  const url = `${base}/api/v1/query_range?query=${encodeURIComponent(query)}&start=${start / 1000}&end=${end / 1000}&step=60`;
  const body = (await (await fetch(url)).json()) as { status: string; data?: { result: Matrix }; error?: string };
  if (body.status !== 'success') throw new Error(`${base}: ${query}: ${body.error}`);
  return body.data!.result;
}

const key = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));

const directory = mkdtempSync(join(tmpdir(), 'tsgraph-prometheus-'));
let prometheus: ChildProcess | undefined;
try {
  await withScratchStore('compare_prometheus', {}, async (store) => {
    const served = await serveApp(benchApp(store));
    const ours = served.url.replace(/\/graphql$/, '');
    const port = await getPort();
    writeFileSync(join(directory, 'prometheus.yml'), 'global:\n  scrape_interval: 15s\n');
    prometheus = spawn(
      options.prometheus,
      [
        `--config.file=${join(directory, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(directory, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--web.enable-remote-write-receiver',
      ],
      { stdio: 'ignore' },
    );
    const theirs = `http://127.0.0.1:${port}`;
    await ready(`${theirs}/-/ready`, 30_000);
    log(`${version.stdout.split('\n')[0]} ready; tsgraph at ${ours}`);
    const series = samples();
    for (const target of [theirs, ours]) {
      const answer = await pushTimeseries(series, { url: `${target}/api/v1/write`, fetch: globalThis.fetch as never });
      if (answer.status !== 204 && answer.status !== 200) throw new Error(`${target}: remote write answered ${answer.status}`);
    }
    log(`${series.reduce((n, entry) => n + entry.samples.length, 0)} samples written to both`);
    // Let Prometheus' head make the samples queryable.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const start = T0 + 12 * MINUTE;
    const end = T0 + 48 * MINUTE;
    const rows: string[][] = [];
    for (const query of EXPRESSIONS) {
      const [a, b] = await Promise.all([rangeQuery(ours, query, start, end), rangeQuery(theirs, query, start, end)]);
      const mine = new Map(a.map((entry) => [key(entry.metric), new Map(entry.values.map(([t, v]) => [t, Number(v)]))]));
      let points = 0;
      let worst = 0;
      let missing = 0;
      for (const entry of b) {
        const values = mine.get(key(entry.metric));
        for (const [t, v] of entry.values) {
          const other = values?.get(t);
          if (other === undefined) {
            missing += 1;
            continue;
          }
          points += 1;
          const expected = Number(v);
          worst = Math.max(worst, Math.abs(other - expected) / Math.max(1, Math.abs(expected)));
        }
      }
      const extra = a.reduce((n, entry) => n + entry.values.length, 0) - points;
      rows.push([query, format.count(points), String(missing), String(extra), worst === 0 ? '0' : worst.toExponential(2)]);
    }
    console.log(
      `${version.stdout.split('\n')[0]}; samples every 15 s (counters), 20 s (gauges), 60 s (histogram), none on a minute; step 60 s over 36 minutes\n`,
    );
    console.log(
      table(['expression', 'points compared', 'only in Prometheus', 'only here', 'largest relative difference'], 'lrrrr', rows).join('\n'),
    );

    const promtool = spawnSync(options.promtool, ['--version'], { encoding: 'utf8' });
    if (promtool.status === 0) {
      console.log(`\npromtool query against tsgraph (${promtool.stdout.split('\n')[0]}):`);
      for (const args of [
        ['instant', ours, 'sum by(path) (increase(http_requests_total[5m]))', `--time=${(end / 1000).toFixed(0)}`],
        [
          'range',
          ours,
          'count(temperature)',
          `--start=${((end - 3 * MINUTE) / 1000).toFixed(0)}`,
          `--end=${(end / 1000).toFixed(0)}`,
          '--step=1m',
        ],
        ['labels', ours, 'path'],
        ['series', ours, '--match=temperature'],
      ]) {
        // Asynchronously: the app answering it runs in this process.
        const run = await promisify(execFile)(options.promtool, ['query', ...args], { encoding: 'utf8' }).catch(
          (error: { stdout?: string; stderr?: string }) => error,
        );
        console.log(
          `\n$ promtool query ${args.map((arg) => (/\s/.test(arg) ? `'${arg}'` : arg)).join(' ')}\n${(run.stdout || run.stderr || '').trim()}`,
        );
      }
    }
    await served.close();
  });
} finally {
  prometheus?.kill();
  rmSync(directory, { recursive: true, force: true });
}
