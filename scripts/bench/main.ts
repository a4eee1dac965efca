/**
 * Benchmark: ingest rate, query latency and storage per reading of this project's
 * storage (`ours`) against one document per reading (`naive`) and a native time-series
 * collection (`timeseries`), on the same database server in one run, on dense (TSBS
 * cpu-only) and sparse (real flights) data.
 * Every model's answers are compared before anything is timed. Prints Markdown tables
 * and writes the figures as JSON.
 *
 *   npm run bench                      # full size: 100 hosts x 1 day, flights of January 2001
 *   npm run bench -- --quick           # a small size, well under a minute
 *   npm run bench -- --data dense --hosts 20 --hours 6 --reps 7
 *   npm run bench -- --reads-only --hosts 10 --hours 1 --rows 8000   # documents and bytes read per query only
 *   MONGODB_URI=mongodb://... npm run bench   # against a real MongoDB
 */
import { Command } from 'commander';
import type { MongoClient } from 'mongodb';
import { sendBatch } from '../../src/importer/send.ts';
import { bucketsPipeline } from '../../src/query/buckets-pipeline.ts';
import { granularity } from '../../src/query/granularity.ts';
import { DAY_MS } from '../../src/model/time.ts';
import {
  alternating,
  answerQuery,
  batches,
  compareAnswers,
  dataOption,
  type DataChoice,
  type DataSet,
  denseDataSet,
  denseQueries,
  describeMachine,
  describeServer,
  dropAndClose,
  format,
  latency,
  median,
  type Model,
  NaiveModel,
  OursModel,
  type PlainReading,
  positiveInt,
  postGraphql,
  progressLog,
  readingInput,
  resultsPath,
  scalingQueries,
  serveApp,
  sparseDataSet,
  sparseQueries,
  type StorageFigures,
  supportsDateTrunc,
  tableHead,
  type Target,
  targetsTable,
  TimeseriesModel,
  withBenchDatabase,
  writeResults,
} from './harness/index.ts';
import { measureReads, readsTable, type QueryReads } from './bytes-read.ts';
import { aggregateBuckets } from '../../src/storage/aggregate.ts';

const program = new Command()
  .name('bench')
  .description('Compare ours with one document per reading and native time-series collections.')
  .addOption(dataOption())
  .option('--quick', 'a smoke-test size that finishes in well under a minute (2 repetitions: its figures mean little)')
  .option('--hosts <n>', 'dense: number of hosts', positiveInt, 100)
  .option('--hours <n>', 'dense: hours of data', positiveInt, 24)
  .option('--minutes <n>', 'dense: minutes of data (instead of --hours)', positiveInt)
  .option('--months <n>', 'sparse: months of flights from January 2001 (1 to 6)', positiveInt, 1)
  .option('--rows <n>', 'sparse: at most n flights', positiveInt)
  .option('--reps <n>', 'timed repetitions per figure (at least 5)', positiveInt, 5)
  .option('--models <list>', 'baselines to run: naive,timeseries', 'naive,timeseries')
  .option('--out <file>', 'JSON output (default bench-results/<data>-<time>.json)')
  .option(
    '--reads-only',
    'load the models, compare the answers and measure only the documents and bytes each query reads (no ingest rates, latencies, scaling or overhead)',
  )
  .parse();

interface Options {
  data: DataChoice;
  quick?: boolean;
  hosts: number;
  hours: number;
  minutes?: number;
  months: number;
  rows?: number;
  reps: number;
  models: string;
  out?: string;
  readsOnly?: boolean;
}
const options = program.opts<Options>();
if (options.quick) {
  Object.assign(options, { hosts: 10, minutes: 10, rows: options.rows ?? 600 });
}
const reps = options.quick ? 2 : Math.max(5, options.reps);
const baselines = options.models
  .split(',')
  .map((name) => name.trim())
  .filter(Boolean);
const log = progressLog('bench', 1);

/** Ingest slice sizes per batch size: one warm-up slice and `reps` timed slices. */
const SLICE = options.quick ? { 1: 5, 100: 100, 1000: 150 } : { 1: 200, 100: 2000, 1000: 5000 };

interface IngestFigure {
  batch: number;
  readingsPerSecond: number;
  slices: number[];
}

interface ModelResult {
  name: string;
  available: boolean;
  reason?: string;
  ingest: IngestFigure[];
  graphqlIngest?: IngestFigure;
  /** The full load: acknowledged in `seconds`; ours then folded in `foldSeconds` (before storage and queries are measured). */
  load?: { readings: number; seconds: number; foldSeconds?: number };
  storage?: StorageFigures & { bytesPerReading: number };
  queries: Record<string, { p50: number; p99: number }>;
}

/** Writes `readings` in `batch`-sized batches; returns readings per second. */
async function timedWrite(model: Model, readings: readonly PlainReading[], batch: number): Promise<number> {
  const prepared = batches(model.convert(readings), batch);
  const started = performance.now();
  for (const chunk of prepared) await model.write(chunk);
  return readings.length / ((performance.now() - started) / 1000);
}

/**
 * Ingest rate at one batch size: consecutive slices of the data (one warm-up, then
 * `reps` timed), each written by `writeSlice`, which returns readings per second.
 * @returns the median rate and every timed slice's rate.
 */
async function sliceRates(
  data: DataSet,
  batch: 1 | 100 | 1000,
  writeSlice: (slice: PlainReading[]) => Promise<number>,
): Promise<IngestFigure> {
  const size = Math.max(1, Math.min(SLICE[batch], Math.floor(data.readings.length / (reps + 1))));
  const slices: number[] = [];
  for (let i = 0; i <= reps; i++) {
    const slice = data.readings.slice(i * size, (i + 1) * size);
    if (slice.length === 0) break;
    const rate = await writeSlice(slice);
    if (i > 0) slices.push(rate);
  }
  return { batch, readingsPerSecond: median(slices), slices };
}

/** Ingest rate of a model at one batch size, into a scratch database dropped afterwards. */
async function ingestRate(open: () => Promise<Model>, data: DataSet, batch: 1 | 100 | 1000): Promise<IngestFigure> {
  const model = await open();
  try {
    return await sliceRates(data, batch, (slice) => timedWrite(model, slice, batch));
  } finally {
    await dropAndClose(model);
  }
}

/** GraphQL ingest over HTTP (yoga on a local port), batches of 1,000, median of `reps` slices. */
async function graphqlIngestRate(uri: string, data: DataSet): Promise<IngestFigure> {
  const model = await OursModel.open(uri, 'bench_ingest_graphql');
  const server = await serveApp(model.app);
  let sent = 0;
  try {
    return await sliceRates(data, 1000, async (slice) => {
      const payloads = batches(slice.map(readingInput), 1000);
      const started = performance.now();
      for (const payload of payloads) await sendBatch(server.url, payload, { batchId: `graphql-ingest-${++sent}` });
      return slice.length / ((performance.now() - started) / 1000);
    });
  } finally {
    await server.close();
    await dropAndClose(model);
  }
}

interface DataSetResult {
  data: { name: string; description: string; readings: number };
  models: ModelResult[];
  queries: { name: string; description: string; unit: string; agree: boolean; difference?: string }[];
  scaling: { label: string; ours: number; naive: number }[];
  overhead?: { buckets: number; yogaMs: number; pipelineMs: number };
  /** Documents and bytes each query reads per model, and ours without and with the read projection (`bench/bytes-read.ts`). */
  reads?: QueryReads[];
}

async function runDataSet(uri: string, client: MongoClient, data: DataSet, dateTrunc: boolean): Promise<DataSetResult> {
  log(`${data.name}: ${data.description}`);
  const queries = data.name === 'dense' ? denseQueries(data) : sparseQueries(data);
  const result: DataSetResult = {
    data: { name: data.name, description: data.description, readings: data.readings.length },
    models: [],
    queries: [],
    scaling: [],
  };

  // Models for the full load: ours and the baselines that the server supports.
  const opens: { name: string; open: (db: string) => Promise<Model> }[] = [
    { name: 'ours', open: (db) => OursModel.open(uri, db) },
    ...(baselines.includes('naive') ? [{ name: 'naive', open: (db: string) => NaiveModel.open(client, db, data) }] : []),
    ...(baselines.includes('timeseries') ? [{ name: 'timeseries', open: (db: string) => TimeseriesModel.open(client, db, data) }] : []),
  ];
  const loaded: Model[] = [];
  for (const { name, open } of opens) {
    const figures: ModelResult = { name, available: true, ingest: [], queries: {} };
    result.models.push(figures);
    let model: Model;
    try {
      model = await open(`bench_${data.name}_${name.replace('-', '_')}`);
    } catch (error) {
      figures.available = false;
      figures.reason = `cannot be created on this server: ${(error as Error).message}`;
      log(`${name}: ${figures.reason}`);
      continue;
    }
    for (const batch of options.readsOnly ? [] : ([1, 100, 1000] as const)) {
      log(`${name}: ingest rate at batch ${batch}`);
      figures.ingest.push(await ingestRate(() => open(`bench_ingest_${name.replace('-', '_')}`), data, batch));
    }
    if (name === 'ours' && !options.readsOnly) {
      log('ours: GraphQL ingest over HTTP at batch 1000');
      figures.graphqlIngest = await graphqlIngestRate(uri, data);
    }
    log(`${name}: loading ${data.readings.length} readings in batches of 1,000`);
    figures.load = { readings: data.readings.length, seconds: data.readings.length / (await timedWrite(model, data.readings, 1000)) };
    if (model instanceof OursModel) {
      // Acknowledged batches are in the ingest log: fold them, as the server's folder
      // would, so storage is measured and queries are timed on series-day documents.
      log(`${name}: folding ${data.readings.length} readings`);
      const begun = performance.now();
      await model.settle();
      figures.load.foldSeconds = (performance.now() - begun) / 1000;
    }
    const storage = await model.storage();
    figures.storage = { ...storage, bytesPerReading: (storage.storageBytes + storage.indexBytes) / data.readings.length };
    loaded.push(model);
  }

  // Answers first: a benchmark of wrong answers is void.
  for (const query of queries) {
    const answers = await Promise.all(loaded.map((model) => answerQuery(model, query, dateTrunc)));
    let difference: string | undefined;
    for (let i = 1; i < answers.length && !difference; i++) {
      const diff = compareAnswers(answers[0]!, answers[i]!);
      if (diff) difference = `${loaded[0]!.name} vs ${loaded[i]!.name}: ${diff}`;
    }
    if ((answers[0]?.size ?? 0) === 0) difference = 'empty answer';
    result.queries.push({ name: query.name, description: query.description, unit: query.unit, agree: !difference, difference });
    if (difference) log(`VOID ${query.name}: ${difference}`);
  }
  for (const model of options.readsOnly ? [] : loaded) {
    const figures = result.models.find((m) => m.name === model.name)!;
    for (const query of queries) {
      log(`${model.name}: timing ${query.name}`);
      const { p50, p99 } = await latency(() => answerQuery(model, query, dateTrunc), reps);
      figures.queries[query.name] = { p50, p99 };
    }
  }

  // Documents and bytes read per query, and ours without and with its read projection.
  result.reads = await measureReads(loaded, queries, reps, dateTrunc, log);
  if (options.readsOnly) {
    for (const model of loaded) await dropAndClose(model);
    return result;
  }

  // Scaling with the range, ours and naive.
  const ours = loaded.find((m) => m.name === 'ours')!;
  const naive = loaded.find((m) => m.name === 'naive');
  if (naive) {
    for (const { label, query } of scalingQueries(data)) {
      const diff = compareAnswers(await answerQuery(ours, query, dateTrunc), await answerQuery(naive, query, dateTrunc));
      if (diff) log(`VOID scaling ${label}: ${diff}`);
      result.scaling.push({
        label,
        ours: (await latency(() => answerQuery(ours, query, dateTrunc), reps)).p50,
        naive: (await latency(() => answerQuery(naive, query, dateTrunc), reps)).p50,
      });
    }
  }

  // GraphQL overhead: one entity's MINUTE buckets over one day (1,440 buckets) through yoga vs the pipeline alone.
  if (ours instanceof OursModel) {
    const from = data.from - (data.from % DAY_MS);
    const to = from + DAY_MS;
    const entity = data.entities[0]!;
    const query = `{ buckets(metric: "${data.readings[0]!.metric}", field: "${data.fields[0]}", granularity: MINUTE, from: "${new Date(from).toISOString()}", to: "${new Date(to).toISOString()}", where: [{key: "${data.entityTag}", in: "${entity}"}]) { buckets { start end count sum min max avg stddev } } }`;
    const count = (await ours.graphql<{ buckets: { buckets: unknown[] }[] }>(query)).buckets[0]?.buckets.length ?? 0;
    // The pipeline the resolver builds for this query.
    const scope = { metric: data.readings[0]!.metric, where: [{ key: data.entityTag, in: [entity] }] };
    const pipeline = bucketsPipeline({
      scope,
      fields: [data.fields[0]!],
      from,
      to,
      granularity: granularity('MINUTE'),
      grouping: { by: 'none' },
    });
    // Through yoga: the HTTP response body as text (what a server sends), not parsed.
    const viaYoga = async () => (await postGraphql(ours.app, query)).text();
    const [yogaMs, pipelineMs] = await alternating(viaYoga, () => aggregateBuckets(ours.store, pipeline), Math.max(reps, 7));
    result.overhead = { buckets: count, yogaMs, pipelineMs };
  }
  for (const model of loaded) await dropAndClose(model);

  return result;
}

/** Renders one data set's figures as Markdown. */
function markdown(result: DataSetResult): string {
  const lines: string[] = [];
  const byName = new Map(result.models.map((m) => [m.name, m]));
  const ours = byName.get('ours')!;
  const others = result.models.filter((m) => m.name !== 'ours');
  lines.push(`### ${result.data.name}: ${result.data.description}`, '');
  for (const model of others.filter((m) => !m.available)) lines.push(`- **${model.name}**: not run, ${model.reason}`, '');
  const available = others.filter((m) => m.available);

  if (options.readsOnly) {
    lines.push(`**Answers**: ${result.queries.map((q) => `${q.name} ${q.agree ? 'agree' : `DIFFER (${q.difference})`}`).join(', ')}`);
  }
  if (ours.ingest.length > 0) {
    lines.push('**Ingest** (readings/s; ratio = ours / baseline)', '');
    lines.push(...tableHead(['path', 'ours', ...available.flatMap((m) => [m.name, 'ratio'])], `lr${'rr'.repeat(available.length)}`));
    for (const [i, batch] of [1, 100, 1000].entries()) {
      const o = ours.ingest[i]!.readingsPerSecond;
      lines.push(
        `| storage layer, batch ${batch.toLocaleString('en-US')} | ${format.rate(o)} | ${available.map((m) => `${format.rate(m.ingest[i]!.readingsPerSecond)} | ${format.ratio(o / m.ingest[i]!.readingsPerSecond)}`).join(' | ')} |`,
      );
    }
    if (ours.graphqlIngest) {
      const g = ours.graphqlIngest.readingsPerSecond;
      lines.push(
        `| GraphQL over HTTP, batch 1,000 | ${format.rate(g)} | ${available.map((m) => `${format.rate(m.ingest[2]!.readingsPerSecond)} | ${format.ratio(g / m.ingest[2]!.readingsPerSecond)}`).join(' | ')} |`,
      );
      lines.push('', `GraphQL ingest / storage-layer ingest (batch 1,000): ${format.ratio(g / ours.ingest[2]!.readingsPerSecond)}`);
    }
  }
  lines.push('', '**Storage** (after loading all readings; `storageSize` + `totalIndexSize`)', '');
  lines.push(...tableHead(['model', 'documents', 'storage', 'indexes', 'bytes/reading', 'ratio', 'largest document'], 'lrrrrrr'));
  for (const model of [ours, ...available]) {
    const s = model.storage!;
    lines.push(
      `| ${model.name} | ${s.documents.toLocaleString('en-US')} | ${format.bytes(s.storageBytes)} | ${format.bytes(s.indexBytes)} | ${s.bytesPerReading.toFixed(1)} | ${model === ours ? '' : format.ratio(ours.storage!.bytesPerReading / s.bytesPerReading)} | ${s.largestDocument === null ? 'n/a' : format.bytes(s.largestDocument)} (${s.largestNote}) |`,
    );
  }
  if (Object.keys(ours.queries).length > 0) {
    lines.push('', `**Queries** (ms, p50 / p99 of ${reps} runs after a warm-up; speed-up = baseline p50 / ours p50)`, '');
    lines.push(
      ...tableHead(
        ['query', 'level', 'answers', 'ours', ...available.flatMap((m) => [m.name, 'speed-up'])],
        `lllr${'rr'.repeat(available.length)}`,
      ),
    );
    for (const query of result.queries) {
      const o = ours.queries[query.name]!;
      const cells = available.map((m) => {
        const q = m.queries[query.name]!;
        return `${format.ms(q.p50)} / ${format.ms(q.p99)} | ${query.agree ? format.ratio(q.p50 / o.p50) : 'VOID'}`;
      });
      lines.push(
        `| ${query.name}: ${query.description} | ${query.unit} | ${query.agree ? 'agree' : `DIFFER (${query.difference})`} | ${format.ms(o.p50)} / ${format.ms(o.p99)} | ${cells.join(' | ')} |`,
      );
    }
  }
  if (result.reads) {
    lines.push(
      '',
      `**Bytes read per query** (documents examined: the server's \`explain\`, or counted; bytes read: summed \`$bsonSize\` of the documents the index range selects; walked: of those passing every \`$match\`, whole and after ours' read projection; pipeline alone without and with the projection, medians of ${reps} alternating runs)`,
      '',
      ...readsTable(result.reads),
    );
  }
  if (result.scaling.length) {
    lines.push('', '**Scaling** (mean of one field for one entity over a growing range, p50 ms)', '');
    lines.push(...tableHead(['range', 'ours', 'naive', 'speed-up'], 'lrrr'));
    for (const row of result.scaling)
      lines.push(`| ${row.label} | ${format.ms(row.ours)} | ${format.ms(row.naive)} | ${format.ratio(row.naive / row.ours)} |`);
  }
  if (result.overhead) {
    const o = result.overhead;
    lines.push(
      '',
      `**GraphQL overhead**: ${o.buckets} buckets through yoga in process ${format.ms(o.yogaMs)} ms vs the same pipeline alone ${format.ms(o.pipelineMs)} ms: ${format.ratio(o.yogaMs / o.pipelineMs)}`,
    );
  }

  return lines.join('\n');
}

/** The targets of the benchmark, checked against the figures (ratios against naive). */
function targets(result: DataSetResult): Target[] {
  const ours = result.models.find((m) => m.name === 'ours')!;
  if (options.readsOnly) return [];
  const naive = result.models.find((m) => m.name === 'naive' && m.available);
  const rows: Target[] = [];
  const speedups = (units: string[]) =>
    result.queries.filter((q) => units.includes(q.unit)).map((q) => ({ q, x: naive!.queries[q.name]!.p50 / ours.queries[q.name]!.p50 }));
  if (naive) {
    const dense = result.data.name === 'dense';
    const coarse = speedups(dense ? ['hour', 'day', 'month'] : ['day', 'month', 'range']);
    const worstCoarse = Math.min(...coarse.map((s) => s.x));
    rows.push({
      target: `${dense ? 'HOUR and coarser' : 'DAY and coarser'} queries >= ${dense ? 20 : 3}x naive`,
      value: `worst ${format.ratio(worstCoarse)} (${coarse.map((s) => `${s.q.name} ${format.ratio(s.x)}`).join(', ')})`,
      met: worstCoarse >= (dense ? 20 : 3),
    });
    if (dense) {
      const minute = speedups(['minute']);
      const worst = Math.min(...minute.map((s) => s.x));
      rows.push({ target: 'MINUTE queries >= 3x naive', value: `worst ${format.ratio(worst)}`, met: worst >= 3 });
    }
    const ingest = ours.ingest[2]!.readingsPerSecond / naive.ingest[2]!.readingsPerSecond;
    rows.push({
      target: `ingest (storage layer, batch 1,000) >= ${dense ? '1.0' : '0.4'}x naive`,
      value: format.ratio(ingest),
      met: ingest >= (dense ? 1 : 0.4),
    });
    const storage = ours.storage!.bytesPerReading / naive.storage!.bytesPerReading;
    rows.push({
      target: `storage per reading <= ${dense ? '0.5' : '2'}x naive`,
      value: format.ratio(storage),
      met: storage <= (dense ? 0.5 : 2),
    });
  }
  if (result.overhead) {
    const overhead = result.overhead.yogaMs / result.overhead.pipelineMs;
    rows.push({ target: 'GraphQL overhead (1,440 buckets) <= 1.5x', value: format.ratio(overhead), met: overhead <= 1.5 });
  }
  if (ours.graphqlIngest) {
    const ratio = ours.graphqlIngest.readingsPerSecond / ours.ingest[2]!.readingsPerSecond;
    rows.push({ target: 'GraphQL ingest >= 0.7x storage layer', value: format.ratio(ratio), met: ratio >= 0.7 });
  }
  return rows;
}

await withBenchDatabase(async (database, client) => {
  const server = await describeServer(client, database.embedded);
  const dateTrunc = await supportsDateTrunc(client);
  const machine = describeMachine();
  log(`server: ${server}; $dateTrunc ${dateTrunc ? 'available' : 'missing: baselines use date arithmetic'}`);

  const sets: DataSet[] = [];
  if (options.data !== 'sparse') sets.push(denseDataSet(options.hosts, (options.minutes ?? options.hours * 60) / 60));
  if (options.data !== 'dense') {
    const before = new Date(Date.UTC(2001, Math.min(6, options.months), 1));
    sets.push(await sparseDataSet(before, options.rows));
  }
  const results: DataSetResult[] = [];
  const report: string[] = [`Server: ${server}. Machine: ${machine}.`, ''];
  let void_ = false;
  for (const data of sets) {
    const result = await runDataSet(database.uri, client, data, dateTrunc);
    results.push(result);
    report.push(markdown(result), '', ...targetsTable(targets(result)), '');
    if (result.queries.some((q) => !q.agree)) void_ = true;
  }
  console.log(report.join('\n'));
  const out = options.out ?? resultsPath(options.data);
  writeResults(out, { server, machine, dateTrunc, reps, options, results, targets: results.map(targets) });
  log(`figures written to ${out}`);
  if (void_) {
    log('Some answers differ between models: the benchmark is void.');
    process.exitCode = 1;
  }
}, log);
