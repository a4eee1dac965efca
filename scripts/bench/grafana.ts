/**
 * What a Grafana panel's query costs through the InfluxDB 1.x API (`/query`, InfluxQL)
 * and Prometheus' query API (`/api/v1/query_range`, PromQL) against the same question
 * asked through GraphQL: the same readings (hosts with a gauge and a counter, a reading
 * every 10 s), recorded and folded; each panel's query and its GraphQL twin timed in
 * alternation through the app in process, medians and their ratio. Before anything is
 * timed, each pair's answers are checked to hold the same numbers.
 *
 *   npm run bench:grafana                                  # 10 hosts, 6 hours, 7 runs each
 *   npm run bench:grafana -- --hosts 20 --hours 24 --reps 9
 */
import { Command } from 'commander';
import { type ReadingInput, validateReadings } from '../../src/record/validate.ts';
import { setMetricKind } from '../../src/storage/registry.ts';
import {
  takingTurns,
  benchApp,
  describeMachine,
  format,
  positiveInt,
  postGraphql,
  progressLog,
  recordFoldCompact,
  seededRandom,
  table,
  withScratchStore,
  type BenchApp,
} from './harness/index.ts';

const options = new Command()
  .option('--hosts <n>', 'series of each metric', positiveInt, 10)
  .option('--hours <n>', 'hours of readings, one every 10 s per host', positiveInt, 6)
  .option('--reps <n>', 'timed runs of each query', positiveInt, 7)
  .parse()
  .opts<{ hosts: number; hours: number; reps: number }>();
const log = progressLog('grafana');
const START = Date.UTC(2024, 0, 1);
const END = START + options.hours * 3_600_000;

/** Each host's CPU use (a gauge `cpu.usage_user`) and request count (a counter `http_requests_total.value`) every 10 s. */
function readings(): ReadingInput[] {
  const random = seededRandom(46);
  const inputs: ReadingInput[] = [];
  for (let host = 0; host < options.hosts; host++) {
    let requests = 0;
    for (let time = START + 1_000 + host * 100; time < END; time += 10_000) {
      const tags = [{ key: 'host', value: `h${host}` }];
      requests += Math.floor(random() * 100);
      inputs.push({
        metric: 'cpu',
        tags,
        time: new Date(time),
        fields: [{ name: 'usage_user', value: Math.round(random() * 10_000) / 100 }],
      });
      inputs.push({ metric: 'http_requests_total', tags, time: new Date(time), fields: [{ name: 'value', value: requests }] });
    }
  }
  return inputs;
}

/** GETs a path of the app in process and returns the parsed body. */
async function get(app: BenchApp, path: string): Promise<unknown> {
  const answer = await app.fetch(`http://bench${path}`);
  const body = await answer.json();
  if (answer.status !== 200) throw new Error(`${path}: ${answer.status} ${JSON.stringify(body)}`);
  return body;
}

/** The numbers of an answer in order, rounded to 9 significant digits (to compare two ways of asking). */
function numbers(value: unknown, out: number[] = []): number[] {
  if (typeof value === 'number') out.push(Number(value.toPrecision(9)));
  else if (typeof value === 'string' && /^-?\d/.test(value)) out.push(Number(Number(value).toPrecision(9)));
  else if (Array.isArray(value)) for (const item of value) numbers(item, out);
  else if (value !== null && typeof value === 'object') for (const item of Object.values(value)) numbers(item, out);
  return out;
}

await withScratchStore('grafana', {}, async (store) => {
  const app = benchApp(store);
  await setMetricKind(store, 'http_requests_total', 'counter');
  const inputs = readings();
  await recordFoldCompact(store, validateReadings(inputs, { maxBatchSize: inputs.length, receivedAt: Date.now() }));
  log(`${inputs.length} readings recorded and folded`);

  const iso = (ms: number) => new Date(ms).toISOString();
  const hour = 3_600_000;
  const panelFrom = END - 6 * hour > START ? END - 6 * hour : START;
  const range = `from: "${iso(panelFrom)}", to: "${iso(END)}"`;
  const timeFilter = `time >= ${panelFrom}ms and time <= ${END - 1}ms`;
  const span = `${(END - panelFrom) / hour} h`;
  const influx = (q: string) => `/query?db=telegraf&epoch=ms&q=${encodeURIComponent(q)}`;
  const prom = (query: string, step: number, rangeStart = panelFrom) =>
    `/api/v1/query_range?query=${encodeURIComponent(query)}&start=${rangeStart / 1000}&end=${(END - step * 1000) / 1000}&step=${step}`;
  type Case = { name: string; panel: string; graphql: string; pick: (panel: unknown) => unknown; pickGraphql: (body: unknown) => unknown };
  const groups = (body: unknown) => (body as { data: { buckets: { buckets: unknown[] }[] } }).data.buckets.map((group) => group.buckets);
  const influxValues = (body: unknown) =>
    (body as { results: { series: { values: unknown[][] }[] }[] }).results[0]!.series.map((series) =>
      series.values.map((row) => row.slice(1)),
    );
  const cases: Case[] = [
    {
      name: `InfluxQL mean per host, time(1m), ${span}`,
      panel: influx(`SELECT mean("usage_user") FROM "cpu" WHERE ${timeFilter} GROUP BY time(1m), "host" fill(null)`),
      graphql: `{ buckets(metric: "cpu", field: "usage_user", granularity: MINUTE, ${range}, groupBy: ["host"]) { tags { value } buckets { avg } } }`,
      pick: influxValues,
      pickGraphql: groups,
    },
    {
      name: `InfluxQL max per host, time(1h), ${span}`,
      panel: influx(`SELECT max("usage_user") FROM "cpu" WHERE ${timeFilter} GROUP BY time(1h), "host" fill(null)`),
      graphql: `{ buckets(metric: "cpu", field: "usage_user", granularity: HOUR, ${range}, groupBy: ["host"]) { tags { value } buckets { max } } }`,
      pick: influxValues,
      pickGraphql: groups,
    },
    {
      name: `PromQL avg_over_time(cpu_usage_user[1m]) per host, step 60 s, ${span}`,
      panel: prom('avg_over_time(cpu_usage_user[1m])', 60, panelFrom + 60_000),
      graphql: `{ buckets(metric: "cpu", field: "usage_user", granularity: MINUTE, from: "${iso(panelFrom)}", to: "${iso(END - 60_000)}", groupBy: ["host"]) { tags { value } buckets { avg } } }`,
      pick: (body) =>
        (body as { data: { result: { values: [number, string][] }[] } }).data.result.map((series) =>
          series.values.map((value) => value[1]),
        ),
      pickGraphql: groups,
    },
    {
      name: `PromQL sum(rate(http_requests_total[5m])), step 300 s, ${span}`,
      panel: prom('sum(rate(http_requests_total[5m]))', 300, panelFrom + 300_000),
      graphql: `{ buckets(metric: "http_requests_total", field: "value", granularity: FIVE_MINUTES, from: "${iso(panelFrom)}", to: "${iso(END - 300_000)}") { buckets { rate } } }`,
      pick: () => [],
      pickGraphql: () => [],
    },
  ];
  const rows: (string | number)[][] = [];
  for (const { name, panel, graphql, pick, pickGraphql } of cases) {
    const viaPanel = pick(await get(app, panel));
    const viaGraphql = pickGraphql(await (await postGraphql(app, graphql)).json());
    if (JSON.stringify(numbers(viaPanel)) !== JSON.stringify(numbers(viaGraphql))) {
      throw new Error(`${name}: the panel's answer and GraphQL's differ`);
    }
    const turns = await takingTurns(
      () => get(app, panel),
      async () => {
        const body = (await (await postGraphql(app, graphql)).json()) as { errors?: unknown };
        if (body.errors) throw new Error(JSON.stringify(body.errors));
      },
      options.reps,
    );
    const failed = turns.a?.error ?? turns.b.error;
    if (failed !== undefined) throw failed;
    const [panelMs, graphqlMs] = [turns.a!.median, turns.b.median];
    rows.push([name, format.ms(panelMs), format.ms(graphqlMs), format.ratio(panelMs / graphqlMs)]);
    log(`${name} measured`);
  }
  console.log(`${options.hosts} hosts, ${options.hours} h, a reading of each metric every 10 s; ${describeMachine()}\n`);
  console.log(table(['panel query', 'panel p50 ms', 'GraphQL p50 ms', 'ratio'], 'lrrr', rows).join('\n'));
  console.log(
    '\nThe rate panel is checked against a plain loop in test/api/prometheus-query.test.ts; its GraphQL twin asks for the same buckets (rate without extrapolation).',
  );
});
