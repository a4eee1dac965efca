/**
 * Day summaries (docs/design.md, "Day summaries and day sketches"): documents per metric and UTC
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
 * one document per series and day. A summary also carries the day sketches of its
 * series, in total and per tag value where they fit (`SummarySketches`, stored apart:
 * docs/design.md, "Day summaries and day sketches"), so percentiles read it too.
 */
import type { Document } from 'mongodb';
import { type SeriesDayDocument, RAW_SKETCH_BITS } from './series-day.ts';
import { emptyStats, mergeStats, type Stats } from '../model/stats.ts';

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

/**
 * Sketch bins (a field's bin key in one tag value's sketch) a summary's day sketches may
 * hold per series-day document it adds up, over the values of its tag keys (the day's
 * total sketch is always kept): the keys with the fewest values first, while they fit.
 * A key that does not fit is left out (listed in {@link SummarySketches.omitted}) and
 * percentiles grouped or filtered by it read the documents. On the embedded server a
 * document read costs about as much as 75 bins of a summary (docs/design.md, "Day
 * summaries and day sketches"), so at 64 bins a document reading the summary's sketches never costs more
 * than reading the documents. Flights, a few readings per route-day, keep their
 * origins' and destinations' sketches; a dense metric, one document per host and day
 * with hundreds of bins each, keeps its total only, and its folds stay as fast.
 */
export const SUMMARY_SKETCH_BINS_PER_DOCUMENT = 64;

/** Quantile sketches of fields by field name: bin key (`model/sketch.ts`) to count. */
export type FieldSketches = Record<string, Record<string, number>>;

/**
 * The day sketches of a summary: for the fields the metric sketches at the day level,
 * the merged day sketch (`q.fields.<field>` of each series-day document, or the bins of
 * a raw document's readings when it lists the day level, `kl`) over every series
 * (`total`) and per tag key and value (`values`, as {@link SummaryValue} without the
 * statistics). Stored apart from the summary (`day_sketches`, the summary's `_id`), so
 * queries without percentiles do not read them.
 */
export interface SummarySketches {
  total: FieldSketches;
  values: { k: string; v?: string; q: FieldSketches }[];
  /** Tag keys of the summary's `keys` whose sketches did not fit (see {@link SUMMARY_SKETCH_BINS_PER_DOCUMENT}), left out. */
  omitted: string[];
  /** The series-day documents the summary adds up: its bins' budget. */
  documents: number;
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
  /**
   * The day sketches, when the summary was written with them (every fold and
   * compaction since day sketches exist; a summary read without them, or written
   * before, has none, and its days read sketches from the documents).
   */
  sketches?: SummarySketches;
}

/** What a summary reads of a series-day document: its metric, day, tags, day statistics per field and day sketches (either form). */
export type SummarizedDocument = Pick<SeriesDayDocument, 'metric' | 'date' | 'tags' | 'q' | 'r' | 'kl'> & {
  fields: Record<string, SummaryStats>;
};

/** Adds the bins of `from` into `into`, per field (DDSketch merges by adding counts, see `model/sketch.ts`). */
function addSketches(into: FieldSketches, from: FieldSketches): void {
  for (const [field, bins] of Object.entries(from)) {
    into[field] ??= {};
    const to = into[field];
    for (const [key, count] of Object.entries(bins)) to[key] = (to[key] ?? 0) + Number(count);
  }
}

/**
 * The day sketches of a series-day document as a sketch pipeline reads them at the day
 * level (`SKETCH_READER` in documents/slots.ts): `q.fields` in the slot form; in
 * the raw form, the bin of each reading's sketched fields (`r[].k`) when the document
 * lists the day level (`kl`), else none.
 */
export function daySketchesOf(doc: Pick<SeriesDayDocument, 'q' | 'r' | 'kl'>): FieldSketches {
  if (!Array.isArray(doc.r)) return doc.q?.fields ?? {};
  const sketches: FieldSketches = {};
  if (Math.floor((doc.kl ?? 0) / RAW_SKETCH_BITS.day) % 2 !== 1) return sketches;
  for (const reading of doc.r) {
    for (const [field, key] of Object.entries(reading.k ?? {})) {
      sketches[field] ??= {};
      const bins = sketches[field];
      bins[key] = (bins[key] ?? 0) + 1;
    }
  }
  return sketches;
}

/** Number of bins of `sketches`, over every field. */
const binCount = (sketches: FieldSketches) => Object.values(sketches).reduce((sum, bins) => sum + Object.keys(bins).length, 0);

/** Adds the fields of `fields` that hold readings into `into` (`mergeStats`, per field). */
function addFields(into: Record<string, SummaryStats>, fields: Record<string, SummaryStats>): void {
  for (const [field, stats] of Object.entries(fields)) {
    if (!(stats.n > 0)) continue;
    into[field] ??= emptyStats();
    mergeStats(into[field], stats);
  }
}

/** One tag value's statistics and day sketches, by field name, and the documents it adds up (their indexes in `summarizeDays`). */
interface ValueGroup {
  s: Record<string, SummaryStats>;
  q: FieldSketches;
  docs: number[];
}

/** A tag key's groups per value (undefined: the series without the key). */
type ValueGroups = Map<string | undefined, ValueGroup>;

/** The group of `value` in `groups`, created empty when it has none yet. */
function groupOf(groups: ValueGroups, value: string | undefined): ValueGroup {
  let group = groups.get(value);
  if (group === undefined) {
    group = { s: {}, q: {}, docs: [] };
    groups.set(value, group);
  }
  return group;
}

/** A summary's parts as they are built: its kept and omitted keys and its values. */
interface SummaryParts {
  keys: string[];
  omitted: string[];
  values: SummaryValue[];
}

/**
 * Adds tag key `tagKey`'s value groups that hold readings to `parts`, unless it has more
 * than {@link SUMMARY_MAX_VALUES} values (groups without readings counted), then listed in
 * `omitted`.
 * @returns the groups added (null: the key is omitted).
 */
function keepKey(tagKey: string, groups: ValueGroups, parts: SummaryParts): [string | undefined, ValueGroup][] | null {
  if (groups.size > SUMMARY_MAX_VALUES) {
    parts.omitted.push(tagKey);
    return null;
  }
  parts.keys.push(tagKey);
  const kept = [...groups].filter(([, group]) => Object.keys(group.s).length > 0);
  for (const [value, group] of kept)
    parts.values.push(value === undefined ? { k: tagKey, s: group.s } : { k: tagKey, v: value, s: group.s });
  return kept;
}

/** A kept tag key whose sketches may join a summary's: its groups, a lower bound of their bins, and how to merge their sketches (into `q`). */
interface SketchCandidate {
  key: string;
  groups: [string | undefined, ValueGroup][];
  /** No fewer bins than the merged sketches will hold (0: unknown). */
  fewest: number;
  merge: () => void;
}

/**
 * Adds to `sketches` the sketches of `candidates` that fit `budget` bins, the keys with
 * the fewest values first (ties by name): a key whose lower bound or merged bins pass
 * what is left of the budget is listed in `omitted` without being merged further.
 */
function chooseSketches(candidates: SketchCandidate[], budget: number, sketches: SummarySketches): void {
  let left = budget;
  const ordered = [...candidates].sort((a, b) => a.groups.length - b.groups.length || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const candidate of ordered) {
    if (candidate.fewest > left) {
      sketches.omitted.push(candidate.key);
      continue;
    }
    candidate.merge();
    const bins = candidate.groups.reduce((sum, [, group]) => sum + binCount(group.q), 0);
    if (bins > left) {
      sketches.omitted.push(candidate.key);
      continue;
    }
    left -= bins;
    for (const [value, group] of candidate.groups) {
      if (Object.keys(group.q).length === 0) continue;
      sketches.values.push(value === undefined ? { k: candidate.key, q: group.q } : { k: candidate.key, v: value, q: group.q });
    }
  }
  sketches.omitted.sort();
}

/**
 * The day summaries of fold or compaction `c` (pure): one per metric and day among `docs`
 * (each series-day once: the parts fold `c` wrote, or the documents compaction `c` merged
 * for whole days), of the kind `kindOf` gives, with their day sketches
 * ({@link daySketchesOf}; per tag key as {@link SUMMARY_SKETCH_BINS_PER_DOCUMENT} allows).
 * Fields without readings (`n` 0) are left out, as queries skip them.
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
    const sketchesOf = dayDocs.map(daySketchesOf);
    const binsOf = sketchesOf.map(binCount);
    const allKeys = [...new Set(dayDocs.flatMap((doc) => Object.keys(doc.tags)))].sort();
    const parts: SummaryParts = { keys: [], omitted: [], values: [] };
    const candidates: SketchCandidate[] = [];
    for (const tagKey of allKeys) {
      const byValue: ValueGroups = new Map();
      dayDocs.forEach((doc, i) => {
        const group = groupOf(byValue, doc.tags[tagKey]);
        addFields(group.s, doc.fields);
        group.docs.push(i);
      });
      const kept = keepKey(tagKey, byValue, parts);
      if (kept === null) continue;
      candidates.push({
        key: tagKey,
        groups: kept,
        // A merged sketch has at least the bins of its largest document's.
        fewest: kept.reduce((sum, [, group]) => sum + group.docs.reduce((most, i) => Math.max(most, binsOf[i]!), 0), 0),
        merge: () => {
          for (const [, group] of kept) for (const i of group.docs) addSketches(group.q, sketchesOf[i]!);
        },
      });
    }
    const total: Record<string, SummaryStats> = {};
    for (const doc of dayDocs) addFields(total, doc.fields);
    const sketches: SummarySketches = { total: {}, values: [], omitted: [], documents: dayDocs.length };
    for (const daySketches of sketchesOf) addSketches(sketches.total, daySketches);
    chooseSketches(candidates, SUMMARY_SKETCH_BINS_PER_DOCUMENT * dayDocs.length, sketches);
    summaries.push({
      _id: `${key}:${c}`,
      metric,
      date,
      f: c,
      kind: kindOf(metric, date.getTime()),
      keys: parts.keys,
      omitted: parts.omitted,
      total,
      values: parts.values,
      sketches,
    });
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
 * the same). Day sketches are merged when every summary of `chosen` has them (else the
 * merged one has none), within the budget of the documents they add up together
 * ({@link SUMMARY_SKETCH_BINS_PER_DOCUMENT}); a key whose sketches any of them left out
 * has none (where the union's might fit: a merged key's bins add up to less than its
 * parts'). What a compaction that merges only a day's recent parts writes, so that a
 * day's summaries stay a few however seldom it is merged whole (docs/ingest-design.md,
 * "Compaction").
 * @throws Error when `chosen` is empty or mixes metrics or days (a caller's mistake).
 */
export function mergeSummaries(chosen: readonly DaySummary[], c: number): DaySummary {
  const first = chosen[0];
  if (first === undefined || chosen.some((summary) => summary.metric !== first.metric || summary.date.getTime() !== first.date.getTime())) {
    throw new Error('mergeSummaries: summaries of one metric and day are needed');
  }
  const omittedAnywhere = new Set(chosen.flatMap((summary) => summary.omitted));
  const allKeys = [...new Set(chosen.flatMap((summary) => summary.keys))].filter((key) => !omittedAnywhere.has(key)).sort();
  const sketched = chosen.every((summary) => summary.sketches !== undefined);
  const parts: SummaryParts = { keys: [], omitted: [...omittedAnywhere], values: [] };
  const candidates: SketchCandidate[] = [];
  const sketchesLeftOut: string[] = [];
  for (const tagKey of allKeys) {
    const byValue: ValueGroups = new Map();
    for (const summary of chosen) {
      if (summary.keys.includes(tagKey)) {
        for (const entry of summary.values) if (entry.k === tagKey) addFields(groupOf(byValue, entry.v).s, entry.s);
      } else if (Object.keys(summary.total).length > 0) {
        // None of this summary's series carries the key: all of them lack it.
        addFields(groupOf(byValue, undefined).s, summary.total);
      }
    }
    const kept = keepKey(tagKey, byValue, parts);
    if (kept === null || !sketched) continue;
    if (chosen.some((summary) => summary.sketches!.omitted.includes(tagKey))) {
      sketchesLeftOut.push(tagKey);
      continue;
    }
    candidates.push({
      key: tagKey,
      groups: kept,
      fewest: 0,
      merge: () => {
        for (const summary of chosen) {
          if (summary.keys.includes(tagKey)) {
            for (const entry of summary.sketches!.values) if (entry.k === tagKey) addSketches(byValue.get(entry.v)?.q ?? {}, entry.q);
          } else {
            const group = byValue.get(undefined);
            if (group !== undefined) addSketches(group.q, summary.sketches!.total);
          }
        }
      },
    });
  }
  const total: Record<string, SummaryStats> = {};
  for (const summary of chosen) addFields(total, summary.total);
  let sketches: SummarySketches | undefined;
  if (sketched) {
    const documents = chosen.reduce((sum, summary) => sum + summary.sketches!.documents, 0);
    sketches = { total: {}, values: [], omitted: sketchesLeftOut, documents };
    for (const summary of chosen) addSketches(sketches.total, summary.sketches!.total);
    chooseSketches(candidates, SUMMARY_SKETCH_BINS_PER_DOCUMENT * documents, sketches);
  }
  return {
    _id: `${first.metric}:${first.date.getTime()}:${c}`,
    metric: first.metric,
    date: first.date,
    f: c,
    kind: 'whole',
    keys: parts.keys,
    omitted: [...new Set(parts.omitted)].sort(),
    total,
    values: parts.values,
    ...(sketches === undefined ? {} : { sketches }),
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

/**
 * Whether the day sketches of `chosen` (the summaries {@link summariesOfDay} chose for a
 * day) answer percentiles grouped or filtered by tag key `key` (null: none): every one of
 * them has its sketches, and none left the key's sketches out. Else the day's sketches
 * are read from its documents (and so are its statistics, in the same read).
 */
export function sketchesAnswer(chosen: readonly Pick<DaySummary, 'sketches'>[], key: string | null): boolean {
  return chosen.every((summary) => summary.sketches !== undefined && (key === null || !summary.sketches.omitted.includes(key)));
}

/** A summary's day sketches as stored in `day_sketches`. */
export interface StoredSketches extends SummarySketches {
  _id: string;
  metric: string;
  date: Date;
  f: number;
}
/**
 * The documents to insert for `summaries` (pure): the summaries without their sketches,
 * and the sketches of those that have them, each under its summary's `_id`.
 */
export function storedSummaries(summaries: readonly DaySummary[]): { summaries: Document[]; sketches: Document[] } {
  const stored: Document[] = [];
  const sketches: Document[] = [];
  for (const { sketches: daySketches, ...summary } of summaries) {
    stored.push(summary);
    if (daySketches !== undefined) {
      sketches.push({
        _id: summary._id,
        metric: summary.metric,
        date: summary.date,
        f: summary.f,
        ...daySketches,
      } satisfies StoredSketches);
    }
  }
  return { summaries: stored, sketches };
}
