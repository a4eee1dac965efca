import { Double, type Filter, type UpdateFilter } from 'mongodb';
import { BATCH_MARKS_KEPT } from '../model/batch.ts';
import { SlotPath, type DayDocument } from '../model/day-document.ts';
import { addValue, emptyStats, type Stats } from '../model/stats.ts';
import { tagMap, tagPair, type TagMap } from '../model/series.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS, floorTo } from '../model/time.ts';
import type { Reading } from './validate.ts';

/**
 * Everything one batch does to one series-day document (one series, one day), merged in
 * memory: the statistics of every slot it touches, at every level.
 */
export interface DayWrite {
  series: string;
  metric: string;
  tags: TagMap;
  /** The tags as `key=value` strings, sorted by key. */
  tagPairs: string[];
  /** Midnight UTC of the document's day. */
  date: Date;
  /** Merged statistics keyed by slot path (`fields.delay`, `hours.7.fields.delay`, `hours.7.minutes.30.delay`). */
  slots: Map<string, Stats>;
  /** Fields the batch writes to this document. */
  fields: Set<string>;
  /** Earliest and latest reading time in ms since the epoch. */
  first: number;
  last: number;
  /** Number of readings merged into this write. */
  readings: number;
}

/** A series the batch writes to, with the fields it writes. */
export interface SeriesWrite {
  id: string;
  key: string;
  metric: string;
  tags: TagMap;
  tagPairs: string[];
  fields: Set<string>;
}

/** A metric the batch writes to, with the fields and tag keys it uses. */
export interface MetricWrite {
  name: string;
  fields: Set<string>;
  tagKeys: Set<string>;
  /** Earliest and latest reading time of the batch for this metric, ms since epoch. */
  first: number;
  last: number;
}

/** The writes of one validated batch, grouped by target document. */
export interface WritePlan {
  buckets: DayWrite[];
  series: SeriesWrite[];
  metrics: MetricWrite[];
  readings: number;
}

function slot(write: DayWrite, path: string): Stats {
  let stats = write.slots.get(path);
  if (stats === undefined) {
    stats = emptyStats();
    write.slots.set(path, stats);
  }
  return stats;
}

/**
 * Groups a validated batch by target series-day document and merges it in memory: every
 * reading lands in its day, hour and minute slot of its series' day document, counts
 * and sums added, min and max combined. Order and lateness of readings do not matter.
 * Pure: no I/O.
 */
export function planWrites(readings: readonly Reading[]): WritePlan {
  const buckets = new Map<string, DayWrite>();
  const series = new Map<string, SeriesWrite>();
  const metrics = new Map<string, MetricWrite>();

  for (const reading of readings) {
    const day = floorTo(reading.time, DAY_MS);
    const hour = Math.floor((reading.time - day) / HOUR_MS);
    const minute = Math.floor((reading.time % HOUR_MS) / MINUTE_MS);
    const docKey = `${reading.seriesId}:${day}`;

    let write = buckets.get(docKey);
    if (write === undefined) {
      write = {
        series: reading.seriesId,
        metric: reading.metric,
        tags: tagMap(reading.tags),
        tagPairs: reading.tags.map((tag) => tagPair(tag.key, tag.value)),
        date: new Date(day),
        slots: new Map(),
        fields: new Set(),
        first: reading.time,
        last: reading.time,
        readings: 0,
      };
      buckets.set(docKey, write);
    }
    write.readings += 1;
    if (reading.time < write.first) write.first = reading.time;
    if (reading.time > write.last) write.last = reading.time;

    let seriesWrite = series.get(reading.seriesId);
    if (seriesWrite === undefined) {
      seriesWrite = {
        id: reading.seriesId,
        key: reading.seriesKey,
        metric: reading.metric,
        tags: write.tags,
        tagPairs: write.tagPairs,
        fields: new Set(),
      };
      series.set(reading.seriesId, seriesWrite);
    }
    let metricWrite = metrics.get(reading.metric);
    if (metricWrite === undefined) {
      metricWrite = { name: reading.metric, fields: new Set(), tagKeys: new Set(), first: reading.time, last: reading.time };
      metrics.set(reading.metric, metricWrite);
    }
    if (reading.time < metricWrite.first) metricWrite.first = reading.time;
    if (reading.time > metricWrite.last) metricWrite.last = reading.time;
    for (const tag of reading.tags) metricWrite.tagKeys.add(tag.key);

    for (const { name, value } of reading.fields) {
      write.fields.add(name);
      seriesWrite.fields.add(name);
      metricWrite.fields.add(name);
      addValue(slot(write, SlotPath.day(name)), value);
      addValue(slot(write, SlotPath.hour(hour, name)), value);
      addValue(slot(write, SlotPath.minute(hour, minute, name)), value);
    }
  }
  return {
    buckets: [...buckets.values()],
    series: [...series.values()],
    metrics: [...metrics.values()],
    readings: readings.length,
  };
}

/**
 * The filter that selects a {@link DayWrite}'s document: its series and day, and, for a
 * batch with an id, only while the document does not carry the batch's mark yet
 * (`batches: {$ne: mark}`). A document that already applied the batch then matches
 * nothing: an upsert of it fails on the unique `{series, date}` index (error 11000) and
 * a plain update matches 0 documents, which is how a retry is recognised.
 */
export function dayFilter(write: DayWrite, mark?: string): Filter<DayDocument> {
  return mark === undefined
    ? { series: write.series, date: write.date }
    : { series: write.series, date: write.date, batches: { $ne: mark } };
}

/**
 * The single atomic update that applies a {@link DayWrite} to its document: `$inc`
 * of count, sum and sum of squares, `$min`/`$max` of min, max and the first/last
 * reading time, at the day, hour and minute levels at once. Numbers are sent as BSON
 * doubles so a pre-allocated slot keeps its size. With `upsert`, `$setOnInsert` fills
 * the identity of a document created by this write (`series` and `date` come from the
 * filter). With a batch `mark`, the same update appends the mark to the document's
 * `batches` list, keeping the last `BATCH_MARKS_KEPT` (`$push` with `$slice`), so
 * applying the batch and remembering it are one atomic write.
 */
export function dayUpdate(write: DayWrite, upsert: boolean, mark?: string): UpdateFilter<DayDocument> {
  const inc: Record<string, Double> = {};
  const min: Record<string, Double | Date> = { first: new Date(write.first) };
  const max: Record<string, Double | Date> = { last: new Date(write.last) };
  for (const [path, stats] of write.slots) {
    inc[`${path}.n`] = new Double(stats.n);
    inc[`${path}.sum`] = new Double(stats.sum);
    inc[`${path}.sq`] = new Double(stats.sq);
    min[`${path}.min`] = new Double(stats.min);
    max[`${path}.max`] = new Double(stats.max);
  }
  const update: Record<string, unknown> = { $inc: inc, $min: min, $max: max };
  if (mark !== undefined) update.$push = { batches: { $each: [mark], $slice: -BATCH_MARKS_KEPT } };
  if (upsert) update.$setOnInsert = { metric: write.metric, tags: write.tags, tagPairs: write.tagPairs };
  return update as UpdateFilter<DayDocument>;
}

/**
 * One series-day document's write as the storage layer applies it: the filter that
 * selects it (refusing a document that carries the batch's mark), the upsert that
 * creates or updates it, and the same update without `$setOnInsert` for a retry.
 */
export interface DayOperation {
  write: DayWrite;
  filter: Filter<DayDocument>;
  upsert: UpdateFilter<DayDocument>;
  update: UpdateFilter<DayDocument>;
}

/** The operations of a planned batch, one per series-day document (see {@link dayFilter}, {@link dayUpdate}). Pure. */
export function dayOperations(plan: WritePlan, mark?: string): DayOperation[] {
  return plan.buckets.map((write) => ({
    write,
    filter: dayFilter(write, mark),
    upsert: dayUpdate(write, true, mark),
    update: dayUpdate(write, false, mark),
  }));
}
