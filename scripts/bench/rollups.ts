/**
 * Rollups: what they save and cost (docs/performance.md). On the sparse data set (real
 * flights of January 2001 from flights-3m) and the dense one (TSBS cpu-only), in one run
 * on one database server:
 * 1. query times (median of `--reps` runs, the models taking turns run by run) of
 *    queries a rollup answers, each answered four ways: our series-day documents (the
 *    rollup registry moved aside, so the planner finds no rollup), our rollup (`[]` or
 *    `[origin]` / `[hostname]`, as `extensions.reads` reports), one document per reading
 *    (`naive`) and the native time-series collection; every model's answers are compared
 *    before anything is timed;
 * 2. the documents and bytes each query reads: a counting pipeline (`$bsonSize` summed)
 *    with the `$match` stages of the pipeline the model runs (ours: the very `aggregate`
 *    commands the engine sent, caught by the driver's command monitoring), and the
 *    server's `explain` execution statistics of that `$match` where it gives them;
 * 3. loading: the series-day documents of the query part are BULK-LOADED (see
 *    {@link bulkLoad}: the parts the folds of the record path would write, planned per
 *    fold by the fold's own planner and inserted), because the record path on the embedded
 *    server takes hours for a month of flights; the bulk path is first checked on a
 *    sample against the same readings written through `recordBatch` (documents and
 *    answers, with and without rollups); the rollups are then built by `backfillRollup`;
 * 4. the ingest cost of rollups through the real record path (`recordBatch` with batch
 *    ids): the same batches written to a database without rollups and to one with the
 *    rollups ready, taking turns batch by batch; the time the rollup writes take is read
 *    from the driver's command monitoring.
 * Prints Markdown tables and writes the figures as JSON (`bench-results/rollups-*.json`).
 *
 *   npm run bench:rollups                          # flights of January 2001, 100 hosts x 6 h (estimated well over an hour on the embedded server)
 *   npm run bench:rollups -- --rows 50000 --hosts 20 --hours 2   # the run in docs/performance.md, about 32 minutes
 *   npm run bench:rollups -- --quick               # small sizes, about 3 minutes
 *   npm run bench:rollups -- --data sparse --rows 100000 --reps 7
 *   MONGODB_URI=mongodb://host:27017 npm run bench:rollups
 */
import { Command } from 'commander';
import type { Db, Document, MongoClient } from 'mongodb';
import { recordBatch } from '../../src/engine/record-batch.ts';
import { DAY_MS, HOUR_MS } from '../../src/model/time.ts';
import { backfillRollup, createRollup, findRollups, ROLLUPS_COLLECTION } from '../../src/storage/rollups.ts';
import { CollectionName } from '../../src/storage/store.ts';
import {
  answerQuery,
  type BaselineModel,
  batches,
  type BenchQuery,
  build,
  bulkLoad,
  collectionBytes,
  compareAnswers,
  compareCollection,
  dataOption,
  type DataChoice,
  type DataSet,
  denseDataSet,
  denseQueries,
  describeMachine,
  describeServer,
  dropAndClose,
  format,
  LOAD_BATCH,
  median,
  NaiveModel,
  OursModel,
  positiveInt,
  progressLog,
  recordAll,
  resultsPath,
  row,
  type SentCommand,
  sparseDataSet,
  sparseQueries,
  subset,
  table,
  tableHead,
  supportsDateTrunc,
  type Target,
  targetsTable,
  TimeseriesModel,
  validated,
  withBenchDatabase,
  writeResults,
} from './harness/index.ts';

const program = new Command()
  .name('bench:rollups')
  .description('Query time, documents read and ingest cost of rollups against series-day documents, naive and time-series collections.')
  .addOption(dataOption())
  .option('--rows <n>', 'sparse: at most n flights of January 2001 (default: all 508,239)', positiveInt)
  .option('--hosts <n>', 'dense: number of hosts', positiveInt, 100)
  .option('--hours <n>', 'dense: hours of readings every 10 s', positiveInt, 6)
  .option('--reps <n>', 'timed runs per query and model (at least 5)', positiveInt, 5)
  .option('--sample <n>', 'readings written both ways to check the bulk load', positiveInt, 3000)
  .option('--ingest <n>', 'readings timed through the record path per data set and rollup setting', positiveInt, 5000)
  .option('--batch <n>', 'readings per recordBatch call in the ingest comparison', positiveInt, 1000)
  .option('--quick', 'small sizes (3,000 flights, 5 hosts x 1 h, a check sample of 300, 2 ingest batches of 250): a smoke test')
  .option('--out <file>', 'JSON output (default bench-results/rollups-<time>.json)')
  .parse();

interface Options {
  data: DataChoice;
  rows?: number;
  hosts: number;
  hours: number;
  reps: number;
  sample: number;
  ingest: number;
  batch: number;
  quick?: boolean;
  out?: string;
}
const options = program.opts<Options>();
if (options.quick) Object.assign(options, { rows: options.rows ?? 3000, hosts: 5, hours: 1, sample: 300, ingest: 500, batch: 250 });
const reps = Math.max(5, options.reps);

const log = progressLog('rollups');

// ---------------------------------------------------------------------------------------
// Our store, with the driver's command monitoring
// ---------------------------------------------------------------------------------------

/**
 * Opens an empty database of ours, `dbName` (dropped first), with the indexes of the
 * record path and the driver's command monitoring. The rollup grace period is 10
 * minutes, not the server's 60 s: a TSBS batch of 1,000 readings takes over 30 s on the
 * embedded server, past the 60 s grace's rollup-write window (half of it), and would
 * mark its days dirty instead of writing the rollups, which is the cost this benchmark
 * measures. Whole-month queries on the series-day documents run for many seconds on the
 * embedded server, hence the long query time limit.
 */
const openOurs = (uri: string, dbName: string) =>
  OursModel.open(uri, dbName, { rollupGraceMs: 600_000, app: { requestLimits: { queryTimeoutMs: 1_800_000 } } });

/**
 * Moves the rollup definitions aside into another collection (`usable` false: the
 * planner finds no rollup and reads the series-day documents) or back (`usable` true).
 * The rollup documents stay where they are.
 */
async function rollupsUsable(ours: OursModel, usable: boolean): Promise<void> {
  const from = ours.db.collection(usable ? `${ROLLUPS_COLLECTION}_aside` : ROLLUPS_COLLECTION);
  const to = ours.db.collection(usable ? ROLLUPS_COLLECTION : `${ROLLUPS_COLLECTION}_aside`);
  const definitions = await from.find({}).toArray();
  if (definitions.length === 0) return;
  await to.insertMany(definitions);
  await from.deleteMany({ _id: { $in: definitions.map((definition) => definition._id) } });
}

// ---------------------------------------------------------------------------------------
// Rollups and queries of each data set
// ---------------------------------------------------------------------------------------

/** A rollup the benchmark defines. */
interface RollupSpec {
  name: string;
  tagKeys: string[];
}

/** A query a rollup answers, and the rollup the planner must pick for it. */
interface RollupQuery {
  query: BenchQuery;
  rollup: string;
}

const H = HOUR_MS;
const D = DAY_MS;

/** The rollups of a data set: the whole metric, and per origin (flights) or per host (TSBS). */
function rollupsOf(data: DataSet): RollupSpec[] {
  return [
    { name: 'all', tagKeys: [] },
    { name: `by_${data.entityTag}`, tagKeys: [data.entityTag] },
  ];
}

/**
 * The queries of a data set. Flights: (a) mean delay per origin over the whole range,
 * (b) mean delay per day of all flights, (c) mean delay per day of the 5 busiest
 * origins, per origin. TSBS: mean usage_user per hour over all hosts, and TSBS
 * double-groupby-1 (mean per host per hour).
 */
function queriesOf(data: DataSet): RollupQuery[] {
  const days: [number, number] = [data.from - (data.from % D), Math.ceil(data.to / D) * D];
  const byEntity = `by_${data.entityTag}`;
  if (data.name === 'sparse') {
    const perOrigin = sparseQueries(data).find((query) => query.name === 'per-origin-avg-delay')!;
    const five = data.entities.slice(0, 5);
    const daily = (name: string, description: string, entities?: string[]) =>
      build({
        name,
        description,
        data,
        fields: ['delay'],
        stat: 'avg',
        unit: 'day',
        from: days[0],
        to: days[1],
        entities,
        perEntity: entities !== undefined,
      });
    return [
      { query: perOrigin, rollup: byEntity },
      { query: daily('daily-all', 'mean delay per day, all flights, whole range'), rollup: 'all' },
      { query: daily('daily-5-origins', `mean delay per day and origin, origins ${five.join(', ')}, whole range`, five), rollup: byEntity },
    ];
  }
  const hours: [number, number] = [data.from - (data.from % H), Math.ceil(data.to / H) * H];
  const hourly = build({
    name: 'hourly-all',
    description: 'mean usage_user per hour, all hosts, whole range',
    data,
    fields: ['usage_user'],
    stat: 'avg',
    unit: 'hour',
    from: hours[0],
    to: hours[1],
    perEntity: false,
  });
  const doubleGroupby = denseQueries(data).find((query) => query.name === 'double-groupby-1')!;
  return [
    { query: hourly, rollup: 'all' },
    { query: doubleGroupby, rollup: byEntity },
  ];
}

/** How long building a rollup took, and the server's share of it by command and collection (`update rollup_…`, `find series_days`, …), in seconds. */
interface BuildTime {
  seconds: number;
  commands: Record<string, number>;
}

/** The server time of commands summed per `<command> <collection>` (rollup collections as `rollup_…`), in seconds. */
function commandTimes(commands: readonly SentCommand[]): Record<string, number> {
  const times: Record<string, number> = {};
  for (const command of commands) {
    const key = `${command.name} ${command.collection.startsWith('rollup_') ? 'rollup_…' : command.collection}`;
    times[key] = (times[key] ?? 0) + command.ms / 1000;
  }
  return times;
}

/** Defines and backfills (grace 0) the rollups of a data set; returns how long each build took. */
async function buildRollups(ours: OursModel, metric: string, specs: readonly RollupSpec[]): Promise<Record<string, BuildTime>> {
  const took: Record<string, BuildTime> = {};
  for (const spec of specs) {
    const begun = performance.now();
    const { value, commands } = await ours.commands.listen(async () => {
      await createRollup(ours.store, { metric, ...spec });
      return backfillRollup(ours.store, metric, spec.name, { graceMs: 0 });
    });
    if (value.dirty > 0) throw new Error(`Rollup ${spec.name} still has ${value.dirty} dirty days after its backfill`);
    took[spec.name] = { seconds: (performance.now() - begun) / 1000, commands: commandTimes(commands) };
  }
  return took;
}

/** Our answer to a query, and which rollups its pipelines read (null: the series-day documents). */
async function oursAnswer(ours: OursModel, query: BenchQuery) {
  const body = await ours.graphqlBody<Record<string, unknown>>(query.graphql);
  return { answer: query.fromGraphql(body.data!), rollups: (body.extensions?.reads ?? []).map((read) => read.rollup) };
}

// ---------------------------------------------------------------------------------------
// Documents and bytes read
// ---------------------------------------------------------------------------------------

/** What a query's `$match` stages select: documents, their summed `$bsonSize`, and `explain` figures where the server gives them. */
interface ReadFigures {
  documents: number;
  bytes: number;
  /** `totalDocsExamined` / `totalKeysExamined` of `explain` (executionStats) of the `$match`; null when absent. */
  docsExamined: number | null;
  keysExamined: number | null;
}

/** A model's read figures of one query: summed over its bucket pipelines, and (ours) the server time of every command of the request, in seconds, by command and collection. */
type QueryReads = ReadFigures & { pipelines: number; commands?: Record<string, number> };

/** Every value of `key` anywhere in `value` (explain output nests per stage and per shard). */
function findAll(value: unknown, key: string, out: number[] = []): number[] {
  if (Array.isArray(value)) for (const item of value) findAll(item, key, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === key && typeof v === 'number') out.push(v);
      else findAll(v, key, out);
    }
  }
  return out;
}

/**
 * The documents a pipeline on `collection` reads: its leading `$match` stages run with a
 * counting `$group` (count and summed `$bsonSize`), plus the same for every `$unionWith`
 * stage's collection and sub-pipeline; and `explain` with `executionStats` of the same
 * `$match` stages.
 */
async function readFigures(db: Db, collection: string, pipeline: readonly Document[]): Promise<ReadFigures> {
  const leading: Document[] = [];
  for (const stage of pipeline) {
    if (!('$match' in stage)) break;
    leading.push(stage);
  }
  const figures: ReadFigures = { ...(await collectionBytes(db, collection, leading)), docsExamined: null, keysExamined: null };
  try {
    const explained = await db.command({ explain: { aggregate: collection, pipeline: leading, cursor: {} }, verbosity: 'executionStats' });
    const docs = findAll(explained, 'totalDocsExamined');
    const keys = findAll(explained, 'totalKeysExamined');
    // The server repeats the figures at the top and in the `$cursor` stage: the largest is the whole.
    figures.docsExamined = docs.length > 0 ? Math.max(...docs) : null;
    figures.keysExamined = keys.length > 0 ? Math.max(...keys) : null;
  } catch {
    // The server has no explain for aggregate: the counting pipeline stands alone.
  }
  for (const stage of pipeline) {
    if (!('$unionWith' in stage)) continue;
    const union = stage.$unionWith as string | { coll: string; pipeline?: Document[] };
    const inner = typeof union === 'string' ? await readFigures(db, union, []) : await readFigures(db, union.coll, union.pipeline ?? []);
    figures.documents += inner.documents;
    figures.bytes += inner.bytes;
    if (figures.docsExamined !== null)
      figures.docsExamined = inner.docsExamined === null ? null : figures.docsExamined + inner.docsExamined;
    if (figures.keysExamined !== null)
      figures.keysExamined = inner.keysExamined === null ? null : figures.keysExamined + inner.keysExamined;
  }
  return figures;
}

/** The read figures of our answer to a query: every bucket pipeline the engine sent, summed. */
async function oursReadFigures(ours: OursModel, query: BenchQuery): Promise<QueryReads> {
  const { commands } = await ours.commands.listen(() => ours.graphql(query.graphql));
  const pipelines = commands.filter(
    (command) =>
      command.name === 'aggregate' && (command.collection === CollectionName.seriesDays || command.collection.startsWith('rollup_')),
  );
  const total: QueryReads = {
    documents: 0,
    bytes: 0,
    docsExamined: 0,
    keysExamined: 0,
    pipelines: pipelines.length,
    commands: commandTimes(commands),
  };
  for (const command of pipelines) {
    const figures = await readFigures(ours.db, command.collection, command.pipeline ?? []);
    total.documents += figures.documents;
    total.bytes += figures.bytes;
    total.docsExamined = total.docsExamined === null || figures.docsExamined === null ? null : total.docsExamined + figures.docsExamined;
    total.keysExamined = total.keysExamined === null || figures.keysExamined === null ? null : total.keysExamined + figures.keysExamined;
  }
  return total;
}

// ---------------------------------------------------------------------------------------
// The parts of a data set's run
// ---------------------------------------------------------------------------------------

/** The bulk load checked against the record path on a sample (see {@link bulkLoad}). */
interface Verification {
  readings: number;
  recordSeconds: number;
  documents: number;
  /** Differences between the two databases' documents, registries and rollups (empty: identical). */
  differences: string[];
  /** Summed `$bsonSize` of the series-day documents: record path, bulk path. */
  bytes: [number, number];
  /** Query answers compared: name, whether they agree, the rollup the bulk-loaded side read. */
  answers: { query: string; rollup: string | null; agree: boolean; difference?: string }[];
}

/**
 * Writes the first `sample` readings through `recordBatch` (batches of `LOAD_BATCH` with
 * batch ids) into one database and through {@link bulkLoad} into another, and compares
 * the series-day documents (all but `_id`), the registries (all but `_id` and
 * `createdAt`), and the answers to the data set's queries, first from the series-day
 * documents, then, after building the rollups in both, from the rollups (their
 * documents compared too).
 */
async function verifyBulkLoad(uri: string, data: DataSet, sample: number): Promise<Verification> {
  const plain = data.readings.slice(0, sample);
  const small = subset(data, plain);
  const readings = validated(plain);
  const recorded = await openOurs(uri, `bench_rollups_${data.name}_verify_record`);
  const bulk = await openOurs(uri, `bench_rollups_${data.name}_verify_bulk`);
  try {
    log(`${data.name}: checking the bulk load on ${plain.length} readings against recordBatch`);
    const begun = performance.now();
    await recordAll(recorded.store, readings, LOAD_BATCH);
    const recordSeconds = (performance.now() - begun) / 1000;
    const loaded = await bulkLoad(bulk.store, readings, log);
    const differences: string[] = [];
    // Several parts (one per fold) per series-day: ordered by fold too.
    const byKey = { series: 1, date: 1, f: 1 };
    differences.push(...(await compareCollection(recorded.db, bulk.db, CollectionName.seriesDays, byKey, ['_id'])).differences);
    differences.push(...(await compareCollection(recorded.db, bulk.db, CollectionName.series, { _id: 1 }, [])).differences);
    differences.push(...(await compareCollection(recorded.db, bulk.db, CollectionName.metrics, { _id: 1 }, ['createdAt'])).differences);
    const answers: Verification['answers'] = [];
    const compare = async (phase: string) => {
      for (const { query } of queriesOf(small)) {
        const [a, b] = await Promise.all([oursAnswer(recorded, query), oursAnswer(bulk, query)]);
        const difference =
          compareAnswers(a.answer, b.answer) ??
          (a.answer.size === 0 ? 'empty answer' : null) ??
          (JSON.stringify(a.rollups) !== JSON.stringify(b.rollups) ? `read ${a.rollups} vs ${b.rollups}` : null);
        answers.push({
          query: `${query.name} (${phase})`,
          rollup: b.rollups[0] ?? null,
          agree: difference === null,
          difference: difference ?? undefined,
        });
      }
    };
    await compare('series-day documents');
    const metric = plain[0]!.metric;
    await buildRollups(recorded, metric, rollupsOf(data));
    await buildRollups(bulk, metric, rollupsOf(data));
    for (const rollup of await findRollups(bulk.store)) {
      differences.push(...(await compareCollection(recorded.db, bulk.db, rollup.collection, byKey, ['_id'])).differences);
    }
    await compare('rollups');
    const bytes: [number, number] = [
      (await collectionBytes(recorded.db, CollectionName.seriesDays)).bytes,
      (await collectionBytes(bulk.db, CollectionName.seriesDays)).bytes,
    ];
    return { readings: plain.length, recordSeconds, documents: loaded.documents, differences, bytes, answers };
  } finally {
    await dropAndClose(recorded);
    await dropAndClose(bulk);
  }
}

/** A way of answering the benchmark's queries. */
interface Contender {
  name: 'series' | 'rollup' | 'naive' | 'timeseries';
  /** Untimed preparation before each run (ours: the rollup registry moved aside or back). */
  prepare(): Promise<void>;
  answer(query: BenchQuery): Promise<{ answer: Map<string, number>; rollups: (string | null)[] }>;
  reads(query: BenchQuery): Promise<QueryReads>;
}

/** The timing of one query on every contender, and what each reads. */
interface QueryResult {
  name: string;
  description: string;
  unit: string;
  expectedRollup: string;
  agree: boolean;
  difference?: string;
  /** Per contender: median and every run (ms), the rollups its pipelines read, and its read figures. */
  models: Record<string, { p50: number; runs: number[]; rollups: (string | null)[]; reads: QueryReads }>;
}

/**
 * Answers every query with every contender and compares the answers to the series-day
 * documents' (and checks that the rollup contender read the expected rollup and the
 * series contender none); then reads the read figures; then times `reps` rounds, each
 * round running every query on every contender once, contenders in a rotating order.
 */
async function runQueries(contenders: Contender[], queries: RollupQuery[]): Promise<QueryResult[]> {
  const results: QueryResult[] = [];
  for (const { query, rollup } of queries) {
    const result: QueryResult = {
      name: query.name,
      description: query.description,
      unit: query.unit,
      expectedRollup: rollup,
      agree: true,
      models: {},
    };
    let reference: Map<string, number> | undefined;
    for (const contender of contenders) {
      await contender.prepare();
      const { answer, rollups } = await contender.answer(query);
      const reads = await contender.reads(query);
      log(
        `${query.name}: ${contender.name} reads ${count(reads.documents)} documents, ${format.bytes(reads.bytes)}${reads.commands ? `; server: ${topCommands(reads.commands)}` : ''}`,
      );
      result.models[contender.name] = { p50: Number.NaN, runs: [], rollups, reads };
      let difference: string | null = null;
      if (reference === undefined) {
        reference = answer;
        if (answer.size === 0) difference = 'empty answer';
      } else {
        difference = compareAnswers(reference, answer);
      }
      if (contender.name === 'series' && rollups.some((read) => read !== null)) difference = `series read ${rollups.join(', ')}`;
      if (contender.name === 'rollup' && (rollups.length === 0 || rollups.some((read) => read !== rollup))) {
        difference = `rollup contender read ${rollups.join(', ') || 'nothing'}, not ${rollup}`;
      }
      if (difference !== null && result.agree) {
        result.agree = false;
        result.difference = `${contender.name}: ${difference}`;
        log(`VOID ${query.name}: ${result.difference}`);
      }
    }
    results.push(result);
  }
  // Timed rounds: the answers above were each contender's warm-up.
  for (let round = 0; round < reps; round++) {
    for (const [index, { query }] of queries.entries()) {
      const order = contenders.map((_, i) => contenders[(i + round + index) % contenders.length]!);
      for (const contender of order) {
        await contender.prepare();
        const begun = performance.now();
        await contender.answer(query);
        results[index]!.models[contender.name]!.runs.push(performance.now() - begun);
      }
    }
    log(`timed round ${round + 1} of ${reps}`);
  }
  for (const result of results) for (const model of Object.values(result.models)) model.p50 = median(model.runs);
  return results;
}

/** Ingest through the record path without and with the rollups, batch by batch in turns. */
interface IngestResult {
  readings: number;
  batch: number;
  rollups: string[];
  /** Per timed batch: ms without rollups, ms with, and of the latter the ms of rollup updates and of rollup registry reads. */
  batches: { without: number; with: number; rollupWrites: number; registryReads: number }[];
  /**
   * Where the time of the batches with rollups went on the server, summed over them:
   * per written collection (`series_days`, `rollup <name>`), the `update` commands' ms,
   * statements (documents), field paths set and the most paths in one statement.
   */
  updates: Record<string, { ms: number; statements: number; paths: number; maxPaths: number }>;
  withoutPerSecond: number;
  withPerSecond: number;
  /** withPerSecond / withoutPerSecond. */
  ratio: number;
  /** Median over the batches of (time without) / (time with). */
  medianRatio: number;
  /** After the run, whether the rollups had no dirty day and answered as the series-day documents. */
  consistent: boolean;
}

/**
 * Writes `count` readings (after one warm-up batch) through `recordBatch` with batch ids
 * in batches of `size` into two new databases, one without rollups and one with the
 * rollups defined and built (backfill after the warm-up batch, so they are `ready` and
 * every batch writes them in the same pass), the two taking turns batch by batch (the
 * first of a pair alternating). The time of the rollup updates is the sum of the
 * `update` commands on rollup collections (driver command monitoring).
 */
async function ingestCost(uri: string, data: DataSet, count: number, size: number): Promise<IngestResult> {
  const readings = validated(data.readings.slice(0, count + size));
  const [warmUp, ...timed] = batches(readings, size);
  const without = await openOurs(uri, `bench_rollups_${data.name}_ingest_plain`);
  const withRollups = await openOurs(uri, `bench_rollups_${data.name}_ingest_rollups`);
  const specs = rollupsOf(data);
  try {
    for (const ours of [without, withRollups]) await recordBatch(ours.store, warmUp!, { batchId: 'ingest-0', receivedAt: 0 });
    await buildRollups(withRollups, readings[0]!.metric, specs);
    const result: IngestResult = {
      readings: 0,
      batch: size,
      rollups: specs.map((spec) => `${spec.name} [${spec.tagKeys.join(', ')}]`),
      batches: [],
      withoutPerSecond: 0,
      withPerSecond: 0,
      ratio: 0,
      medianRatio: 0,
      consistent: false,
      updates: {},
    };
    const names = new Map((await findRollups(withRollups.store)).map((rollup) => [rollup.collection, `rollup ${rollup.name}`]));
    for (const [index, batch] of timed.entries()) {
      const times = { without: 0, with: 0, rollupWrites: 0, registryReads: 0 };
      const order = index % 2 === 0 ? [without, withRollups] : [withRollups, without];
      for (const ours of order) {
        const begun = performance.now();
        const { commands } = await ours.commands.listen(() =>
          recordBatch(ours.store, batch, { batchId: `ingest-${index + 1}`, receivedAt: 0 }),
        );
        const ms = performance.now() - begun;
        if (ours === without) times.without = ms;
        else {
          times.with = ms;
          for (const command of commands) {
            if (command.name === 'update' && command.collection.startsWith('rollup_')) times.rollupWrites += command.ms;
            if (command.name === 'find' && command.collection === ROLLUPS_COLLECTION) times.registryReads += command.ms;
            if (command.name !== 'update') continue;
            const key = names.get(command.collection) ?? command.collection;
            result.updates[key] ??= { ms: 0, statements: 0, paths: 0, maxPaths: 0 };
            const into = result.updates[key];
            into.ms += command.ms;
            into.statements += command.statements ?? 0;
            into.paths += command.paths ?? 0;
            into.maxPaths = Math.max(into.maxPaths, command.maxPaths ?? 0);
          }
        }
      }
      result.batches.push(times);
      result.readings += batch.length;
      log(
        `${data.name} ingest batch ${index + 1}/${timed.length}: ${format.ms(times.without)} ms without, ${format.ms(times.with)} ms with rollups`,
      );
    }
    const total = (key: 'without' | 'with') => result.batches.reduce((sum, b) => sum + b[key], 0) / 1000;
    result.withoutPerSecond = result.readings / total('without');
    result.withPerSecond = result.readings / total('with');
    result.ratio = result.withPerSecond / result.withoutPerSecond;
    result.medianRatio = median(result.batches.map((b) => b.without / b.with));
    // The rollups must have taken every batch directly (no dirty day) and answer as the series-day documents.
    const rollups = await findRollups(withRollups.store);
    const clean = rollups.every((rollup) => rollup.state === 'ready' && Object.keys(rollup.dirty ?? {}).length === 0);
    const query = queriesOf(subset(data, data.readings.slice(0, count + size)))[0]!.query;
    const fromRollup = await oursAnswer(withRollups, query);
    await rollupsUsable(withRollups, false);
    const fromSeries = await oursAnswer(withRollups, query);
    const fromPlain = await oursAnswer(without, query);
    result.consistent =
      clean &&
      fromRollup.rollups.every((read) => read !== null) &&
      compareAnswers(fromRollup.answer, fromSeries.answer) === null &&
      compareAnswers(fromSeries.answer, fromPlain.answer) === null;
    return result;
  } finally {
    await dropAndClose(without);
    await dropAndClose(withRollups);
  }
}

// ---------------------------------------------------------------------------------------
// One data set
// ---------------------------------------------------------------------------------------

interface DataSetResult {
  data: { name: string; description: string; readings: number };
  verification: Verification;
  load: { model: string; readings: number; documents: number; seconds: number; how: string }[];
  rollups: { name: string; tagKeys: string[]; documents: number; bytes: number; build: BuildTime }[];
  seriesDocuments: { documents: number; bytes: number };
  baselines: { name: string; available: boolean; reason?: string }[];
  queries: QueryResult[];
  ingest: IngestResult;
}

/** The read figures of a baseline: the `$match` of its pipeline on its collection. */
const baselineReads = (model: BaselineModel, query: BenchQuery, dateTrunc: boolean) =>
  readFigures(model.db, model.collection, query.pipeline(dateTrunc)).then((figures) => ({ ...figures, pipelines: 1 }));

async function runDataSet(uri: string, client: MongoClient, data: DataSet, dateTrunc: boolean): Promise<DataSetResult> {
  log(`${data.name}: ${data.description}`);
  const verification = await verifyBulkLoad(uri, data, Math.min(options.sample, data.readings.length));
  if (verification.differences.length > 0 || verification.answers.some((answer) => !answer.agree)) {
    log(
      `${data.name}: the bulk load differs from the record path: ${[...verification.differences, ...verification.answers.filter((a) => !a.agree).map((a) => `${a.query}: ${a.difference}`)].join('; ')}`,
    );
  }

  const metric = data.readings[0]!.metric;
  const load: DataSetResult['load'] = [];
  log(`${data.name}: bulk-loading ${data.readings.length} readings into series-day documents`);
  const ours = await openOurs(uri, `bench_rollups_${data.name}_ours`);
  const loaded = await bulkLoad(ours.store, validated(data.readings), log);
  load.push({
    model: 'ours (series-day documents)',
    ...loaded,
    how: "bulk load (the folds' parts: planReadings + foldDocuments, insertMany)",
  });
  log(`${data.name}: building the rollups`);
  const specs = rollupsOf(data);
  const buildSeconds = await buildRollups(ours, metric, specs);
  const definitions = await findRollups(ours.store);
  const rollups: DataSetResult['rollups'] = [];
  for (const spec of specs) {
    const definition = definitions.find((d) => d.name === spec.name)!;
    rollups.push({ ...spec, ...(await collectionBytes(ours.db, definition.collection)), build: buildSeconds[spec.name]! });
  }
  const seriesDocuments = await collectionBytes(ours.db, CollectionName.seriesDays);

  const baselines: DataSetResult['baselines'] = [];
  const contenders: Contender[] = [
    {
      name: 'series',
      prepare: () => rollupsUsable(ours, false),
      answer: (query) => oursAnswer(ours, query),
      reads: (query) => oursReadFigures(ours, query),
    },
    {
      name: 'rollup',
      prepare: () => rollupsUsable(ours, true),
      answer: (query) => oursAnswer(ours, query),
      reads: (query) => oursReadFigures(ours, query),
    },
  ];
  const opened: BaselineModel[] = [];
  for (const [name, open] of [
    ['naive', NaiveModel.open],
    ['timeseries', TimeseriesModel.open],
  ] as const) {
    let model: BaselineModel;
    try {
      model = await open(client, `bench_rollups_${data.name}_${name}`, data);
    } catch (error) {
      baselines.push({ name, available: false, reason: `cannot be created on this server: ${(error as Error).message}` });
      continue;
    }
    baselines.push({ name, available: true });
    opened.push(model);
    log(`${data.name}: loading ${data.readings.length} readings into ${name}`);
    const begun = performance.now();
    for (const chunk of batches(model.convert(data.readings), LOAD_BATCH)) await model.write(chunk);
    load.push({
      model: name,
      readings: data.readings.length,
      documents: data.readings.length,
      seconds: (performance.now() - begun) / 1000,
      how: `insertMany, batches of ${LOAD_BATCH.toLocaleString('en-US')}`,
    });
    contenders.push({
      name,
      prepare: async () => {},
      answer: async (query) => ({
        answer: await answerQuery(model, query, dateTrunc),
        rollups: [],
      }),
      reads: (query) => baselineReads(model, query, dateTrunc),
    });
  }

  const queries = await runQueries(contenders, queriesOf(data));
  await rollupsUsable(ours, true);
  for (const model of opened) await model.db.dropDatabase();
  await dropAndClose(ours);

  log(`${data.name}: ingest through recordBatch without and with rollups`);
  const ingest = await ingestCost(
    uri,
    data,
    Math.min(options.ingest, Math.max(options.batch, data.readings.length - options.batch)),
    options.batch,
  );
  return {
    data: { name: data.name, description: data.description, readings: data.readings.length },
    verification,
    load,
    rollups,
    seriesDocuments,
    baselines,
    queries,
    ingest,
  };
}

// ---------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------

const count = format.count;
/** The three commands that took the server longest, as `update rollup_… 12.3 s`. */
const topCommands = (times: Record<string, number>) =>
  Object.entries(times)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([key, s]) => `${key} ${s >= 1 ? `${s.toFixed(1)} s` : `${format.ms(s * 1000)} ms`}`)
    .join(', ');
const speedup = (slow: number | undefined, fast: number | undefined) =>
  slow === undefined || fast === undefined ? 'n/a' : format.ratio(slow / fast);

/** Renders one data set's figures as Markdown. */
function markdown(result: DataSetResult): string {
  const lines: string[] = [];
  const v = result.verification;
  const agreeing = v.answers.filter((a) => a.agree).length;
  lines.push(`#### ${result.data.name}: ${result.data.description}`, '');
  lines.push(
    `The series-day documents of the query part were **bulk-loaded** (the parts the record path's folds write, planned per fold by the fold's \`planReadings\` and \`foldDocuments\` and inserted with \`insertMany\`), not written through \`recordBatch\` and folded. ` +
      `Checked first on the first ${count(v.readings)} readings, written both ways (the record path took ${v.recordSeconds.toFixed(1)} s for them): ` +
      `${v.differences.length === 0 ? `the ${count(v.documents)} series-day documents, the registries and the rollup documents are identical (but \`_id\`)` : `DIFFERENCES: ${v.differences.join('; ')}`}, ` +
      `${agreeing} of ${v.answers.length} answers agree${
        agreeing === v.answers.length
          ? ''
          : ` (${v.answers
              .filter((a) => !a.agree)
              .map((a) => `${a.query}: ${a.difference}`)
              .join('; ')})`
      }; ` +
      `summed \`$bsonSize\` ${count(v.bytes[0])} B recorded vs ${count(v.bytes[1])} B bulk-loaded.`,
    '',
  );
  for (const baseline of result.baselines.filter((b) => !b.available))
    lines.push(`- **${baseline.name}**: not run, ${baseline.reason}`, '');

  lines.push(
    '**Load**',
    '',
    ...table(
      ['model', 'readings', 'documents', 'seconds', 'how'],
      'lrrrl',
      result.load.map((l) => [l.model, count(l.readings), count(l.documents), l.seconds.toFixed(1), l.how]),
    ),
  );
  lines.push('', '**Rollups** (summed `$bsonSize`; build: `createRollup` + `backfillRollup` with grace 0)', '');
  lines.push(
    ...tableHead(
      ['documents of', 'tag keys', 'documents', 'bytes', 'bytes vs series-day documents', 'build s (server time of its slowest commands)'],
      'llrrrr',
    ),
  );
  const s = result.seriesDocuments;
  lines.push(`| series-day documents | all | ${count(s.documents)} | ${format.bytes(s.bytes)} | 1.00x | |`);
  for (const r of result.rollups) {
    lines.push(
      `| rollup ${r.name} | [${r.tagKeys.join(', ')}] | ${count(r.documents)} | ${format.bytes(r.bytes)} | ${(r.bytes / s.bytes).toFixed(4)}x | ${r.build.seconds.toFixed(1)} (${topCommands(r.build.commands)}) |`,
    );
  }

  const names = ['series', 'rollup', ...result.baselines.filter((b) => b.available).map((b) => b.name)];
  lines.push('', `**Queries** (ms, median of ${reps} runs, the models taking turns; speed-up of the rollup = other / rollup)`, '');
  const others = names.filter((n) => n !== 'rollup');
  lines.push(
    ...tableHead(
      ['query', 'level', 'answers', 'rollup read', ...names, ...others.map((n) => `rollup vs ${n}`)],
      `llll${'r'.repeat(names.length + others.length)}`,
    ),
  );
  for (const q of result.queries) {
    const p50 = (name: string) => q.models[name]?.p50;
    const read = [...new Set(q.models.rollup?.rollups ?? [])].join(', ');
    lines.push(
      row([
        `${q.name}: ${q.description}`,
        q.unit,
        q.agree ? 'agree' : `DIFFER (${q.difference})`,
        read,
        ...names.map((n) => format.ms(p50(n)!)),
        ...others.map((n) => (q.agree ? speedup(p50(n), p50('rollup')) : 'VOID')),
      ]),
    );
  }
  lines.push(
    '',
    "**Reads** (what the `$match` stages of each model's pipelines select; examined: `explain` executionStats of that `$match`)",
    '',
  );
  lines.push(
    ...tableHead(
      ['query', 'model', 'pipelines', 'documents', 'bytes', 'docs / keys examined', 'server time of the request (ours)'],
      'llrrrrl',
    ),
  );
  for (const q of result.queries) {
    for (const name of names) {
      const r = q.models[name]?.reads;
      if (r === undefined) continue;
      const examined =
        r.docsExamined === null && r.keysExamined === null
          ? 'n/a'
          : `${r.docsExamined === null ? 'n/a' : count(r.docsExamined)} / ${r.keysExamined === null ? 'n/a' : count(r.keysExamined)}`;
      const server = r.commands === undefined ? '' : topCommands(r.commands);
      lines.push(`| ${q.name} | ${name} | ${r.pipelines} | ${count(r.documents)} | ${format.bytes(r.bytes)} | ${examined} | ${server} |`);
    }
  }
  const i = result.ingest;
  const rollupShare = i.batches.reduce((sum, b) => sum + b.rollupWrites, 0) / i.batches.reduce((sum, b) => sum + b.with, 0);
  const registryShare = i.batches.reduce((sum, b) => sum + b.registryReads, 0) / i.batches.reduce((sum, b) => sum + b.with, 0);
  lines.push(
    '',
    `**Ingest through \`recordBatch\`** (batch ids; ${count(i.readings)} readings in ${i.batches.length} batches of ${count(i.batch)} after a warm-up batch, the two databases taking turns)`,
    '',
  );
  lines.push(
    '| rollups | readings/s without | readings/s with | ratio | median batch ratio | rollup updates, share of the time with | rollup registry reads, share | rollups consistent after |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  );
  lines.push(
    `| ${i.rollups.join(', ')} | ${format.rate(i.withoutPerSecond)} | ${format.rate(i.withPerSecond)} | ${format.ratio(i.ratio)} | ${format.ratio(i.medianRatio)} | ${(rollupShare * 100).toFixed(1)}% | ${(registryShare * 100).toFixed(1)}% | ${i.consistent ? 'yes' : 'NO'} |`,
  );
  const withMs = i.batches.reduce((sum, b) => sum + b.with, 0);
  lines.push(
    '',
    `Where the time of the batches with rollups goes (\`update\` commands, per batch; the whole batch took ${format.ms(withMs / i.batches.length)} ms):`,
    '',
  );
  lines.push(...tableHead(['documents written', 'server ms', 'share', 'documents', 'field paths', 'most paths in one update'], 'lrrrrr'));
  for (const [target, u] of Object.entries(i.updates)) {
    const n = i.batches.length;
    lines.push(
      `| ${target} | ${format.ms(u.ms / n)} | ${((u.ms / withMs) * 100).toFixed(1)}% | ${count(Math.round(u.statements / n))} | ${count(Math.round(u.paths / n))} | ${count(u.maxPaths)} |`,
    );
  }
  return lines.join('\n');
}

/** The targets, checked against the figures. */
function targets(results: DataSetResult[]): Target[] {
  const rows: Target[] = [];
  const sparse = results.find((r) => r.data.name === 'sparse');
  const ratio = (q: QueryResult, other: string) => (q.models[other]?.p50 ?? Number.NaN) / q.models.rollup!.p50;
  if (sparse) {
    const perOrigin = sparse.queries.find((q) => q.name === 'per-origin-avg-delay');
    if (perOrigin) {
      const vsSeries = ratio(perOrigin, 'series');
      const vsNaive = ratio(perOrigin, 'naive');
      rows.push({
        target: 'per-origin mean delay: rollup >= 20x faster than series-day documents',
        value: format.ratio(vsSeries),
        met: perOrigin.agree && vsSeries >= 20,
      });
      rows.push({
        target: 'per-origin mean delay: rollup >= 5x faster than naive',
        value: format.ratio(vsNaive),
        met: perOrigin.agree && vsNaive >= 5,
      });
    }
    for (const q of sparse.queries.filter((q) => q.unit === 'day')) {
      const vsSeries = ratio(q, 'series');
      rows.push({
        target: `${q.name}: rollup >= 20x faster than series-day documents`,
        value: format.ratio(vsSeries),
        met: q.agree && vsSeries >= 20,
      });
    }
  }
  for (const result of results) {
    rows.push({
      target: `${result.data.name}: ingest with rollups >= 0.7x without`,
      value: `${format.ratio(result.ingest.ratio)} (median batch ${format.ratio(result.ingest.medianRatio)})`,
      met: result.ingest.ratio >= 0.7,
    });
  }
  return rows;
}

await withBenchDatabase(async (database, client) => {
  const server = await describeServer(client, database.embedded);
  const machine = describeMachine();
  const dateTrunc = await supportsDateTrunc(client);
  log(`server: ${server}`);
  const sets: DataSet[] = [];
  if (options.data !== 'dense') sets.push(await sparseDataSet(new Date(Date.UTC(2001, 1, 1)), options.rows));
  if (options.data !== 'sparse') sets.push(denseDataSet(options.hosts, options.hours));
  const results: DataSetResult[] = [];
  for (const data of sets) results.push(await runDataSet(database.uri, client, data, dateTrunc));
  const checked = targets(results);
  const report = [
    `Server: ${server}. Machine: ${machine}. Whole run: ${(log.seconds() / 60).toFixed(1)} min.`,
    '',
    ...results.flatMap((result) => [markdown(result), '']),
    ...targetsTable(checked),
  ];
  console.log(report.join('\n'));
  const out = options.out ?? resultsPath('rollups');
  writeResults(out, { server, machine, dateTrunc, reps, options, minutes: log.seconds() / 60, results, targets: checked });
  log(`figures written to ${out}`);
  const void_ = results.some(
    (r) =>
      r.queries.some((q) => !q.agree) ||
      r.verification.differences.length > 0 ||
      r.verification.answers.some((a) => !a.agree) ||
      !r.ingest.consistent,
  );
  if (void_) {
    log('Some answers or documents differ: the benchmark is void.');
    process.exitCode = 1;
  }
});
