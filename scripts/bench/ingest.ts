/**
 * What the plain HTTP routes cost (figures for docs/recording.md and docs/export.md):
 * - parsing line protocol alone: 10,000 TSBS cpu lines (10 tags, 10 fields), median of 3;
 * - writing the same 100 TSBS readings over HTTP as line protocol, gzipped line
 *   protocol, NDJSON and a `recordReadings` mutation (JSON), in alternation, median of
 *   the runs, with the bytes each sends;
 * - exporting a MINUTE bucket query (2 hosts x 6 hours, 720 rows) as CSV against the
 *   GraphQL JSON answer of the same query.
 *
 *   npx tsx scripts/bench/ingest.ts          # embedded SecantusDB
 *   MONGODB_URI=mongodb://... npx tsx scripts/bench/ingest.ts
 */
import { gzipSync } from 'node:zlib';
import { parseLineProtocol } from '../../src/routes/line-protocol.ts';
import { benchApp, CPU_FIELDS, format, median, postGraphql, warmedRuns, withScratchStore } from './harness/index.ts';

const RUNS = 3;
const TAGS = ['hostname', 'region', 'datacenter', 'rack', 'os', 'arch', 'team', 'service', 'service_version', 'service_environment'];
const START = Date.UTC(2024, 0, 1);

/** TSBS-like readings of metric `metric`: `count` of them over 100 hosts, 10 s apart per host, from `offsetMs`. */
function readings(metric: string, count: number, offsetMs: number) {
  return Array.from({ length: count }, (_, i) => ({
    metric,
    tags: TAGS.map((key, k) => ({ key, value: key === 'hostname' ? `host_${i % 100}` : `${key}_${(i + k) % 7}` })),
    time: START + offsetMs + Math.floor(i / 100) * 10_000,
    fields: CPU_FIELDS.map((name, f) => ({ name, value: ((i * 31 + f * 17) % 1000) / 10 })),
  }));
}

type Reading = ReturnType<typeof readings>[number];
const lineOf = (r: Reading) =>
  `${r.metric},${r.tags.map((tag) => `${tag.key}=${tag.value}`).join(',')} ${r.fields.map((field) => `${field.name}=${field.value}`).join(',')} ${r.time}`;
const ndjsonOf = (r: Reading) =>
  JSON.stringify({
    metric: r.metric,
    tags: Object.fromEntries(r.tags.map((tag) => [tag.key, tag.value])),
    time: r.time,
    fields: Object.fromEntries(r.fields.map((field) => [field.name, field.value])),
  });

// 1. The parser alone.
const text = readings('cpu', 10_000, 0).map(lineOf).join('\n');
const parse = (await warmedRuns(() => parseLineProtocol(text), RUNS)).median;
console.log(
  `parse 10,000 TSBS lines (${(text.length / 1e6).toFixed(2)} MB): ${format.ms(parse)} ms, ${format.rate(10_000 / (parse / 1000))} lines/s`,
);
// For scale: JSON.parse of the same readings as NDJSON lines (what the NDJSON route does first).
const json = readings('cpu', 10_000, 0).map(ndjsonOf);
const jsonParse = await warmedRuns(() => {
  for (const line of json) JSON.parse(line);
}, RUNS);
console.log(
  `JSON.parse of the same as 10,000 NDJSON lines (${(json.join('\n').length / 1e6).toFixed(2)} MB): ${format.ms(jsonParse.median)} ms`,
);

// 2. Writes over HTTP, through the whole app.
await withScratchStore('ingest', {}, async (store) => {
  const app = benchApp(store, { limits: { maxBatchSize: 10_000, maxBuckets: 100_000 } });
  const BATCH = 100;
  const mutation = `mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { recorded } }`;
  const ways: Record<string, (batch: Reading[]) => { url: string; headers: Record<string, string>; body: string | Uint8Array }> = {
    'line protocol': (batch) => ({ url: '/api/v2/write?precision=ms', headers: {}, body: batch.map(lineOf).join('\n') }),
    'line protocol, gzip': (batch) => ({
      url: '/api/v2/write?precision=ms',
      headers: { 'content-encoding': 'gzip' },
      body: gzipSync(batch.map(lineOf).join('\n')),
    }),
    NDJSON: (batch) => ({
      url: '/api/readings',
      headers: { 'content-type': 'application/x-ndjson' },
      body: batch.map(ndjsonOf).join('\n'),
    }),
    'recordReadings (JSON)': (batch) => ({
      url: '/graphql',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: mutation, variables: { r: batch.map((r) => ({ ...r, time: new Date(r.time).toISOString() })) } }),
    }),
  };
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((name) => [name, []]));
  const sizes: Record<string, number> = {};
  for (let run = 0; run <= RUNS; run++) {
    for (const [name, request] of Object.entries(ways)) {
      // Each way writes its own metric, a new stretch of time each run (same series, new minutes).
      const batch = readings(`cpu_${Object.keys(ways).indexOf(name)}`, BATCH, run * 3_600_000);
      const { url, headers, body } = request(batch);
      const started = performance.now();
      const response = await app.fetch(`http://bench${url}`, { method: 'POST', headers, body });
      const answer = await response.text();
      if (response.status >= 300 || answer.includes('"errors"')) throw new Error(`${name}: ${response.status} ${answer}`);
      if (run > 0) times[name]!.push(performance.now() - started);
      sizes[name] = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    }
  }
  console.log(`\nwrite ${BATCH} TSBS readings (10 tags, 10 fields), median of ${RUNS}:`);
  for (const name of Object.keys(ways)) {
    console.log(
      `  ${name.padEnd(24)} ${format.ms(median(times[name]!)).padStart(6)} ms  ${sizes[name]!.toLocaleString('en-US').padStart(9)} bytes`,
    );
  }

  // 3. Export against the GraphQL answer.
  const seed = Array.from({ length: 720 }, (_, i) => ({
    metric: 'exp',
    tags: [{ key: 'host', value: `h${i % 2}` }],
    time: new Date(START + Math.floor(i / 2) * 60_000).toISOString(),
    fields: [{ name: 'v', value: i % 13 }],
  }));
  const seeded = await postGraphql(app, mutation, { r: seed });
  if (!seeded.ok) throw new Error(await seeded.text());
  const query = `query($from: Time!, $to: Time!) { buckets(metric: "exp", field: "v", granularity: MINUTE, from: $from, to: $to, groupBy: ["host"]) { tags { key value } buckets { start count sum avg min max } } }`;
  const variables = { from: START, to: START + 6 * 3_600_000 };
  const exports: Record<string, () => Promise<Response>> = {
    'GraphQL JSON': () => postGraphql(app, query, variables),
    'export CSV': async () =>
      app.fetch(`http://bench/export?${new URLSearchParams({ query, variables: JSON.stringify(variables), format: 'csv' })}`),
    'export NDJSON': async () =>
      app.fetch(`http://bench/export?${new URLSearchParams({ query, variables: JSON.stringify(variables), format: 'ndjson' })}`),
  };
  console.log(`\n720 MINUTE buckets (2 hosts x 6 hours), median of ${RUNS}:`);
  for (const [name, run] of Object.entries(exports)) {
    const runs = await warmedRuns(async () => (await run()).text(), RUNS);
    const bytes = Buffer.byteLength(runs.result);
    console.log(`  ${name.padEnd(14)} ${format.ms(runs.median).padStart(6)} ms  ${bytes.toLocaleString('en-US').padStart(9)} bytes`);
  }
});
