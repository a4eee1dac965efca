/**
 * What a pipeline selects of a collection of series-day (or rollup) documents, as a
 * value (pure): the metric or the series, the tag pairs, the UTC days, the fields that
 * must hold readings, and the paths it reads. From that one value come the pipeline's
 * `$match` stages and its projection (`selectionStages`), which of the tail's readings
 * may fall into a selected document (`selectsReading`) and which paths of the tail's
 * documents are sent (`tailTree`): storage derives both from the value, never from the
 * stages.
 */
import type { Document } from 'mongodb';
import { tagPair } from '../model/series.ts';
import { DAY_MS, floorTo } from '../model/time.ts';
import type { Reading } from '../record/validate.ts';
import type { PathTree } from './encode.ts';
import { DOCUMENT_VERSION } from './series-day.ts';
import { hourRangesOf, minuteRangesOf, quarterRangesOf, type SlotRange } from './slots.ts';

/**
 * Which documents: those of a metric whose tag pairs (`key=value`, see `tagPair`) pass
 * every list of `tagPairs` (a document passes a list when it holds any pair of it: the
 * values of one tag key a query accepts), or those of the given series ids (a rollup's
 * group ids on a rollup's collection).
 */
export type DocumentScope = { metric: string; tagPairs?: readonly (readonly string[])[] } | { series: readonly string[] };

/** What a pipeline reads of a collection of documents: see the module comment. */
export interface DocumentSelection {
  scope: DocumentScope;
  /**
   * The days read: documents whose `date` (a UTC midnight) lies in `[from, to)`, ms since
   * epoch; `to` need not be a midnight.
   */
  days: { from: number; to: number };
  /**
   * The instants read, `[from, to)` ms since epoch: a document whose readings all lie
   * outside (its `last` before `from`, or its `first` at or after `to`) adds nothing to
   * any slot read, and is left out in the second `$match` before any stage walks it
   * (what a block's min and max times do for InfluxDB's TSM files and MongoDB's
   * time-series buckets). Documents of a layout before version 2 are kept. Absent: every
   * document of the days.
   */
  span?: { from: number; to: number };
  /** A document is read only when it holds readings of one of these fields (at least one). */
  fields: readonly string[];
  /** The paths of each document the pipeline reads (see {@link ReadPaths}): sorted, none inside another. */
  paths: readonly string[];
}

/**
 * A pipeline over documents as a value: what it selects and reads of them, and the
 * stages that compute its rows from what it selected (the first of them a `$group`, or
 * a `$project` of the slots).
 */
export interface DocumentPipeline {
  selection: DocumentSelection;
  stages: Document[];
}

/** A document filter split in two: the part an index serves, and the part checked on what it selects. */
export interface SplitFilter {
  indexed: Document;
  residual: Document;
}

/**
 * The document filter of a scope. Tag pairs become conditions on `tagPairs`, an
 * equality for a single value, so `{metric, tagPairs, date}` serves them: the most
 * selective list (fewest pairs) goes into `indexed`, the others into `residual`. The
 * series registry keeps the same `metric` and `tagPairs` (`query/registry.ts`).
 */
export function scopeFilter(scope: DocumentScope): SplitFilter {
  if ('series' in scope) {
    return { indexed: scope.series.length === 1 ? { series: scope.series[0] } : { series: { $in: [...scope.series] } }, residual: {} };
  }
  const lists = [...(scope.tagPairs ?? [])].sort((a, b) => a.length - b.length);
  const conditions = lists.map((pairs) => (pairs.length === 1 ? { tagPairs: pairs[0] } : { tagPairs: { $in: [...pairs] } }));
  const [first, ...rest] = conditions;
  return { indexed: { metric: scope.metric, ...first }, residual: rest.length > 0 ? { $and: rest } : {} };
}

/** The tag pairs a scope's list accepts for each of `where`'s tag filters (`key=value`, see `tagPair`). */
export function tagPairLists(where: readonly { key: string; in: readonly string[] }[]): string[][] {
  return where.map((tag) => tag.in.map((value) => tagPair(tag.key, value)));
}

/** Query filter for documents holding readings of any of `fields`. */
export function holdingReadings(fields: readonly string[]): Document {
  const tests = fields.map((field) => ({ [`fields.${field}.n`]: { $gt: 0 } }));
  return tests.length === 1 ? tests[0]! : { $or: tests };
}

/**
 * The filter of a selection's `span` (see `DocumentSelection.span`): documents of layout
 * version 2 or later (`v`) whose `last` is before the span or whose `first` is at or after
 * its end are left out (`$nor`). Older documents are kept whatever their times: a
 * document made before version 2 and updated since holds readings its `first` and
 * `last` may not cover (`DOCUMENT_VERSION` in series-day.ts).
 */
function spanFilter(span: DocumentSelection['span']): Document {
  if (span === undefined) return {};
  const current = { v: { $gte: DOCUMENT_VERSION } };
  return {
    $nor: [
      { ...current, last: { $lt: new Date(span.from) } },
      { ...current, first: { $gte: new Date(span.to) } },
    ],
  };
}

/**
 * The first `$match` of a selection of one UTC day of a metric, as an index range that
 * fetches fewer documents than the metric's (or the tag value's) whole day, or null for
 * any other selection (more days, series scopes, one day of a whole metric or a tag
 * value without a span). SecantusDB serves equalities followed by ONE operator field
 * from a compound index, so each is that: the day as an equality, then
 * - where the index part (`scopeFilter(...).indexed`) holds equalities only (the whole
 *   metric, or one tag value: the scope's most selective list has one pair) and there is a
 *   `span`: that part and `last` at or after the span's start, exactly a range of
 *   `{metric, date, last}` (`metric_date_last`) or of `{metric, tagPairs, date, last}`
 *   (`metric_tagPairs_date_last`), so the database fetches only the documents whose
 *   readings reach into the span. A server decodes every document its index range
 *   selects before any later stage tests it (on the embedded server about 15 ms a
 *   megabyte), and a dense metric's day is a few documents of up to 800 KB per series:
 *   the last hour of 100 TSBS hosts fetched 7.9 MB of the day's 158 MB
 *   (docs/performance.md, "Documents selected by their last reading"). The span's end
 *   stays in the second `$match` ({@link spanFilter}), with the scope's other tag lists.
 *   Unlike that filter, this bound applies to documents of layout version 1 too: the
 *   write paths before the ingest log widened a document's `first` and `last` with
 *   `$min` and `$max` on every update (`test/helpers/legacy-writer.ts`), and a document
 *   without readings has no `last` and adds nothing;
 * - where it holds several values of the most selective tag (`tagPairs: {$in: [...]}`):
 *   the metric, the day and that `$in`, a range of `{metric, date, tagPairs}`
 *   (`metric_date_tagPairs`), so the database fetches those series' documents of that day
 *   only; `{metric, tagPairs: {$in}}` of `metric_tagPairs_date_last` fetches every day of
 *   them.
 */
function oneDayRange(selection: DocumentSelection, indexed: Document): Document | null {
  const { scope, span, days } = selection;
  const oneDay = days.from % DAY_MS === 0 && floorTo(days.to - 1, DAY_MS) === days.from;
  if (!('metric' in scope) || !oneDay) return null;
  const day = new Date(days.from);
  if (Object.values(indexed).every((condition) => typeof condition === 'string')) {
    return span === undefined ? null : { ...indexed, date: day, last: { $gte: new Date(span.from) } };
  }
  return { metric: indexed.metric, date: day, tagPairs: indexed.tagPairs };
}

/**
 * The stages that select and trim a selection's documents:
 * - `match`: two `$match` stages, the first exactly an index range (`series_date_f`,
 *   `metric_date_last`, `metric_tagPairs_date_last` or, for one day, `metric_date_tagPairs`:
 *   {@link oneDayRange}), the second the other tag conditions and
 *   "holds a reading of a field". MongoDB merges adjacent `$match` stages anyway
 *   (manual, "Aggregation Pipeline Optimization": `$match` + `$match` coalescence), and
 *   a planner that does not (SecantusDB) would otherwise scan the collection. When the
 *   indexed part already holds an operator (`tagPairs: {$in: [...]}`, `series: {$in:
 *   [...]}`) and more than one day is read, the day range goes into the second stage:
 *   SecantusDB serves equalities followed by ONE operator field from a compound index,
 *   and with two it looks up the first equality alone (every document of the metric);
 *   with the `$in` alone it scans the index once per value (every day of those series),
 *   always a subset of that;
 * - `project`: the `$project` keeping exactly `paths`, `_id` left out.
 */
export function selectionStages(selection: DocumentSelection): { match: Document[]; project: Document } {
  const scope = scopeFilter(selection.scope);
  const days = { date: { $gte: new Date(selection.days.from), $lt: new Date(selection.days.to) } };
  const daysFirst = !Object.values(scope.indexed).some((condition) => condition !== null && typeof condition === 'object');
  const project: Document = { _id: 0 };
  for (const path of selection.paths) project[path] = 1;
  const first = oneDayRange(selection, scope.indexed) ?? (daysFirst ? { ...scope.indexed, ...days } : scope.indexed);
  return {
    match: [
      { $match: first },
      {
        $match: {
          ...('date' in first ? {} : days),
          ...scope.residual,
          ...holdingReadings(selection.fields),
          ...spanFilter(selection.span),
        },
      },
    ],
    project: { $project: project },
  };
}

/**
 * The whole pipeline of `pipeline` as the database runs it on the documents alone:
 * its `$match` stages, its projection and its stages.
 */
export function pipelineStages(pipeline: DocumentPipeline): Document[] {
  const { match, project } = selectionStages(pipeline.selection);
  return [...match, project, ...pipeline.stages];
}

/**
 * Whether a reading may fall into a document the selection selects (compiled once for
 * many readings): its metric, its series (not for a rollup, whose documents' `series` is
 * a group's id), its tag pairs and its UTC day, as the selection's `$match` tests the
 * document the reading folds into. A reading kept may still lack the fields (its
 * document is then dropped by the `$match` the tail's documents pass through).
 */
export function selectsReading(selection: DocumentSelection, rollup: boolean): (reading: Reading) => boolean {
  const { scope, days } = selection;
  const inDays = (reading: Reading) => {
    const day = floorTo(reading.time, DAY_MS);
    return day >= days.from && day < days.to;
  };
  if ('series' in scope) {
    if (rollup) return inDays;
    const ids = new Set(scope.series);
    return (reading) => ids.has(reading.seriesId) && inDays(reading);
  }
  const lists = (scope.tagPairs ?? []).map((pairs) => new Set(pairs));
  return (reading) => {
    if (reading.metric !== scope.metric || !inDays(reading)) return false;
    if (lists.length === 0) return true;
    const held = reading.tags.map((tag) => tagPair(tag.key, tag.value));
    return lists.every((pairs) => held.some((pair) => pairs.has(pair)));
  };
}

/**
 * The paths of the tail's documents to send for a selection, as a tree: those its
 * projection keeps and those its `$match` stages read (the identity, the day, the
 * fields' counts), so the tail's documents pass the same stages as the stored ones and
 * a read ships the paths it needs, not whole documents (sending them whole cost 1.87x
 * in the write-path prototype).
 */
export function tailTree(selection: DocumentSelection): PathTree {
  const matched = ['metric', 'series', 'tagPairs', 'date', 'v', 'first', 'last', ...selection.fields.map((field) => `fields.${field}.n`)];
  return pathTree([...selection.paths, ...matched]);
}

/** The tree of dotted `paths`; a path inside another ends at the outer one. */
export function pathTree(paths: readonly string[]): PathTree {
  const root: PathTree = {};
  for (const path of paths) {
    let node = root;
    const keys = path.split('.');
    for (const [i, key] of keys.entries()) {
      const next = node[key];
      if (next === true) break;
      if (i === keys.length - 1) {
        node[key] = true;
        break;
      }
      if (next === undefined) {
        const branch: PathTree = {};
        node[key] = branch;
        node = branch;
      } else node = next;
    }
  }
  return root;
}

/**
 * Collects the dotted paths a pipeline reads of each series-day (or rollup) document
 * (`DocumentSelection.paths`): the day, the group key's paths, the document version when
 * first and last readings are merged, and the slots the query reads (explicit paths such
 * as `hours.7.fields.delay`, see {@link addSlotsRead}). The projection keeping only them
 * comes right after `$match`, before any expression walks the document: expressions that
 * walk nested objects (`$objectToArray`, `$filter`, `$map`) cost in proportion to what
 * they walk, and a day document holds far more than one query reads: the other levels,
 * the other fields, the sketches, the latest readings.
 */
export class ReadPaths {
  private readonly paths = new Set<string>(['date']);

  /** Adds paths as they are. */
  add(...paths: string[]): this {
    for (const path of paths) this.paths.add(path);
    return this;
  }

  /**
   * Adds the whole entry of each of `fields` in the slot at `slot` (`fields`,
   * `hours.7.fields`, `hours.7.minutes.30`): one path per field rather than one per
   * statistic, since on the test server a projection costs per path and per document
   * (measured with a copy of the pipeline projecting each statistic: an HOUR chart of
   * 10 fields over 6 h of 20 TSBS hosts took 1,374 ms with 301 paths, 1,216 ms with 61).
   */
  slot(slot: string, fields: readonly string[]): this {
    for (const field of fields) this.paths.add(`${slot}.${field}`);
    return this;
  }

  /** The paths of a group key: the values of tag keys `keys`, or the series id (`'series'`). */
  group(keys: readonly string[] | 'series' | null): this {
    if (keys === 'series') this.paths.add('series');
    else if (keys !== null) for (const key of keys) this.paths.add(`tags.${key}`);
    return this;
  }

  /** The document version (`v`), read with first and last readings (see `DOCUMENT_VERSION`). */
  version(): this {
    this.paths.add('v');
    return this;
  }

  /** The readings of a document in the raw form (`r`), and with `sketches` the levels it sketches (`kl`). */
  raw(sketches: boolean): this {
    this.paths.add('r');
    if (sketches) this.paths.add('kl');
    return this;
  }

  /**
   * The collected paths, sorted, a path inside another collected path dropped (MongoDB
   * refuses a projection naming both `a.b` and `a.b.c`: "Path collision"), so equal
   * queries build equal stages.
   */
  list(): string[] {
    return [...this.paths].sort().filter((path) => {
      const steps = path.split('.');
      return !steps.some((_, i) => i > 0 && this.paths.has(steps.slice(0, i).join('.')));
    });
  }
}

/**
 * Minute entries (minutes x fields) of one hour a projection names one by one
 * (`hours.7.minutes.30.delay`); beyond, it keeps the hour's whole `minutes` object.
 * Measured on the test server (copies of the pipeline with other projections, 20 TSBS
 * hosts x 6 h): the max per minute of 1 field over 5 minutes of every host took 1,578 ms
 * with explicit minutes, 3,332 ms with the hour's whole `minutes` and 2,589 ms without
 * any projection; past a few dozen entries an hour, the paths cost more than they save.
 */
const EXPLICIT_MINUTE_ENTRIES = 16;

/**
 * Adds to `paths` the slots read for `ranges` (the slot ranges of each day plan, see
 * `slotsOf`) under `root` (`''` for the statistics, `'q.'` for the sketches): the day
 * totals when `dayTotals` (a plan reads a day piece, or derives a part of a day cut in
 * two from them), the hour slots of the hours of hour ranges, always by explicit paths
 * (`hours.7.fields.delay`): the whole `hours` object holds every minute too, and keeping
 * it was slower in three of four cases measured on the test server, most where hours
 * hold many minutes (an HOUR chart of 10 fields over 6 h of 20 TSBS hosts: 1,216 ms with
 * 61 explicit paths, 6,160 ms with `hours`; of one airport over a day of flights: 522 ms
 * with 25 paths, 727 ms with `hours`); 8% faster only for a day of every route's hours,
 * two fields (49 paths, where flights' sparse hours hold few minutes), the quarter hours
 * of quarter ranges (sketches only, by explicit paths `q.hours.7.quarters.2.delay`)
 * together with the minutes of those quarters (read instead in an hour without
 * quarter-hour sketches, see `quartersOfHour`; a path that a document lacks costs it
 * nothing), and the minutes of minute ranges (explicit minutes up to
 * {@link EXPLICIT_MINUTE_ENTRIES} per hour, else the hour's `minutes`). The statistics
 * also read the hour entry of every hour holding minutes read (pipelines test its count
 * before looking into the hour's minutes) and its packed minutes (`mc`).
 */
export function addSlotsRead(
  paths: ReadPaths,
  root: '' | 'q.',
  fields: readonly string[],
  ranges: readonly (readonly SlotRange[])[],
  dayTotals: boolean,
): void {
  const hours = new Set<number>();
  const quarters = new Set<number>();
  const minutesByHour = new Map<number, Set<number>>();
  const addMinutes = (from: number, to: number) => {
    for (let minute = from; minute < to; minute++) {
      const hour = Math.floor(minute / 60);
      const minutes = minutesByHour.get(hour) ?? new Set<number>();
      minutes.add(minute % 60);
      minutesByHour.set(hour, minutes);
    }
  };
  for (const pieces of ranges) {
    for (const [from, to] of hourRangesOf(pieces)) for (let hour = from; hour < to; hour++) hours.add(hour);
    for (const [from, to] of quarterRangesOf(pieces)) {
      for (let quarter = from; quarter < to; quarter++) quarters.add(quarter);
      addMinutes(from * 15, to * 15);
    }
    for (const [from, to] of minuteRangesOf(pieces)) addMinutes(from, to);
  }
  if (dayTotals) paths.slot(`${root}fields`, fields);
  for (const hour of hours) paths.slot(`${root}hours.${hour}.fields`, fields);
  for (const quarter of quarters) paths.slot(`${root}hours.${Math.floor(quarter / 4)}.quarters.${quarter % 4}`, fields);
  for (const [hour, minutes] of minutesByHour) {
    if (minutes.size * fields.length <= EXPLICIT_MINUTE_ENTRIES) {
      for (const minute of minutes) paths.slot(`${root}hours.${hour}.minutes.${minute}`, fields);
    } else {
      paths.add(`${root}hours.${hour}.minutes`);
    }
    if (root !== '') continue;
    paths.slot(`hours.${hour}.fields`, fields);
    // Packed minutes (`mc`, see `PackedMinutes`), whole: one path, as most documents have none.
    paths.add(`hours.${hour}.mc`);
  }
}
