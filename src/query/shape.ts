import { summarize, type RowStats, type Summary } from '../model/stats.ts';
import type { Tag } from '../model/series.ts';
import { rowStats, type BucketRow } from './buckets-pipeline.ts';
import { listBuckets, nextBucketStart, type Cut } from './granularity.ts';
import type { Fill } from './spec.ts';
import { formatLocal, UTC } from './zone.ts';

/**
 * One bucket of a result: its span `[start, end)` (instants; a local day with a clock
 * change lasts 23 or 25 hours), whether the query range cuts it, its local start, and
 * its statistics.
 */
export interface Bucket extends Summary {
  start: Date;
  end: Date;
  /** True when the query range `[from, to)` covers only part of the bucket (the first or last one). */
  partial: boolean;
  /** `start` as wall-clock time of the query's zone with its offset, RFC 3339: `2001-04-01T00:00:00-05:00`. */
  localStart: string;
}

/** The buckets of one group (one origin airport, say), in time order. */
export interface BucketGroup {
  /** The group's tag values, in `groupBy` order; empty when not grouped. Keys a series lacks are left out. */
  tags: Tag[];
  buckets: Bucket[];
}

/** Statistics of one group over a whole range. */
export interface AggregateResult extends Summary {
  tags: Tag[];
  from: Date;
  to: Date;
}

/** What shapes a bucket list: the range (ms since epoch), the cut, the fill and the time zone (IANA name, default UTC). */
export interface BucketRange {
  from: number;
  to: number;
  cut: Cut;
  fill: Fill;
  timeZone?: string;
}

/**
 * Lists the buckets of `[from, to)` in the range's time zone, in time order, from the
 * pipeline statistics keyed by bucket start (ms). With fill `NULL` every bucket of the
 * range is listed (empty ones have count 0 and null statistics); with `NONE` only
 * buckets with readings. Statistics under a start that is not a bucket start of the
 * range (never, when the pipeline was built for the same range, cut and zone) are listed
 * as a bucket of their own rather than dropped.
 * @throws InputError INVALID_TIME_ZONE for an unknown zone.
 */
export function bucketList(statsByStart: ReadonlyMap<number, RowStats>, range: BucketRange): Bucket[] {
  const zone = range.timeZone ?? UTC;
  const listed = listBuckets(range.from, range.to, range.cut, zone);
  const known = new Set(listed.map((span) => span.start));
  for (const start of statsByStart.keys()) {
    if (known.has(start)) continue;
    const end = nextBucketStart(start, range.cut, zone);
    listed.push({ start, end, partial: start < range.from || end > range.to, localStart: formatLocal(start, zone) });
  }
  listed.sort((a, b) => a.start - b.start);
  const kept = range.fill === 'NONE' ? listed.filter((span) => statsByStart.has(span.start)) : listed;
  return kept.map((span) => ({
    start: new Date(span.start),
    end: new Date(span.end),
    partial: span.partial,
    localStart: span.localStart,
    ...summarize(statsByStart.get(span.start), secondsInRange(span, range)),
  }));
}

/** Seconds of `[start, end)` inside the range `[from, to)` (ms): what a bucket's `rate` divides by. */
const secondsInRange = (span: { start: number; end: number }, range: { from: number; to: number }) =>
  (Math.min(span.end, range.to) - Math.max(span.start, range.from)) / 1000;

function groupTags(group: unknown, keys: readonly string[]): Tag[] {
  if (group === null || typeof group !== 'object') return [];
  const values = group as Record<string, unknown>;
  return keys.filter((key) => typeof values[key] === 'string').map((key) => ({ key, value: values[key] as string }));
}

/** Orders tag lists by their keys and values (code points), the order of groups in every answer. */
export const compareTags = (a: readonly Tag[], b: readonly Tag[]) => {
  const x = a.map((tag) => `${tag.key}\u0000${tag.value}`).join('\u0001');
  const y = b.map((tag) => `${tag.key}\u0000${tag.value}`).join('\u0001');
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * The statistics of the field at `index` in `rows`, by bucket start (ms), leaving out
 * buckets where that field has no readings (a row may exist for another field).
 */
export function statsByStart(rows: readonly BucketRow[], index: number): Map<number, RowStats> {
  const stats = new Map<number, RowStats>();
  for (const row of rows) {
    const field = rowStats(row, index);
    if (field.n > 0) stats.set(row._id?.t?.getTime() ?? 0, field);
  }
  return stats;
}

/** Splits pipeline rows by group: group key (JSON of the group value) -> the group and its rows. */
function rowsByGroup(rows: readonly BucketRow[]): Map<string, { group: unknown; rows: BucketRow[] }> {
  const groups = new Map<string, { group: unknown; rows: BucketRow[] }>();
  for (const row of rows) {
    const group = row._id?.g;
    const key = JSON.stringify(group ?? null);
    let entry = groups.get(key);
    if (entry === undefined) {
      entry = { group, rows: [] };
      groups.set(key, entry);
    }
    entry.rows.push(row);
  }
  return groups;
}

/**
 * Turns the rows of a bucket pipeline grouped by tags (or not grouped) into the bucket
 * groups of the field at `index`, sorted by tag values: one group per combination of
 * tag values with readings of that field in the range (one group when not grouped),
 * none when nothing matched. Buckets are those of the range's time zone (see
 * {@link bucketList}).
 * @throws InputError INVALID_TIME_ZONE for an unknown zone.
 */
export function shapeBucketGroups(
  rows: readonly BucketRow[],
  range: BucketRange & { groupBy: readonly string[] },
  index = 0,
): BucketGroup[] {
  const groups: BucketGroup[] = [];
  for (const { group, rows: groupRows } of rowsByGroup(rows).values()) {
    const stats = statsByStart(groupRows, index);
    if (stats.size > 0) groups.push({ tags: groupTags(group, range.groupBy), buckets: bucketList(stats, range) });
  }
  return groups.sort((a, b) => compareTags(a.tags, b.tags));
}

/**
 * Turns the rows of an aggregate pipeline (no granularity) into the results of the
 * field at `index`: one per group with readings of it, sorted by tag values; none when
 * nothing matched.
 */
export function shapeAggregates(
  rows: readonly BucketRow[],
  range: { from: number; to: number; groupBy: readonly string[] },
  index = 0,
): AggregateResult[] {
  const span = { from: new Date(range.from), to: new Date(range.to) };
  return rows
    .map((row) => ({ row, stats: rowStats(row, index) }))
    .filter(({ stats }) => stats.n > 0)
    .map(({ row, stats }) => ({ tags: groupTags(row._id?.g, range.groupBy), ...span, ...summarize(stats, (range.to - range.from) / 1000) }))
    .sort((a, b) => compareTags(a.tags, b.tags));
}
