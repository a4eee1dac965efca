/**
 * What counters cost (docs/statistics.md, "Counters"): the same request counters
 * recorded as a gauge metric and as a counter metric (whose slots also keep `inc`),
 * through the record path and folded; the bytes per reading of each; and on the counter
 * metric the latency of a query asking for count and sum against the same query asking
 * for count, increase and rate (the counter pipeline beside the bucket pipeline),
 * medians of alternating runs through the GraphQL app. Before anything is timed, the
 * increase over the whole span is checked against a plain loop over the readings.
 *
 *   npm run bench:counters                                     # 20 hosts, 6 hours, a reading every 10 s
 *   npm run bench:counters -- --hosts 50 --hours 24 --reps 9
 */
import { Command } from 'commander';
import { type ReadingInput, validateReadings } from '../../src/record/validate.ts';
import { setMetricKind } from '../../src/storage/registry.ts';
import {
  alternating,
  benchApp,
  collectionBytes,
  describeMachine,
  format,
  LOAD_BATCH,
  positiveInt,
  postGraphql,
  progressLog,
  recordAll,
  seededRandom,
  table,
  withScratchStore,
} from './harness/index.ts';
import { CollectionName } from '../../src/storage/store.ts';

const options = new Command()
  .option('--hosts <n>', 'series', positiveInt, 20)
  .option('--hours <n>', 'hours of readings, one every 10 s per host', positiveInt, 6)
  .option('--reps <n>', 'timed runs of each query', positiveInt, 5)
  .parse()
  .opts<{ hosts: number; hours: number; reps: number }>();
const log = progressLog('counters');
const START = Date.UTC(2024, 0, 1);
const END = START + options.hours * 3_600_000;

/** Each host's count of requests every 10 s: 0 to 99 more each time, a restart (back below 10) one time in 500. */
function requests(metric: string): ReadingInput[] {
  const random = seededRandom(7);
  const inputs: ReadingInput[] = [];
  for (let host = 0; host < options.hosts; host++) {
    let value = 0;
    for (let time = START + host * 100; time < END; time += 10_000) {
      value = random() < 0.002 ? Math.floor(random() * 10) : value + Math.floor(random() * 100);
      inputs.push({ metric, tags: [{ key: 'host', value: `h${host}` }], time: new Date(time), fields: [{ name: 'requests', value }] });
    }
  }
  return inputs;
}

/** The reset-aware increase over every host's readings, by its definition. */
function plainIncrease(inputs: readonly ReadingInput[]): number {
  let total = 0;
  const last = new Map<string, number>();
  for (const input of inputs) {
    const host = input.tags![0]!.value;
    const value = input.fields[0]!.value;
    const before = last.get(host);
    if (before !== undefined) total += value >= before ? value - before : value;
    last.set(host, value);
  }
  return total;
}

await withScratchStore('counters', {}, async (store) => {
  const app = benchApp(store);
  await setMetricKind(store, 'counter_requests', 'counter');
  // The same readings under both metrics, recorded in one go (the loader's batch ids are per call).
  const counterInputs = requests('counter_requests');
  const inputs = [...requests('gauge_requests'), ...counterInputs];
  await recordAll(store, validateReadings(inputs, { maxBatchSize: inputs.length, receivedAt: Date.now() }), LOAD_BATCH);
  log(`${inputs.length} readings recorded and folded`);
  const sizes: (string | number)[][] = [];
  for (const metric of ['gauge_requests', 'counter_requests']) {
    const { documents, bytes } = await collectionBytes(store.db, CollectionName.seriesDays, [{ $match: { metric } }]);
    sizes.push([
      metric,
      format.count(counterInputs.length),
      format.count(documents),
      format.bytes(bytes),
      (bytes / counterInputs.length).toFixed(1),
    ]);
  }

  const range = `from: "${new Date(START).toISOString()}", to: "${new Date(END).toISOString()}"`;
  const hourRange = `from: "${new Date(START).toISOString()}", to: "${new Date(START + 3_600_000).toISOString()}"`;
  const checked = (await (
    await postGraphql(app, `{ aggregate(metric: "counter_requests", field: "requests", ${range}) { increase } }`)
  ).json()) as { data: { aggregate: { increase: number }[] } };
  const expected = plainIncrease(counterInputs);
  if (checked.data.aggregate[0]?.increase !== expected) {
    throw new Error(`increase ${checked.data.aggregate[0]?.increase} differs from the plain loop's ${expected}`);
  }
  const cases = [
    ['HOUR over the span', `buckets(metric: "counter_requests", field: "requests", granularity: HOUR, ${range}) { buckets { count %s } }`],
    [
      'MINUTE over an hour, per host',
      `buckets(metric: "counter_requests", field: "requests", granularity: MINUTE, ${hourRange}, groupBy: ["host"]) { buckets { count %s } }`,
    ],
    ['aggregate per host', `aggregate(metric: "counter_requests", field: "requests", ${range}, groupBy: ["host"]) { count %s }`],
  ] as const;
  const latencies: (string | number)[][] = [];
  for (const [name, query] of cases) {
    const run = (selection: string) => async () => {
      const body = (await (await postGraphql(app, `{ ${query.replace('%s', selection)} }`)).json()) as { errors?: unknown };
      if (body.errors) throw new Error(JSON.stringify(body.errors));
    };
    const [plain, counter] = await alternating(run('sum'), run('increase rate'), options.reps);
    latencies.push([name, format.ms(plain), format.ms(counter), format.ratio(counter / plain)]);
    log(`${name} measured`);
  }
  console.log(`${options.hosts} hosts, ${options.hours} h, a reading every 10 s; ${describeMachine()}\n`);
  console.log(table(['metric', 'readings', 'documents', 'bytes', 'bytes/reading'], 'lrrrr', sizes).join('\n'));
  console.log('');
  console.log(table(['query', 'count sum p50 ms', 'count increase rate p50 ms', 'ratio'], 'lrrr', latencies).join('\n'));
});
