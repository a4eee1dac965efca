/**
 * The rows of a bucket query computed in this process from the documents it selects
 * (pure): what `bucketsPipeline`'s stages compute on the database, for the reads whose
 * documents are few and whose slots are fine (a MINUTE chart of one tag value over a few
 * hours), where walking the slots in a pipeline costs the embedded server more than
 * sending the documents (docs/read-design.md, "Documents merged in the server").
 */
import type { Document } from 'mongodb';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../model/time.ts';
import { emptyStats, isEarlier, mergeStats, type Stats, type TimedValue } from '../model/stats.ts';
import type { PackedMinutes } from '../documents/series-day.ts';
import { unpackedMinutes } from '../documents/packed-minutes.ts';
import { bucketStart, LEVEL_MS, type SketchLevel } from './granularity.ts';
import type { Segment } from './segments.ts';
import { type BucketQuery, type BucketRow, querySegments, setRowStats } from './buckets-pipeline.ts';
import { UTC } from './zone.ts';

/** The statistics of one field in one bucket and group with its first and last readings, merged as the pipeline's `$group` merges them. */
interface Merged extends Stats {
  first: TimedValue | null;
  last: TimedValue | null;
}

/** One bucket and group being merged: its `_id` as the pipeline gives it, a {@link Merged} per field, the lowest layout version. */
interface RowState {
  id: BucketRow['_id'];
  fields: (Merged | null)[];
  ver: number;
}

/**
 * A stored `{t, v}` pair (a date and a number) as a {@link TimedValue}; null when absent.
 * `v` may be a BSON `Double`, as the tail's planned documents carry it (`slotFormDocument`),
 * which the rows' own `rowPair` would not take.
 */
function storedPair(pair: unknown): TimedValue | null {
  if (pair === null || typeof pair !== 'object') return null;
  const { t, v } = pair as { t?: unknown; v?: unknown };
  return t instanceof Date && v !== null && v !== undefined ? { t: t.getTime(), v: Number(v) } : null;
}

/**
 * Whether {@link documentRows} computes what `bucketsPipeline(query)` would: a query
 * read slot by slot (not a zoned DAY or coarser query, whose pipeline merges each day's
 * slots in sections and derives one from the day totals, which its projection then keeps
 * instead of the slots), without quarter hours (rollup documents). A ranking is the
 * caller's to apply to the rows (`rankRows`).
 */
export function rowsComputable(query: BucketQuery): boolean {
  const zone = query.timeZone ?? UTC;
  if (query.quarters) return false;
  return !(query.granularity !== null && query.granularity.level === 'day' && zone !== UTC);
}

/**
 * How many slots a query's segments (`querySegments`) read over its whole range, at
 * most: their lengths over their levels' widths (a MINUTE chart of three hours: 180; a
 * day of hours and its ragged minutes: 24 plus those minutes), what one document selected
 * can hold of them at most, and what the cost of merging its documents here grows with.
 */
export function slotsRead(segments: readonly Segment<SketchLevel>[]): number {
  return segments.reduce((slots, segment) => slots + Math.ceil((segment.to - segment.from) / LEVEL_MS[segment.level]), 0);
}

/** Merges `slot` into the statistics of field `index` of `row` (a copy of it when the row has none yet). */
function mergeInto(row: RowState, index: number, slot: Merged): void {
  const merged = row.fields[index];
  if (merged === null || merged === undefined) {
    row.fields[index] = { ...slot };
    return;
  }
  mergeStats(merged, slot);
  if (slot.first !== null && (merged.first === null || isEarlier(slot.first, merged.first))) merged.first = slot.first;
  if (slot.last !== null && (merged.last === null || isEarlier(merged.last, slot.last))) merged.last = slot.last;
}

/**
 * The rows `bucketsPipeline(query)` computes over `documents` (series-day documents as
 * its selection projects them, and the tail's documents as `tailDocuments` plans them),
 * computed here: per document, the slots of its day inside each segment of the range
 * (`querySegments`: day totals, hour slots, minute slots, packed or as objects), or, for
 * a document in the raw form, its readings inside the segments; each goes to the bucket
 * holding its start (`bucketStart` in the query's zone; none for an aggregate) and to
 * the document's group (its tag values of the grouping's keys, a key it lacks left out,
 * or its series id). Counts, sums and sums of squares add up, minima and maxima combine,
 * and with `firstLast` the first and last readings combine as `{t, v}` pairs and `ver` is
 * the lowest layout version read. A raw reading counts as a slot of its minute, as the
 * pipeline's `$group` keys it. Rows of buckets without a reading of any field are not
 * given; the others carry `n<i>`, `sum<i>`, `sq<i>`, `min<i>`, `max<i>` (null without a
 * reading of field `i`), and with `firstLast` `first<i>`, `last<i>` and `ver`, as the
 * pipeline's rows do (see `BucketRow`). Sums are added in the documents' order, so a sum
 * of fractions may differ from the database's in its last bits.
 * Only for a query {@link rowsComputable} accepts.
 * @param segments the query's `querySegments`, when the caller has them.
 * @throws Error for a query it does not accept (a caller's mistake, not the user's).
 */
export function documentRows(
  query: BucketQuery,
  documents: readonly Document[],
  segments: readonly Segment<SketchLevel>[] = querySegments(query),
): BucketRow[] {
  if (!rowsComputable(query)) throw new Error('documentRows: the query reads sections, not slots');
  const zone = query.timeZone ?? UTC;
  const fields = query.fields;
  const rows = new Map<string, RowState>();
  const cut = query.granularity?.cut ?? null;
  const grouping = query.grouping;
  // Bucket starts of the last slot time asked: consecutive slots mostly share a bucket.
  let lastTime = Number.NaN;
  let lastStart = 0;
  const startOf = (time: number) => {
    if (time !== lastTime) {
      lastTime = time;
      lastStart = bucketStart(time, cut!, zone);
    }
    return lastStart;
  };

  for (const doc of documents) {
    const day = (doc.date as Date).getTime();
    const version = typeof doc.v === 'number' ? doc.v : 1;
    let g: Record<string, string> | string | undefined;
    if (grouping.by === 'series') g = doc.series as string;
    else if (grouping.by === 'tags') {
      const tags = (doc.tags ?? {}) as Record<string, string>;
      g = Object.fromEntries(grouping.keys.filter((key) => tags[key] !== undefined).map((key) => [key, tags[key]!]));
    }
    const groupText = g === undefined ? '' : JSON.stringify(g);
    const rowAt = (time: number): RowState => {
      const start = cut === null ? null : startOf(time);
      const key = `${start ?? ''}\u0000${groupText}`;
      let row = rows.get(key);
      if (row === undefined) {
        const id: Record<string, unknown> = {};
        if (start !== null) id.t = new Date(start);
        if (g !== undefined) id.g = g;
        row = { id: Object.keys(id).length === 0 ? null : (id as BucketRow['_id']), fields: fields.map(() => null), ver: version };
        rows.set(key, row);
      } else if (version < row.ver) row.ver = version;
      return row;
    };
    /** A stored statistics object `{n, sum, sq, min, max, first?, last?}` of field `index` at slot time `time`. */
    const addStored = (time: number, index: number, stats: unknown) => {
      if (stats === null || typeof stats !== 'object') return;
      const s = stats as Record<string, unknown>;
      const n = Number(s.n ?? 0);
      if (!(n > 0)) return;
      mergeInto(rowAt(time), index, {
        n,
        sum: Number(s.sum),
        min: Number(s.min),
        max: Number(s.max),
        sq: Number(s.sq),
        first: storedPair(s.first),
        last: storedPair(s.last),
      });
    };

    /** The stored statistics of every field asked in `byField` (field -> statistics), at slot time `time`. */
    const addFields = (time: number, byField: Record<string, unknown> | undefined) => {
      if (byField === undefined) return;
      for (const [index, field] of fields.entries()) addStored(time, index, byField[field]);
    };

    const inDay = segments.filter((segment) => segment.to > day && segment.from < day + DAY_MS);
    if (Array.isArray(doc.r)) {
      for (const reading of doc.r as { t: Date; f: Record<string, unknown> }[]) {
        const t = reading.t.getTime();
        if (!inDay.some((segment) => t >= segment.from && t < segment.to)) continue;
        // Keyed by its minute, as the pipeline's `$group` keys a raw reading (`slotOrReadingTime`).
        const minute = Math.floor(t / MINUTE_MS) * MINUTE_MS;
        let row: RowState | null = null;
        for (const [index, field] of fields.entries()) {
          // A number as the driver reads a stored double (`$isNumber` in the pipeline).
          const v = reading.f[field];
          if (typeof v !== 'number') continue;
          row ??= rowAt(minute);
          const pair = { t, v };
          mergeInto(row, index, { n: 1, sum: v, min: v, max: v, sq: v * v, first: pair, last: pair });
        }
      }
      continue;
    }
    const hours = (doc.hours ?? {}) as Record<string, Record<string, unknown>>;
    for (const segment of inDay) {
      const from = Math.max(segment.from, day);
      const to = Math.min(segment.to, day + DAY_MS);
      if (segment.level === 'day') {
        addFields(day, doc.fields as Record<string, unknown> | undefined);
      } else if (segment.level === 'hour') {
        for (let hourStart = from; hourStart < to; hourStart += HOUR_MS) {
          const slot = hours[String((hourStart - day) / HOUR_MS)];
          const stats = slot?.fields as Record<string, unknown> | undefined;
          addFields(hourStart, stats);
        }
      } else {
        for (let hourStart = day + Math.floor((from - day) / HOUR_MS) * HOUR_MS; hourStart < to; hourStart += HOUR_MS) {
          const slot = hours[String((hourStart - day) / HOUR_MS)];
          if (slot === undefined) continue;
          const first = Math.max(0, (from - hourStart) / MINUTE_MS);
          const end = Math.min(60, (to - hourStart) / MINUTE_MS);
          // Packed minutes as the object form keeps them, as a compaction reads them (`fullContentOf`).
          const packed = slot.mc as PackedMinutes | undefined;
          const minutes = (packed === undefined ? (slot.minutes ?? {}) : unpackedMinutes(packed, hourStart)) as Record<
            string,
            Record<string, unknown> | undefined
          >;
          for (const [minute, ofMinute] of Object.entries(minutes)) {
            const m = Number(minute);
            if (m < first || m >= end || ofMinute === undefined) continue;
            const time = hourStart + m * MINUTE_MS;
            addFields(time, ofMinute);
          }
        }
      }
    }
  }

  return [...rows.values()].map((row) => {
    const out: BucketRow = { _id: row.id };
    row.fields.forEach((merged, index) => {
      setRowStats(out, index, merged ?? emptyStats());
      if (query.firstLast) {
        const pair = (value: TimedValue | null | undefined) => (value ? { t: new Date(value.t), v: value.v } : null);
        out[`first${index}`] = pair(merged?.first);
        out[`last${index}`] = pair(merged?.last);
      }
    });
    if (query.firstLast) out.ver = row.ver;
    return out;
  });
}
