import type { Document } from 'mongodb';
import type { RowStats, Stats, TimedValue } from '../model/stats.ts';
import type { TagFilter } from './spec.ts';
import { DAY_MS, floorTo } from '../model/time.ts';
import {
  bucketBoundaries,
  bucketStart,
  bucketStartExpression,
  bucketStartMillis,
  GRANULARITIES,
  LEVEL_MS,
  type Cut,
  type Granularity,
  type SketchLevel,
} from './granularity.ts';
import { planDays, type DaySection, type DayPiece, type DayPlan } from './read-plan.ts';
import { planBucketSegments, planSegments, planSketchSegments, type Segment } from './segments.ts';
import { UTC } from './zone.ts';
import { DOCUMENT_VERSION } from '../documents/series-day.ts';
import {
  addSlotsRead,
  type DocumentPipeline,
  type DocumentScope,
  type DocumentSelection,
  ReadPaths,
  scopeFilter,
  tagPairLists,
} from '../documents/selection.ts';
import {
  accumulators,
  BASIC_STATISTICS,
  byForm,
  COUNTER_READER,
  DAY_START,
  DOCUMENT_DATE,
  dayTotalOf,
  dayTotals,
  groupKey,
  KEEP_VERSION,
  largerSectionStats,
  long,
  lowestVersion,
  mergedCount,
  mergedStats,
  rawMergedStats,
  SERIES_ID,
  SKETCH_READER,
  type SlotReader,
  type CounterSlot,
  type Statistic,
  type RawAs,
  slotOrReadingAccumulators,
  slotOrReadingTime,
  slotsOf,
  statisticsOf,
  withDocumentDay,
  STATS_READER,
} from '../documents/slots.ts';

/**
 * Which bucket documents a query reads: the series of a metric whose tags pass every
 * filter of `where` (all of them when `where` is empty), or a list of series ids.
 */
export type BucketScope = { metric: string; where?: readonly TagFilter[] } | { series: readonly string[] };

/**
 * How a query splits its results: not at all, by the values of some tag keys
 * (one bucket list per origin airport, say), or by series (for batched `Series.buckets`).
 */
export type Grouping = { by: 'none' } | { by: 'tags'; keys: readonly string[] } | { by: 'series' };

/** A validated, normalized bucket query (see `query/spec.ts`). */
export interface BucketQuery {
  scope: BucketScope;
  /** The fields whose statistics are read (valid names, at least one), all in one pass. */
  fields: readonly string[];
  /** Half-open range `[from, to)` in ms since epoch, UTC, whole minutes, `from < to`. */
  from: number;
  to: number;
  /** Bucket size; null computes one aggregate over the whole range. */
  granularity: Granularity | null;
  grouping: Grouping;
  /**
   * IANA time zone the buckets are cut in (default UTC): local days, months and hours
   * aligned to the zone's offset (see `query/granularity.ts`). Not used by aggregates.
   */
  timeZone?: string;
  /**
   * Also merge the first and last reading of each bucket (`first0`, `last0`, … in the
   * rows) and the lowest layout version of the documents read (`ver`). Off unless asked
   * for: two more accumulators per field.
   */
  firstLast?: boolean;
  /**
   * Read only the documents of the UTC days in `[from, to)` (midnights, ms since epoch)
   * instead of every day of the range; the slots read are planned over the whole range
   * as without it. A read answering other days from day summaries sets it (see
   * `query/summaries.ts`).
   */
  dateRange?: { from: number; to: number };
  /**
   * The documents read keep quarter-hour statistics (rollup documents of a definition
   * with `quarters`, see `HourSlot.quarters`): the range is read from quarter hours where
   * a bucket boundary or an edge falls on one inside an hour, instead of from minutes
   * (see {@link querySegments}).
   */
  quarters?: boolean;
  /**
   * A stretch `[from, to)` of whole UTC hours or quarter hours inside the range (ms since
   * epoch) that another source reads: a rollup answers the inner stretch of a range whose
   * edges fall inside hours, and this query reads only the edges (see `query/edges.ts`). Its slots
   * are left out of the segments read ({@link querySegments}), so the two reads add up
   * every reading of the range once, the tail's included.
   */
  without?: { from: number; to: number };
}

/**
 * One output row of a bucket pipeline: the bucket start `t` (absent for an aggregate),
 * the group `g` (tag values keyed by tag key, or a series id; absent when not grouped)
 * and the merged statistics of each field of the query, by position: `n0`, `sum0`,
 * `min0`, `max0`, `sq0` for the first field, `n1`… for the second (see {@link rowStats}).
 */
export interface BucketRow {
  _id: { t?: Date; g?: Record<string, string> | string } | null;
  [statistic: string]: unknown;
}

/** The key of a row's bucket and group, to find the rows of one bucket and group across pipelines: its start in ms and its group as JSON. */
export const rowKey = (id: BucketRow['_id']) => `${id?.t?.getTime() ?? ''}\u0000${JSON.stringify(id?.g ?? null)}`;

/** A stored `{t, v}` pair of a row as a {@link TimedValue}; null when absent. */
function rowPair(value: unknown): TimedValue | null {
  if (value === null || typeof value !== 'object') return null;
  const { t, v } = value as { t?: unknown; v?: unknown };
  return t instanceof Date && typeof v === 'number' ? { t: t.getTime(), v } : null;
}

/**
 * The statistics of the field at `index` (its position in `BucketQuery.fields`) in a
 * row; n is 0 when it had none. First and last are there when the pipeline merged them
 * (`firstLast`) and every document read was of layout version 2 or later (`ver`), else
 * null; the sketch when the engine attached the sketch pipeline's bins as `q<index>`;
 * a counter's increase when the engine attached it as `inc<index>` (see `query/counters.ts`).
 */
export function rowStats(row: BucketRow, index: number): RowStats {
  const complete = typeof row.ver === 'number' && row.ver >= DOCUMENT_VERSION;
  return {
    n: (row[`n${index}`] as number | undefined) ?? 0,
    sum: (row[`sum${index}`] as number | undefined) ?? 0,
    min: (row[`min${index}`] as number | null | undefined) ?? Infinity,
    max: (row[`max${index}`] as number | null | undefined) ?? -Infinity,
    sq: (row[`sq${index}`] as number | undefined) ?? 0,
    first: complete ? rowPair(row[`first${index}`]) : null,
    last: complete ? rowPair(row[`last${index}`]) : null,
    sketch: row[`q${index}`] instanceof Map ? (row[`q${index}`] as Map<string, number>) : null,
    increase: typeof row[`inc${index}`] === 'number' ? (row[`inc${index}`] as number) : null,
  };
}

/**
 * Writes `stats` into `row` as the bucket pipeline names them for the field at `index`
 * (`n<index>`, `sum<index>`, `sq<index>`, `min<index>`, `max<index>`): minimum and
 * maximum null when `stats` holds no reading, as the pipeline leaves them. The inverse
 * of {@link rowStats} for those five.
 */
export function setRowStats(row: BucketRow, index: number, stats: Stats): void {
  const has = stats.n > 0;
  row[`n${index}`] = stats.n;
  row[`sum${index}`] = stats.sum;
  row[`sq${index}`] = stats.sq;
  row[`min${index}`] = has ? stats.min : null;
  row[`max${index}`] = has ? stats.max : null;
}

/**
 * Pipeline on the series registry that counts the groups a query grouped by `keys` can
 * have: the distinct combinations of those tag values among the series of `metric`
 * matching `where` (series lacking a key group together, as in the bucket pipeline).
 * It yields one document `{groups: n}`, none when no series matches. The registry has
 * one small document per series, so this is cheap next to the bucket pipeline whose
 * size it bounds.
 */
export function seriesGroupsPipeline(metric: string, where: readonly TagFilter[], keys: readonly string[]): Document[] {
  const { indexed, residual } = scopeFilter(documentScope({ metric, where }));
  return [
    { $match: indexed },
    ...(Object.keys(residual).length > 0 ? [{ $match: residual }] : []),
    { $group: { _id: groupExpression({ by: 'tags', keys }) } },
    { $count: 'groups' },
  ];
}

/** The tag keys a grouping groups by, `'series'`, or null when it does not group (see `groupKey`). */
const groupKeys = (grouping: Grouping): readonly string[] | 'series' | null =>
  grouping.by === 'tags' ? grouping.keys : grouping.by === 'series' ? 'series' : null;

/** The group key of a document under `grouping` (see `groupKey`). */
const groupExpression = (grouping: Grouping) => groupKey(groupKeys(grouping));

/** A query's scope in the documents' terms: the metric and the tag pairs each tag filter accepts, or the series. */
export function documentScope(scope: BucketScope): DocumentScope {
  return 'series' in scope ? { series: scope.series } : { metric: scope.metric, tagPairs: tagPairLists(scope.where ?? []) };
}

/**
 * What a query selects of the documents (see `documents/selection.ts`): its scope, the
 * UTC days of its range (or of `dateRange`), the instants of its range (documents with no
 * reading there are left out), its fields, and the paths collected in `paths`.
 */
function selectionOf(query: BucketQuery, paths: ReadPaths): DocumentSelection {
  const days = query.dateRange ?? { from: floorTo(query.from, DAY_MS), to: query.to };
  return { scope: documentScope(query.scope), days, span: { from: query.from, to: query.to }, fields: query.fields, paths: paths.list() };
}

/** Total length of some pieces, ms. */
const lengthOf = (pieces: readonly DayPiece<SketchLevel>[]) => pieces.reduce((sum, piece) => sum + piece.to - piece.from, 0);

/**
 * The two sections of a plan that reads a whole day cut in two buckets, smaller first (see
 * {@link planReads}: the smaller is read from its slots, the larger derived from the
 * day totals); null for any other plan.
 */
function splitDay<L extends SketchLevel>(plan: DayPlan<L>): [DaySection<L>, DaySection<L>] | null {
  if (plan.sections === null || plan.sections.length !== 2 || lengthOf(plan.pieces) !== DAY_MS) return null;
  const [a, b] = plan.sections as [DaySection<L>, DaySection<L>];
  return lengthOf(a.pieces) <= lengthOf(b.pieces) ? [a, b] : [b, a];
}

/** What building the reads of a zoned query needs besides the fields. */
interface KeyContext {
  cut: Cut;
  zone: string;
}

/** Expression for the start of a section's bucket, in ms since epoch (a long; made a date after grouping). */
function sectionKey(section: DaySection<SketchLevel>, plan: DayPlan<SketchLevel>, context: KeyContext): unknown {
  if ('at' in section.key) return long(section.key.at);
  if ('after' in section.key) return section.key.after === 0 ? DAY_START : { $add: [DAY_START, long(section.key.after)] };
  const first = section.pieces[0]!.from;
  return bucketStartMillis({ $add: [DAY_START, long(first)] }, context.cut, context.zone, plan.from + first, plan.to);
}

/** The stage after `$group` that turns bucket starts in ms into dates, as rows carry them. */
const startsAsDates = { $set: { '_id.t': { $toDate: '$_id.t' } } };

/**
 * Expression for what a document under `plan` contributes, as an array of
 * `{k, x}` (sections: `k` the bucket start in ms) or `{time, x}` (slots, bucket found per
 * slot afterwards). A whole day cut in two sections reads the smaller section's slots and
 * derives the larger one (see {@link largerSectionStats}). `raw` says what a document in
 * the raw form gives where slots are read (see `RawAs`).
 */
export function planReads(
  fields: readonly string[],
  plan: DayPlan<SketchLevel>,
  context: KeyContext | null,
  statistics: readonly Statistic[] = BASIC_STATISTICS,
  raw: RawAs = 'slots',
): unknown {
  if (plan.sections === null || context === null) {
    // A plan of one day knows the document's day; one shared by several days does not.
    const day = plan.to - plan.from === DAY_MS ? plan.from : undefined;
    return slotsOf(fields, plan.pieces, STATS_READER(fields, statistics.includes('first')), raw, day);
  }
  const sections = plan.sections;
  const rawSections = sections.map((section) => ({
    k: sectionKey(section, plan, context),
    x: rawMergedStats(fields, section.pieces, statistics),
  }));
  return byForm(rawSections, slotSectionReads(fields, plan, context, statistics));
}

/** {@link planReads} of a plan in sections, for a document in the slot form. */
function slotSectionReads(
  fields: readonly string[],
  plan: DayPlan<SketchLevel>,
  context: KeyContext,
  statistics: readonly Statistic[],
): unknown {
  const sections = plan.sections!;
  const halves = splitDay(plan);
  if (halves !== null) {
    const [small, large] = halves;
    const split = {
      $let: {
        vars: { s: mergedStats(fields, small.pieces, statistics) },
        in: [
          { k: sectionKey(small, plan, context), x: '$$s' },
          { k: sectionKey(large, plan, context), x: largerSectionStats(fields, large.pieces, statistics) },
        ],
      },
    };
    // A document without readings in the smaller section (often, for sparse data) gives its day totals to the larger section's bucket.
    const smallCount = mergedCount(fields, small.pieces);
    if (smallCount === null) return split;
    return {
      $cond: [{ $gt: [smallCount, 0] }, split, [{ k: sectionKey(large, plan, context), x: dayTotals(fields) }]],
    };
  }
  return sections.map((section) => ({ k: sectionKey(section, plan, context), x: mergedStats(fields, section.pieces, statistics) }));
}

/**
 * Expression for what a document reads: the reads of its day's plan, chosen among
 * `plans` by a balanced `$cond` tree on the document's `date` (a few comparisons even
 * for hundreds of plans), with the day bound as `$$day` (ms since epoch). The `$match`
 * on the range's days keeps every document inside the plans. `raw` says what a document
 * in the raw form gives where slots are read (see `RawAs`).
 */
export function documentReads(
  fields: readonly string[],
  plans: readonly DayPlan<SketchLevel>[],
  context: KeyContext | null,
  statistics: readonly Statistic[] = BASIC_STATISTICS,
  raw: RawAs = 'slots',
): Document {
  return perDay(plans, (plan) => planReads(fields, plan, context, statistics, raw));
}

/**
 * Expression choosing `read(plan)` for a document's day among `plans` by a balanced
 * `$cond` tree on its `date`, with the day bound as `$$day` (ms since epoch).
 */
function perDay<L extends SketchLevel>(plans: readonly DayPlan<L>[], read: (plan: DayPlan<L>) => unknown): Document {
  const tree = (lo: number, hi: number): unknown => {
    if (hi - lo === 1) return read(plans[lo]!);
    const mid = (lo + hi) >> 1;
    return { $cond: [{ $lt: [DOCUMENT_DATE, new Date(plans[mid]!.from)] }, tree(lo, mid), tree(mid, hi)] };
  };
  return withDocumentDay(tree(0, plans.length));
}

/**
 * Builds the aggregation pipeline of a bucket query (pure, no I/O).
 *
 * The range is split into segments (see {@link planBucketSegments}) read at the coarsest
 * level that answers exactly: a stored slot is read whole only when it lies inside the
 * range and no bucket boundary of the query's time zone falls strictly inside it. A UTC
 * `DAY` query over whole days only reads day totals, an `HOUR` query hour slots; a New
 * York `MONTH` query reads day totals except on the days holding a local month boundary
 * (hour slots there), a Kathmandu `DAY` query hour slots and the minutes of the hour
 * holding its 18:15 UTC boundary. `$match` selects the documents of the range's days
 * (index `series_date_f`, `metric_date_last` or `metric_tagPairs_date`) that hold the field.
 * Right after `$match`, `$project {paths}` keeps only the paths the pipeline reads (the
 * day, the group key, the statistics of the slots its plans read; see
 * {@link ReadPaths}). When day totals answer everything, one `$group` sums them:
 *
 *   `$match` -> `$match` -> `$project {paths}` -> `$group`
 *
 * (the read runs it without the `$project`, which trims nothing a `$group` reads; the
 * projection still cuts the tail's documents: `trimmed` in storage/aggregate.ts).
 *
 * Otherwise each document reads the plan of its day (see `query/read-plan.ts`, chosen
 * by a few comparisons on its date, {@link documentReads}), all in one pass:
 *
 *   `$match` -> `$match` -> `$project {paths}` -> `$project {slot}` -> `$unwind` -> `$group` (-> `$set`)
 *
 * - Finer granularities and UTC: the document's slots (`$objectToArray` over the hour
 *   and minute subdocuments, `$filter` by index), each grouped by its bucket start,
 *   computed from the slot's start in milliseconds ({@link bucketStartExpression}); a
 *   document in the raw form gives its readings of the range as they are, which the
 *   `$group` reads beside the slots (`RawAs` in `documents/slots.ts`).
 * - `DAY` and coarser in other zones: the slots of each day are merged per bucket
 *   ("sections") whose start is known in advance: a constant, or a fixed distance from the
 *   day's midnight, so no per-slot arithmetic is needed; a day cut in two by a local
 *   midnight reads its smaller section and takes the larger from the day totals (see
 *   {@link planReads}); starts are in ms and become dates after grouping (`$set`).
 *   Beyond {@link MAX_KNOWN_PLANS} plans (a boundary day per week or month over many
 *   years), every day is read as if it held a local midnight and each section's bucket is
 *   computed per document, which keeps the pipeline small.
 *
 * `$group` merges the statistics per bucket start and group: `$sum` of count, sum and
 * sum of squares, `$min`, `$max` (Cloudant's `_stats` reducer). No number is added to or
 * subtracted from a date anywhere. Rows come out unsorted; see {@link BucketRow}.
 * @throws InputError INVALID_TIME_ZONE for an unknown `timeZone`.
 */
export function bucketsPipeline(query: BucketQuery): DocumentPipeline {
  const fields = query.fields;
  const statistics = statisticsOf(query.firstLast === true);
  const zone = query.timeZone ?? UTC;
  const { from, to, granularity } = query;
  const segments = querySegments(query);
  const group = groupExpression(query.grouping);
  const groupId = (t: unknown, g: unknown) => {
    const id: Document = {};
    if (t !== undefined) id.t = t;
    if (group !== undefined) id.g = g;
    return Object.keys(id).length === 0 ? null : id;
  };

  // Zoned DAY and coarser: each day's reads in sections inside one bucket each, keyed by
  // constants (see `query/read-plan.ts`); otherwise slot by slot.
  let plans: DayPlan<SketchLevel>[];
  let context: KeyContext | null = null;
  if (granularity !== null && granularity.level === 'day' && zone !== UTC) {
    context = { cut: granularity.cut, zone };
    const starts = [bucketStart(from, granularity.cut, zone), ...bucketBoundaries(from, to, granularity.cut, zone)];
    plans = planDays(segments, { starts, keys: 'known' });
    if (plans.length > MAX_KNOWN_PLANS) {
      // Too many plans to send (a boundary day per week or month over years): read every
      // day as if it held a local midnight, and compute each section's bucket per document.
      const dayCut = GRANULARITIES.DAY.cut;
      const midnights = [bucketStart(from, dayCut, zone), ...bucketBoundaries(from, to, dayCut, zone)];
      plans = planDays(planSegments(from, to, 'day', midnights.slice(1)), { starts: midnights, keys: 'slot' });
    }
  } else {
    plans = planDays(segments);
  }

  const paths = new ReadPaths().group(groupKeys(query.grouping));
  if (query.firstLast) paths.version();
  addSlotsRead(
    paths,
    '',
    fields,
    plans.map((plan) => plan.pieces),
    readsDayTotals(plans, context !== null),
  );
  const wholeDays = plans.every((plan) => plan.pieces.length === 1 && plan.pieces[0]!.level === 'day');
  // Day totals are in both forms; anything finer is read from a raw document's readings (see `rawSlots`).
  if (!wholeDays) paths.raw(false);
  const selection = selectionOf(query, paths);

  if (wholeDays) {
    // Day totals answer everything: one $group over the documents, no $unwind.
    let t: unknown;
    if (granularity !== null) {
      if (context === null) t = utcDayKey(granularity.cut, from, to);
      else t = perDay(plans, (plan) => sectionKey(plan.sections![0]!, plan, context!));
    }
    const grouped = {
      $group: {
        _id: groupId(t, group),
        ...accumulators(fields, statistics, dayTotalOf),
        ...(query.firstLast ? lowestVersion() : {}),
      },
    };
    return { selection, stages: context === null ? [grouped] : [grouped, startsAsDates] };
  }
  // Slot by slot, a raw document giving its readings in the pieces as they are (see
  // `RawAs`); or zoned sections, keyed by their bucket start in ms.
  const bySlot = context === null;
  let t: unknown = '$slot.k';
  if (bySlot) t = granularity === null ? undefined : bucketStartExpression(slotOrReadingTime('slot'), granularity.cut, zone, from, to);
  const stages = [
    {
      $project: {
        _id: 0,
        slot: documentReads(fields, plans, context, statistics, bySlot ? 'readings' : 'slots'),
        ...(group === undefined ? {} : { g: group }),
        ...(query.firstLast ? KEEP_VERSION : {}),
      },
    },
    { $unwind: '$slot' },
    {
      $group: {
        _id: groupId(t, '$g'),
        ...(bySlot
          ? slotOrReadingAccumulators(fields, statistics, 'slot')
          : accumulators(fields, statistics, (_field, i) => `$slot.x.v${i}`)),
        ...(query.firstLast ? lowestVersion() : {}),
      },
    },
    ...(bySlot ? [] : [startsAsDates]),
  ];
  return { selection, stages };
}

/**
 * Whether a query's plans read the day totals beyond their day pieces: a zoned day cut
 * in two by a bucket boundary derives its larger section from them (see {@link planReads}).
 */
const readsDayTotals = (plans: readonly DayPlan<SketchLevel>[], zoned: boolean) =>
  plans.some((plan) => plan.pieces.some((piece) => piece.level === 'day') || (zoned && splitDay(plan) !== null));

/**
 * The stored levels (day, hour, minute) a bucket query reads, from the segments of its
 * range (see `query/segments.ts`): a rollup, which keeps no minutes, answers a query
 * only when this holds no `minute`.
 * @throws Error for an empty range.
 */
export function levelsRead(query: BucketQuery): Set<SketchLevel> {
  return new Set(querySegments(query).map((segment) => segment.level));
}

/**
 * The segments a query's range is read in (see `query/segments.ts`): cut at the bucket
 * boundaries of its granularity in its zone, or at whole days for an aggregate, in time
 * order; with `quarters`, quarter hours between hours and minutes (`planSketchSegments`).
 * @throws Error for an empty range.
 */
export function querySegments(query: BucketQuery): Segment<SketchLevel>[] {
  const zone = query.timeZone ?? UTC;
  const segments: Segment<SketchLevel>[] = query.quarters
    ? planSketchSegments(query.from, query.to, query.granularity, zone)
    : query.granularity
      ? planBucketSegments(query.from, query.to, query.granularity, zone)
      : planSegments(query.from, query.to, 'day');
  const read = query.without === undefined ? segments : segmentsOutside(segments, query.without);
  if (read.length === 0) throw new Error('bucketsPipeline: empty range');
  return read;
}

/**
 * The parts of time-ordered `segments` outside `[without.from, without.to)` (whole UTC
 * hours or quarter hours, the ceiling and floor of the range's ends: every day or hour
 * segment of the range lies inside). Only minute and quarter segments are cut, at those
 * edges, which keeps every piece on its level's slots.
 * @throws Error when a piece would not be whole slots of its level (a stretch other than that).
 */
function segmentsOutside<L extends SketchLevel>(segments: readonly Segment<L>[], without: { from: number; to: number }): Segment<L>[] {
  const outside: Segment<L>[] = [];
  const keep = (segment: Segment<L>, from: number, to: number) => {
    if (from >= to) return;
    const width = LEVEL_MS[segment.level];
    if (from % width !== 0 || to % width !== 0) throw new Error('bucketsPipeline: a stretch left out must cut no slot of its level');
    outside.push({ level: segment.level, from, to });
  };
  for (const segment of segments) {
    keep(segment, segment.from, Math.min(segment.to, without.from));
    keep(segment, Math.max(segment.from, without.to), segment.to);
  }
  return outside;
}

/**
 * One output row of a sketch pipeline: the bucket start `t` (absent for an aggregate),
 * the group `g` (as in {@link BucketRow}), the field's position `f`, a bin key `k` (see
 * `model/sketch.ts`) and the bin's count `c` over every slot of the bucket and group.
 */
export interface SketchRow {
  _id: { t?: Date; g?: Record<string, string> | string; f: number; k: string };
  c: number;
}

/**
 * Builds the pipeline that merges the quantile sketches of a bucket query (pure, no I/O):
 * the same documents and the same slots as {@link bucketsPipeline} (day totals, hour
 * and minute slots by the segments of the range), but read under `q`, and where the
 * statistics read minute slots, whole quarter hours read their quarter-hour sketches
 * instead (`planSketchSegments`; an hour without them reads its minute sketches, see
 * `quartersOfHour`): each slot's bins unwound and summed per bucket, group, field and bin. Merging DDSketch sketches is
 * adding their bin counts ("DDSketch: A Fast and Fully-Mergeable Quantile Sketch with
 * Relative-Error Guarantees"), so the rows are the exact merged sketch of each bucket:
 *
 *   `$match` -> `$match` -> `$project {paths}` -> `$project {s}` -> `$unwind` -> `$unwind` -> `$group`
 *
 * The first `$project` keeps only the day, the group key and the sketches of the slots
 * read (`q.fields.delay`, `q.hours.7.fields.delay`, `q.hours.7.quarters.2.delay`, …;
 * see {@link ReadPaths}).
 * Every slot lies inside one bucket (the segments see to that in any zone), so its
 * bucket is found from its start ({@link bucketStartExpression}). A slot read without a
 * sketch (a level the metric does not sketch, a document written before sketches)
 * contributes no bins: the engine compares the bins' total with the bucket's count and
 * answers no percentile when they differ. Rows come out unsorted.
 * @throws InputError INVALID_TIME_ZONE for an unknown `timeZone`.
 */
export function sketchPipeline(query: BucketQuery): DocumentPipeline {
  const zone = query.timeZone ?? UTC;
  const plans = planDays(planSketchSegments(query.from, query.to, query.granularity, zone));
  const { selection, stages, key } = slotRows(query, plans, 'q.', SKETCH_READER(query.fields));
  return {
    selection,
    stages: [...stages, { $unwind: '$s.b' }, { $group: { _id: { ...key, f: '$s.b.f', k: '$s.b.k' }, c: { $sum: '$s.b.c' } } }],
  };
}

/**
 * What turns a query's documents into one row per slot read, shared by the sketch and
 * counter pipelines: the selection (the paths read under `prefix`, `q.` for sketches, and
 * the group key), then stages: a `$project` of `s`, the slots of each document's day plan
 * as `reader` reads them, `g` the group and `id` the series (with `series`), then
 * `$unwind` of `s`.
 * @returns the selection, the stages, and the `$group` key of a row's bucket (`t`, from the slot's
 * start `s.time`; none without a granularity) and group (`g`; none when ungrouped).
 * @throws InputError INVALID_TIME_ZONE for an unknown `timeZone`.
 */
function slotRows(
  query: BucketQuery,
  plans: readonly DayPlan<SketchLevel>[],
  prefix: '' | 'q.',
  reader: SlotReader,
  options: { series?: boolean } = {},
): { selection: DocumentSelection; stages: Document[]; key: Document } {
  const zone = query.timeZone ?? UTC;
  const group = groupExpression(query.grouping);
  const paths = new ReadPaths().group(groupKeys(query.grouping));
  if (options.series) paths.group('series');
  addSlotsRead(
    paths,
    prefix,
    query.fields,
    plans.map((plan) => plan.pieces),
    readsDayTotals(plans, false),
  );
  // A raw document is read from its readings at every level, sketches included, at the
  // levels it lists (`kl`; see `rawSlots`).
  paths.raw(prefix === 'q.');
  const key: Document = {
    ...(query.granularity === null ? {} : { t: bucketStartExpression('$s.time', query.granularity.cut, zone, query.from, query.to) }),
    ...(group === undefined ? {} : { g: '$g' }),
  };
  const stages = [
    {
      $project: {
        _id: 0,
        s: perDay(plans, (plan) => slotsOf(query.fields, plan.pieces, reader)),
        ...(options.series ? { id: SERIES_ID } : {}),
        ...(group === undefined ? {} : { g: group }),
      },
    },
    { $unwind: '$s' },
  ];
  return { selection: selectionOf(query, paths), stages, key };
}

/**
 * One output row of a counter pipeline: one series `s` in one bucket `t` (absent for an
 * aggregate) of group `g` (as in {@link BucketRow}), and `p`, every slot of the series
 * read for the bucket, one entry per document (part) holding it, in no particular
 * order: `{v0: <CounterSlot of field 0>, v1: …}`, a field without readings there absent.
 */
export interface CounterRow {
  _id: { s: string; t?: Date; g?: Record<string, string> | string };
  p: Record<string, CounterSlot | undefined>[];
}

/**
 * Builds the pipeline that reads what the reset-aware increase of counters needs (pure,
 * no I/O): the same documents and slots as {@link sketchPipeline} (day totals, hour and
 * minute slots by the segments of the range, every slot inside one bucket of the
 * query's zone), each slot's count, first and last reading and `inc` per field, grouped
 * per series, bucket and group with the slots in an array:
 *
 *   `$match` -> `$match` -> `$project {paths}` -> `$project {s}` -> `$unwind` -> `$group`
 *
 * The increase is per series: the deltas between a slot's last reading and the next
 * slot's first (the next part's, when several parts hold one slot) need the slots in
 * time order, which a `$group` does not keep, so the engine orders and chains them
 * (`query/counters.ts`); the rows are per series and bucket, and the slots of one
 * series in one bucket are few (one per part, more only where a bucket is read from
 * finer slots). Never run on a rollup: a rollup merges series. Rows come out unsorted.
 * @throws InputError INVALID_TIME_ZONE for an unknown `timeZone`.
 */
export function counterPipeline(query: BucketQuery): DocumentPipeline {
  const { selection, stages, key } = slotRows(query, planDays(querySegments(query)), '', COUNTER_READER(query.fields), { series: true });
  return { selection, stages: [...stages, { $group: { _id: { s: '$id', ...key }, p: { $push: '$s.x' } } }] };
}

/** Plans with constant keys a pipeline may carry; beyond, sections are keyed per document. */
const MAX_KNOWN_PLANS = 128;

/**
 * Expression for the UTC bucket start of a document's day (`$date`) when day totals
 * answer the query; the cheaper form on the test server for each cut (measured,
 * `scripts/bench/zones.ts`, retired after 5e534e9): the date itself for days, `$dateTrunc` (MongoDB 5.0) for
 * weeks, months, quarters and years.
 */
function utcDayKey(cut: Cut, from: number, to: number): unknown {
  if (cut.kind === 'calendar') return { $dateTrunc: { date: DOCUMENT_DATE, unit: cut.unit } };
  if (cut.widthMs === DAY_MS && cut.offsetMs % DAY_MS === 0) return DOCUMENT_DATE;
  if (cut.widthMs === 7 * DAY_MS) {
    // 1970-01-01 was a Thursday; a week shifted back by `offsetMs` days starts that many days before Thursday.
    const weekday = ['thursday', 'wednesday', 'tuesday', 'monday', 'sunday', 'saturday', 'friday'][cut.offsetMs / DAY_MS]!;
    return { $dateTrunc: { date: DOCUMENT_DATE, unit: 'week', startOfWeek: weekday } };
  }
  return bucketStartExpression({ $toLong: DOCUMENT_DATE }, cut, UTC, from, to);
}
