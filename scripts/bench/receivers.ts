/**
 * What the receivers cost against GraphQL (figures for docs/opentelemetry.md,
 * docs/prometheus-remote-write.md and docs/recording.md): the same readings (a batch
 * of `--batch` readings, `--series` series of 10 TSBS-like tags, one field `value`) sent
 * through the whole app in process as
 * - an OTLP `ExportMetricsServiceRequest` in protobuf, protobuf with gzip, and JSON
 *   (`POST /v1/metrics`, one gauge, one data point per reading);
 * - a remote-write `WriteRequest`, snappy-compressed (`POST /api/v1/write`, one series
 *   per series, its samples);
 * - InfluxDB line protocol, plain and gzipped (`POST /api/v2/write?precision=ms`), and
 *   NDJSON (`POST /api/readings`), one line per reading;
 * - a `recordReadings` mutation with a `batchId` (JSON), the same exactly-once guarantee.
 * Every request is a new batch (each run has its own times), bodies are encoded before
 * the clock starts, and the ways take turns in a random order each round (`timeCases`).
 * Prints the bytes of a request, the median time and readings per second of each way,
 * and its ratio to `recordReadings`.
 *
 *   npm run bench:receivers                          # embedded SecantusDB
 *   npm run bench:receivers -- --batch 1000 --runs 20
 *   MONGODB_URI=mongodb://... npm run bench:receivers
 */
import { gzipSync } from 'node:zlib';
import { Command } from 'commander';
import { compress } from 'snappyjs';
import { receiverTypes } from '../../src/receivers/proto.ts';
import {
  benchApp,
  describeMachine,
  describeServer,
  format,
  positiveInt,
  progressLog,
  table,
  timeCases,
  withScratchStore,
} from './harness/index.ts';

const options = new Command()
  .option('--batch <n>', 'readings per request', positiveInt, 1000)
  .option('--series <n>', 'series the readings of a request spread over', positiveInt, 100)
  .option('--runs <n>', 'timed requests of each way', positiveInt, 20)
  .parse()
  .opts<{ batch: number; series: number; runs: number }>();
const log = progressLog('receivers');

const TAGS = ['hostname', 'region', 'datacenter', 'rack', 'os', 'arch', 'team', 'service', 'service_version', 'service_environment'];
const START = Date.UTC(2024, 0, 1);

interface Reading {
  tags: { key: string; value: string }[];
  time: number;
  value: number;
}

/** Run `run`'s readings: `--series` series, `--batch / --series` readings each, 10 s apart, in a stretch of time of its own. */
function readingsOf(run: number): Reading[] {
  const perSeries = Math.ceil(options.batch / options.series);
  return Array.from({ length: options.batch }, (_, i) => {
    const series = i % options.series;
    return {
      tags: TAGS.map((key, k) => ({ key, value: key === 'hostname' ? `host_${series}` : `${key}_${(series + k) % 7}` })),
      time: START + run * perSeries * 10_000 + Math.floor(i / options.series) * 10_000,
      value: ((i * 31) % 1000) / 10,
    };
  });
}

/** The readings as an OTLP/JSON export request: one gauge `metric`, one data point per reading. */
function otlpRequest(metric: string, readings: Reading[]) {
  return {
    resourceMetrics: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bench' } }] },
        scopeMetrics: [
          {
            metrics: [
              {
                name: metric,
                gauge: {
                  dataPoints: readings.map((r) => ({
                    timeUnixNano: `${BigInt(r.time) * 1_000_000n}`,
                    asDouble: r.value,
                    attributes: r.tags.map((tag) => ({ key: tag.key, value: { stringValue: tag.value } })),
                  })),
                },
              },
            ],
          },
        ],
      },
    ],
  };
}

/** The readings as a remote-write request: one series per tag set, named `metric` (plus the `service_name` tag OTLP adds). */
function writeRequest(metric: string, readings: Reading[]): Uint8Array {
  const series = new Map<string, { labels: { name: string; value: string }[]; samples: { value: number; timestamp: number }[] }>();
  for (const r of readings) {
    const key = r.tags.map((tag) => tag.value).join(',');
    let one = series.get(key);
    if (!one) {
      const labels = [
        { name: '__name__', value: metric },
        { name: 'service_name', value: 'bench' },
        ...r.tags.map((tag) => ({ name: tag.key, value: tag.value })),
      ];
      one = { labels, samples: [] };
      series.set(key, one);
    }
    one.samples.push({ value: r.value, timestamp: r.time });
  }
  const type = receiverTypes().writeRequest;
  return compress(type.encode(type.fromObject({ timeseries: [...series.values()] })).finish());
}

/** The readings as InfluxDB line protocol (times in ms), with the `service_name` tag OTLP adds. */
const lineProtocol = (metric: string, readings: Reading[]) =>
  readings
    .map((r) => `${metric},service_name=bench,${r.tags.map((tag) => `${tag.key}=${tag.value}`).join(',')} value=${r.value} ${r.time}`)
    .join('\n');

const MUTATION = `mutation($r: [ReadingInput!]!, $id: String) { recordReadings(readings: $r, batchId: $id) { applied } }`;

/** One way of sending a batch: its name, URL, headers and the body of run `run`. */
interface Way {
  name: string;
  url: string;
  headers: Record<string, string>;
  body: (run: number) => string | Uint8Array;
}

const otlpType = receiverTypes().exportRequest;
const ways: Way[] = [
  {
    name: 'recordReadings (GraphQL, JSON)',
    url: '/graphql',
    headers: { 'content-type': 'application/json' },
    body: (run) =>
      JSON.stringify({
        query: MUTATION,
        variables: {
          id: `bench-${run}`,
          r: readingsOf(run).map((r) => ({
            metric: 'bench_graphql',
            tags: [{ key: 'service_name', value: 'bench' }, ...r.tags],
            time: new Date(r.time).toISOString(),
            fields: [{ name: 'value', value: r.value }],
          })),
        },
      }),
  },
  {
    name: 'OTLP protobuf',
    url: '/v1/metrics',
    headers: { 'content-type': 'application/x-protobuf' },
    body: (run) => otlpType.encode(otlpType.fromObject(otlpRequest('bench_otlp_proto', readingsOf(run)))).finish(),
  },
  {
    name: 'OTLP protobuf, gzip',
    url: '/v1/metrics',
    headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
    body: (run) => gzipSync(otlpType.encode(otlpType.fromObject(otlpRequest('bench_otlp_gzip', readingsOf(run)))).finish()),
  },
  {
    name: 'OTLP JSON',
    url: '/v1/metrics',
    headers: { 'content-type': 'application/json' },
    body: (run) => JSON.stringify(otlpRequest('bench_otlp_json', readingsOf(run))),
  },
  {
    name: 'remote write (snappy protobuf)',
    url: '/api/v1/write',
    headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy' },
    body: (run) => writeRequest('bench_prw', readingsOf(run)),
  },
  {
    name: 'line protocol',
    url: '/api/v2/write?precision=ms',
    headers: {},
    body: (run) => lineProtocol('bench_line', readingsOf(run)),
  },
  {
    name: 'line protocol, gzip',
    url: '/api/v2/write?precision=ms',
    headers: { 'content-encoding': 'gzip' },
    body: (run) => gzipSync(lineProtocol('bench_line_gzip', readingsOf(run))),
  },
  {
    name: 'NDJSON',
    url: '/api/readings',
    headers: { 'content-type': 'application/x-ndjson' },
    body: (run) =>
      readingsOf(run)
        .map((r) =>
          JSON.stringify({
            metric: 'bench_ndjson',
            tags: Object.fromEntries([['service_name', 'bench'], ...r.tags.map((tag) => [tag.key, tag.value])]),
            time: r.time,
            fields: { value: r.value },
          }),
        )
        .join('\n'),
  },
];

log(`encoding ${ways.length} x ${options.runs + 1} requests of ${options.batch} readings`);
const bodies = new Map(ways.map((way) => [way.name, Array.from({ length: options.runs + 1 }, (_, run) => way.body(run))]));

await withScratchStore(
  'receivers',
  { ingest: { maxTailReadings: 0, maxTailSeconds: 0 } },
  async (store, database) => {
    const app = benchApp(store, { limits: { maxBatchSize: Math.max(10_000, options.batch), maxBuckets: 100_000 } });
    const next = new Map(ways.map((way) => [way.name, 0]));
    const cases = ways.map((way) => ({
      name: way.name,
      run: async () => {
        const run = next.get(way.name)!;
        next.set(way.name, run + 1);
        const response = await app.fetch(`http://bench${way.url}`, {
          method: 'POST',
          headers: way.headers,
          body: bodies.get(way.name)![run]!,
        });
        const answer = await response.text();
        if (response.status >= 300 || answer.includes('"errors"') || answer.includes('partialSuccess')) {
          throw new Error(`${way.name}: ${response.status} ${answer.slice(0, 300)}`);
        }
      },
    }));
    log(`timing ${options.runs} requests of each way, in turns`);
    const times = await timeCases(cases, options.runs);
    const rate = (name: string) => options.batch / (times.get(name)!.median / 1000);
    const base = rate(ways[0]!.name);
    console.log(
      `\n${options.batch.toLocaleString('en-US')} readings per request (${options.series} series, 10 tags, 1 field), median of ${options.runs} requests per way`,
    );
    console.log(
      `${new Date().toISOString().slice(0, 10)}; ${await describeServer(store.client, database.embedded)}; ${describeMachine()}\n`,
    );
    console.log(
      table(
        ['way', 'bytes per request', 'median ms', 'readings/s', 'vs recordReadings'],
        'lrrrr',
        ways.map((way) => {
          const body = bodies.get(way.name)![0]!;
          return [
            way.name,
            format.count(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength),
            format.ms(times.get(way.name)!.median),
            format.rate(rate(way.name)),
            format.ratio(rate(way.name) / base),
          ];
        }),
      ).join('\n'),
    );
  },
  log,
);
