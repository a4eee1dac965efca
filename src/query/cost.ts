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
}

/**
 * Buckets one group (or one series) of a query can produce: every bucket of the range
 * for a bucket list (what `fill: NULL` lists, so also the most `fill: NONE` can list),
 * 1 for an aggregate, 0 for an empty range (`from >= to`). Counted without listing the
 * buckets, so a query of a billion buckets is priced in microseconds.
 */
export function bucketsPerGroup(query: CostedQuery): number {
  if (query.to <= query.from) return 0;
  return query.granularity === null ? 1 : countBuckets(query.from, query.to, query.granularity.cut, query.timeZone);
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
