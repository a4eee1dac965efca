/**
 * What a write costs before and after it is folded into series-day documents, on one
 * embedded server, with journaled writes (`writeConcern {w: 1, journal: true}`) on a
 * temporary data directory on disk (removed afterwards):
 *
 * 1. Acknowledgement: batches of 1,000 readings, dense (TSBS cpu-only: 20 hosts, 10
 *    fields, every 10 s) and sparse (real flights: origin and destination tags, 2
 *    fields), written as `insertMany` of one document per reading (with the naive
 *    model's indexes) against `insertOne` of one log entry holding the whole batch,
 *    as rows and as columns; the three take turns on every batch.
 * 2. Folds: the same planned folds (`planWrites` of `--fold` readings each) applied
 *    to a collection of their own by each strategy: `$inc` upserts fenced by the fold
 *    number (today's `dayUpdate`), read-modify-replace with a compare-and-set on the
 *    fold number, and write-once parts compacted every `--compact-every` folds. Each
 *    result is checked against a plain loop over the readings.
 * 3. Tail read: an hourly pipeline over a day of dense folded documents with the
 *    not-yet-folded tail as `$documents` + `$unionWith`, against the same pipeline once
 *    everything is folded.
 * 4. Bytes per reading of a series-day document by part, for several sets of sketch
 *    levels (computed in Node with BSON's `calculateObjectSize`, no server).
 * 5. A log entry's life on the server, its columns as fields against packed in one
 *    block (`packColumns`): inserting each batch's entry, the backlog aggregation,
 *    reading every entry back (and decoding it in Node), stamping each folded; the
 *    two layouts take turns, each in a collection with the ingest log's indexes.
 *
 *   npm run bench:write-path                      # default sizes, a few minutes
 *   npm run bench:write-path -- --quick           # small sizes, under 2 minutes
 *   npm run bench:write-path -- --only fold --dense 4000 --with-inc
 *   MONGODB_URI=mongodb://host:27017 npm run bench:write-path
 *
 * Options: `--dense N`, `--sparse N` (readings), `--fold N` (readings per fold),
 * `--compact-every N` (folds), `--with-inc` (run `$inc` upserts on dense data of any
 * size), `--quick`, `--only ack|fold|tail|size|log`. Prints one Markdown table per section
 * on stdout, progress on stderr; exits with 1 when a strategy's documents or the tail
 * read's answer are not exact.
 */
import { Command, Option } from 'commander';
import {
  type AnyBulkWriteOperation,
  Binary,
  BSON,
  type Collection,
  type Db,
  type Document,
  Double,
  MongoServerError,
  ObjectId,
} from 'mongodb';
import { SlotPath } from '../../src/model/day-document.ts';
import { LAYOUT_VERSION } from '../../src/model/day-document.ts';
import type { TagMap } from '../../src/model/series.ts';
import { isEarlier, mergeStats } from '../../src/model/stats.ts';
import { DEFAULT_STATISTICS, type SlotLevel, type StatisticsSettings } from '../../src/model/statistics-settings.ts';
import { DAY_MS, floorTo } from '../../src/model/time.ts';
import { type DayWrite, dayUpdate, planWrites } from '../../src/record/plan.ts';
import { packColumns, toColumns } from '../../src/record/log-entry.ts';
import { dayDocument } from '../../src/record/rollup-plan.ts';
import type { Reading } from '../../src/record/validate.ts';
import { entryReadings, type LogEntryDocument } from '../../src/storage/ingest-log.ts';
import {
  alternating,
  batches,
  describeMachine,
  describeServer,
  format,
  generateCpu,
  median,
  type PlainReading,
  positiveInt,
  progressLog,
  sparseDataSet,
  table,
  validated,
  withBenchDatabase,
} from './harness/index.ts';

type Section = 'ack' | 'fold' | 'tail' | 'size' | 'log';

const DEFAULT_SIZES = { dense: 40_000, sparse: 20_000, fold: 10_000, compactEvery: 2 };
const QUICK_SIZES = { dense: 2_000, sparse: 4_000, fold: 1_000, compactEvery: 2 };
/** Readings per acknowledged batch. */
const BATCH = 1_000;
const DENSE_HOSTS = 20;
/** Largest dense data set the `$inc` strategy runs on without `--with-inc`. */
const INC_DENSE_MAX = 2_000;
const TAIL_SIZES = [1_000, 5_000];
const TAIL_RUNS = 7;
/** Hosts of the dense host-days whose document sizes are measured (one day each). */
const SIZE_HOSTS = 4;
const LATEST_KEPT = DEFAULT_STATISTICS.latestReadings;
const WRITE_CONCERN = { w: 1, journal: true } as const;

const command = new Command()
  .name('bench:write-path')
  .option('--dense <n>', `dense readings (default ${DEFAULT_SIZES.dense}, quick ${QUICK_SIZES.dense})`, positiveInt)
  .option('--sparse <n>', `sparse readings (default ${DEFAULT_SIZES.sparse}, quick ${QUICK_SIZES.sparse})`, positiveInt)
  .option('--fold <n>', `readings per fold (default ${DEFAULT_SIZES.fold}, quick ${QUICK_SIZES.fold})`, positiveInt)
  .option('--compact-every <n>', `folds between compactions of parts (default ${DEFAULT_SIZES.compactEvery})`, positiveInt)
  .option('--with-inc', `run $inc upserts on dense data of more than ${INC_DENSE_MAX} readings (minutes per fold)`, false)
  .option('--quick', 'small sizes', false)
  .addOption(new Option('--only <section>', 'one section').choices(['ack', 'fold', 'tail', 'size', 'log']))
  .parse();
const given = command.opts<{
  dense?: number;
  sparse?: number;
  fold?: number;
  compactEvery?: number;
  withInc: boolean;
  quick: boolean;
  only?: Section;
}>();
const sizes = given.quick ? QUICK_SIZES : DEFAULT_SIZES;
const options = {
  dense: given.dense ?? sizes.dense,
  sparse: given.sparse ?? sizes.sparse,
  fold: given.fold ?? sizes.fold,
  compactEvery: given.compactEvery ?? sizes.compactEvery,
  withInc: given.withInc,
  runs: (section: Section) => given.only === undefined || given.only === section,
};
const log = progressLog('write-path');
/** What went wrong in the checks; the run exits with 1 when any. */
const failures: string[] = [];

// ---------------------------------------------------------------- data

/** One of the two data sets: its readings and the field whose totals are checked. */
interface Data {
  name: 'dense' | 'sparse';
  readings: Reading[];
  /** Field whose day totals are checked against a plain loop. */
  field: string;
  /** Tag the naive model indexes (`{metric, tags.<entity>, time}`). */
  entityTag: string;
}

/** `count` TSBS cpu-only readings of `hosts` hosts, every 10 s from 2016-01-01 UTC, in time order. */
function denseReadings(count: number, hosts = DENSE_HOSTS): Reading[] {
  const plain: PlainReading[] = [];
  for (const chunk of generateCpu({ hosts, durationMs: Math.ceil(count / hosts) * 10_000 })) plain.push(...chunk);
  return validated(plain.slice(0, count));
}

/** The first `count` real flights of flights-3m.parquet (January 2001 on), in time order. */
async function sparseReadings(count: number): Promise<Reading[]> {
  const data = await sparseDataSet(new Date('2002-01-01T00:00:00Z'), count);
  return validated(data.readings);
}

// ---------------------------------------------------------------- series-day documents in Node

/** One slot's statistics as kept in Node: count, sum, sum of squares, min, max, first and last reading. */
interface Slot {
  n: number;
  sum: number;
  sq: number;
  min: number;
  max: number;
  first: { t: Date; v: number };
  last: { t: Date; v: number };
}

/** A series-day document as merged in Node (numbers plain; see {@link storedForm} for the stored types). */
interface SeriesDay {
  _id?: string;
  series: string;
  metric: string;
  tags: TagMap;
  tagPairs: string[];
  date: Date;
  first: Date;
  last: Date;
  v: number;
  readings: number;
  fields: Record<string, Slot>;
  hours: Record<string, { fields: Record<string, Slot>; minutes: Record<string, Record<string, Slot>> }>;
  q?: Record<string, unknown>;
  recent?: { t: Date; f: Record<string, number> }[];
  /** Fold number of the last fold applied (read-modify-replace). */
  fold?: number;
  /** Fold or compaction number that wrote the part (write-once parts). */
  f?: number;
}

/** The object at dotted `path` under `root`, created (with its parents) when missing. */
function nodeAt(root: Record<string, unknown>, path: string): Record<string, unknown> {
  let node = root;
  for (const key of path.split('.')) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  return node;
}

/** Every slot of `doc` with its path (`fields.x`, `hours.7.fields.x`, `hours.7.minutes.30.x`). */
function* slotsOf(doc: SeriesDay): Generator<[string, Slot]> {
  for (const [field, slot] of Object.entries(doc.fields)) yield [SlotPath.day(field), slot];
  for (const [hour, slots] of Object.entries(doc.hours)) {
    for (const [field, slot] of Object.entries(slots.fields)) yield [SlotPath.hour(Number(hour), field), slot];
    for (const [minute, fields] of Object.entries(slots.minutes ?? {})) {
      for (const [field, slot] of Object.entries(fields)) yield [SlotPath.minute(Number(hour), Number(minute), field), slot];
    }
  }
}

/** The series-day document of one planned write alone, as a new document would hold it. */
function documentOf(write: DayWrite): SeriesDay {
  const doc: SeriesDay = {
    series: write.series,
    metric: write.metric,
    tags: write.tags,
    tagPairs: write.tagPairs,
    date: write.date,
    first: new Date(write.first),
    last: new Date(write.last),
    v: LAYOUT_VERSION,
    readings: write.readings,
    fields: {},
    hours: {},
  };
  const root = doc as unknown as Record<string, unknown>;
  for (const [path, { stats, first, last, sketch }] of write.slots) {
    Object.assign(nodeAt(root, path), {
      ...stats,
      first: { t: new Date(first.t), v: first.v },
      last: { t: new Date(last.t), v: last.v },
    });
    if (sketch !== null) Object.assign(nodeAt(root, `q.${path}`), Object.fromEntries(sketch));
  }
  for (const [path, bins] of write.quarters) Object.assign(nodeAt(root, `q.${path}`), Object.fromEntries(bins));
  if (write.recent.length > 0) doc.recent = write.recent.map((reading) => ({ t: new Date(reading.t), f: reading.f }));
  return doc;
}

/** Adds the numbers of `from` (a tree of counts: sketches) into `into`, in place. */
function addCounts(into: Record<string, unknown>, from: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(from)) {
    if (typeof value === 'number') into[key] = ((into[key] as number | undefined) ?? 0) + value;
    else {
      into[key] ??= {};
      addCounts(into[key] as Record<string, unknown>, value as Record<string, unknown>);
    }
  }
}

/** Earlier of two stored `{t, v}` pairs in the order of `TimedValue`. */
const pairEarlier = (a: { t: Date; v: number }, b: { t: Date; v: number }) =>
  isEarlier({ t: a.t.getTime(), v: a.v }, { t: b.t.getTime(), v: b.v });

/**
 * Merges series-day document `from` into `into` (same series and day), in place:
 * statistics of every slot combined, sketches added, the newest `LATEST_KEPT` latest
 * readings kept, readings counted. Returns `into`.
 */
function mergeDocuments(into: SeriesDay, from: SeriesDay): SeriesDay {
  const root = into as unknown as Record<string, unknown>;
  for (const [path, slot] of slotsOf(from)) {
    const target = nodeAt(root, path) as unknown as Slot;
    if (target.n === undefined) {
      Object.assign(target, slot);
      continue;
    }
    mergeStats(target, slot);
    if (pairEarlier(slot.first, target.first)) target.first = slot.first;
    if (pairEarlier(target.last, slot.last)) target.last = slot.last;
  }
  if (from.q !== undefined) {
    into.q ??= {};
    addCounts(into.q, from.q);
  }
  if (from.recent !== undefined) {
    into.recent = [...(into.recent ?? []), ...from.recent].sort((a, b) => a.t.getTime() - b.t.getTime()).slice(-LATEST_KEPT);
  }
  into.readings += from.readings;
  if (from.first < into.first) into.first = from.first;
  if (from.last > into.last) into.last = from.last;
  return into;
}

/** A slot as `dayUpdate` stores it: statistics and values as BSON doubles. */
const storedSlot = (slot: Slot) => ({
  n: new Double(slot.n),
  sum: new Double(slot.sum),
  sq: new Double(slot.sq),
  min: new Double(slot.min),
  max: new Double(slot.max),
  first: { t: slot.first.t, v: new Double(slot.first.v) },
  last: { t: slot.last.t, v: new Double(slot.last.v) },
});

const storedLevel = (slots: Record<string, Slot>) =>
  Object.fromEntries(Object.entries(slots).map(([field, slot]) => [field, storedSlot(slot)]));

/** `doc` with the BSON types `dayUpdate` writes (doubles for statistics), so stored sizes match today's documents. */
function storedForm(doc: SeriesDay): Document {
  const hours = Object.fromEntries(
    Object.entries(doc.hours).map(([hour, slots]) => [
      hour,
      {
        fields: storedLevel(slots.fields),
        minutes: Object.fromEntries(Object.entries(slots.minutes ?? {}).map(([minute, fields]) => [minute, storedLevel(fields)])),
      },
    ]),
  );
  return { ...doc, fields: storedLevel(doc.fields), hours };
}

/** The deterministic `_id` of a series-day: `<series>:<day ms>`. */
const dayKey = (series: string, date: Date) => `${series}:${date.getTime()}`;

// ---------------------------------------------------------------- 1. acknowledgement

/** The readings of a batch as one log entry of rows: `{m: metric, s: series key, t: time, f: {field: value}}` each. */
function rowsEntry(batch: readonly Reading[]): Document {
  return {
    received: new Date(),
    readings: batch.map((r) => ({
      m: r.metric,
      s: r.seriesKey,
      t: new Date(r.time),
      f: Object.fromEntries(r.fields.map((x) => [x.name, x.value])),
    })),
  };
}

/**
 * The readings of a batch as one log entry of columns: the series keys once (`series`),
 * then per reading its series' index (`s`) and time (`t`), and one value array per
 * field (`fields` names them, null where a reading lacks the field).
 */
function columnsEntry(batch: readonly Reading[]): Document {
  const series: string[] = [];
  const seriesIndex = new Map<string, number>();
  const fields: string[] = [];
  const values: (number | null)[][] = [];
  const s: number[] = [];
  const t: Date[] = [];
  batch.forEach((reading, i) => {
    let index = seriesIndex.get(reading.seriesKey);
    if (index === undefined) {
      index = series.length;
      series.push(reading.seriesKey);
      seriesIndex.set(reading.seriesKey, index);
    }
    s.push(index);
    t.push(new Date(reading.time));
    for (const { name, value } of reading.fields) {
      let column = fields.indexOf(name);
      if (column === -1) {
        column = fields.length;
        fields.push(name);
        values.push(new Array<number | null>(batch.length).fill(null));
      }
      values[column]![i] = value;
    }
  });
  return { received: new Date(), series, s, t, fields, v: values };
}

/** One reading as the naive model stores it. */
const naiveDocument = (r: Reading): Document => ({
  metric: r.metric,
  tags: Object.fromEntries(r.tags.map((tag) => [tag.key, tag.value])),
  time: new Date(r.time),
  fields: Object.fromEntries(r.fields.map((x) => [x.name, x.value])),
});

/** Times the three acknowledgements of every batch of `data`, taking turns, and returns the table rows. */
async function acknowledge(db: Db, data: Data): Promise<string[][]> {
  const naive = db.collection(`ack_${data.name}_readings`);
  await naive.createIndexes([{ key: { metric: 1, [`tags.${data.entityTag}`]: 1, time: 1 } }, { key: { metric: 1, time: 1 } }]);
  const logs = db.collection(`ack_${data.name}_log`);
  const ways = [
    {
      name: 'insertMany, one document per reading',
      write: async (batch: Reading[]) => {
        const docs = batch.map(naiveDocument);
        await naive.insertMany(docs, { ordered: false });
        return docs.reduce((sum, doc) => sum + BSON.calculateObjectSize(doc), 0);
      },
    },
    { name: 'insertOne, log entry of rows', write: (batch: Reading[]) => insertEntry(logs, rowsEntry(batch)) },
    { name: 'insertOne, log entry of columns', write: (batch: Reading[]) => insertEntry(logs, columnsEntry(batch)) },
  ];
  const ms = ways.map(() => 0);
  const bytes = ways.map(() => 0);
  const all = batches(data.readings, BATCH);
  for (const [i, batch] of all.entries()) {
    for (let k = 0; k < ways.length; k++) {
      const w = (i + k) % ways.length;
      const started = performance.now();
      bytes[w]! += await ways[w]!.write(batch);
      ms[w]! += performance.now() - started;
    }
  }
  return ways.map((way, w) => [
    data.name,
    way.name,
    format.count(data.readings.length),
    format.rate(data.readings.length / (ms[w]! / 1000)),
    format.ratio(ms[0]! / ms[w]!),
    format.count(Math.round(bytes[w]! / data.readings.length)),
  ]);
}

/** Inserts one log entry; returns its BSON size in bytes. */
async function insertEntry(logs: Collection, entry: Document): Promise<number> {
  await logs.insertOne(entry);
  return BSON.calculateObjectSize(entry);
}

/** Rounds of the log-entry section; the two layouts take turns in each. */
const LOG_ROUNDS = 2;

/**
 * A log entry's life on the server for the batches of `data`, in each layout, taking
 * turns over {@link LOG_ROUNDS} rounds (a fresh collection each, with the ingest log's
 * `{fold, receivedAt}` and `{metrics, fold}` indexes): one `insertOne` per batch, one
 * backlog aggregation (`$match` unfolded, `$group` of readings), one `find` of every
 * entry decoded in Node, one `updateOne` per entry stamping it folded. The decoded
 * readings are checked against the batch's (count and the sum of `data.field`).
 * @returns table rows: data, layout, bytes per reading, then ms per entry of each step.
 */
async function logEntries(db: Db, data: Data): Promise<string[][]> {
  const layouts = [
    { name: 'columns as fields', entry: (batch: Reading[]): Document => ({ ...toColumns(batch) }) },
    {
      name: 'columns packed (packColumns)',
      entry: (batch: Reading[]): Document => ({ packed: new Binary(packColumns(toColumns(batch))) }),
    },
  ];
  const all = batches(data.readings, BATCH);
  const expected = data.readings.reduce((sum, r) => sum + (r.fields.find((f) => f.name === data.field)?.value ?? 0), 0);
  const totals = layouts.map(() => ({ bytes: 0, pack: 0, insert: 0, backlog: 0, find: 0, decode: 0, stamp: 0 }));
  for (let round = 0; round < LOG_ROUNDS; round++) {
    for (let k = 0; k < layouts.length; k++) {
      const w = (round + k) % layouts.length;
      const layout = layouts[w]!;
      const total = totals[w]!;
      const logs = db.collection<{ _id: string } & Document>(`log_${data.name}_${w}_${round}`);
      await logs.createIndexes([{ key: { fold: 1, receivedAt: 1 } }, { key: { metrics: 1, fold: 1 } }]);
      let started = performance.now();
      const entries = all.map((batch, i) => ({
        _id: `b${i}`,
        receivedAt: new Date(),
        metrics: [batch[0]!.metric],
        readings: batch.length,
        ...layout.entry(batch),
      }));
      total.pack += performance.now() - started;
      for (const entry of entries) total.bytes += BSON.calculateObjectSize(entry);
      started = performance.now();
      for (const entry of entries) await logs.insertOne(entry);
      total.insert += performance.now() - started;
      started = performance.now();
      await logs
        .aggregate([
          { $match: { fold: null } },
          { $group: { _id: null, readings: { $sum: '$readings' }, oldest: { $min: '$receivedAt' } } },
        ])
        .toArray();
      total.backlog += performance.now() - started;
      started = performance.now();
      const found = await logs.find({ fold: null }).toArray();
      total.find += performance.now() - started;
      started = performance.now();
      const readings = found.flatMap((entry) => entryReadings(entry as unknown as LogEntryDocument));
      total.decode += performance.now() - started;
      const sum = readings.reduce((acc, r) => acc + (r.fields.find((f) => f.name === data.field)?.value ?? 0), 0);
      if (readings.length !== data.readings.length || Math.abs(sum - expected) > 1e-6 * Math.max(1, Math.abs(expected))) {
        failures.push(
          `${data.name} log entries (${layout.name}): ${readings.length} readings, sum ${sum}; sent ${data.readings.length}, sum ${expected}`,
        );
      }
      started = performance.now();
      for (const entry of entries) await logs.updateOne({ _id: entry._id }, { $set: { fold: 1, foldedAt: new Date() } });
      total.stamp += performance.now() - started;
    }
  }
  const perEntry = (ms: number) => format.ms(ms / (LOG_ROUNDS * all.length));
  return layouts.map((layout, w) => {
    const total = totals[w]!;
    return [
      data.name,
      layout.name,
      format.count(Math.round(total.bytes / (LOG_ROUNDS * data.readings.length))),
      perEntry(total.pack),
      perEntry(total.insert),
      perEntry(total.backlog),
      perEntry(total.find),
      perEntry(total.decode),
      perEntry(total.stamp),
    ];
  });
}

// ---------------------------------------------------------------- 2. folds

/** What one fold strategy did: time by step in ms, and its documents' check. */
interface FoldResult {
  strategy: string;
  /** Time of the folds by step, ms. */
  fold: Record<string, number>;
  /** Time of the compactions by step, ms (write-once parts only). */
  compaction?: Record<string, number>;
  merged?: number;
  documents?: number;
  check: string;
}

const total = (steps: Record<string, number>) => Object.values(steps).reduce((sum, ms) => sum + ms, 0);

/** Adds the time `work` takes to `steps[step]`; returns what it returned. */
async function timed<T>(steps: Record<string, number>, step: string, work: () => Promise<T> | T): Promise<T> {
  const started = performance.now();
  const result = await work();
  steps[step] = (steps[step] ?? 0) + performance.now() - started;
  return result;
}

/** (a) Today's `$inc` upserts, one per series-day document, fenced by the fold number. */
async function foldWithInc(collection: Collection, plans: DayWrite[][]): Promise<Record<string, number>> {
  await collection.createIndex({ series: 1, date: 1 }, { unique: true });
  const steps: Record<string, number> = {};
  for (const [i, writes] of plans.entries()) {
    const seq = i + 1;
    const operations: AnyBulkWriteOperation[] = writes.map((write) => {
      const update = dayUpdate(write, true) as Document;
      update.$set = { fold: seq };
      return { updateOne: { filter: { series: write.series, date: write.date, fold: { $not: { $gte: seq } } }, update, upsert: true } };
    });
    await timed(steps, 'upsert', () => collection.bulkWrite(operations, { ordered: false }));
  }
  return steps;
}

/** (b) Read-modify-replace: read by `_id`, merge in Node, replace with a compare-and-set on the fold number, insert new documents. */
async function foldWithReplace(collection: Collection<SeriesDay>, plans: DayWrite[][]): Promise<Record<string, number>> {
  const steps: Record<string, number> = {};
  for (const [i, writes] of plans.entries()) {
    const seq = i + 1;
    const ids = writes.map((write) => dayKey(write.series, write.date));
    const found = await timed(steps, 'find', () => collection.find({ _id: { $in: ids } }).toArray());
    const { inserts, replaces } = await timed(steps, 'merge', () => {
      const existing = new Map(found.map((doc) => [doc._id, doc]));
      const inserts: Document[] = [];
      const replaces: AnyBulkWriteOperation[] = [];
      for (const [k, write] of writes.entries()) {
        const old = existing.get(ids[k]!);
        if (old === undefined) {
          inserts.push(storedForm({ ...documentOf(write), _id: ids[k], fold: seq }));
        } else {
          const { _id, fold, ...rest } = old;
          const merged = mergeDocuments(rest, documentOf(write));
          replaces.push({ replaceOne: { filter: { _id, fold } as Document, replacement: storedForm({ ...merged, fold: seq }) } });
        }
      }
      return { inserts, replaces };
    });
    if (inserts.length > 0) await timed(steps, 'insert', () => collection.insertMany(inserts as SeriesDay[], { ordered: false }));
    if (replaces.length > 0) {
      const result = await timed(steps, 'replace', () =>
        collection.bulkWrite(replaces as AnyBulkWriteOperation<SeriesDay>[], { ordered: false }),
      );
      if (result.matchedCount !== replaces.length)
        throw new Error(`fold ${seq}: ${replaces.length - result.matchedCount} compare-and-set replacements matched nothing`);
    }
  }
  return steps;
}

/**
 * (c) Write-once parts: every fold inserts one part per touched series-day
 * (`<series>:<day ms>:<seq>`, `f` = seq); every `compactEvery` folds and after the last
 * one, all parts of the touched days are merged into one new part per series-day and
 * the merged parts deleted by day and `f`.
 */
async function foldWithParts(
  collection: Collection<SeriesDay>,
  plans: DayWrite[][],
  compactEvery: number,
): Promise<{ fold: Record<string, number>; compaction: Record<string, number>; merged: number }> {
  await collection.createIndex({ date: 1, series: 1, f: 1 });
  const fold: Record<string, number> = {};
  const compaction: Record<string, number> = {};
  let merged = 0;
  let seq = 0;
  const touched = new Set<number>();
  for (const [i, writes] of plans.entries()) {
    seq += 1;
    const f = seq;
    const parts = writes.map((write) => {
      touched.add(write.date.getTime());
      return storedForm({ ...documentOf(write), _id: `${dayKey(write.series, write.date)}:${f}`, f });
    });
    await timed(fold, 'insert parts', () => insertOnce(collection, parts));
    if ((i + 1) % compactEvery !== 0 && i !== plans.length - 1) continue;

    seq += 1;
    const c = seq;
    const days = [...touched].map((ms) => new Date(ms));
    touched.clear();
    const found = await timed(compaction, 'read', () => collection.find({ date: { $in: days } }).toArray());
    const compacted = await timed(compaction, 'merge', () => {
      const bySeriesDay = new Map<string, SeriesDay>();
      for (const { _id, f: _, ...part } of found) {
        const key = dayKey(part.series, part.date);
        const into = bySeriesDay.get(key);
        if (into === undefined) bySeriesDay.set(key, part);
        else mergeDocuments(into, part);
      }
      return [...bySeriesDay].map(([key, doc]) => storedForm({ ...doc, _id: `${key}:${c}`, f: c }));
    });
    await timed(compaction, 'insert', () => insertOnce(collection, compacted));
    await timed(compaction, 'delete', () => collection.deleteMany({ date: { $in: days }, f: { $lt: c } }));
    merged += found.length;
  }
  return { fold, compaction, merged };
}

/** Inserts `docs`; duplicate keys (a retried fold or compaction, already applied) are not errors. */
async function insertOnce(collection: Collection<SeriesDay>, docs: Document[]): Promise<void> {
  try {
    await collection.insertMany(docs as SeriesDay[], { ordered: false });
  } catch (error) {
    const duplicateOnly = error instanceof MongoServerError && error.code === 11000;
    if (!duplicateOnly) throw error;
  }
}

/**
 * Checks the documents of `collection` against the readings: one document per
 * series-day, `readings` summing to their number, and `field`'s day count and sum of
 * every series-day equal to a plain loop (sums to 1e-9 relative).
 * @returns "exact", or what differs first.
 */
async function checkDocuments(collection: Collection, data: Data): Promise<{ check: string; documents: number }> {
  const expected = new Map<string, { n: number; sum: number }>();
  for (const reading of data.readings) {
    const value = reading.fields.find((x) => x.name === data.field)?.value;
    const key = dayKey(reading.seriesId, new Date(floorTo(reading.time, DAY_MS)));
    const totals = expected.get(key) ?? { n: 0, sum: 0 };
    expected.set(key, totals);
    if (value === undefined) continue;
    totals.n += 1;
    totals.sum += value;
  }
  const path = `fields.${data.field}`;
  const docs = await collection
    .find({}, { projection: { series: 1, date: 1, readings: 1, [`${path}.n`]: 1, [`${path}.sum`]: 1 } })
    .toArray();
  const problems: string[] = [];
  const seen = new Set<string>();
  let readings = 0;
  for (const doc of docs) {
    readings += doc.readings as number;
    const key = dayKey(doc.series as string, doc.date as Date);
    if (seen.has(key)) problems.push(`two documents for ${key}`);
    seen.add(key);
    const want = expected.get(key);
    const got = (doc.fields as Record<string, { n: number; sum: number }> | undefined)?.[data.field] ?? { n: 0, sum: 0 };
    if (want === undefined) problems.push(`unexpected ${key}`);
    else if (got.n !== want.n || Math.abs(got.sum - want.sum) > 1e-9 * Math.max(1, Math.abs(want.sum))) {
      problems.push(`${key}: ${data.field} n ${got.n} sum ${got.sum}, expected n ${want.n} sum ${want.sum}`);
    }
  }
  if (readings !== data.readings.length) problems.unshift(`readings ${readings}, expected ${data.readings.length}`);
  if (seen.size !== expected.size) problems.unshift(`${seen.size} series-days, expected ${expected.size}`);
  if (problems.length === 0) return { check: 'exact', documents: docs.length };
  failures.push(`${collection.collectionName}: ${problems[0]}`);
  return { check: `NOT exact: ${problems[0]}${problems.length > 1 ? ` (+${problems.length - 1} more)` : ''}`, documents: docs.length };
}

/** Runs the three strategies on `data` and returns the table rows. */
async function foldAll(db: Db, data: Data): Promise<string[][]> {
  const plans = batches(data.readings, options.fold).map((fold) => planWrites(fold).buckets);
  const results: FoldResult[] = [];
  const skipInc = data.name === 'dense' && data.readings.length > INC_DENSE_MAX && !options.withInc;
  if (skipInc) {
    results.push({
      strategy: '(a) $inc upsert, fenced',
      fold: {},
      check: `not run: minutes per fold on dense data on this server; --with-inc or --dense ${INC_DENSE_MAX} runs it`,
    });
  } else {
    log(`${data.name}: $inc upserts`);
    const collection = db.collection(`fold_${data.name}_inc`);
    const fold = await foldWithInc(collection, plans);
    results.push({ strategy: '(a) $inc upsert, fenced', fold, ...(await checkDocuments(collection, data)) });
  }
  log(`${data.name}: read-modify-replace`);
  const replaced = db.collection<SeriesDay>(`fold_${data.name}_replace`);
  const fold = await foldWithReplace(replaced, plans);
  results.push({ strategy: '(b) read-modify-replace', fold, ...(await checkDocuments(replaced as unknown as Collection, data)) });
  log(`${data.name}: write-once parts`);
  const parts = db.collection<SeriesDay>(`fold_${data.name}_parts`);
  const partsResult = await foldWithParts(parts, plans, options.compactEvery);
  results.push({
    strategy: `(c) write-once parts, compacted every ${options.compactEvery} folds`,
    ...partsResult,
    ...(await checkDocuments(parts as unknown as Collection, data)),
  });

  const n = data.readings.length;
  const split = (steps: Record<string, number> | undefined) =>
    steps === undefined
      ? ''
      : Object.entries(steps)
          .map(([step, ms]) => `${step} ${format.ms(ms)}`)
          .join(', ');
  return results.map((r) => {
    const ran = Object.keys(r.fold).length > 0;
    const foldMs = total(r.fold);
    const allMs = foldMs + (r.compaction ? total(r.compaction) : 0);
    return [
      data.name,
      r.strategy,
      format.count(n),
      format.count(plans.length),
      ran ? format.rate(n / (foldMs / 1000)) : '',
      ran && r.compaction ? format.rate(n / (allMs / 1000)) : '',
      split(r.fold),
      split(r.compaction),
      r.merged === undefined ? '' : format.count(r.merged),
      r.documents === undefined ? '' : format.count(r.documents),
      r.check,
    ];
  });
}

// ---------------------------------------------------------------- 3. tail read

const TAIL_FIELD = 'usage_user';

/** The hourly pipeline after its `$match`: hours flattened, then count and sum of one field per hour. */
const HOURLY: Document[] = [
  { $project: { h: { $objectToArray: '$hours' } } },
  { $unwind: '$h' },
  { $group: { _id: '$h.k', n: { $sum: `$h.v.fields.${TAIL_FIELD}.n` }, sum: { $sum: `$h.v.fields.${TAIL_FIELD}.sum` } } },
  { $sort: { _id: 1 } },
];

/** The tail planned in memory, only the paths the hourly pipeline reads: metric, date and each hour's count and sum. */
function tailDocuments(tail: readonly Reading[]): Document[] {
  return planWrites(tail).buckets.map((write) => {
    const hours: Record<string, unknown> = {};
    for (let hour = 0; hour < 24; hour++) {
      const slot = write.slots.get(SlotPath.hour(hour, TAIL_FIELD));
      if (slot !== undefined) hours[hour] = { fields: { [TAIL_FIELD]: { n: slot.stats.n, sum: slot.stats.sum } } };
    }
    return { metric: write.metric, date: write.date, hours };
  });
}

/** Inserts the folded documents of `readings` into `name`, indexed `{metric, date}`. */
async function loadFolded(db: Db, name: string, readings: readonly Reading[]): Promise<void> {
  const collection = db.collection(name);
  await collection.insertMany(planWrites(readings).buckets.map((write) => storedForm(documentOf(write))));
  await collection.createIndex({ metric: 1, date: 1 });
}

type HourRow = { _id: string; n: number; sum: number };

/** True when two hourly answers have the same hours and counts, and sums equal to 1e-9 relative. */
const sameAnswer = (a: HourRow[], b: HourRow[]) =>
  a.length === b.length &&
  a.every((x, i) => x._id === b[i]!._id && x.n === b[i]!.n && Math.abs(x.sum - b[i]!.sum) <= 1e-9 * Math.max(1, Math.abs(x.sum)));

/** Times the hourly pipeline with each tail size as `$documents` against everything folded; returns the table rows. */
async function tailReads(db: Db, readings: Reading[]): Promise<string[][]> {
  const match = { $match: { metric: 'cpu', date: new Date(floorTo(readings[readings.length - 1]!.time, DAY_MS)) } };
  await loadFolded(db, 'tail_all', readings);
  const allFolded = () =>
    db
      .collection('tail_all')
      .aggregate<HourRow>([match, ...HOURLY])
      .toArray();
  const rows: string[][] = [];
  for (const size of TAIL_SIZES.filter((tail) => tail < readings.length)) {
    log(`tail of ${size}`);
    const name = `tail_folded_${size}`;
    const tail = readings.slice(-size);
    await loadFolded(db, name, readings.slice(0, -size));
    const withTail = () =>
      db
        .aggregate<HourRow>([{ $documents: tailDocuments(tail) }, match, { $unionWith: { coll: name, pipeline: [match] } }, ...HOURLY])
        .toArray();
    const same = sameAnswer(await withTail(), await allFolded());
    if (!same) failures.push(`tail of ${size}: the answer with the tail differs from the answer after the fold`);
    const [tailMs, foldedMs] = await alternating(withTail, allFolded, TAIL_RUNS);
    rows.push([
      format.count(size),
      format.count(readings.length - size),
      format.ms(tailMs),
      format.ms(foldedMs),
      format.ratio(tailMs / foldedMs),
      same ? 'equal' : 'DIFFERENT',
    ]);
  }
  return rows;
}

// ---------------------------------------------------------------- 4. document size

/** Sketch levels whose document sizes are measured: the default and the alternatives to it. */
const SIZE_SKETCH_LEVELS: SlotLevel[][] = [
  ['day', 'hour'],
  ['day', 'hour', 'quarter'],
  ['day', 'quarter'],
  ['day', 'hour', 'minute'],
];

/** Rounds of the fold's work in Node timed per set of sketch levels (the sets taking turns). */
const PLAN_RUNS = 5;

/**
 * The fold's work in Node on `readings` for each set of sketch levels: plan the parts
 * (`planWrites`), build their documents (`dayDocument`) and serialize them to BSON, as
 * the driver does before `insertMany`. The sets take turns, {@link PLAN_RUNS} rounds after
 * a warm-up; returns the median ms of each set.
 */
function planTimes(readings: readonly Reading[], sets: readonly SlotLevel[][]): number[] {
  const times: number[][] = sets.map(() => []);
  for (let round = -1; round < PLAN_RUNS; round++) {
    sets.forEach((levels, i) => {
      const settings: StatisticsSettings = { ...DEFAULT_STATISTICS, sketchLevels: levels };
      const started = performance.now();
      for (const write of planWrites(readings, () => settings).buckets) BSON.serialize(dayDocument(write));
      if (round >= 0) times[i]!.push(performance.now() - started);
    });
  }
  return times.map(median);
}

/**
 * Bytes per reading of the series-day documents of `readings` with sketches at `levels`
 * (and the default latest readings), by part, and the fold's work in Node in readings
 * per second (`ms` for all of them, see {@link planTimes}); the table row. Documents as
 * a fold writes them (`dayDocument`), with an ObjectId `_id`.
 */
function sizeRow(label: string, readings: readonly Reading[], levels: SlotLevel[], ms: number): string[] {
  const settings: StatisticsSettings = { ...DEFAULT_STATISTICS, sketchLevels: levels };
  const docs: Document[] = planWrites(readings, () => settings).buckets.map((write) => ({ _id: new ObjectId(), ...dayDocument(write) }));
  const size = BSON.calculateObjectSize;
  const parts = { total: 0, noSketches: 0, noRecent: 0, noMinutes: 0, identity: 0 };
  for (const doc of docs) {
    const { q: _sketches, ...noSketches } = doc;
    const { recent: _recent, ...noRecent } = noSketches;
    const hours = Object.fromEntries(
      Object.entries(doc.hours as Record<string, Document>).map(([hour, slots]) => [hour, { fields: slots.fields }]),
    );
    const { fields: _fields, hours: _hours, ...identity } = noRecent;
    parts.total += size(doc);
    parts.noSketches += size(noSketches);
    parts.noRecent += size(noRecent);
    parts.noMinutes += size({ ...noRecent, hours });
    parts.identity += size(identity);
  }
  const perReading = (bytes: number) => {
    const perOne = bytes / readings.length;
    return perOne < 10 ? perOne.toFixed(1) : format.count(Math.round(perOne));
  };
  return [
    label,
    levels.join(', '),
    format.count(readings.length),
    format.count(docs.length),
    perReading(parts.noMinutes - parts.identity),
    perReading(parts.noRecent - parts.noMinutes),
    perReading(parts.total - parts.noSketches),
    perReading(parts.noSketches - parts.noRecent),
    perReading(parts.identity),
    perReading(parts.total),
    format.rate(readings.length / (ms / 1000)),
  ];
}

// ---------------------------------------------------------------- run

const day = new Date().toISOString().slice(0, 10);
const sizesLine = `dense ${format.count(options.dense)} readings (${DENSE_HOSTS} hosts, 10 fields, every 10 s), sparse ${format.count(options.sparse)} real flights, folds of ${format.count(options.fold)} readings`;

/** Prints a section: heading, the line naming date, server and machine, legend, table. */
function printSection(title: string, caption: string, legend: string, lines: string[]): void {
  console.log(`\n### ${title}\n\n_${caption}_\n\n${legend}\n\n${lines.join('\n')}`);
}

async function loadData(): Promise<Data[]> {
  log(`generating ${options.dense} dense readings, loading ${options.sparse} flights`);
  return [
    { name: 'dense', readings: denseReadings(options.dense), field: TAIL_FIELD, entityTag: 'hostname' },
    { name: 'sparse', readings: await sparseReadings(options.sparse), field: 'delay', entityTag: 'origin' },
  ];
}

console.log(`## Write path\n\n${sizesLine}.`);

if (options.runs('ack') || options.runs('fold') || options.runs('tail') || options.runs('log')) {
  const data = await loadData();
  await withBenchDatabase(
    async (database, client) => {
      const where = database.onDisk ? 'data directory on disk' : database.embedded ? 'data in memory' : 'MONGODB_URI';
      const caption = `${day}; ${await describeServer(client, database.embedded)}, ${where}, writes journaled (w: 1, j: true); ${describeMachine()}`;
      const db = client.db(`bench_write_path_${Date.now()}`);
      try {
        if (options.runs('ack')) {
          const rows: string[][] = [];
          for (const set of data) {
            log(`acknowledging ${set.name} batches`);
            rows.push(...(await acknowledge(db, set)));
          }
          printSection(
            'Acknowledging a batch of 1,000 readings',
            caption,
            'The three writes take turns on every batch. insertMany goes to a collection with the naive model\'s two indexes; the log entries to a collection with only `_id`. "vs insertMany" is its time divided by the write\'s; bytes are BSON bytes per reading of what is sent.',
            table(['data', 'write', 'readings', 'readings/s', 'vs insertMany', 'bytes/reading'], 'llrrrr', rows),
          );
        }
        if (options.runs('fold')) {
          const rows: string[][] = [];
          for (const set of data) rows.push(...(await foldAll(db, set)));
          printSection(
            'Folding planned readings into series-day documents',
            caption,
            `Every strategy applies the same folds (\`planWrites\` of ${format.count(options.fold)} readings, planned before timing) to its own collection. Times in ms by step; "with compaction" adds the compaction passes. The check compares each strategy's final documents with a plain loop over the readings: readings per document summed, and the day count and sum of \`${TAIL_FIELD}\` (dense) or \`delay\` (sparse) of every series-day.`,
            table(
              [
                'data',
                'strategy',
                'readings',
                'folds',
                'readings/s (folds)',
                'readings/s (with compaction)',
                'fold ms',
                'compaction ms',
                'parts merged',
                'documents',
                'check',
              ],
              'llrrrrllrrl',
              rows,
            ),
          );
        }
        if (options.runs('tail')) {
          const dense = data.find((set) => set.name === 'dense')!.readings;
          const rows = await tailReads(db, dense);
          printSection(
            'Reading the not-yet-folded tail with the folded documents',
            caption,
            `The hourly pipeline (\`$match\` metric and day, \`$objectToArray\` of hours, \`$unwind\`, \`$group\` by hour of count and sum of \`${TAIL_FIELD}\`) over a day of ${DENSE_HOSTS} dense hosts. "with tail": a database aggregate of \`$documents\` (the tail planned in Node with \`planWrites\` on every run, only the paths read), \`$match\`, \`$unionWith\` of the folded collection; "all folded": the same query once everything is folded. Medians of ${TAIL_RUNS} alternating runs after a warm-up each.`,
            table(['tail readings', 'folded readings', 'with tail ms', 'all folded ms', 'ratio', 'answers'], 'rrrrrl', rows),
          );
        }
        if (options.runs('log')) {
          const rows: string[][] = [];
          for (const set of data) {
            log(`log entries of ${set.name} batches`);
            rows.push(...(await logEntries(db, set)));
          }
          printSection(
            'A log entry on the server: columns as fields or packed',
            caption,
            `One entry per batch of ${format.count(BATCH)} readings; the two layouts take turns over ${LOG_ROUNDS} rounds, each in a new collection with the ingest log's two indexes. Times are ms per entry: building the entries in Node ("build", packing included), \`insertOne\` of each, one backlog aggregation over all (\`$match\` unfolded, \`$group\`), one \`find\` of all, decoding them into readings in Node, and \`updateOne\` of each to stamp it folded. Bytes are BSON bytes per reading of the entries.`,
            table(['data', 'layout', 'bytes/reading', 'build', 'insert', 'backlog', 'find', 'decode', 'stamp'], 'llrrrrrrr', rows),
          );
        }
      } finally {
        await db.dropDatabase();
      }
    },
    log,
    { onDisk: true, client: { writeConcern: WRITE_CONCERN } },
  );
}

if (options.runs('size')) {
  log('document sizes');
  const hostDays = denseReadings(SIZE_HOSTS * 8_640, SIZE_HOSTS);
  const routeDays = await sparseReadings(options.sparse);
  log('timing the fold in Node');
  const denseMs = planTimes(hostDays, SIZE_SKETCH_LEVELS);
  const sparseMs = planTimes(routeDays, SIZE_SKETCH_LEVELS);
  printSection(
    'Bytes per reading of a series-day document, by part',
    `${day}; computed in Node with BSON calculateObjectSize (no server); ${describeMachine()}`,
    'Documents as a fold writes them (`dayDocument`: statistics as doubles, sketches at the levels listed, the 50 latest readings) with an ObjectId `_id`. Day and hour statistics: `fields` and `hours.H.fields`; minute slots: `hours.H.minutes`; sketches: `q` (quarter hours: `q.hours.H.quarters.Q`); identity: `_id`, series, metric, tags, tag pairs, date, first, last, version, readings and the document overhead. "plan + BSON": the fold\'s work in Node (`planWrites`, `dayDocument`, `BSON.serialize`), median of ' +
      `${PLAN_RUNS} rounds, the sets of levels taking turns.`,
    table(
      [
        'data',
        'sketch levels',
        'readings',
        'series-days',
        'day + hour statistics',
        'minute slots',
        'sketches (q)',
        'latest readings (recent)',
        'identity',
        'total',
        'plan + BSON readings/s',
      ],
      'llrrrrrrrrr',
      [
        ...SIZE_SKETCH_LEVELS.map((levels, i) =>
          sizeRow(`dense host-days (${SIZE_HOSTS} hosts x 8,640 readings)`, hostDays, levels, denseMs[i]!),
        ),
        ...SIZE_SKETCH_LEVELS.map((levels, i) => sizeRow('sparse route-days (real flights)', routeDays, levels, sparseMs[i]!)),
      ],
    ),
  );
}

if (failures.length > 0) {
  for (const failure of failures) console.error(`not exact: ${failure}`);
  process.exitCode = 1;
}
