/**
 * Conformance of the database server with exactly the operations the design relies on.
 * Run against the embedded SecantusDB by default and against MONGODB_URI when set, so
 * a server that lacks one of them fails here first, with a minimal case.
 */
import { Double, Long, MongoBulkWriteError, type CommandStartedEvent, type Collection, type Document, type UpdateFilter } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRANULARITY_NAMES } from '../../src/query/granularity.ts';
import { backfillRollup } from '../../src/storage/rollups.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';

let t: TestDatabase;
let coll: Collection<Document>;

beforeAll(async () => {
  t = await openTestDatabase('conformance');
  coll = t.db.collection('c');
  await coll.createIndex({ series: 1, date: 1 }, { unique: true });
});
afterAll(async () => t.drop());

const day = new Date('2001-01-05T00:00:00Z');

describe('updates', () => {
  it('upserts with $inc/$min/$max/$setOnInsert create nested documents with numeric keys', async () => {
    const update = (x: number) => ({
      $setOnInsert: { tags: { origin: 'LAS' } },
      $inc: { 'hours.7.minutes.30.delay.n': new Double(1), 'hours.7.minutes.30.delay.sum': new Double(x) },
      $min: { 'hours.7.minutes.30.delay.min': new Double(x), first: new Date(day.getTime() + 1000 * x) },
      $max: { 'hours.7.minutes.30.delay.max': new Double(x), last: new Date(day.getTime() + 1000 * x) },
    });
    const first = await coll.updateOne({ series: 'a', date: day }, update(5), { upsert: true });
    expect(first.upsertedCount).toBe(1);
    const second = await coll.updateOne({ series: 'a', date: day }, update(-3), { upsert: true });
    expect([second.matchedCount, second.upsertedCount]).toEqual([1, 0]);
    const doc = await coll.findOne({ series: 'a', date: day }, { promoteValues: false });
    expect(doc?.tags).toEqual({ origin: 'LAS' });
    const slot = doc?.hours['7'].minutes['30'].delay;
    expect(Array.isArray(doc?.hours)).toBe(false);
    expect(slot.n).toBeInstanceOf(Double);
    expect([slot.n.value, slot.sum.value, slot.min.value, slot.max.value]).toEqual([2, 2, -3, 5]);
    expect(doc?.first).toEqual(new Date(day.getTime() - 3000));
    expect(doc?.last).toEqual(new Date(day.getTime() + 5000));
  });

  it('$min/$max treat a pre-allocated +Infinity/-Infinity slot as empty', async () => {
    await coll.insertOne({ series: 'skeleton', date: day, s: { n: 0.5, min: Infinity, max: -Infinity } });
    await coll.updateOne({ series: 'skeleton', date: day }, { $min: { 's.min': 7 }, $max: { 's.max': 7 } });
    const doc = await coll.findOne({ series: 'skeleton' });
    expect([doc?.s.min, doc?.s.max]).toEqual([7, 7]);
  });

  it('a unique compound index rejects a second document with error 11000', async () => {
    await coll.insertOne({ series: 'dup', date: day });
    await expect(coll.insertOne({ series: 'dup', date: day })).rejects.toMatchObject({ code: 11000 });
    expect(await coll.countDocuments({ series: 'dup' })).toBe(1);
  });

  it('concurrent upserts of one new key leave exactly one document with every increment', async () => {
    const writers = 30;
    const results = await Promise.allSettled(
      Array.from({ length: writers }, () => coll.updateOne({ series: 'race', date: day }, { $inc: { n: 1 } }, { upsert: true })),
    );
    const failed = results.filter((r) => r.status === 'rejected');
    for (const r of failed) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 11000 });
    // Retry what lost the race: the document exists now, so the retry matches it.
    for (let i = 0; i < failed.length; i++) await coll.updateOne({ series: 'race', date: day }, { $inc: { n: 1 } });
    const docs = await coll.find({ series: 'race' }).toArray();
    expect(docs).toHaveLength(1);
    expect(docs[0]?.n).toBe(writers);
  });

  it('an unordered bulkWrite applies every operation it can and reports each failure by index', async () => {
    await coll.insertOne({ series: 'bulk-existing', date: day });
    const error = await coll
      .bulkWrite(
        [
          { updateOne: { filter: { series: 'bulk-1', date: day }, update: { $inc: { n: 1 } }, upsert: true } },
          { insertOne: { document: { series: 'bulk-existing', date: day } } },
          { updateOne: { filter: { series: 'bulk-2', date: day }, update: { $inc: { n: 2 } }, upsert: true } },
        ],
        { ordered: false },
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MongoBulkWriteError);
    const bulkError = error as MongoBulkWriteError;
    const writeErrors = Array.isArray(bulkError.writeErrors) ? bulkError.writeErrors : [bulkError.writeErrors];
    expect(writeErrors.map((w) => [w.index, w.code])).toEqual([[1, 11000]]);
    expect(await coll.countDocuments({ series: { $in: ['bulk-1', 'bulk-2'] } })).toBe(2);
  });

  it('an unordered bulkWrite of upserts reports matched and upserted counts', async () => {
    const ops = ['bw-1', 'bw-2', 'bw-1'].map((series) => ({
      updateOne: { filter: { series, date: day }, update: { $inc: { n: 1 } }, upsert: true },
    }));
    const result = await coll.bulkWrite(ops, { ordered: false });
    expect(result.upsertedCount + result.matchedCount).toBe(3);
    const docs = await coll
      .find({ series: { $in: ['bw-1', 'bw-2'] } })
      .sort({ series: 1 })
      .toArray();
    expect(docs.map((d) => d.n)).toEqual([2, 1]);
  });

  it('insertMany unordered inserts the rest past a duplicate', async () => {
    const error = await coll
      .insertMany(
        [
          { series: 'im', date: day },
          { series: 'im', date: day },
          { series: 'im2', date: day },
        ],
        { ordered: false },
      )
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 11000 });
    expect(await coll.countDocuments({ series: { $in: ['im', 'im2'] } })).toBe(2);
  });
});

describe('aggregation', () => {
  const agg = { coll: () => t.db.collection('agg') };

  beforeAll(async () => {
    await agg.coll().insertMany([
      {
        series: 'x',
        tags: { origin: 'LAS' },
        date: new Date('2001-01-31T00:00:00Z'),
        hours: { '0': { minutes: { '5': { d: { n: 1, sum: 4 } } } }, '23': { minutes: { '59': { d: { n: 2, sum: 6 } } } } },
      },
      {
        series: 'y',
        tags: { origin: 'PHX' },
        date: new Date('2001-02-01T00:00:00Z'),
        hours: { '10': { minutes: { '0': { d: { n: 3, sum: 9 } } } } },
      },
    ]);
  });

  it('$objectToArray + $unwind + $toInt + millisecond arithmetic flatten nested hour/minute objects', async () => {
    const rows = await agg
      .coll()
      .aggregate([
        { $match: { series: { $in: ['x', 'y'] }, date: { $gte: new Date('2001-01-01'), $lt: new Date('2001-03-01') } } },
        { $project: { _id: 0, date: 1, origin: '$tags.origin', hour: { $objectToArray: '$hours' } } },
        { $unwind: '$hour' },
        { $project: { date: 1, origin: 1, hourIndex: { $toInt: '$hour.k' }, minute: { $objectToArray: '$hour.v.minutes' } } },
        { $unwind: '$minute' },
        {
          $project: {
            origin: 1,
            // In ms, then a date: date + number is missing on some servers (the Rust SecantusDB).
            time: {
              $toDate: {
                $add: [{ $toLong: '$date' }, { $multiply: ['$hourIndex', 3_600_000] }, { $multiply: [{ $toInt: '$minute.k' }, 60_000] }],
              },
            },
            x: '$minute.v.d',
          },
        },
        { $match: { time: { $gte: new Date('2001-01-31T00:05:00Z') }, 'x.n': { $gt: 0 } } },
        {
          $group: {
            _id: {
              t: { $dateFromParts: { year: { $year: '$time' }, month: { $month: '$time' } } },
              g: { origin: '$origin' },
            },
            n: { $sum: '$x.n' },
            sum: { $sum: '$x.sum' },
          },
        },
        { $sort: { '_id.t': 1 } },
      ])
      .toArray();
    expect(rows).toEqual([
      { _id: { t: new Date('2001-01-01T00:00:00Z'), g: { origin: 'LAS' } }, n: 3, sum: 10 },
      { _id: { t: new Date('2001-02-01T00:00:00Z'), g: { origin: 'PHX' } }, n: 3, sum: 9 },
    ]);
  });

  it('$toLong/$mod/$subtract/$toDate floor a date to a fixed width and $unionWith appends a second pipeline', async () => {
    const rows = await agg
      .coll()
      .aggregate([
        { $match: { series: 'x' } },
        {
          $project: {
            _id: 0,
            t: {
              $toDate: {
                $let: {
                  vars: { t: { $toLong: '$date' } },
                  in: { $subtract: ['$$t', { $mod: [{ $add: ['$$t', 3 * 86_400_000] }, 7 * 86_400_000] }] },
                },
              },
            },
          },
        },
        { $unionWith: { coll: 'agg', pipeline: [{ $match: { series: 'y' } }, { $project: { _id: 0, t: '$date' } }] } },
        { $group: { _id: '$t', c: { $sum: 1 } } },
        { $sort: { _id: 1 } },
      ])
      .toArray();
    // 2001-01-31 is a Wednesday: its ISO week starts on Monday 2001-01-29.
    expect(rows).toEqual([
      { _id: new Date('2001-01-29T00:00:00Z'), c: 1 },
      { _id: new Date('2001-02-01T00:00:00Z'), c: 1 },
    ]);
  });

  it('$group accumulates $sum/$min/$max and missing groups by key come out as absent fields', async () => {
    const rows = await agg
      .coll()
      .aggregate([
        { $project: { g: { origin: '$tags.origin', nope: '$tags.nope' } } },
        { $group: { _id: '$g', c: { $sum: 1 } } },
        { $sort: { '_id.origin': 1 } },
      ])
      .toArray();
    expect(rows).toEqual([
      { _id: { origin: 'LAS' }, c: 1 },
      { _id: { origin: 'PHX' }, c: 1 },
    ]);
  });

  it('millisecond arithmetic in place of date arithmetic: $toLong, $mod, $let, $cond, $toDate of a 64-bit integer, $dateTrunc without timezone', async () => {
    const t = { $toLong: '$date' };
    const rows = await agg
      .coll()
      .aggregate([
        { $match: { series: 'x' } },
        {
          $project: {
            _id: 0,
            ms: t,
            // New York (-05:00) day start: t - ((t + 68,400,000) mod 86,400,000) = 2001-01-30T05:00Z.
            nyDay: {
              $toDate: { $let: { vars: { t }, in: { $subtract: ['$$t', { $mod: [{ $add: ['$$t', 68_400_000] }, 86_400_000] }] } } },
            },
            // A span tree: before 2001-01-31T00:00Z one offset, from then another.
            branch: { $let: { vars: { t }, in: { $cond: [{ $lt: ['$$t', 980_899_200_000] }, 'before', 'after'] } } },
            constant: { $toDate: Long.fromNumber(5) },
            month: { $dateTrunc: { date: '$date', unit: 'month' } },
            quarter: { $dateTrunc: { date: '$date', unit: 'quarter' } },
            year: { $dateTrunc: { date: '$date', unit: 'year' } },
            sundayWeek: { $dateTrunc: { date: '$date', unit: 'week', startOfWeek: 'sunday' } },
            // The local date of Kathmandu (+05:45) as a UTC date, truncated to its month, back to UTC.
            kathmanduMonth: {
              $toDate: {
                $subtract: [{ $toLong: { $dateTrunc: { date: { $toDate: { $add: [t, 20_700_000] } }, unit: 'month' } } }, 20_700_000],
              },
            },
            lazy: { $cond: [true, 'taken', { $toInt: 'not a number' }] },
          },
        },
      ])
      .toArray();
    expect(rows).toEqual([
      {
        ms: 980_899_200_000,
        nyDay: new Date('2001-01-30T05:00:00Z'),
        branch: 'after',
        constant: new Date(5),
        month: new Date('2001-01-01T00:00:00Z'),
        quarter: new Date('2001-01-01T00:00:00Z'),
        year: new Date('2001-01-01T00:00:00Z'),
        sundayWeek: new Date('2001-01-28T00:00:00Z'),
        kathmanduMonth: new Date('2000-12-31T18:15:00Z'),
        lazy: 'taken',
      },
    ]);
  });

  it('slot statistics merged by $sum/$min/$max of paths and of $map over $objectToArray/$filter, and $set of a group key', async () => {
    const rows = await agg
      .coll()
      .aggregate([
        { $match: { series: { $in: ['x', 'y'] } } },
        {
          $project: {
            _id: 0,
            series: 1,
            // Missing hours are missing values, skipped by $sum and $min.
            byPath: { $sum: ['$hours.0.minutes.5.d.n', '$hours.23.minutes.59.d.n', '$hours.7.minutes.0.d.n'] },
            minByPath: { $min: ['$hours.0.minutes.5.d.sum', '$hours.23.minutes.59.d.sum', '$hours.7.minutes.0.d.sum'] },
            late: {
              $let: {
                vars: {
                  m: {
                    $filter: {
                      input: { $objectToArray: { $ifNull: ['$hours.23.minutes', {}] } },
                      as: 'm',
                      cond: { $gte: [{ $toInt: '$$m.k' }, 30] },
                    },
                  },
                },
                in: { $sum: { $map: { input: '$$m', as: 'e', in: '$$e.v.d.n' } } },
              },
            },
            hoursAfter5: { $size: { $filter: { input: { $objectToArray: '$hours' }, as: 'h', cond: { $gte: [{ $toInt: '$$h.k' }, 5] } } } },
          },
        },
        {
          $group: {
            // A constant as `$literal`: MongoDB (and the Rust SecantusDB) refuse a bare number in an object `_id` (code 17390).
            _id: { t: { $literal: Long.fromNumber(980_899_200_000) }, g: '$series' },
            n: { $sum: '$byPath' },
            min: { $min: '$minByPath' },
            late: { $sum: '$late' },
            hours: { $sum: '$hoursAfter5' },
          },
        },
        { $set: { '_id.t': { $toDate: '$_id.t' } } },
        { $sort: { '_id.g': 1 } },
      ])
      .toArray();
    expect(rows).toEqual([
      { _id: { t: new Date('2001-01-31T00:00:00Z'), g: 'x' }, n: 3, min: 4, late: 2, hours: 1 },
      { _id: { t: new Date('2001-01-31T00:00:00Z'), g: 'y' }, n: 0, min: null, late: 0, hours: 1 },
    ]);
  });

  it('distinct and sorted find with limit answer registry lookups', async () => {
    expect((await agg.coll().distinct('tags.origin', {})).sort()).toEqual(['LAS', 'PHX']);
    const last = await agg
      .coll()
      .find({}, { sort: { date: -1 }, limit: 1, projection: { series: 1 } })
      .toArray();
    expect(last.map((d) => d.series)).toEqual(['y']);
  });
});

describe('first/last pairs, sketches and latest readings', () => {
  const pair = (iso: string, v: number) => ({ t: new Date(iso), v: new Double(v) });
  let c: Collection<{ _id: string } & Document>;
  beforeAll(async () => {
    c = t.db.collection('pairs');
  });

  it('$min/$max of {t, v} pairs compare by time, then value, in updates', async () => {
    const update = (first: Document, last: Document) => ({ $min: { 'f.first': first }, $max: { 'f.last': last } });
    await c.updateOne({ _id: 'a' }, update(pair('2001-01-05T10:00Z', 5), pair('2001-01-05T10:00Z', 5)), {
      upsert: true,
    });
    await c.updateOne({ _id: 'a' }, update(pair('2001-01-05T09:00Z', 7), pair('2001-01-05T11:00Z', 1)));
    // Ties at one time: the smaller value stays first, the larger one becomes last.
    await c.updateOne({ _id: 'a' }, update(pair('2001-01-05T09:00Z', 6), pair('2001-01-05T11:00Z', 3)));
    await c.updateOne({ _id: 'a' }, update(pair('2001-01-05T09:00Z', 8), pair('2001-01-05T11:00Z', 2)));
    const doc = await c.findOne({ _id: 'a' });
    expect(doc?.f).toEqual({ first: { t: new Date('2001-01-05T09:00Z'), v: 6 }, last: { t: new Date('2001-01-05T11:00Z'), v: 3 } });
  });

  it('$min/$max accumulators and expressions over pairs, skipping missing ones', async () => {
    await c.insertMany([
      { _id: 'b1', g: 1, p: pair('2001-01-06T08:00Z', 4) },
      { _id: 'b2', g: 1, p: pair('2001-01-06T07:00Z', 9) },
      { _id: 'b3', g: 1 },
    ]);
    const [row] = await c
      .aggregate([
        { $match: { g: 1 } },
        {
          $group: { _id: null, first: { $min: '$p' }, last: { $max: '$p' }, lt: { $push: { $lt: ['$p', pair('2001-01-06T07:30Z', 0)] } } },
        },
      ])
      .toArray();
    expect(row).toMatchObject({ first: { t: new Date('2001-01-06T07:00Z'), v: 9 }, last: { t: new Date('2001-01-06T08:00Z'), v: 4 } });
    const [expression] = await c
      .aggregate([{ $match: { _id: 'b1' } }, { $project: { m: { $min: ['$p', pair('2001-01-06T08:00Z', 3), '$missing'] } } }])
      .toArray();
    expect(expression?.m).toEqual({ t: new Date('2001-01-06T08:00Z'), v: 3 });
  });

  it('$inc creates sketch bins with signed keys, $objectToArray lists them for $unwind and $group', async () => {
    await c.updateOne(
      { _id: 's1' },
      { $inc: { 'q.hours.7.fields.x.p12': 2, 'q.hours.7.fields.x.m-3': 1, 'q.hours.7.fields.x.z': 1 } },
      { upsert: true },
    );
    await c.updateOne({ _id: 's2' }, { $inc: { 'q.hours.7.fields.x.p12': 5, 'q.hours.7.fields.x.p-40': 1 } }, { upsert: true });
    const rows = await c
      .aggregate([
        { $match: { _id: { $in: ['s1', 's2'] } } },
        { $project: { b: { $objectToArray: { $ifNull: ['$q.hours.7.fields.x', {}] } } } },
        { $unwind: '$b' },
        { $group: { _id: '$b.k', c: { $sum: '$b.v' } } },
        { $sort: { _id: 1 } },
      ])
      .toArray();
    expect(rows).toEqual([
      { _id: 'm-3', c: 1 },
      { _id: 'p-40', c: 1 },
      { _id: 'p12', c: 7 },
      { _id: 'z', c: 1 },
    ]);
  });

  it('$push with $each, $sort and $slice keeps the newest readings in time order', async () => {
    const reading = (iso: string, x: number) => ({ t: new Date(iso), f: { x } });
    const push = (readings: Document[]) =>
      ({ $push: { recent: { $each: readings, $sort: { t: 1 }, $slice: -3 } } }) as unknown as UpdateFilter<{ _id: string } & Document>;
    await c.updateOne({ _id: 'r' }, push([reading('2001-01-07T10:00Z', 1)]), { upsert: true });
    await c.updateOne(
      { _id: 'r' },
      push([reading('2001-01-07T12:00Z', 2), reading('2001-01-07T08:00Z', 3), reading('2001-01-07T11:00Z', 4)]),
    );
    const doc = await c.findOne({ _id: 'r' });
    expect(doc?.recent.map((entry: { f: { x: number } }) => entry.f.x)).toEqual([1, 4, 2]);
  });
});

/**
 * Every operator (stage, expression, accumulator, query operator) a pipeline of the
 * engine may use, with the MongoDB version that introduced it (MongoDB Manual, each
 * operator's page: "New in version …"; the aggregation framework came in 2.2). The
 * pipelines must run on MongoDB 5.0 and later and on wire-compatible servers, so an
 * operator newer than 5.0, or one not listed here, fails the test below until it is
 * looked up and listed.
 */
const OPERATORS: Record<string, string> = {
  // Stages.
  $match: '2.2',
  $project: '2.2',
  $group: '2.2',
  $unwind: '2.2',
  $sort: '2.2',
  $limit: '2.2',
  $addFields: '3.4',
  $replaceRoot: '3.4',
  $count: '3.4',
  $set: '4.2',
  $unionWith: '4.4',
  $literal: '2.2',
  // Query operators (in $match), and the comparison and logical expressions of the same name.
  $and: '2.2',
  $or: '2.2',
  $in: '2.2',
  $gt: '2.2',
  $gte: '2.2',
  $lt: '2.2',
  $eq: '2.2',
  $not: '2.2',
  $nor: '2.2',
  // Accumulators, and the expressions of the same name (over an array: 3.2).
  $sum: '3.2',
  $min: '3.2',
  $max: '3.2',
  $push: '2.2',
  // Expressions.
  $add: '2.2',
  $subtract: '2.2',
  $multiply: '2.2',
  $divide: '2.2',
  $mod: '2.2',
  $cond: '2.2',
  $ifNull: '2.2',
  $let: '2.6',
  $map: '2.6',
  $filter: '3.2',
  $concatArrays: '3.2',
  $sqrt: '3.2',
  $reduce: '3.4',
  $type: '3.4',
  // Documents in the raw form (`SeriesDayDocument.r`): the test of the form, a field's value, a count of readings.
  $isArray: '3.2',
  $isNumber: '4.4',
  $floor: '3.2',
  $size: '2.6',
  // Packed minutes (`PackedMinutes`): a minute's element of each array.
  $range: '3.4',
  $arrayElemAt: '3.2',
  $objectToArray: '3.4.4',
  $mergeObjects: '3.6',
  $toInt: '4.0',
  $toLong: '4.0',
  $toDate: '4.0',
  $dateTrunc: '5.0',
};

/** Whether MongoDB version `a` (`major.minor[.patch]`) is at most `b`. */
const atMost = (a: string, b: string) => {
  const [x, y] = [a, b].map((version) => version.split('.').map(Number));
  for (let i = 0; i < 3; i++) if ((x![i] ?? 0) !== (y![i] ?? 0)) return (x![i] ?? 0) < (y![i] ?? 0);
  return true;
};

/** The operators (keys starting with `$`) anywhere in a pipeline, with how often each occurs. */
function operatorsOf(node: unknown, found: Map<string, number>): Map<string, number> {
  if (Array.isArray(node)) for (const item of node) operatorsOf(item, found);
  else if (node !== null && typeof node === 'object' && !(node instanceof Date) && !('_bsontype' in node)) {
    for (const [key, value] of Object.entries(node)) {
      if (key.startsWith('$')) found.set(key, (found.get(key) ?? 0) + 1);
      operatorsOf(value, found);
    }
  }
  return found;
}

/**
 * The number-valued fields of `$group` `_id` objects anywhere in a pipeline (`t` of
 * `{_id: {t: 5, g: '$series'}}`): MongoDB refuses them ("$group does not support
 * inclusion-style expressions", code 17390); a constant key must be `{$literal: 5}`.
 */
function bareGroupConstants(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) bareGroupConstants(item, found);
  else if (node !== null && typeof node === 'object' && !(node instanceof Date) && !('_bsontype' in node)) {
    for (const [key, value] of Object.entries(node)) {
      const id = key === '$group' ? (value as Document)._id : undefined;
      if (id !== null && typeof id === 'object' && !(id instanceof Date)) {
        for (const [field, part] of Object.entries(id)) {
          if (typeof part === 'number' || typeof part === 'boolean' || (part !== null && typeof part === 'object' && '_bsontype' in part)) {
            found.push(`_id.${field}`);
          }
        }
      }
      bareGroupConstants(value, found);
    }
  }
  return found;
}

describe('operators of the pipelines the engine sends', () => {
  let app: TestApp;
  /** Every aggregate the app sent: the collection and the pipeline. */
  const sent: { collection: string; pipeline: Document[] }[] = [];

  beforeAll(async () => {
    app = await openTestApp('conformance_operators', { journal: false });
    app.store.client.on('commandStarted', (event: CommandStartedEvent) => {
      if (event.commandName === 'aggregate' && event.databaseName === app.store.db.databaseName) {
        sent.push({ collection: String(event.command.aggregate), pipeline: event.command.pipeline });
      }
    });
    const set = await app.graphql(
      `mutation { setMetricStatistics(metric: "flights", sketchLevels: [DAY, HOUR, MINUTE], latestReadings: 5) { name } }`,
    );
    expect(set.errors).toBeUndefined();
    // A few flights over three days, on three routes.
    const readings = Array.from({ length: 24 }, (_, i) => ({
      metric: 'flights',
      tags: [
        { key: 'origin', value: ['LAS', 'ORD', 'JFK'][i % 3]! },
        { key: 'destination', value: i % 2 === 0 ? 'PHX' : 'SFO' },
      ],
      time: new Date(Date.UTC(2001, 0, 1, 3) + i * 2.75 * 3_600_000).toISOString(),
      fields: [
        { name: 'delay', value: (i * 7) % 31 },
        { name: 'distance', value: 300 + i },
      ],
    }));
    const recorded = await app.graphql(`mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { applied } }`, { r: readings });
    expect(recorded.errors).toBeUndefined();
    // A counter, for the counter pipeline.
    expect((await app.graphql(`mutation { setMetricKind(metric: "requests", kind: COUNTER) { kind } }`)).errors).toBeUndefined();
    const counts = readings.map((reading, i) => ({
      metric: 'requests',
      tags: [{ key: 'host', value: `h${i % 2}` }],
      time: reading.time,
      fields: [{ name: 'n', value: (i * 13) % 40 }],
    }));
    expect(
      (await app.graphql(`mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { applied } }`, { r: counts })).errors,
    ).toBeUndefined();
    // A rollup by destination, built at once, so queries grouped by destination read it.
    const defined = await app.graphql(
      `mutation { defineRollup(metric: "flights", name: "by_destination", tagKeys: ["destination"]) { name } }`,
    );
    expect(defined.errors).toBeUndefined();
    await app.settle();
    await backfillRollup(app.store, 'flights', 'by_destination', { graceMs: 0 });
    // A few more flights left unfolded, so every read also carries a tail.
    const tail = readings
      .slice(0, 6)
      .map((reading, i) => ({ ...reading, time: new Date(Date.parse(reading.time) + 60_000 * (i + 1)).toISOString() }));
    const more = await app.graphql(`mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { applied } }`, { r: tail });
    expect(more.errors).toBeUndefined();
  });
  afterAll(async () => app.close());

  it('are all MongoDB 5.0 or older, and listed: every granularity, zones, filters, groups, first/last, percentiles, counters, ranking, fill, rollups, the tail', async () => {
    const range = 'from: "2001-01-01T05:17:00Z", to: "2001-01-03T20:43:00Z"';
    const bucket = 'start count sum min max avg stddev first { time value } last { time value } p50 percentile(p: 90) value filled';
    const requests: string[] = [];
    for (const [i, name] of GRANULARITY_NAMES.entries()) {
      const fill = ['NULL', 'NONE', 'ZERO', 'PREVIOUS', 'LINEAR'][i % 5];
      requests.push(
        `{ buckets(metric: "flights", field: "delay", granularity: ${name}, ${range}, fill: ${fill}) { buckets { ${bucket} } } }`,
      );
    }
    for (const zone of ['America/New_York', 'Asia/Kathmandu']) {
      for (const name of ['HOUR', 'DAY', 'MONTH']) {
        requests.push(
          `{ buckets(metric: "flights", field: "delay", granularity: ${name}, from: "2001-01-01", to: "2001-01-04", timeZone: "${zone}", groupBy: ["origin"]) { buckets { ${bucket} } } }`,
        );
      }
    }
    // Read from the rollup: grouped by its tag key, no minutes.
    for (const name of ['HOUR', 'DAY', 'WEEK']) {
      requests.push(
        `{ buckets(metric: "flights", field: "delay", granularity: ${name}, from: "2001-01-01", to: "2001-01-04", groupBy: ["destination"]) { buckets { ${bucket} } } }`,
      );
    }
    // Grouped by two keys, `b` and `c2` are ranked by the database (one key would be read
    // from day summaries or a rollup and ranked in memory, as `c` is: the rollup answers
    // its whole quarter hours, the documents its edges); `c2` over whole hours, as a read
    // of minutes would merge its documents in the server and rank them there.
    requests.push(
      `{ a: aggregate(metric: "flights", field: "delay", ${range}, where: [{key: "origin", in: ["LAS", "ORD"]}, {key: "destination", in: "PHX"}], groupBy: ["origin", "destination"]) { count avg first { value } p50 }
         b: aggregate(metric: "flights", field: "distance", from: "2001-01-01", to: "2001-01-04", groupBy: ["origin", "destination"], orderBy: {statistic: STDDEV}, limit: 2) { avg }
         c: buckets(metric: "flights", field: "delay", granularity: HOUR, ${range}, groupBy: ["destination"], orderBy: {statistic: AVG, direction: ASC}, limit: 1, transform: MOVING_AVERAGE, window: 3) { buckets { value } }
         c2: buckets(metric: "flights", field: "delay", granularity: HOUR, from: "2001-01-01T05:00:00Z", to: "2001-01-03T21:00:00Z", groupBy: ["origin", "destination"], orderBy: {statistic: AVG}, limit: 1) { buckets { value } }
         d: buckets(metric: "flights", field: "delay", ${range}, maxDataPoints: 10, compareWith: {amount: 1, unit: DAY}) { buckets { previous change } }
         e: series(metric: "flights") { buckets(field: "delay", granularity: DAY, ${range}) { count p99 last { value } } aggregate(field: "distance", ${range}) { sum } }
         f: aggregate(metric: "flights", field: "delay", from: "2001-01-01", to: "2001-01-04", groupBy: ["destination"]) { count p50 }
         g: buckets(metric: "requests", field: "n", granularity: DAY, ${range}, timeZone: "Asia/Kathmandu", groupBy: ["host"], statistic: INCREASE) { buckets { value rate } }
         h: aggregate(metric: "requests", field: "n", ${range}) { increase rate } }`,
    );
    sent.length = 0;
    for (const request of requests) {
      const answer = await app.graphql(request);
      expect(answer.errors, request).toBeUndefined();
    }
    // The bucket pipelines, sketch pipelines, ranking stages and registry counts of all of the above.
    expect(sent.length).toBeGreaterThan(requests.length);
    const rollupCollection = sent.find(({ collection }) => collection.startsWith('rollup'))?.collection;
    expect(rollupCollection, `a pipeline on the rollup's collection among ${[...new Set(sent.map((s) => s.collection))]}`).toBeDefined();
    const found = new Map<string, number>();
    for (const { pipeline } of sent) operatorsOf(pipeline, found);
    const unlisted = [...found.keys()].filter((operator) => OPERATORS[operator] === undefined);
    expect(unlisted, 'operators to look up and list in OPERATORS').toEqual([]);
    const newer = [...found.keys()].filter((operator) => !atMost(OPERATORS[operator]!, '5.0'));
    expect(newer).toEqual([]);
    // Listed and never sent: an entry to remove (the list names what the engine uses).
    expect(Object.keys(OPERATORS).filter((operator) => !found.has(operator))).toEqual([]);
    expect(sent.flatMap(({ pipeline }) => bareGroupConstants(pipeline))).toEqual([]);
  });
});
