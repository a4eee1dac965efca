/**
 * Day summaries (docs/ingest-design.md, "Day summaries"): documents per metric and UTC
 * day holding, for every tag key and value, the day statistics of each field over the
 * series that carry that value, numbered like the series-day documents (`f`):
 * - `whole` adds up every series-day document of the day visible at `f`: written by a
 *   whole-day compaction `f` from what it merged, by a compaction `f` of the day's
 *   recent runs from the summaries before it (`mergeSummaries`), or by fold `f` when it
 *   is the first to write to the day (no earlier document of the metric that day);
 * - `fold` adds up the parts fold `f` wrote to the day;
 * - `void`, written by a deletion, says the summaries numbered up to `f` no longer add
 *   up the day.
 * A reader at fold number V reads a day from the newest `whole` up to V and the `fold`
 * summaries after it, when no `void` is newer: the same sums as the day's documents
 * visible at V. A query grouped by one tag key reads a few summaries a day instead of
 * one document per series and day.
 */
import type { DayDocument } from './day-document.ts';
import { emptyStats, mergeStats, type Stats } from './stats.ts';

/**
 * Tag values a tag key may have in one metric-day and still be summarized: a key with
 * more (a `host` key over thousands of machines) would make the summary as large as the
 * day's documents and save nothing, so it is left out (listed in `omitted`) and queries
 * by it read the documents. Flights have 223 origins a day.
 */
export const SUMMARY_MAX_VALUES = 1_000;

/** The day statistics of a field in a summary: count, sum, sum of squares, minimum, maximum (as in a series-day document's `fields`). */
export type SummaryStats = Pick<Stats, 'n' | 'sum' | 'min' | 'max' | 'sq'>;

/**
 * One tag value's statistics in a summary: tag key `k`, value `v` (absent for the series
 * that lack the key, which a grouped query puts in a group of their own), and the day
 * statistics `s` of every field those series hold, by field name. A list rather than an
 * object keyed by value: tag values may hold `.` and `$`, which field names may not.
 */
export interface SummaryValue {
  k: string;
  v?: string;
  s: Record<string, SummaryStats>;
}

/** What a day summary adds up: see the module comment. */
export type SummaryKind = 'whole' | 'fold' | 'void';

/** A day summary as stored in the `day_summaries` collection. */
export interface DaySummary {
  /** `<metric>:<day ms>:<f>`, `<metric>:<day ms>:<f>:void` for a `void`: written once per fold or compaction `f` (a retried one inserts the same). */
  _id: string;
  metric: string;
  /** Midnight UTC of the day. */
  date: Date;
  /** The fold or compaction that wrote it (for a `void`, the visible fold number when the deletion wrote it). */
  f: number;
  kind: SummaryKind;
  /** The tag keys summarized, sorted (every key of the day's series but those in `omitted`). */
  keys: string[];
  /** Tag keys with more than {@link SUMMARY_MAX_VALUES} values that day, left out. */
  omitted: string[];
  /** The fields' day statistics over every series of the metric (a query neither grouped nor filtered). */
  total: Record<string, SummaryStats>;
  /** Per tag key (in `keys`) and value, the fields' day statistics. */
  values: SummaryValue[];
}

/** What a summary reads of a series-day document: its metric, day, tags and day statistics per field. */
export type SummarizedDocument = Pick<DayDocument, 'metric' | 'date' | 'tags'> & { fields: Record<string, SummaryStats> };

/** Adds the fields of `fields` that hold readings into `into` (`mergeStats`, per field). */
function addFields(into: Record<string, SummaryStats>, fields: Record<string, SummaryStats>): void {
  for (const [field, stats] of Object.entries(fields)) {
    if (!(stats.n > 0)) continue;
    into[field] ??= emptyStats();
    mergeStats(into[field], stats);
  }
}

/** A tag key's statistics per value (undefined: the series without the key), by field name. */
type ValueGroups = Map<string | undefined, Record<string, SummaryStats>>;

/** The statistics of `value` in `groups`, created empty when it has none yet. */
function groupOf(groups: ValueGroups, value: string | undefined): Record<string, SummaryStats> {
  let fields = groups.get(value);
  if (fields === undefined) {
    fields = {};
    groups.set(value, fields);
  }
  return fields;
}

/**
 * Adds tag key `tagKey`'s value groups that hold readings to `values`, unless it has more
 * than {@link SUMMARY_MAX_VALUES} values (groups without readings counted).
 * @returns whether the key is kept (false: it is to be listed in `omitted`).
 */
function keepKey(tagKey: string, groups: ValueGroups, values: SummaryValue[]): boolean {
  if (groups.size > SUMMARY_MAX_VALUES) return false;
  for (const [value, fields] of groups) {
    if (Object.keys(fields).length === 0) continue;
    values.push(value === undefined ? { k: tagKey, s: fields } : { k: tagKey, v: value, s: fields });
  }
  return true;
}

/**
 * The day summaries of fold or compaction `c` (pure): one per metric and day among `docs`
 * (each series-day once: the parts fold `c` wrote, or the documents compaction `c` merged
 * for whole days), of the kind `kindOf` gives. Fields without readings (`n` 0) are left
 * out, as queries skip them.
 */
export function summarizeDays(
  docs: readonly SummarizedDocument[],
  c: number,
  kindOf: (metric: string, day: number) => 'whole' | 'fold' = () => 'whole',
): DaySummary[] {
  const byDay = new Map<string, (typeof docs)[number][]>();
  for (const doc of docs) {
    const key = `${doc.metric}:${doc.date.getTime()}`;
    const list = byDay.get(key);
    if (list) list.push(doc);
    else byDay.set(key, [doc]);
  }
  const summaries: DaySummary[] = [];
  for (const [key, dayDocs] of byDay) {
    const { metric, date } = dayDocs[0]!;
    const allKeys = [...new Set(dayDocs.flatMap((doc) => Object.keys(doc.tags)))].sort();
    const keys: string[] = [];
    const omitted: string[] = [];
    const values: SummaryValue[] = [];
    for (const tagKey of allKeys) {
      const byValue: ValueGroups = new Map();
      for (const doc of dayDocs) addFields(groupOf(byValue, doc.tags[tagKey]), doc.fields);
      if (keepKey(tagKey, byValue, values)) keys.push(tagKey);
      else omitted.push(tagKey);
    }
    const total: Record<string, SummaryStats> = {};
    for (const doc of dayDocs) addFields(total, doc.fields);
    summaries.push({ _id: `${key}:${c}`, metric, date, f: c, kind: kindOf(metric, date.getTime()), keys, omitted, total, values });
  }
  return summaries;
}

/**
 * One `whole` summary numbered `c` that adds up `chosen` (pure): the summaries of one
 * metric's day that {@link summariesOfDay} chose (a `whole` one and the `fold` ones
 * after it), so that it answers as {@link summarizeDays} of the union of the documents
 * they add up. A tag key kept by every summary, or absent from a summary because none
 * of its series carries it (then its series are in that key's group without a value),
 * is kept; one any summary omitted, or with more than {@link SUMMARY_MAX_VALUES} values
 * once merged, is omitted. The one difference: `summarizeDays` also counts towards that
 * bound the values whose documents hold no readings, which no summary stores, so near
 * the bound a merged summary may keep a key the union's would omit (its answers are
 * the same). What a compaction that
 * merges only a day's recent parts writes, so that a day's summaries stay a few
 * however seldom it is merged whole (docs/ingest-design.md, "Compaction").
 * @throws Error when `chosen` is empty or mixes metrics or days (a caller's mistake).
 */
export function mergeSummaries(chosen: readonly DaySummary[], c: number): DaySummary {
  const first = chosen[0];
  if (first === undefined || chosen.some((summary) => summary.metric !== first.metric || summary.date.getTime() !== first.date.getTime())) {
    throw new Error('mergeSummaries: summaries of one metric and day are needed');
  }
  const omittedAnywhere = new Set(chosen.flatMap((summary) => summary.omitted));
  const allKeys = [...new Set(chosen.flatMap((summary) => summary.keys))].filter((key) => !omittedAnywhere.has(key)).sort();
  const keys: string[] = [];
  const omitted = new Set(omittedAnywhere);
  const values: SummaryValue[] = [];
  for (const tagKey of allKeys) {
    const byValue: ValueGroups = new Map();
    for (const summary of chosen) {
      if (summary.keys.includes(tagKey)) {
        for (const entry of summary.values) if (entry.k === tagKey) addFields(groupOf(byValue, entry.v), entry.s);
      } else if (Object.keys(summary.total).length > 0) {
        // None of this summary's series carries the key: all of them lack it.
        addFields(groupOf(byValue, undefined), summary.total);
      }
    }
    if (keepKey(tagKey, byValue, values)) keys.push(tagKey);
    else omitted.add(tagKey);
  }
  const total: Record<string, SummaryStats> = {};
  for (const summary of chosen) addFields(total, summary.total);
  return {
    _id: `${first.metric}:${first.date.getTime()}:${c}`,
    metric: first.metric,
    date: first.date,
    f: c,
    kind: 'whole',
    keys,
    omitted: [...omitted].sort(),
    total,
    values,
  };
}

/**
 * The `void` summary a deletion writes for a metric's day at visible fold number `f`:
 * no summary numbered up to `f` answers that day any more (its documents changed), until
 * a newer `whole` one.
 */
export function voidSummary(metric: string, day: number, f: number): DaySummary {
  return { _id: `${metric}:${day}:${f}:void`, metric, date: new Date(day), f, kind: 'void', keys: [], omitted: [], total: {}, values: [] };
}

/** What {@link summariesOfDay} reads of a day summary: its id, day, number and kind, the tag keys it keeps. */
export type SummaryChoice = Pick<DaySummary, '_id' | 'date' | 'f' | 'kind' | 'keys'>;

/**
 * The summaries that answer one day at fold number `visible` (pure): the newest `whole`
 * one up to `visible` and every `fold` one after it up to `visible`, each keeping tag key
 * `key` (null: any); none when a `void` is as new as that `whole` or newer (at the same
 * number the `void` wins: a deletion writes it once the fold of that number is done),
 * when there is no `whole` one, or when one of them left `key` out. Together they add up
 * the day's series-day documents visible at `visible` (see the module comment).
 */
export function summariesOfDay<S extends SummaryChoice>(summaries: readonly S[], visible: number, key: string | null): S[] {
  const seen = summaries.filter((summary) => summary.f <= visible);
  let base: S | undefined;
  let voided = Number.NEGATIVE_INFINITY;
  for (const summary of seen) {
    if (summary.kind === 'void') voided = Math.max(voided, summary.f);
    else if (summary.kind === 'whole' && (base === undefined || summary.f > base.f)) base = summary;
  }
  if (base === undefined || voided >= base.f) return [];
  const chosen = [base, ...seen.filter((summary) => summary.kind === 'fold' && summary.f > base.f)];
  return key === null || chosen.every((summary) => summary.keys.includes(key)) ? chosen : [];
}
