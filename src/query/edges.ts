/**
 * Splitting a bucket query at whole hours or quarter hours (pure): the inner stretch a
 * rollup can answer, and the edges around it, which only minute slots answer. A range
 * starting at 05:17 (TSBS's queries start at a random minute) reads minutes from 05:17 to
 * 06:00 however coarse its buckets are; rollups keep no minutes, so without the split the
 * whole query would read every series-day document of its range. With it, a rollup reads
 * the hours (and, one keeping quarter hours, the quarters from 05:30) and the series-day
 * documents only the edges' minutes (05:17 to 05:30).
 */
import { DAY_MS, HOUR_MS, type QUARTER_MS, ceilTo, floorTo } from '../model/time.ts';
import { levelsRead, type BucketQuery } from './buckets-pipeline.ts';

/** A query cut at whole hours or quarter hours: see {@link edgeSplit}. */
export interface EdgeSplit {
  /** The query over the whole UTC hours (or quarter hours) inside the range, `[ceil(from), floor(to))`. */
  inner: BucketQuery;
  /**
   * The queries over the rest, the edges before and after `inner`: an edge's own range,
   * or, when both edges lie in the same or adjacent UTC days, one query over the whole
   * range `without` the inner hours and selecting only the edges' days
   * (`BucketQuery.dateRange`), so each document of those days is read once.
   */
  edges: BucketQuery[];
}

/** The UTC days `[from, to)` (midnights, ms) holding the instants of `[from, to)`. */
const daysOf = (from: number, to: number) => ({ from: floorTo(from, DAY_MS), to: floorTo(to - 1, DAY_MS) + DAY_MS });

/**
 * Cuts `query` into the whole UTC hours inside its range (`width` one hour), or the whole
 * quarter hours (`width` 15 minutes, for a rollup keeping quarter hours), and the edges
 * around them (see {@link EdgeSplit}); null when there is nothing to split (the range
 * starts and ends on whole ones, or holds none) or nothing to gain: the inner hours still read
 * minute slots even from quarter hours (minute buckets, or bucket boundaries inside
 * quarter hours), which no rollup keeps. The rows of `inner` and of `edges` add up to the
 * rows of `query` (the same buckets and groups: a bucket's start does not depend on the
 * range), as day summaries' rows add up with the documents' (`mergeRows`).
 */
export function edgeSplit(query: BucketQuery, width: typeof HOUR_MS | typeof QUARTER_MS = HOUR_MS): EdgeSplit | null {
  const from = ceilTo(query.from, width);
  const to = floorTo(query.to, width);
  if (from >= to || (from === query.from && to === query.to)) return null;
  const { dateRange: _dateRange, ...rest } = query;
  const inner: BucketQuery = { ...rest, from, to };
  if (levelsRead({ ...inner, quarters: true }).has('minute')) return null;
  const before: BucketQuery = { ...rest, to: from };
  const after: BucketQuery = { ...rest, from: to };
  if (query.from === from) return { inner, edges: [after] };
  if (query.to === to) return { inner, edges: [before] };
  const head = daysOf(query.from, from);
  const tail = daysOf(to, query.to);
  if (tail.from > head.to) return { inner, edges: [before, after] };
  return { inner, edges: [{ ...rest, without: { from, to }, dateRange: { from: head.from, to: tail.to } }] };
}
