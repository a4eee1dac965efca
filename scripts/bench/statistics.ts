/**
 * What the optional statistics cost (see `model/statistics-settings.ts`): quantile
 * sketches at no level, the day, day+hour (the default) or day+hour+minute levels, each
 * with the latest 50 readings, and a row with neither sketches nor latest readings (the
 * closest to the layout before them; first/last pairs and the reading counter are
 * always kept). On the dense (TSBS cpu-only) and the sparse (real flights) data set,
 * every setting gets a database of its own on the same server, its metric's statistics
 * set with `setMetricStatistics` before the first write, and:
 * 1. bytes per reading: the summed `$bsonSize` of the series-day documents over the
 *    number of readings (and per document);
 * 2. ingest rate: the data set written through `recordBatch` (the record path, with a
 *    batch id) in batches of 1,000 as the benchmark's loader and `import:flights` send
 *    them, the settings taking turns batch by batch in a new random order each round,
 *    so load from other work on the machine falls on all of them alike; the ratio is the
 *    median over the batches of the time of the row without sketches and latest
 *    readings over the setting's;
 * 3. query cost: a DAY chart over the whole days, an HOUR chart of one day, a MINUTE
 *    chart of one hour of one host or airport and an aggregate grouped by a tag, each
 *    run three ways through the engine's functions (`bucketsPipeline`, `sketchPipeline`,
 *    `aggregateBuckets`): basic statistics only, with first/last (`firstLast: true`),
 *    and with percentiles (the sketch pipeline beside the bucket pipeline, concurrently,
 *    as the engine's loader runs them; merging the bins into the rows in the engine is
 *    left out). Every case of a data set runs once per round in a new random order; p50
 *    and p95 are nearest-rank percentiles of `--runs` rounds after a warm-up (below 20
 *    rounds p95 is the slowest), ratios are p50 over the basic p50 of the same setting.
 * Before anything is timed, every bucket is checked to have its first and last reading,
 * and percentiles exactly where its level is sketched (bins totalling its count).
 *
 * Sizes: each batch of 1,000 dense readings spreads over 50 hosts by default (20
 * readings, 3 minutes, per host-day update), as the benchmark's 100 hosts do; a handful
 * of hosts would put 40 minutes or more of minute slots into each update, and on the
 * embedded server an update's cost grows faster than its number of paths (docs/performance.md). Ten minutes fill every document's 50 latest readings. Per-day costs
 * (latest readings, day and hour sketches) are spread over 60 readings per host-day
 * here instead of a full day's 8,640: read them per document. Sparse route-day
 * documents are complete days whatever the span.
 *
 *   npx tsx scripts/bench/statistics.ts             # embedded database, about 10 minutes
 *   npx tsx scripts/bench/statistics.ts --runs 15 --hosts 100 --minutes 20 --days 21 --origins SJC,JFK
 *   npx tsx scripts/bench/statistics.ts --quick     # tiny sizes, under a minute, figures mean little
 *   MONGODB_URI=mongodb://host:27017 npx tsx scripts/bench/statistics.ts
 */
import { cpus } from 'node:os';
import { Command } from 'commander';
import { SECANTUS_VERSION } from '../../src/embedded/secantus.ts';
import { DEFAULT_STATISTICS, type SlotLevel, type StatisticsSettings } from '../../src/model/statistics-settings.ts';
import { percentile as summaryPercentile, summarize } from '../../src/model/stats.ts';
import { DAY_MS, HOUR_MS } from '../../src/model/time.ts';
import {
  bucketsPipeline,
  rowStats,
  sketchPipeline,
  type BucketQuery,
  type BucketRow,
  type SketchRow,
} from '../../src/query/buckets-pipeline.ts';
import { granularity } from '../../src/query/granularity.ts';
import type { Reading } from '../../src/record/validate.ts';
import { setMetricStatistics } from '../../src/storage/registry.ts';
import {
  batches,
  benchDatabase,
  type DataSet,
  denseDataSet,
  dropAndClose,
  format,
  median,
  OursModel,
  percentile,
  positiveInt,
  progressLog,
  shuffled,
  sparseDataSet,
  tableHead,
} from './harness/index.ts';
import { aggregateBuckets } from '../../src/storage/aggregate.ts';

const options = new Command()
  .name('bench:statistics')
  .description('Storage, ingest and query cost of the optional statistics (sketch levels, latest readings).')
  .option('--runs <n>', 'timed rounds of the queries (after one warm-up)', positiveInt, 7)
  .option('--hosts <n>', 'dense: hosts', positiveInt, 50)
  .option('--minutes <n>', 'dense: minutes of readings every 10 s from 2016-01-01', positiveInt, 10)
  .option('--days <n>', 'sparse: days of flights from 2001-01-01', positiveInt, 14)
  .option('--origins <codes>', 'sparse: origin airports (comma-separated)', 'SJC')
  .option('--quick', 'tiny sizes and 2 rounds: a smoke test, its figures mean little')
  .parse()
  .opts<{ runs: number; hosts: number; minutes: number; days: number; origins: string; quick?: boolean }>();
if (options.quick) Object.assign(options, { runs: 2, hosts: 20, minutes: 1, days: 1, origins: 'SJC' });

const log = progressLog('statistics');

/** Readings per `recordBatch` call, as the benchmark's loader and `import:flights` send them. */
const BATCH = 1000;

/** A setting measured: its label and the statistics its metric gets. */
interface Setting {
  label: string;
  statistics: StatisticsSettings;
}

const setting = (levels: StatisticsSettings['sketchLevels'], latest: number): Setting => {
  const statistics: StatisticsSettings = { sketchLevels: levels, sketchFields: null, latestReadings: latest };
  const isDefault = JSON.stringify(statistics) === JSON.stringify(DEFAULT_STATISTICS);
  return { label: `${levels.length === 0 ? 'none' : levels.join('+')}, latest ${latest}${isDefault ? ' (default)' : ''}`, statistics };
};

/** The first is the reference of every ratio: no sketches, no latest readings. */
const SETTINGS: Setting[] = [
  setting([], 0),
  setting([], 50),
  setting(['day'], 50),
  setting(['day', 'hour'], 50),
  setting(['day', 'hour', 'minute'], 50),
];

type Way = 'basic' | 'first/last' | 'percentiles';
const WAYS: Way[] = ['basic', 'first/last', 'percentiles'];

/** A timed query: its label, the bucket query (without `firstLast`) and the level whose sketches answer its percentiles. */
interface NamedQuery {
  label: string;
  query: BucketQuery;
  level: SlotLevel;
}

/**
 * The typical queries of a data set, on its first field: over every series, a DAY chart
 * of the whole days of the data and an HOUR chart of the day holding the median reading;
 * a MINUTE chart of the hour holding it for the first entity (a host, an airport); an
 * aggregate of the whole days grouped by the entity tag.
 */
function typicalQueries(data: DataSet): NamedQuery[] {
  const metric = data.readings[0]!.metric;
  const field = data.fields[0]!;
  const entity = data.entities[0]!;
  const from = data.from - (data.from % DAY_MS);
  const to = Math.ceil(data.to / DAY_MS) * DAY_MS;
  const days = `${(to - from) / DAY_MS} day${to - from === DAY_MS ? '' : 's'}`;
  const middle = percentile(
    data.readings.map((reading) => reading.time),
    50,
  );
  const day = middle - (middle % DAY_MS);
  const hour = middle - (middle % HOUR_MS);
  const base = { scope: { metric }, fields: [field], grouping: { by: 'none' } } as const;
  return [
    { label: `DAY chart, ${days}`, level: 'day', query: { ...base, from, to, granularity: granularity('DAY') } },
    { label: 'HOUR chart, 1 day', level: 'hour', query: { ...base, from: day, to: day + DAY_MS, granularity: granularity('HOUR') } },
    {
      label: `MINUTE chart, 1 hour, ${data.entityTag} ${entity}`,
      level: 'minute',
      query: {
        ...base,
        scope: { metric, where: [{ key: data.entityTag, in: [entity] }] },
        from: hour,
        to: hour + HOUR_MS,
        granularity: granularity('MINUTE'),
      },
    },
    {
      label: `aggregate by ${data.entityTag}, ${days}`,
      level: 'day',
      query: { ...base, from, to, granularity: null, grouping: { by: 'tags', keys: [data.entityTag] } },
    },
  ];
}

/** Runs a query one way, as the engine's loader does; returns the bucket rows and the sketch rows. */
async function run(model: OursModel, query: BucketQuery, way: Way): Promise<[BucketRow[], SketchRow[]]> {
  if (way === 'first/last') return [await aggregateBuckets<BucketRow>(model.store, bucketsPipeline({ ...query, firstLast: true })), []];
  return Promise.all([
    aggregateBuckets<BucketRow>(model.store, bucketsPipeline(query)),
    way === 'percentiles' ? aggregateBuckets<SketchRow>(model.store, sketchPipeline(query)) : Promise.resolve([]),
  ]);
}

/** The bucket and group of a pipeline row, as a map key. */
const bucketKey = (id: { t?: Date; g?: unknown } | null) => `${id?.t?.getTime() ?? ''}\u0000${JSON.stringify(id?.g ?? null)}`;

/**
 * What the extra statistics of a query answer, as the engine reads its rows
 * (`rowStats`, `summarize`): how many buckets have a first and a last reading, and how
 * many a p95 (a merged sketch holding every reading of the bucket).
 */
async function answered(model: OursModel, query: BucketQuery): Promise<{ buckets: number; firstLast: number; percentiles: number }> {
  const [withFirstLast] = await run(model, query, 'first/last');
  const [rows, sketchRows] = await run(model, query, 'percentiles');
  const bins = new Map<string, Map<string, number>>();
  for (const { _id, c } of sketchRows) {
    const key = bucketKey(_id);
    const bucketBins = bins.get(key) ?? new Map<string, number>();
    bins.set(key, bucketBins.set(_id.k, (bucketBins.get(_id.k) ?? 0) + c));
  }
  for (const row of rows) row.q0 = bins.get(bucketKey(row._id));
  const firstLast = withFirstLast.filter((row) => {
    const summary = summarize(rowStats(row, 0));
    return summary.first !== null && summary.last !== null;
  }).length;
  const percentiles = rows.filter((row) => summaryPercentile(summarize(rowStats(row, 0)), 95) !== null).length;
  return { buckets: rows.length, firstLast, percentiles };
}

interface SettingResult {
  setting: Setting;
  documents: number;
  bytes: number;
  /** Seconds of each batch, by batch index. */
  batchSeconds: number[];
  queries: {
    label: string;
    answered: { buckets: number; firstLast: number; percentiles: number };
    times: Record<Way, number[]>;
  }[];
}

async function measure(uri: string, data: DataSet): Promise<SettingResult[]> {
  const metric = data.readings[0]!.metric;
  const models: OursModel[] = [];
  for (const [i, { statistics }] of SETTINGS.entries()) {
    const model = await OursModel.open(uri, `bench_statistics_${data.name}_${i}`);
    await setMetricStatistics(model.store, metric, statistics);
    models.push(model);
  }
  try {
    const prepared = batches(models[0]!.convert(data.readings), BATCH) as Reading[][];
    const results: SettingResult[] = SETTINGS.map((setting) => ({ setting, documents: 0, bytes: 0, batchSeconds: [], queries: [] }));
    for (const [b, batch] of prepared.entries()) {
      if (b % 10 === 0) log(`${data.name}: batch ${b + 1} of ${prepared.length}, each setting in turn`);
      for (const i of shuffled(SETTINGS.map((_, i) => i))) {
        const begun = performance.now();
        await models[i]!.write(batch);
        results[i]!.batchSeconds[b] = (performance.now() - begun) / 1000;
      }
    }
    for (const [i, model] of models.entries()) {
      const [row] = await model.store.seriesDays
        .aggregate<{ documents: number; bytes: number; readings: number }>([
          { $group: { _id: null, documents: { $sum: 1 }, bytes: { $sum: { $bsonSize: '$$ROOT' } }, readings: { $sum: '$readings' } } },
        ])
        .toArray();
      if (row?.readings !== data.readings.length)
        throw new Error(`${SETTINGS[i]!.label}: ${row?.readings} readings stored, expected ${data.readings.length}`);
      results[i]!.documents = row.documents;
      results[i]!.bytes = row.bytes;
      log(`${data.name}, ${SETTINGS[i]!.label}: batches took ${results[i]!.batchSeconds.map((seconds) => seconds.toFixed(1)).join(' ')} s`);
    }

    const queries = typicalQueries(data);
    // Answers first: every bucket has its first and last reading, and a percentile exactly where its level is sketched.
    for (const [i, model] of models.entries()) {
      for (const { label, query, level } of queries) {
        const counts = await answered(model, query);
        const sketched = SETTINGS[i]!.statistics.sketchLevels.includes(level);
        if (counts.buckets === 0 || counts.firstLast !== counts.buckets || counts.percentiles !== (sketched ? counts.buckets : 0)) {
          throw new Error(`${data.name}, ${SETTINGS[i]!.label}, ${label}: unexpected answers ${JSON.stringify(counts)}`);
        }
        results[i]!.queries.push({ label, answered: counts, times: { basic: [], 'first/last': [], percentiles: [] } });
      }
    }
    const cases = models.flatMap((model, i) =>
      queries.flatMap((query, q) =>
        WAYS.map((way) => ({ way, times: results[i]!.queries[q]!.times[way], run: () => run(model, query.query, way) })),
      ),
    );
    log(`${data.name}: ${cases.length} query cases, a warm-up and ${options.runs} rounds`);
    for (const c of cases) await c.run();
    for (let round = 0; round < options.runs; round++) {
      for (const c of shuffled(cases)) {
        const begun = performance.now();
        await c.run();
        c.times.push(performance.now() - begun);
      }
    }
    return results;
  } finally {
    for (const model of models) await dropAndClose(model);
  }
}

/** Markdown tables of one data set. */
function report(data: DataSet, results: SettingResult[]): string {
  const lines: string[] = [`### ${data.name}: ${data.description}`, ''];
  const reference = results[0]!;
  const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
  const readingsPerDocument = data.readings.length / reference.documents;
  lines.push(
    `**Storage and ingest** (${data.readings.length.toLocaleString('en-US')} readings, ${reference.documents.toLocaleString('en-US')} series-day documents of ${readingsPerDocument.toFixed(1)} readings on average, written in ${reference.batchSeconds.length} batch${reference.batchSeconds.length === 1 ? '' : 'es'} of up to ${BATCH.toLocaleString('en-US')}; ratios against the first row; ingest ratio: median over the batches of the first row's time over the setting's)`,
    '',
    ...tableHead(['sketches, latest readings', 'bytes/document', 'bytes/reading', 'ratio', 'ingest readings/s', 'ratio'], 'lrrrrr'),
  );
  for (const result of results) {
    const perReading = result.bytes / data.readings.length;
    const rate = data.readings.length / sum(result.batchSeconds);
    const ratio = median(result.batchSeconds.map((seconds, b) => reference.batchSeconds[b]! / seconds));
    lines.push(
      `| ${result.setting.label} | ${Math.round(result.bytes / result.documents).toLocaleString('en-US')} | ${perReading.toFixed(1)} | ${format.ratio(perReading / (reference.bytes / data.readings.length))} | ${format.rate(rate)} | ${format.ratio(ratio)} |`,
    );
  }
  lines.push(
    '',
    `**Queries** (ms, p50 / p95 of ${options.runs} rounds, nearest rank; ratio: p50 over the basic p50 of the same setting; basic vs first row: basic p50 over the first row's; percentiles: whether the sketches answer them, checked on every bucket)`,
    '',
    '| sketches, latest readings | query | buckets | basic | first/last | ratio | percentiles | ratio | basic vs first row | percentiles answered |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  );
  for (const result of results) {
    for (const [q, query] of result.queries.entries()) {
      const p50 = (way: Way) => percentile(query.times[way], 50);
      const cell = (way: Way) => `${format.ms(p50(way))} / ${format.ms(percentile(query.times[way], 95))}`;
      const { buckets, percentiles } = query.answered;
      lines.push(
        `| ${result.setting.label} | ${query.label} | ${buckets} | ${cell('basic')} | ${cell('first/last')} | ${format.ratio(p50('first/last') / p50('basic'))} | ${cell('percentiles')} | ${format.ratio(p50('percentiles') / p50('basic'))} | ${format.ratio(p50('basic') / percentile(reference.queries[q]!.times.basic, 50))} | ${percentiles === buckets ? 'yes' : 'no'} |`,
      );
    }
  }
  return lines.join('\n');
}

const database = await benchDatabase();
try {
  const server = database.embedded ? `SecantusDB ${SECANTUS_VERSION} (embedded, in memory)` : 'the server at MONGODB_URI';
  const origins = new Set(options.origins.split(',').map((code) => code.trim()));
  const sets = [
    denseDataSet(options.hosts, options.minutes / 60),
    await sparseDataSet(new Date(Date.UTC(2001, 0, 1 + options.days)), undefined, origins),
  ];
  const out: string[] = [
    `Server: ${server}; ${cpus().length} cores, Node ${process.version}. Batches of ${BATCH.toLocaleString('en-US')} through recordBatch with batch ids; sparse layout; one database per setting.`,
    '',
  ];
  for (const data of sets) {
    log(`${data.name}: ${data.description}`);
    out.push(report(data, await measure(database.uri, data)), '');
  }
  console.log(out.join('\n'));
  log(`done in ${log.seconds().toFixed(0)} s`);
} finally {
  await database.stop();
}
