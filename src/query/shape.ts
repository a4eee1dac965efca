import { summarize, type Stats, type Summary } from '../model/stats.ts';
import { tagList, type Tag } from '../model/series.ts';
import type { BucketRow } from './buckets-pipeline.ts';
import { bucketStart, nextBucketStart, type Cut } from './granularity.ts';
import type { Fill } from './spec.ts';

/** One bucket of a result: its nominal span `[start, end)` (UTC) and its statistics. */
export interface Bucket extends Summary {
  start: Date;
  end: Date;
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

const rowStats = (row: BucketRow): Stats => ({ n: row.n, sum: row.sum, min: row.min, max: row.max, sq: row.sq });

/**
 * Lists the buckets of `[from, to)` in time order from the pipeline statistics keyed by
 * bucket start. With fill `NULL` every bucket of the range is listed (empty ones have
 * count 0 and null statistics); with `NONE` only buckets with readings.
 */
export function bucketList(
  statsByStart: ReadonlyMap<number, Stats>,
  range: { from: number; to: number; cut: Cut; fill: Fill },
): Bucket[] {
  const starts =
    range.fill === 'NONE' ? [...statsByStart.keys()].sort((a, b) => a - b) : enumerateStarts(range.from, range.to, range.cut);
  return starts.map((start) => ({
    start: new Date(start),
    end: new Date(nextBucketStart(start, range.cut)),
    ...summarize(statsByStart.get(start)),
  }));
}

function enumerateStarts(from: number, to: number, cut: Cut): number[] {
  const starts: number[] = [];
  for (let start = bucketStart(from, cut); start < to; start = nextBucketStart(start, cut)) starts.push(start);
  return starts;
}

function groupTags(group: unknown, keys: readonly string[]): Tag[] {
  if (group === null || typeof group !== 'object') return [];
  const values = group as Record<string, unknown>;
  return keys.filter((key) => typeof values[key] === 'string').map((key) => ({ key, value: values[key] as string }));
}

const compareTags = (a: Tag[], b: Tag[]) => {
  const x = a.map((tag) => `${tag.key}\u0000${tag.value}`).join('\u0001');
  const y = b.map((tag) => `${tag.key}\u0000${tag.value}`).join('\u0001');
  return x < y ? -1 : x > y ? 1 : 0;
};

/** Splits pipeline rows by group: group key (JSON of the group value) -> bucket start -> stats. */
function rowsByGroup(rows: readonly BucketRow[]): Map<string, { group: unknown; stats: Map<number, Stats> }> {
  const groups = new Map<string, { group: unknown; stats: Map<number, Stats> }>();
  for (const row of rows) {
    const group = row._id?.g;
    const key = JSON.stringify(group ?? null);
    let entry = groups.get(key);
    if (entry === undefined) {
      entry = { group, stats: new Map() };
      groups.set(key, entry);
    }
    entry.stats.set(row._id?.t?.getTime() ?? 0, rowStats(row));
  }
  return groups;
}

/**
 * Turns the rows of a bucket pipeline grouped by tags (or not grouped) into bucket
 * groups sorted by tag values: one group per combination of tag values with readings
 * in the range (one group when not grouped), none when nothing matched.
 */
export function shapeBucketGroups(
  rows: readonly BucketRow[],
  range: { from: number; to: number; cut: Cut; fill: Fill; groupBy: readonly string[] },
): BucketGroup[] {
  const groups = [...rowsByGroup(rows).values()].map(({ group, stats }) => ({
    tags: groupTags(group, range.groupBy),
    buckets: bucketList(stats, range),
  }));
  return groups.sort((a, b) => compareTags(a.tags, b.tags));
}

/** Splits the rows of a pipeline grouped by series into one bucket list per id of `seriesIds`, in that order. */
export function shapeSeriesBuckets(
  rows: readonly BucketRow[],
  seriesIds: readonly string[],
  range: { from: number; to: number; cut: Cut; fill: Fill },
): Bucket[][] {
  const groups = rowsByGroup(rows);
  return seriesIds.map((id) => bucketList(groups.get(JSON.stringify(id))?.stats ?? new Map(), range));
}

/**
 * Turns the rows of an aggregate pipeline (no granularity) into one result per group
 * with readings, sorted by tag values; none when nothing matched.
 */
export function shapeAggregates(
  rows: readonly BucketRow[],
  range: { from: number; to: number; groupBy: readonly string[] },
): AggregateResult[] {
  const span = { from: new Date(range.from), to: new Date(range.to) };
  const results = rows.map((row) => ({ tags: groupTags(row._id?.g, range.groupBy), ...span, ...summarize(rowStats(row)) }));
  return results.sort((a, b) => compareTags(a.tags, b.tags));
}

/** Splits the rows of an aggregate pipeline grouped by series into one result per id, in order. */
export function shapeSeriesAggregates(
  rows: readonly BucketRow[],
  series: readonly { id: string; tags: Record<string, string> }[],
  range: { from: number; to: number },
): AggregateResult[] {
  const byId = new Map(rows.map((row) => [row._id?.g as string, row]));
  return series.map((s) => {
    const row = byId.get(s.id);
    return { tags: tagList(s.tags), from: new Date(range.from), to: new Date(range.to), ...summarize(row ? rowStats(row) : null) };
  });
}
