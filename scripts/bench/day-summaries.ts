/**
 * A prototype of day summaries, measured before they are built (docs/ingest-design.md,
 * "Next: day summaries"): one document per metric and UTC day holding, for every tag key
 * and value, that value's day statistics of each field (`n`, `sum`, `sq`, `min`, `max`),
 * and with `--sketches` its day sketch per field as the fold stores sketches (bin key
 * to count, `model/sketch.ts`). The summaries are computed here by a plain loop over the
 * flights, not by the server's code (nothing of them is built yet), inserted into a
 * collection of their own on the embedded server, and read by the pipeline a query
 * would run: the mean delay per origin over the whole range, `$objectToArray` of the
 * day's origins (values as keys) or `$unwind` of a list of `{v, ...fields}` (values as
 * a list). Every answer is checked against a plain loop's count and sum per origin.
 *
 * With `--compare`, the same flights are also bulk-loaded as today's series-day documents
 * (`bulkLoad`: the parts the folds would write) and the same question is asked of the
 * query engine, without a time limit (through the API it answers `QUERY_TIMEOUT` for a
 * month on this server), so the two are measured in one run. That takes minutes for a
 * month: `--days 7` keeps it short.
 *
 *   npm run bench:day-summaries                           # January 2001 (31 days), summaries only, about a minute
 *   npm run bench:day-summaries -- --days 7 --compare     # a week, also today's documents through the engine
 *   npm run bench:day-summaries -- --compare --reps 3     # the month both ways (several minutes)
 */
import { Command } from 'commander';
import type { Document } from 'mongodb';
import { QueryEngine } from '../../src/engine/engine.ts';
import { parseAggregateQuery } from '../../src/engine/query.ts';
import { addToSketch, type SketchBins } from '../../src/model/sketch.ts';
import { openStore } from '../../src/storage/store.ts';
import {
  benchDatabase,
  bulkLoad,
  connect,
  describeMachine,
  describeServer,
  format,
  collectionBytes,
  positiveInt,
  progressLog,
  sparseDataSet,
  table,
  validated,
  warmedRuns,
} from './harness/index.ts';

const options = new Command()
  .name('bench:day-summaries')
  .option('--days <n>', 'days of flights from 2001-01-01 (1 to 31)', positiveInt, 31)
  .option('--reps <n>', 'timed runs of each read (the median is reported)', positiveInt, 5)
  .option('--compare', "also bulk-load today's series-day documents and ask the query engine")
  .parse()
  .opts<{ days: number; reps: number; compare?: boolean }>();
if (options.days > 31) throw new Error('--days: at most 31 (January 2001)');

const DAY = 86_400_000;
const FROM = Date.UTC(2001, 0, 1);
const TO = FROM + options.days * DAY;
const KEYS = ['origin', 'destination'] as const;
const FIELDS = ['delay', 'distance'] as const;
const log = progressLog('bench:day-summaries');

/** A value's day statistics of one field, as series-day documents keep them (layout version 2 without first and last). */
interface DayStats {
  n: number;
  sum: number;
  sq: number;
  min: number;
  max: number;
}

const addStats = (stats: DayStats | undefined, value: number): DayStats =>
  stats === undefined
    ? { n: 1, sum: value, sq: value * value, min: value, max: value }
    : {
        n: stats.n + 1,
        sum: stats.sum + value,
        sq: stats.sq + value * value,
        min: Math.min(stats.min, value),
        max: Math.max(stats.max, value),
      };

/** One tag value's entry of a day: statistics and sketch per field. */
interface ValueEntry {
  stats: Record<string, DayStats>;
  sketches: Record<string, SketchBins>;
}

const data = await sparseDataSet(new Date(TO));
log(`${data.readings.length.toLocaleString('en-US')} flights of ${options.days} days read`);

// The plain loop: count and sum of delay per origin, and the summaries' contents per day.
const exact = new Map<string, { count: number; sum: number }>();
const days = new Map<number, Map<string, Map<string, ValueEntry>>>();
for (const reading of data.readings) {
  const origin = reading.tags.find((tag) => tag.key === 'origin')!.value;
  const total = exact.get(origin) ?? { count: 0, sum: 0 };
  total.count += 1;
  total.sum += reading.fields.delay!;
  exact.set(origin, total);
  const day = reading.time - (reading.time % DAY);
  let keys = days.get(day);
  if (keys === undefined) {
    keys = new Map(KEYS.map((key) => [key, new Map()]));
    days.set(day, keys);
  }
  for (const key of KEYS) {
    const value = reading.tags.find((tag) => tag.key === key)!.value;
    const values = keys.get(key)!;
    let entry = values.get(value);
    if (entry === undefined) {
      entry = { stats: {}, sketches: {} };
      values.set(value, entry);
    }
    for (const field of FIELDS) {
      entry.stats[field] = addStats(entry.stats[field], reading.fields[field]!);
      entry.sketches[field] ??= new Map();
      addToSketch(entry.sketches[field], reading.fields[field]!);
    }
  }
}

/** How a summary document lays out a key's values, and the pipeline that reads it. */
interface Shape {
  name: string;
  document(day: number, keys: Map<string, Map<string, ValueEntry>>): Document;
  pipeline: Document[];
}

const byValue = (values: Map<string, ValueEntry>, pick: (entry: ValueEntry) => unknown) =>
  Object.fromEntries([...values].map(([value, entry]) => [value, pick(entry)]));
const sketchObject = (entry: ValueEntry) => Object.fromEntries(FIELDS.map((field) => [field, Object.fromEntries(entry.sketches[field]!)]));
const identity = (day: number) => ({ _id: `flights:${day}:1`, metric: 'flights', date: new Date(day), f: 1 });
const match = { $match: { metric: 'flights', date: { $gte: new Date(FROM), $lt: new Date(TO) } } };
const objectPipeline = [
  match,
  { $project: { _id: 0, e: { $objectToArray: '$k.origin' } } },
  { $unwind: '$e' },
  { $group: { _id: '$e.k', count: { $sum: '$e.v.delay.n' }, sum: { $sum: '$e.v.delay.sum' } } },
];

const shapes: Shape[] = [
  {
    name: 'values as keys',
    document: (day, keys) => ({
      ...identity(day),
      k: Object.fromEntries(KEYS.map((key) => [key, byValue(keys.get(key)!, (e) => e.stats)])),
    }),
    pipeline: objectPipeline,
  },
  {
    name: 'values as a list',
    document: (day, keys) => ({
      ...identity(day),
      k: Object.fromEntries(KEYS.map((key) => [key, [...keys.get(key)!].map(([v, entry]) => ({ v, ...entry.stats }))])),
    }),
    pipeline: [
      match,
      { $project: { _id: 0, e: '$k.origin' } },
      { $unwind: '$e' },
      { $group: { _id: '$e.v', count: { $sum: '$e.delay.n' }, sum: { $sum: '$e.delay.sum' } } },
    ],
  },
  {
    name: 'values as keys, with day sketches',
    document: (day, keys) => ({
      ...identity(day),
      k: Object.fromEntries(KEYS.map((key) => [key, byValue(keys.get(key)!, (e) => e.stats)])),
      q: Object.fromEntries(KEYS.map((key) => [key, byValue(keys.get(key)!, sketchObject)])),
    }),
    pipeline: objectPipeline,
  },
];

/** Throws unless `rows` ({_id: origin, count, sum}) equal the plain loop's. */
function checkAnswer(what: string, rows: { origin: string; count: number; sum: number }[]): void {
  const wrong = rows.filter((row) => {
    const total = exact.get(row.origin);
    return total === undefined || total.count !== row.count || Math.abs(total.sum - row.sum) > 1e-6 * Math.max(1, Math.abs(total.sum));
  });
  if (rows.length !== exact.size || wrong.length > 0) {
    throw new Error(`${what}: ${rows.length} origins against ${exact.size}, ${wrong.length} differ from the plain loop`);
  }
}

const rows: (string | number)[][] = [];

/**
 * Times `read` (a warm-up, then `--reps` runs: `warmedRuns`), checks the last answer
 * against the plain loop ({@link checkAnswer}) and adds the row `label` to the table:
 * the documents stored and their mean BSON size (`stored`), the load's and the median
 * read's milliseconds.
 * @throws Error when the answer differs from the plain loop's.
 */
async function measureRead(
  label: string,
  read: () => Promise<{ origin: string; count: number; sum: number }[]>,
  stored: { documents: number; bytes: number },
  loadMs: number,
): Promise<void> {
  const time = await warmedRuns(read, options.reps);
  checkAnswer(label, time.result);
  log(`${label}: ${time.ms.map((ms) => Math.round(ms)).join(', ')} ms`);
  rows.push([
    label,
    format.count(stored.documents),
    format.count(Math.round(stored.bytes / Math.max(1, stored.documents))),
    format.ms(loadMs),
    format.ms(time.median),
  ]);
}

const database = await benchDatabase(log);
const client = await connect(database.uri);
const db = client.db(`bench_summaries_${Date.now()}`);
try {
  for (const [index, shape] of shapes.entries()) {
    const collection = db.collection(`summaries_${index}`);
    await collection.createIndex({ metric: 1, date: 1 });
    const documents = [...days].map(([day, keys]) => shape.document(day, keys));
    const started = performance.now();
    await collection.insertMany(documents);
    const insertMs = performance.now() - started;
    const read = async () =>
      (await collection.aggregate<{ _id: string; count: number; sum: number }>(shape.pipeline).toArray()).map((row) => ({
        origin: row._id,
        count: row.count,
        sum: row.sum,
      }));
    await measureRead(`day summaries, ${shape.name}`, read, await collectionBytes(db, collection.collectionName), insertMs);
  }
  if (options.compare) {
    const store = await openStore(database.uri, `bench_summaries_days_${Date.now()}`, {
      ingest: { maxTailReadings: 0, maxTailSeconds: 0 },
    });
    try {
      const load = await bulkLoad(store, validated(data.readings), log);
      const query = parseAggregateQuery({
        metric: 'flights',
        field: 'delay',
        from: new Date(FROM).toISOString(),
        to: new Date(TO).toISOString(),
        groupBy: ['origin'],
      } as never);
      // A new engine per read, as the server makes one per request (its loaders keep what
      // they read for the engine's life); no time limit: the question is how long the
      // read takes, not whether it fits the API's.
      const limits = { maxBuckets: 1_000_000, maxSeries: 1_000_000, maxFilterValues: 1000 };
      const read = async () =>
        (await new QueryEngine(store, limits, { maxTimeMS: 3_600_000 }).aggregate(query)).map((group) => ({
          origin: group.tags.find((tag) => tag.key === 'origin')!.value,
          count: group.count,
          sum: group.sum ?? 0,
        }));
      const stored = await collectionBytes(store.db, store.seriesDays.collectionName);
      await measureRead("series-day documents (today's, bulk-loaded), the query engine", read, stored, load.seconds * 1000);
    } finally {
      await store.db.dropDatabase().catch(() => undefined);
      await store.client.close();
    }
  }
  console.log(`\n## Mean delay per origin over ${options.days} days: day summaries (a prototype)\n`);
  console.log(
    `_${new Date().toISOString().slice(0, 10)}; ${await describeServer(client, database.embedded)}; ${describeMachine()}._ ` +
      `${data.readings.length.toLocaleString('en-US')} flights from ${new Date(FROM).toISOString().slice(0, 10)} for ${options.days} days, ` +
      `${exact.size} origins; medians of ${options.reps} runs, every answer equal to a plain loop's count and sum per origin.\n`,
  );
  for (const line of table(['documents read', 'documents', 'bytes each', 'insert (load) ms', 'per-origin mean ms'], 'lrrrr', rows)) {
    console.log(line);
  }
} finally {
  await db.dropDatabase().catch(() => undefined);
  await client.close();
  await database.stop();
}
