/**
 * Reading whole UTC days from day summaries (`documents/summaries.ts`; docs/design.md,
 * "Day summaries and day sketches"), pure: which queries and days summaries can answer, the rows they
 * add up to, and the merge of those rows with the rows of the series-day documents.
 */
import { emptyStats, mergeStats } from '../model/stats.ts';
import { DAY_MS } from '../model/time.ts';
import { UTC } from './zone.ts';
import { bucketStart } from './granularity.ts';
import { querySegments, rowKey, rowStats, setRowStats, type BucketQuery, type BucketRow, type SketchRow } from './buckets-pipeline.ts';
import type { DaySummary } from '../documents/summaries.ts';

/** What day summaries can answer of a bucket query: see {@link summaryPlan}. */
export interface SummaryPlan {
  /** The tag key the query groups by or filters on, which a summary must keep; null when it needs none. */
  key: string | null;
  /**
   * The stretches of whole UTC days of the range (`[from, to)`, midnights, ms since epoch,
   * ascending, adjacent ones merged) whose days a summary may answer.
   */
  ranges: { from: number; to: number }[];
}

/**
 * Whether day summaries can answer part of `query`, and which days: a query on a metric
 * (not on given series), grouped by at most one tag key and filtered at most on that
 * key (or, ungrouped, on one key), asking only for count, sum, minimum, maximum and the
 * sum of squares (not first and last; percentiles from the summaries' day sketches, see
 * `aggregateSummarized` in storage/aggregate.ts), over an aggregate or buckets of a day or more in
 * UTC, whose range holds at least one whole UTC day read from day totals. Other
 * queries, and the other days of this one (ragged edges), read the series-day documents.
 * Work is proportional to the segments of the range, not to its days.
 * @returns null when summaries cannot answer any of it.
 */
export function summaryPlan(query: BucketQuery): SummaryPlan | null {
  if (!('metric' in query.scope) || query.firstLast === true || query.grouping.by === 'series') return null;
  if (query.granularity !== null && ((query.timeZone ?? UTC) !== UTC || query.granularity.level !== 'day')) return null;
  const groupKey = query.grouping.by === 'tags' ? query.grouping.keys : [];
  const where = query.scope.where ?? [];
  if (groupKey.length > 1 || where.length > 1) return null;
  const key = groupKey[0] ?? where[0]?.key ?? null;
  if (where.length === 1 && where[0]!.key !== key) return null;
  const ranges: { from: number; to: number }[] = [];
  for (const segment of querySegments(query)) {
    if (segment.level !== 'day' || segment.from % DAY_MS !== 0 || segment.to % DAY_MS !== 0 || segment.to <= segment.from) continue;
    const last = ranges[ranges.length - 1];
    if (last !== undefined && last.to === segment.from) last.to = segment.to;
    else ranges.push({ from: segment.from, to: segment.to });
  }
  return ranges.length === 0 ? null : { key, ranges };
}

/** An entry of a summary that a query reads (`summaryEntries`), with the key of its row: bucket start `t` and group `g`. */
interface EntryRead<E> {
  id: { t?: Date; g?: Record<string, string> };
  entry: E;
}

/**
 * The entries of `summaries` a query reads, each with its row key (pure): per summary,
 * its bucket start `t` (the bucket holding the day, in UTC; none for an aggregate) and,
 * grouped or filtered by tag key `key`, the entries of that key (of the filter's values
 * only), each with its group `g` when grouped (`{}` for the series lacking the key, as
 * in the bucket pipeline); with `key` null, the summary's total alone. `partsOf` gives a
 * summary's total and its values by tag key `k` and value `v` (null: none to read).
 */
function summaryEntries<S extends Pick<DaySummary, 'date'>, E>(
  query: BucketQuery,
  key: string | null,
  summaries: readonly S[],
  partsOf: (summary: S) => { total: E; values: readonly (E & { k: string; v?: string })[] } | null,
): EntryRead<E>[] {
  const where = 'metric' in query.scope && (query.scope.where ?? []).length === 1 ? new Set(query.scope.where![0]!.in) : null;
  const read: EntryRead<E>[] = [];
  for (const summary of summaries) {
    const parts = partsOf(summary);
    if (parts === null) continue;
    const t = query.granularity === null ? undefined : new Date(bucketStart(summary.date.getTime(), query.granularity.cut, UTC));
    const withT = t === undefined ? {} : { t };
    if (key === null) {
      read.push({ id: withT, entry: parts.total });
      continue;
    }
    for (const entry of parts.values) {
      if (entry.k !== key || (where !== null && (entry.v === undefined || !where.has(entry.v)))) continue;
      const g = entry.v === undefined ? {} : { [key]: entry.v };
      read.push({ id: query.grouping.by === 'tags' ? { ...withT, g } : withT, entry });
    }
  }
  return read;
}

/**
 * The rows {@link bucketsPipeline} would give for the days of `summaries` (those a read
 * chose: per day, the summaries that add up its documents; see `summariesOfDay` in
 * documents/summaries.ts), before they are added up: one row per summary and value read,
 * keyed by bucket start (the bucket holding the day, in UTC) and group, with the
 * statistics `n0`, `sum0`, `min0`, `max0`, `sq0`, … of `query.fields`; the caller adds
 * them up with the documents' rows ({@link mergeRows}). Grouped or filtered by tag key `key`, it reads the summaries' values of
 * that key (the series lacking the key form a group of their own, `g: {}`, as in the
 * bucket pipeline); otherwise their totals. Values without a reading of any of the
 * fields give no row. Adding up on the embedded server instead (`$unwind` and `$group`
 * of the values) took 2.5 s for the 62 summaries of a month of flights, reading them
 * 0.5 s and adding them up here about 10 ms.
 */
export function summaryRows(
  query: BucketQuery,
  key: string | null,
  summaries: readonly Pick<DaySummary, 'date' | 'total' | 'values'>[],
): BucketRow[] {
  const rows: BucketRow[] = [];
  const read = summaryEntries(query, key, summaries, (summary) => ({ total: { s: summary.total }, values: summary.values }));
  for (const { id, entry } of read) {
    if (!query.fields.some((field) => (entry.s[field]?.n ?? 0) > 0)) continue;
    const row: BucketRow = { _id: Object.keys(id).length === 0 ? null : id };
    query.fields.forEach((field, i) => {
      const stats = entry.s[field];
      setRowStats(row, i, stats !== undefined && stats.n > 0 ? stats : emptyStats());
    });
    rows.push(row);
  }
  return rows;
}

/**
 * The rows `sketchPipeline` (query/buckets-pipeline.ts) would give for the days of `summaries` (chosen as for
 * {@link summaryRows}, each with its day sketches: see `sketchesAnswer` in
 * documents/summaries.ts): one row per summary, value read, field of `query.fields` and
 * bin, `{_id: {t, g, f, k}, c}` (field position `f`, bin key `k`, count `c`), keyed as
 * `summaryRows` keys its rows. The caller adds them to the rows of the documents' sketch
 * pipelines (counts of the same bucket, group, field and bin add up, as DDSketch
 * merges). A day bucket in UTC and an aggregate of whole days read the day sketches, so
 * these are the bins that pipeline would read from the same documents.
 */
export function summarySketchRows(
  query: BucketQuery,
  key: string | null,
  summaries: readonly Pick<DaySummary, 'date' | 'sketches'>[],
): SketchRow[] {
  const rows: SketchRow[] = [];
  const read = summaryEntries(query, key, summaries, ({ sketches }) =>
    sketches === undefined ? null : { total: { q: sketches.total }, values: sketches.values },
  );
  for (const { id, entry } of read) {
    query.fields.forEach((field, f) => {
      for (const [k, c] of Object.entries(entry.q[field] ?? {})) rows.push({ _id: { ...id, f, k }, c: Number(c) });
    });
  }
  return rows;
}

/**
 * Rows of the same bucket and group (from different reads of one query: day summaries,
 * the series-day documents of the other days and the tail) merged into one: counts,
 * sums and sums of squares add up, minima and maxima combine (`mergeStats`), for the
 * `fields` fields (`n0` … `sq<fields - 1>`, read by `rowStats` and written by
 * `setRowStats`). Rows are returned in the order their key first appeared.
 */
export function mergeRows(rows: readonly BucketRow[], fields: number): BucketRow[] {
  const merged = new Map<string, BucketRow>();
  for (const row of rows) {
    const key = rowKey(row._id);
    const into = merged.get(key);
    if (into === undefined) {
      merged.set(key, { ...row });
      continue;
    }
    for (let i = 0; i < fields; i++) {
      const stats = rowStats(into, i);
      mergeStats(stats, rowStats(row, i));
      setRowStats(into, i, stats);
    }
  }
  return [...merged.values()];
}
