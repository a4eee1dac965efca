/**
 * Loading readings into our storage: through the record path (`recordBatch`, batch by
 * batch, as a client sends them) or bulk-loaded (the same series-day documents planned
 * per day, materialized and inserted; much faster on the embedded server, whose cost per
 * update grows with the size of the document), and comparing two databases' collections
 * document by document, to check that both ways store the same.
 */
import { Double, Int32, Long, type Db, type Document } from 'mongodb';
import { recordBatch } from '../../../src/engine/record.ts';
import { BATCH_MARKS_KEPT, batchMark } from '../../../src/model/batch.ts';
import { DAY_MS } from '../../../src/model/time.ts';
import { dayFilter, dayUpdate, planWrites, type MetricWrite, type SeriesWrite } from '../../../src/record/plan.ts';
import type { Reading } from '../../../src/record/validate.ts';
import type { Store } from '../../../src/storage/store.ts';
import { batches } from './timing.ts';

/** Readings per batch of the benchmarks' loaders (batch ids, batch marks, the baselines' `insertMany`), as `import:flights` sends them. */
export const LOAD_BATCH = 1000;

/** Writes readings through `recordBatch` in batches of `size` with batch ids `bench-1`, `bench-2`, … (as the benchmark's loader does). */
export async function recordAll(store: Store, readings: readonly Reading[], size: number): Promise<void> {
  for (const [index, batch] of batches(readings, size).entries()) {
    await recordBatch(store, batch, { batchId: `bench-${index + 1}`, receivedAt: 0 });
  }
}

/** Sets `value` at a dotted `path` of `doc`, creating the embedded documents on the way. */
function setPath(doc: Document, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = doc;
  for (const part of parts.slice(0, -1)) {
    node[part] ??= {};
    node = node[part] as Document;
  }
  node[parts.at(-1)!] = value;
}

/**
 * The document an upsert creates when no document matches `filter`: the filter's
 * equality fields, then the update applied to nothing, which is what the server does
 * (MongoDB manual, "upsert behavior"): `$setOnInsert`, `$inc`, `$min` and `$max` set their
 * value; `$push` with `$each`, `$sort` (by fields, ascending or descending) and a
 * negative `$slice` stores the sorted, sliced list.
 * @throws Error on any other operator or modifier (this materializer would be wrong).
 */
export function materialize(filter: Document, update: Document): Document {
  const doc: Document = { ...filter };
  for (const [operator, paths] of Object.entries(update)) {
    for (const [path, value] of Object.entries(paths as Document)) {
      if (['$setOnInsert', '$inc', '$min', '$max'].includes(operator)) {
        setPath(doc, path, value);
      } else if (operator === '$push') {
        const { $each, $sort, $slice, ...rest } = value as { $each: Document[]; $sort?: Record<string, 1 | -1>; $slice?: number };
        if (Object.keys(rest).length > 0 || ($slice !== undefined && $slice > 0)) throw new Error(`Unsupported $push on ${path}`);
        let list = [...$each];
        if ($sort !== undefined) {
          const keys = Object.entries($sort);
          list = list.sort((a, b) => {
            for (const [key, direction] of keys) {
              const x = a[key] as number | Date;
              const y = b[key] as number | Date;
              if (x < y) return -direction;
              if (x > y) return direction;
            }
            return 0;
          });
        }
        setPath(doc, path, $slice === undefined ? list : list.slice($slice));
      } else {
        throw new Error(`Unsupported update operator ${operator}`);
      }
    }
  }
  return doc;
}

/** What a bulk load did: readings loaded, series-day documents inserted, seconds it took. */
export interface BulkLoad {
  readings: number;
  documents: number;
  seconds: number;
}

/**
 * Loads readings as `recordBatch` would in batches of `LOAD_BATCH` with batch ids
 * `bench-1`, `bench-2`, … (see {@link recordAll}), without its cost per update: the
 * readings of each UTC day are planned at once by the record path's `planWrites` (with
 * the store's default statistics, as for a new metric), each series-day document is the
 * document the record path's upsert (`dayFilter`, `dayUpdate`) creates on an empty
 * collection ({@link materialize}), carrying the marks of the last `BATCH_MARKS_KEPT`
 * batches that held its readings, and is inserted with `insertMany`; the series and
 * metrics registries get the record path's upserts. The record path adds the same
 * values batch by batch, so fractional sums may differ in the last bits; the batch
 * claims (`batches` collection) are not written. `log` hears how long each phase took.
 */
export async function bulkLoad(store: Store, readings: readonly Reading[], log: (message: string) => void = () => {}): Promise<BulkLoad> {
  const begun = performance.now();
  const days = new Map<number, { readings: Reading[]; indexes: number[] }>();
  readings.forEach((reading, index) => {
    const day = reading.time - (reading.time % DAY_MS);
    let entry = days.get(day);
    if (entry === undefined) {
      entry = { readings: [], indexes: [] };
      days.set(day, entry);
    }
    entry.readings.push(reading);
    entry.indexes.push(index);
  });
  const series = new Map<string, SeriesWrite>();
  const metrics = new Map<string, MetricWrite>();
  let documents = 0;
  const phases = { plan: 0, insert: 0, registries: 0 };
  let mark = performance.now();
  const phase = (name: keyof typeof phases) => {
    const now = performance.now();
    phases[name] += (now - mark) / 1000;
    mark = now;
  };
  for (const [day, entry] of [...days.entries()].sort((a, b) => a[0] - b[0])) {
    const plan = planWrites(entry.readings, () => store.defaultStatistics);
    // The batches (by number) that held each document's readings, in the order they were sent.
    const marks = new Map<string, number[]>();
    entry.readings.forEach((reading, i) => {
      const batch = Math.floor(entry.indexes[i]! / LOAD_BATCH) + 1;
      const key = reading.seriesId;
      const list = marks.get(key);
      if (list === undefined) marks.set(key, [batch]);
      else if (list.at(-1) !== batch) list.push(batch);
    });
    const docs = plan.buckets.map((write) => {
      const doc = materialize(dayFilter(write), dayUpdate(write, true));
      doc.batches = marks
        .get(write.series)!
        .slice(-BATCH_MARKS_KEPT)
        .map((batch) => batchMark(`bench-${batch}`));
      if (write.date.getTime() !== day) throw new Error('A planned document fell outside its day');
      return doc;
    });
    phase('plan');
    for (const chunk of batches(docs, 500)) await store.buckets.insertMany(chunk as never[], { ordered: false });
    phase('insert');
    documents += docs.length;
    for (const write of plan.series) {
      const known = series.get(write.id);
      if (known === undefined) series.set(write.id, { ...write, fields: new Set(write.fields) });
      else for (const field of write.fields) known.fields.add(field);
    }
    for (const write of plan.metrics) {
      const known = metrics.get(write.name);
      if (known === undefined) {
        metrics.set(write.name, { ...write, fields: new Set(write.fields), tagKeys: new Set(write.tagKeys) });
        continue;
      }
      for (const field of write.fields) known.fields.add(field);
      for (const key of write.tagKeys) known.tagKeys.add(key);
      known.first = Math.min(known.first, write.first);
      known.last = Math.max(known.last, write.last);
    }
  }
  // The registries, with the record path's updates (storage/record.ts).
  for (const chunk of batches([...series.values()], 1000)) {
    await store.series.bulkWrite(
      chunk.map((write) => ({
        updateOne: {
          filter: { _id: write.id },
          update: {
            $setOnInsert: { key: write.key, metric: write.metric, tags: write.tags, tagPairs: write.tagPairs },
            $addToSet: { fields: { $each: [...write.fields] } },
          },
          upsert: true,
        },
      })),
      { ordered: false },
    );
  }
  for (const write of metrics.values()) {
    await store.metrics.updateOne(
      { _id: write.name },
      {
        $addToSet: { fields: { $each: [...write.fields] }, tagKeys: { $each: [...write.tagKeys] } },
        $setOnInsert: { layout: store.defaultLayout, statistics: store.defaultStatistics, createdAt: new Date() },
        $min: { first: new Date(write.first) },
        $max: { last: new Date(write.last) },
      },
      { upsert: true },
    );
  }
  phase('registries');
  log(
    `bulk load of ${readings.length} readings: ${documents} documents planned in ${phases.plan.toFixed(1)} s, inserted in ${phases.insert.toFixed(1)} s, registries ${phases.registries.toFixed(1)} s`,
  );
  return { readings: readings.length, documents, seconds: (performance.now() - begun) / 1000 };
}

/**
 * A stored value in a comparable form: BSON types kept apart (double, int32, int64,
 * date), embedded documents with sorted keys, lists of strings sorted (registries add
 * to sets) and `recent` lists sorted by time and content (ties in time may be kept in
 * either order). Doubles are rounded to 12 significant digits, so sums added in
 * another order compare equal.
 */
function comparable(value: unknown, key = ''): unknown {
  if (value instanceof Double) return `d:${Number(value.value.toPrecision(12))}`;
  if (value instanceof Int32) return `i:${value.value}`;
  if (value instanceof Long) return `l:${value.toString()}`;
  if (value instanceof Date) return `t:${value.getTime()}`;
  if (typeof value === 'number') return `n:${Number(value.toPrecision(12))}`;
  if (Array.isArray(value)) {
    const items = value.map((item) => comparable(item));
    if (key === 'recent' || key === 'fields' || key === 'tagKeys') return items.map((item) => JSON.stringify(item)).sort();
    return items;
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, comparable((value as Document)[k], k)]),
    );
  }
  return value;
}

/**
 * Compares a collection of two databases, document by document in `key` order,
 * leaving out `ignore` (fields that differ by construction, such as `_id`).
 * @returns the documents of each side and up to 3 differences described.
 */
export async function compareCollection(a: Db, b: Db, name: string, key: Document, ignore: readonly string[]) {
  const read = (db: Db) => db.collection(name).find({}, { promoteValues: false, promoteLongs: false }).sort(key).toArray();
  const [left, right] = await Promise.all([read(a), read(b)]);
  const differences: string[] = [];
  if (left.length !== right.length) differences.push(`${name}: ${left.length} documents vs ${right.length}`);
  for (let i = 0; i < Math.min(left.length, right.length) && differences.length < 3; i++) {
    const strip = (doc: Document) => Object.fromEntries(Object.entries(doc).filter(([k]) => !ignore.includes(k)));
    const x = JSON.stringify(comparable(strip(left[i]!)));
    const y = JSON.stringify(comparable(strip(right[i]!)));
    if (x !== y) {
      let at = 0;
      while (at < x.length && x[at] === y[at]) at++;
      differences.push(`${name} #${i}: …${x.slice(Math.max(0, at - 60), at + 60)}… vs …${y.slice(Math.max(0, at - 60), at + 60)}…`);
    }
  }
  return { documents: [left.length, right.length] as const, differences };
}
