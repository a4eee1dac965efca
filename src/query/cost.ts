import { countBuckets, type Granularity } from './granularity.ts';
import type { TagFilter } from './spec.ts';

/**
 * What a normalized bucket or aggregate query costs is decided by its range and its
 * granularity: `[from, to)` in ms since epoch (UTC, whole minutes) and the bucket size,
 * or null for one aggregate over the whole range.
 */
export interface CostedQuery {
  from: number;
  to: number;
  granularity: Granularity | null;
  /** IANA zone the buckets are cut in (default UTC). */
  timeZone?: string;
  /** Whether the query merges sketches (percentiles), see {@link SKETCH_BUCKET_WEIGHT}. */
  wants?: { sketch: boolean };
}

/**
 * How many buckets of the request's budget one bucket with percentiles counts as. Its
 * merged sketch comes out of the pipeline as one row per bin (tens to hundreds for real
 * data: 1% bins over values spanning a factor of 1,000 are about 350), so a percentile
 * query costs the pipeline and the engine several times what the same query without them
 * does; pricing it at 10 buckets keeps a request within the same order of work.
 */
export const SKETCH_BUCKET_WEIGHT = 10;

/**
 * Buckets one group (or one series) of a query can produce: every bucket of the range
 * for a bucket list (what `fill: NULL` lists, so also the most `fill: NONE` can list),
 * 1 for an aggregate, 0 for an empty range (`from >= to`), each weighing
 * {@link SKETCH_BUCKET_WEIGHT} when the query reads percentiles. Counted without listing
 * the buckets, so a query of a billion buckets is priced in microseconds.
 */
export function bucketsPerGroup(query: CostedQuery): number {
  if (query.to <= query.from) return 0;
  const buckets = query.granularity === null ? 1 : countBuckets(query.from, query.to, query.granularity.cut, query.timeZone);
  return query.wants?.sketch ? buckets * SKETCH_BUCKET_WEIGHT : buckets;
}

/**
 * The most buckets a query can produce over `groups` groups or series: groups x
 * buckets per group (see {@link bucketsPerGroup}). It is the number a request reserves
 * from its budget before the query runs.
 */
export function queryCost(query: CostedQuery, groups: number): number {
  return bucketsPerGroup(query) * groups;
}

/** The number of values in all tag filters of `where` (`[{key, in: ["a", "b"]}]` counts 2); 0 for none. */
export function filterValueCount(where: readonly Pick<TagFilter, 'in'>[] | null | undefined): number {
  return (where ?? []).reduce((sum, filter) => sum + filter.in.length, 0);
}
