import { Long, type Document } from 'mongodb';
import { tagPair } from '../model/series.ts';
import type { RowStats, Stats, TimedValue } from '../model/stats.ts';
import type { TagFilter } from './spec.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS, QUARTER_MS, floorTo } from '../model/time.ts';
import {
  bucketBoundaries,
  bucketStart,
  bucketStartExpression,
  bucketStartMillis,
  GRANULARITIES,
  type Cut,
  type Granularity,
  type Level,
  type SketchLevel,
} from './granularity.ts';
import { planDays, type DayPart, type DayPiece, type DayPlan } from './read-plan.ts';
import { planBucketSegments, planSegments, planSketchSegments } from './segments.ts';
import { UTC } from './zone.ts';
import { DOCUMENT_VERSION, type PackedStatistic, RAW_SKETCH_BITS } from '../documents/series-day.ts';

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

/** The disjunction of `tests` (a query filter or an expression), without `$or` for a single test. */
const anyOf = (tests: Document[]): Document => (tests.length === 1 ? tests[0]! : { $or: tests });

/** Query filter for documents holding readings of any of `fields`. */
const documentsWithReadings = (fields: readonly string[]) => anyOf(fields.map((field) => ({ [`fields.${field}.n`]: { $gt: 0 } })));

/** A document filter split in two: the part an index serves, and the part checked on what it selects. */
export interface SplitFilter {
  indexed: Document;
  residual: Document;
}

/**
 * The document filter of a scope. Tag filters become conditions on `tagPairs`, an
 * equality for a single value, so `{metric, tagPairs, date}` serves them: the most
 * selective one (fewest values) goes into `indexed`, the others into `residual`.
 */
export function scopeFilter(scope: BucketScope): SplitFilter {
  if ('series' in scope) {
    return { indexed: scope.series.length === 1 ? { series: scope.series[0] } : { series: { $in: [...scope.series] } }, residual: {} };
  }
  const where = [...(scope.where ?? [])].sort((a, b) => a.in.length - b.in.length);
  const conditions = where.map((tag) =>
    tag.in.length === 1
      ? { tagPairs: tagPair(tag.key, tag.in[0]!) }
      : { tagPairs: { $in: tag.in.map((value) => tagPair(tag.key, value)) } },
  );
  const [first, ...rest] = conditions;
  return { indexed: { metric: scope.metric, ...first }, residual: rest.length > 0 ? { $and: rest } : {} };
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
  const { indexed, residual } = scopeFilter({ metric, where });
  return [
    { $match: indexed },
    ...(Object.keys(residual).length > 0 ? [{ $match: residual }] : []),
    { $group: { _id: groupExpression({ by: 'tags', keys }) } },
    { $count: 'groups' },
  ];
}

function groupExpression(grouping: Grouping): Document | string | undefined {
  if (grouping.by === 'series') return '$series';
  if (grouping.by === 'tags') return Object.fromEntries(grouping.keys.map((key) => [key, `$tags.${key}`]));
  return undefined;
}

/** True when any of the fields at `statsPath(field)` has readings. */
const anyReadings = (fields: readonly string[], statsPath: (field: string) => string) =>
  anyOf(fields.map((field) => ({ $gt: [`${statsPath(field)}.n`, 0] })));
/** The statistics of every field as one object `{v0: <stats of field 0>, v1: …}`. */
const fieldStats = (fields: readonly string[], statsPath: (field: string) => string) =>
  Object.fromEntries(fields.map((field, i) => [`v${i}`, `${statsPath(field)}`]));

/**
 * Condition that `value` (an integer expression) lies in one of the half-open `ranges`
 * within `[0, full)`; null when they cover everything.
 */
function inRanges(value: unknown, ranges: readonly [number, number][], full: number): Document | null {
  const tests: Document[] = [];
  for (const [from, to] of ranges) {
    if (from <= 0 && to >= full) return null;
    const bounds: Document[] = [];
    if (from > 0) bounds.push({ $gte: [value, from] });
    if (to < full) bounds.push({ $lt: [value, to] });
    tests.push(bounds.length === 1 ? bounds[0]! : { $and: bounds });
  }
  return anyOf(tests);
}

/** `$and` of the conditions that are not null; null when none is left. */
const allOf = (tests: (Document | null)[]): Document | null => {
  const kept = tests.filter((test): test is Document => test !== null);
  if (kept.length === 0) return null;
  return kept.length === 1 ? kept[0]! : { $and: kept };
};

/** Joins ranges that touch, e.g. hours [0, 5) and [5, 7) into [0, 7). */
const joinRanges = (ranges: [number, number][]): [number, number][] =>
  ranges.reduce<[number, number][]>((joined, [from, to]) => {
    const last = joined[joined.length - 1];
    if (last !== undefined && last[1] >= from) last[1] = Math.max(last[1], to);
    else joined.push([from, to]);
    return joined;
  }, []);

/** A number the server keeps as a 64-bit integer (`$toDate` refuses 32-bit ones). */
const long = (ms: number) => Long.fromNumber(ms);

/** The document's day as ms since epoch, bound once per document by {@link documentReads}. */
const DAY_START = '$$day';
const hourIndex = (hourKey: string) => ({ $toInt: hourKey });
/** Start of an hour slot, ms since epoch: day + hour * 3,600,000 (no arithmetic on dates). */
const hourTime = (hourKey: string) => ({ $add: [DAY_START, { $multiply: [hourIndex(hourKey), HOUR_MS] }] });
/** Start of a minute slot, ms since epoch. */
const minuteTime = (hourKey: string, minuteKey: string) => ({
  $add: [DAY_START, { $multiply: [hourIndex(hourKey), HOUR_MS] }, { $multiply: [{ $toInt: minuteKey }, MINUTE_MS] }],
});
/** Start of a quarter hour (sketches only, `q.hours.H.quarters.Q`), ms since epoch. */
const quarterTime = (hourKey: string, quarterKey: string) => ({
  $add: [DAY_START, { $multiply: [hourIndex(hourKey), HOUR_MS] }, { $multiply: [{ $toInt: quarterKey }, QUARTER_MS] }],
});

/** The pieces of `level` as index ranges of its slots within the day, joined where they touch. */
const rangesOf = (pieces: readonly DayPiece<SketchLevel>[], level: SketchLevel, width: number) =>
  joinRanges(pieces.filter((p) => p.level === level).map((p) => [p.from / width, p.to / width]));
const hourRangesOf = (pieces: readonly DayPiece<SketchLevel>[]) => rangesOf(pieces, 'hour', HOUR_MS);
const quarterRangesOf = (pieces: readonly DayPiece<SketchLevel>[]) => rangesOf(pieces, 'quarter', QUARTER_MS);
const minuteRangesOf = (pieces: readonly DayPiece<SketchLevel>[]) => rangesOf(pieces, 'minute', MINUTE_MS);
/** The hours (index ranges in the day) that hold slots of `ranges` of `perHour` slots an hour. */
const hoursHolding = (ranges: readonly [number, number][], perHour: number) =>
  joinRanges(ranges.map(([from, to]) => [Math.floor(from / perHour), Math.ceil(to / perHour)]));

/**
 * What {@link slotsOf} reads from each slot: the tree it reads (the statistics at the
 * document's root, or the sketches under `q`), which slots it keeps (given the path of a
 * field's entry in the slot), and what it makes of a slot.
 */
interface SlotReader {
  /** `''` for the statistics, `'q.'` for the sketches (see `SeriesDayDocument.q`). */
  root: string;
  /** Condition for keeping a slot; null keeps every slot present. */
  keep: (entry: (field: string) => string) => Document | null;
  /** What a slot contributes besides its time. */
  read: (entry: (field: string) => string) => Document;
  /**
   * What one reading of a document in the raw form (see `SeriesDayDocument.r`), bound as
   * `$$r`, contributes as a minute slot of one reading when read for a piece of `level`
   * (null: the same for every level); {@link rawSlots} keeps the readings that hold
   * any of the fields.
   */
  raw: ((level: SketchLevel) => Document) | Document;
}

/** A raw reading's value of `field` (`$$r` bound to an entry of `SeriesDayDocument.r`). */
const rawValue = (field: string) => `$$r.f.${field}`;
/** True when the raw reading bound as `$$r` has a value of `field`. */
const rawHas = (field: string) => ({ $isNumber: rawValue(field) });
/** Each field's entry of a raw reading, `v0`, `v1`, …, left out for a field it has no value of. */
const rawEntries = (fields: readonly string[], entry: (field: string) => Document) =>
  Object.fromEntries(fields.map((field, i) => [`v${i}`, { $cond: [rawHas(field), entry(field), '$$REMOVE'] }]));
/** The raw reading bound as `$$r` as the `{t, v}` pair of `field`, as first and last are stored. */
const rawPair = (field: string) => ({ t: '$$r.t', v: rawValue(field) });

/** Reads the statistics: `x`, `{v0, v1, …}` the statistics of each field, of slots where any field has readings. */
const STATS_READER = (fields: readonly string[]): SlotReader => ({
  root: '',
  keep: (entry) => anyReadings(fields, entry),
  read: (entry) => ({ x: fieldStats(fields, entry) }),
  raw: {
    x: rawEntries(fields, (field) => ({
      n: 1,
      sum: rawValue(field),
      min: rawValue(field),
      max: rawValue(field),
      sq: { $multiply: [rawValue(field), rawValue(field)] },
      first: rawPair(field),
      last: rawPair(field),
    })),
  },
});

/**
 * Reads the sketches: `b`, the bins of every field's sketch as `{f, k, c}` (field
 * position, bin key, count), from every slot that has a sketch.
 */
const SKETCH_READER = (fields: readonly string[]): SlotReader => ({
  root: 'q.',
  keep: () => null,
  read: (entry) => ({
    b: {
      $concatArrays: fields.map((field, i) => ({
        $map: { input: { $objectToArray: { $ifNull: [entry(field), {}] } }, as: 'b', in: { f: i, k: '$$b.k', c: '$$b.v' } },
      })),
    },
  }),
  // A raw reading's bin of each field it has a bin key for (the fields the metric
  // sketches), where the slot form would have a sketch: a quarter hour is read from its
  // quarter-hour sketch, else from its minutes' (see `quartersOfHour`).
  raw: (level) => ({
    b: {
      $cond: [
        level === 'quarter' ? { $or: [rawSketches('quarter'), rawSketches('minute')] } : rawSketches(level),
        {
          $concatArrays: fields.map((field, i) => ({
            $cond: [{ $eq: [{ $type: `$$r.k.${field}` }, 'string'] }, [{ f: i, k: `$$r.k.${field}`, c: 1 }], []],
          })),
        },
        [],
      ],
    },
  }),
});

/** True when the raw document's `kl` (see `SeriesDayDocument.kl`) lists `level`: its bit, by arithmetic. */
const rawSketches = (level: SketchLevel) => ({
  $eq: [{ $mod: [{ $floor: { $divide: [{ $ifNull: ['$kl', 0] }, RAW_SKETCH_BITS[level]] } }, 2] }, 1],
});

/**
 * Expression for the minute slots of `fields` of the hour at `hour` (a path expression:
 * `$$this.v`, `$hours.7`), which starts at `hourStart` (an expression, ms since epoch), as `$objectToArray` of its `minutes` object lists them, `[{k,
 * v: {<field>: {n, sum, sq, min, max, first, last}}}]` (`k` the minute of the hour, a
 * string or a number), whichever form the hour keeps: an hour with packed minutes (`mc`,
 * see `PackedMinutes`) gives each minute with readings at its index, each field it packs
 * with the minute's shared count and first and last times; no `inc` (counters are never
 * packed, so a packed hour's increases are unknown, see `StoredStats.inc`).
 */
function minuteEntries(hour: string, hourStart: unknown, fields: readonly string[]): unknown {
  const at = (array: string) => ({ $arrayElemAt: [array, '$$pi'] });
  // A packed time is an offset from the hour's start; first and last pairs compare as dates.
  const time = (array: string) => ({ $toDate: { $add: [hourStart, at(array)] } });
  const field = (f: string) => {
    const column = (statistic: PackedStatistic) => at(`$$pm.f.${f}.${statistic}`);
    const stats = {
      n: at('$$pm.n'),
      sum: column('sum'),
      sq: column('sq'),
      min: column('min'),
      max: column('max'),
      first: { t: time('$$pm.tf'), v: column('first') },
      last: { t: time('$$pm.tl'), v: column('last') },
    };
    return { $cond: [{ $isArray: `$$pm.f.${f}.sum` }, stats, '$$REMOVE'] };
  };
  const packed = {
    $let: {
      vars: { pm: `${hour}.mc` },
      in: {
        $map: {
          input: {
            $filter: { input: { $range: [0, { $size: '$$pm.n' }] }, as: 'pi', cond: { $gt: [{ $arrayElemAt: ['$$pm.n', '$$pi'] }, 0] } },
          },
          as: 'pi',
          in: { k: '$$pi', v: Object.fromEntries(fields.map((f) => [f, field(f)])) },
        },
      },
    },
  };
  return { $cond: [{ $isArray: `${hour}.mc.n` }, packed, { $objectToArray: { $ifNull: [`${hour}.minutes`, {}] } }] };
}

/**
 * Expression for the minute slots of the hour bound as `$$this` (an entry `{k, v}` of
 * `$objectToArray` of the hours) that lie in `minutes` (index ranges in the day), as
 * {@link slotsOf} lists slots; the statistics in either form (see {@link minuteEntries}).
 */
function minutesOfHour(minutes: readonly [number, number][], reader: SlotReader, fields: readonly string[]): unknown {
  const entry = (f: string) => `$$m.v.${f}`;
  const minuteOfDay = { $add: [{ $multiply: [hourIndex('$$this.k'), 60] }, { $toInt: '$$m.k' }] };
  return {
    $map: {
      input: {
        $filter: {
          input:
            reader.root === ''
              ? minuteEntries('$$this.v', hourTime('$$this.k'), fields)
              : { $objectToArray: { $ifNull: ['$$this.v.minutes', {}] } },
          as: 'm',
          cond: allOf([inRanges(minuteOfDay, minutes, 1440), reader.keep(entry)]) ?? true,
        },
      },
      as: 'm',
      in: { time: minuteTime('$$this.k', '$$m.k'), ...reader.read(entry) },
    },
  };
}

/**
 * Expression for the quarter hours of the hour bound as `$$this` that lie in `quarters`
 * (index ranges in the day, 0 to 96): its quarter-hour sketches when the hour has any
 * (`quarters` is an object), else its minute slots in those quarters. So a document
 * written before the metric kept quarter hours, or without them, is read as before (from
 * its minute sketches, if it has them), and whichever a document has, every reading of
 * the quarters is read once. (Under the statistics, which keep no quarters, it reads the
 * minute slots.)
 */
function quartersOfHour(quarters: readonly [number, number][], reader: SlotReader, fields: readonly string[]): unknown {
  const entry = (f: string) => `$$qh.v.${f}`;
  const quarterOfDay = { $add: [{ $multiply: [hourIndex('$$this.k'), 4] }, { $toInt: '$$qh.k' }] };
  const fromQuarters = {
    $map: {
      input: {
        $filter: {
          input: { $objectToArray: { $ifNull: ['$$this.v.quarters', {}] } },
          as: 'qh',
          cond: allOf([inRanges(quarterOfDay, quarters, 96), reader.keep(entry)]) ?? true,
        },
      },
      as: 'qh',
      in: { time: quarterTime('$$this.k', '$$qh.k'), ...reader.read(entry) },
    },
  };
  const fromMinutes = minutesOfHour(
    quarters.map(([from, to]) => [from * 15, to * 15]),
    reader,
    fields,
  );
  return { $cond: [{ $eq: [{ $type: '$$this.v.quarters' }, 'object'] }, fromQuarters, fromMinutes] };
}

/**
 * Expression for the slots one document reads under `pieces`, as an array of
 * `{time, …}`: `time` the slot's start in ms since epoch (a long), the rest what
 * `reader` reads (by default `x`, `{v0, v1, …}` the statistics of each field). Day
 * pieces read the day totals, hour pieces the hour slots of their hours, quarter pieces
 * (sketch pipelines only) the quarter hours of their hours (see {@link quartersOfHour}),
 * minute pieces the minute slots of their minutes (looking only into the hours that
 * overlap them). The statistics reader leaves out slots where none of the fields has
 * readings.
 */
export function slotsOf(
  fields: readonly string[],
  pieces: readonly DayPiece<SketchLevel>[],
  reader: SlotReader = STATS_READER(fields),
): unknown {
  const parts: unknown[] = [];
  const root = reader.root;
  const hoursObject = root === '' ? '$hours' : { $ifNull: [`$${root}hours`, {}] };
  if (pieces.some((piece) => piece.level === 'day')) {
    parts.push([{ time: DAY_START, ...reader.read((f) => `$${root}fields.${f}`) }]);
  }
  const hours = hourRangesOf(pieces);
  if (hours.length > 0) {
    const stats = (f: string) => `$$h.v.fields.${f}`;
    parts.push({
      $map: {
        input: {
          $filter: {
            input: { $objectToArray: hoursObject },
            as: 'h',
            cond: allOf([inRanges(hourIndex('$$h.k'), hours, 24), reader.keep(stats)]) ?? true,
          },
        },
        as: 'h',
        in: { time: hourTime('$$h.k'), ...reader.read(stats) },
      },
    });
  }
  // Quarter and minute pieces look into the hours that hold them, each hour's slots concatenated.
  const withinHours = (held: [number, number][], slots: unknown) => ({
    $reduce: {
      input: {
        $filter: {
          input: { $objectToArray: hoursObject },
          as: 'h',
          cond: allOf([inRanges(hourIndex('$$h.k'), held, 24), reader.keep((f) => `$$h.v.fields.${f}`)]) ?? true,
        },
      },
      initialValue: [],
      in: { $concatArrays: ['$$value', slots] },
    },
  });
  const quarters = quarterRangesOf(pieces);
  if (quarters.length > 0) parts.push(withinHours(hoursHolding(quarters, 4), quartersOfHour(quarters, reader, fields)));
  const minutes = minuteRangesOf(pieces);
  if (minutes.length > 0) parts.push(withinHours(hoursHolding(minutes, 60), minutesOfHour(minutes, reader, fields)));
  const slots = parts.length === 1 ? parts[0] : { $concatArrays: parts };
  return { $cond: [{ $isArray: '$r' }, rawSlots(fields, pieces, reader), slots] };
}

/** The ms since the document's midnight (`$$day`) of the raw reading bound as `$$r` (a long). */
const RAW_OFFSET = { $subtract: [{ $toLong: '$$r.t' }, DAY_START] };

/** The raw readings (`$r`) of the document that lie in `pieces`, as an expression for the array. */
function rawIn(pieces: readonly DayPiece<SketchLevel>[], keep: Document | null = null): unknown {
  const ranges = joinRanges(pieces.map((piece): [number, number] => [piece.from, piece.to]).sort((a, b) => a[0] - b[0]));
  const cond = allOf([inRanges(RAW_OFFSET, ranges, DAY_MS), keep]);
  return cond === null ? '$r' : { $filter: { input: '$r', as: 'r', cond } };
}

/**
 * Expression for the slots of a document in the raw form (see `SeriesDayDocument.r`) under
 * `pieces`, as {@link slotsOf} lists slots: each reading in the pieces (whatever their
 * levels) that has any of the fields becomes a minute slot of one reading, `time` the
 * start of its minute (a long). A piece lies inside one bucket, and so does each of its
 * minutes, so each reading counts in the bucket the piece's slot would have. A reader
 * whose `raw` depends on the level (the sketches') reads the pieces of each level apart.
 */
function rawSlots(fields: readonly string[], pieces: readonly DayPiece<SketchLevel>[], reader: SlotReader): unknown {
  const minuteStart = { $subtract: [RAW_OFFSET, { $mod: [RAW_OFFSET, MINUTE_MS] }] };
  const slots = (of: readonly DayPiece<SketchLevel>[], read: Document) => ({
    $map: {
      input: rawIn(of, anyOf(fields.map(rawHas))),
      as: 'r',
      in: { time: { $add: [DAY_START, minuteStart] }, ...read },
    },
  });
  const raw = reader.raw;
  if (typeof raw !== 'function') return slots(pieces, raw);
  // What a reading gives depends on the level of the piece it lies in: one list per level.
  const levels = [...new Set(pieces.map((piece) => piece.level))];
  const lists = levels.map((level) =>
    slots(
      pieces.filter((piece) => piece.level === level),
      raw(level),
    ),
  );
  return lists.length === 1 ? lists[0] : { $concatArrays: lists };
}

/**
 * The merged statistics of `fields` over the raw readings (see `SeriesDayDocument.r`) of
 * `pieces`, as {@link mergedStats} gives them: `{v0: {n, sum, min, max, sq}, …}` (with
 * `first` and `last` when `statistics` has them). Readings without a value of a field
 * are left out of its statistics.
 */
function rawMergedStats(fields: readonly string[], pieces: readonly DayPiece[], statistics: readonly Statistic[]): unknown {
  const each = (field: string, value: unknown) => ({ $map: { input: '$$rs', as: 'r', in: { $cond: [rawHas(field), value, null] } } });
  const merge = (field: string, statistic: Statistic): unknown => {
    switch (statistic) {
      case 'n':
        return { $size: { $filter: { input: '$$rs', as: 'r', cond: rawHas(field) } } };
      case 'sq':
        return { $sum: each(field, { $multiply: [rawValue(field), rawValue(field)] }) };
      case 'first':
      case 'last':
        return { [MERGE[statistic]]: each(field, rawPair(field)) };
      default:
        return { [MERGE[statistic]]: each(field, rawValue(field)) };
    }
  };
  const body = Object.fromEntries(fields.map((field, i) => [`v${i}`, Object.fromEntries(statistics.map((s) => [s, merge(field, s)]))]));
  return { $let: { vars: { rs: rawIn(pieces) }, in: body } };
}

type Statistic = 'n' | 'sum' | 'min' | 'max' | 'sq' | 'first' | 'last';
const BASIC_STATISTICS: readonly Statistic[] = ['n', 'sum', 'min', 'max', 'sq'];
const WITH_FIRST_LAST: readonly Statistic[] = [...BASIC_STATISTICS, 'first', 'last'];
/** The stored statistics a query merges. */
const statisticsOf = (firstLast: boolean) => (firstLast ? WITH_FIRST_LAST : BASIC_STATISTICS);
/**
 * How statistics merge: counts, sums and squares add up, minima and maxima combine, and
 * so do the first (smallest `{t, v}` pair) and last (largest) readings.
 */
const MERGE: Record<Statistic, '$sum' | '$min' | '$max'> = {
  n: '$sum',
  sum: '$sum',
  min: '$min',
  max: '$max',
  sq: '$sum',
  first: '$min',
  last: '$max',
};

/**
 * The merged statistics of `fields` over the slots of `pieces` (all inside one bucket),
 * as `{v0: {n, sum, min, max, sq}, …}`, or only `statistic` of the single field at
 * `only`. The day totals when the pieces are the whole day; otherwise the hour slots
 * (`$objectToArray` of `hours`, filtered by hour index) and the minute slots of each hour
 * holding minute pieces (filtered by minute index), each statistic merged over them
 * with `$sum`, `$min` or `$max` of a `$map` (no array paths: not every server follows
 * a path into an array).
 */
function mergedStats(
  fields: readonly string[],
  pieces: readonly DayPiece[],
  statistics: readonly Statistic[],
  only?: { index: number; statistic: Statistic },
): unknown {
  if (pieces.length === 1 && pieces[0]!.level === 'day') {
    if (only !== undefined) return `$fields.${fields[only.index]}.${only.statistic}`;
    return fieldStats(fields, (f) => `$fields.${f}`);
  }
  const vars: Document = {};
  const sources: { list: string; path: (field: string) => string }[] = [];
  // A few hours, or one statistic of any number of hours, are read by their paths
  // (`$hours.3.fields.delay.n`: a field lookup each); more through `$objectToArray`.
  const direct: number[] = [];
  const hours = hourRangesOf(pieces);
  const hourCount = hours.reduce((sum, [from, to]) => sum + to - from, 0);
  if (hourCount > 0 && (hourCount <= DIRECT_HOURS || only !== undefined)) {
    for (const [from, to] of hours) for (let hour = from; hour < to; hour++) direct.push(hour);
  } else if (hourCount > 0) {
    const test = inRanges(hourIndex('$$h.k'), hours, 24);
    const all = { $objectToArray: '$hours' };
    vars.hs = test === null ? all : { $filter: { input: all, as: 'h', cond: test } };
    sources.push({ list: '$$hs', path: (f) => `$$e.v.fields.${f}` });
  }
  const byHour = new Map<number, [number, number][]>();
  for (const [from, to] of minuteRangesOf(pieces)) {
    for (let hour = Math.floor(from / 60); hour * 60 < to; hour++) {
      const ranges = byHour.get(hour) ?? [];
      ranges.push([Math.max(from, hour * 60) - hour * 60, Math.min(to, hour * 60 + 60) - hour * 60]);
      byHour.set(hour, ranges);
    }
  }
  for (const [hour, ranges] of byHour) {
    const test = inRanges({ $toInt: '$$m.k' }, ranges, 60);
    const all = minuteEntries(`$hours.${hour}`, { $add: [DAY_START, hour * HOUR_MS] }, fields);
    vars[`m${hour}`] = test === null ? all : { $filter: { input: all, as: 'm', cond: test } };
    sources.push({ list: `$$m${hour}`, path: (f) => `$$e.v.${f}` });
  }
  const merge = (field: string, statistic: Statistic) => {
    const each: unknown[] = sources.map((source) => ({
      [MERGE[statistic]]: { $map: { input: source.list, as: 'e', in: `${source.path(field)}.${statistic}` } },
    }));
    // Missing hours are missing values, which $sum, $min and $max skip.
    if (direct.length > 0) each.push({ [MERGE[statistic]]: direct.map((hour) => `$hours.${hour}.fields.${field}.${statistic}`) });
    if (each.length === 1) return each[0];
    return MERGE[statistic] === '$sum' ? { $add: each } : { [MERGE[statistic]]: each };
  };
  const body =
    only !== undefined
      ? merge(fields[only.index]!, only.statistic)
      : Object.fromEntries(fields.map((field, i) => [`v${i}`, Object.fromEntries(statistics.map((s) => [s, merge(field, s)]))]));
  return Object.keys(vars).length === 0 ? body : { $let: { vars, in: body } };
}

/**
 * An upper bound of the number of readings (all fields together) in `pieces`, zero
 * only when they hold none: the counts of the hours they touch, read by path (a cheap
 * test); null when they touch more than {@link DIRECT_HOURS} hours.
 */
function mergedCount(fields: readonly string[], pieces: readonly DayPiece[]): unknown {
  if (pieces.some((piece) => piece.level === 'day')) return null;
  const hours = new Set<number>();
  for (const piece of pieces) {
    for (let hour = Math.floor(piece.from / HOUR_MS); hour * HOUR_MS < piece.to; hour++) hours.add(hour);
  }
  if (hours.size > DIRECT_HOURS) return null;
  return { $sum: [...hours].flatMap((hour) => fields.map((field) => `$hours.${hour}.fields.${field}.n`)) };
}

/** Hour pieces of at most this many hours are read by path rather than through `$objectToArray`. */
const DIRECT_HOURS = 12;

/** Total length of some pieces, ms. */
const lengthOf = (pieces: readonly DayPiece<SketchLevel>[]) => pieces.reduce((sum, piece) => sum + piece.to - piece.from, 0);

/**
 * The two parts of a plan that reads a whole day cut in two buckets, smaller first (see
 * {@link planReads}: the smaller is read from its slots, the larger derived from the
 * day totals); null for any other plan.
 */
function splitDay<L extends SketchLevel>(plan: DayPlan<L>): [DayPart<L>, DayPart<L>] | null {
  if (plan.parts === null || plan.parts.length !== 2 || lengthOf(plan.pieces) !== DAY_MS) return null;
  const [a, b] = plan.parts as [DayPart<L>, DayPart<L>];
  return lengthOf(a.pieces) <= lengthOf(b.pieces) ? [a, b] : [b, a];
}

/**
 * The statistics of the larger part of a day cut in two, from the day totals and the
 * smaller part's statistics (bound as `$$s`): counts, sums and sums of squares are the
 * day's minus the smaller part's (exact for integer values; for fractional values the
 * difference may round differently from summing the slots); the minimum is the day's
 * when the smaller part's is larger, else read from the larger part's own slots (so
 * only then are they looked at), and likewise the maximum and the first and last
 * readings. Fields the smaller part has
 * no readings of are the day's totals as they are.
 */
function largerPartStats(fields: readonly string[], larger: readonly DayPiece[], statistics: readonly Statistic[]): Document {
  return Object.fromEntries(
    fields.map((field, i) => {
      const day = (s: Statistic) => `$fields.${field}.${s}`;
      const small = (s: Statistic) => `$$s.v${i}.${s}`;
      // The day's extreme belongs to the larger part unless the smaller part holds it.
      const extreme = (s: Statistic, beyond: '$lt' | '$gt') => ({
        $cond: [{ [beyond]: [day(s), small(s)] }, day(s), mergedStats(fields, larger, statistics, { index: i, statistic: s })],
      });
      const derived: Document = {
        n: { $subtract: [day('n'), small('n')] },
        sum: { $subtract: [day('sum'), small('sum')] },
        sq: { $subtract: [day('sq'), small('sq')] },
        min: extreme('min', '$lt'),
        max: extreme('max', '$gt'),
      };
      if (statistics.includes('first')) {
        derived.first = extreme('first', '$lt');
        derived.last = extreme('last', '$gt');
      }
      return [`v${i}`, { $cond: [{ $gt: [small('n'), 0] }, derived, `$fields.${field}`] }];
    }),
  );
}

/** What building the reads of a zoned query needs besides the fields. */
interface KeyContext {
  cut: Cut;
  zone: string;
}

/** Expression for the start of a part's bucket, in ms since epoch (a long; made a date after grouping). */
function partKey(part: DayPart, plan: DayPlan, context: KeyContext): unknown {
  if ('at' in part.key) return long(part.key.at);
  if ('after' in part.key) return part.key.after === 0 ? DAY_START : { $add: [DAY_START, long(part.key.after)] };
  const first = part.pieces[0]!.from;
  return bucketStartMillis({ $add: [DAY_START, long(first)] }, context.cut, context.zone, plan.from + first, plan.to);
}

/** The stage after `$group` that turns bucket starts in ms into dates, as rows carry them. */
const startsAsDates = { $set: { '_id.t': { $toDate: '$_id.t' } } };

/**
 * Expression for what a document under `plan` contributes, as an array of
 * `{k, x}` (parts: `k` the bucket start in ms) or `{time, x}` (slots, bucket found per
 * slot afterwards). A whole day cut in two parts reads the smaller part's slots and
 * derives the larger one (see {@link largerPartStats}).
 */
export function planReads(
  fields: readonly string[],
  plan: DayPlan,
  context: KeyContext | null,
  statistics: readonly Statistic[] = BASIC_STATISTICS,
): unknown {
  if (plan.parts === null || context === null) return slotsOf(fields, plan.pieces);
  const parts = plan.parts;
  const raw = parts.map((part) => ({ k: partKey(part, plan, context), x: rawMergedStats(fields, part.pieces, statistics) }));
  return { $cond: [{ $isArray: '$r' }, raw, slotPartReads(fields, plan, context, statistics)] };
}

/** {@link planReads} of a plan in parts, for a document in the slot form. */
function slotPartReads(fields: readonly string[], plan: DayPlan, context: KeyContext, statistics: readonly Statistic[]): unknown {
  const parts = plan.parts!;
  const halves = splitDay(plan);
  if (halves !== null) {
    const [small, large] = halves;
    const split = {
      $let: {
        vars: { s: mergedStats(fields, small.pieces, statistics) },
        in: [
          { k: partKey(small, plan, context), x: '$$s' },
          { k: partKey(large, plan, context), x: largerPartStats(fields, large.pieces, statistics) },
        ],
      },
    };
    // A document without readings in the smaller part (often, for sparse data) gives its day totals to the larger part's bucket.
    const smallCount = mergedCount(fields, small.pieces);
    if (smallCount === null) return split;
    return {
      $cond: [{ $gt: [smallCount, 0] }, split, [{ k: partKey(large, plan, context), x: fieldStats(fields, (f) => `$fields.${f}`) }]],
    };
  }
  return parts.map((part) => ({ k: partKey(part, plan, context), x: mergedStats(fields, part.pieces, statistics) }));
}

/**
 * Expression for what a document reads: the reads of its day's plan, chosen among
 * `plans` by a balanced `$cond` tree on the document's `date` (a few comparisons even
 * for hundreds of plans), with the day bound as `$$day` (ms since epoch). The `$match`
 * on the range's days keeps every document inside the plans.
 */
export function documentReads(
  fields: readonly string[],
  plans: readonly DayPlan[],
  context: KeyContext | null,
  statistics: readonly Statistic[] = BASIC_STATISTICS,
): Document {
  return perDay(plans, (plan) => planReads(fields, plan, context, statistics));
}

/**
 * Expression choosing `read(plan)` for a document's day among `plans` by a balanced
 * `$cond` tree on its `date`, with the day bound as `$$day` (ms since epoch).
 */
function perDay<L extends SketchLevel>(plans: readonly DayPlan<L>[], read: (plan: DayPlan<L>) => unknown): Document {
  const tree = (lo: number, hi: number): unknown => {
    if (hi - lo === 1) return read(plans[lo]!);
    const mid = (lo + hi) >> 1;
    return { $cond: [{ $lt: ['$date', new Date(plans[mid]!.from)] }, tree(lo, mid), tree(mid, hi)] };
  };
  return { $let: { vars: { day: { $toLong: '$date' } }, in: tree(0, plans.length) } };
}

/**
 * `$group` accumulators of every field: `n0`, `sum0`, `min0`, `max0`, `sq0`, `n1`… from
 * `statsPath(field, i)`, with `first0`, `last0`, … when `statistics` has them.
 */
const accumulators = (fields: readonly string[], statistics: readonly Statistic[], statsPath: (field: string, index: number) => string) =>
  Object.fromEntries(
    fields.flatMap((field, i) => {
      const x = statsPath(field, i);
      return statistics.map((statistic) => [`${statistic}${i}`, { [MERGE[statistic]]: `${x}.${statistic}` }]);
    }),
  );

/** The lowest layout version among the documents grouped (`ver`; absent `v` is version 1). */
const lowestVersion = (path: string) => ({ ver: { $min: { $ifNull: [path, 1] } } });

/**
 * Collects the dotted paths a pipeline reads of each series-day (or rollup) document,
 * and makes the read projection: the `$project` that keeps only them, right after
 * `$match` and before any expression walks the document: the day, the group key's
 * paths, the layout version when first and last readings are merged, and the slots the
 * plans read (explicit paths such as `hours.7.fields.delay`, see {@link addSlotsRead}).
 * Expressions that walk nested objects (`$objectToArray`, `$filter`, `$map`) cost in
 * proportion to what they walk, and a day document holds far more than one query
 * reads: the other levels, the other fields, the sketches, the latest readings. The
 * benchmark measures each pipeline without this stage too (`scripts/bench/bytes-read.ts`,
 * docs/performance.md, "Bytes read per query").
 */
class ReadPaths {
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

  /** The group key's paths: the tag values grouped by, or the series id. */
  group(grouping: Grouping): this {
    if (grouping.by === 'series') this.paths.add('series');
    else if (grouping.by === 'tags') for (const key of grouping.keys) this.paths.add(`tags.${key}`);
    return this;
  }

  /**
   * The `$project` stage keeping exactly the collected paths, `_id` left out. A path
   * inside another collected path is dropped (MongoDB refuses a projection naming both
   * `a.b` and `a.b.c`: "Path collision"). Paths come sorted, so equal queries build
   * equal stages.
   */
  stage(): Document {
    const kept: Document = { _id: 0 };
    for (const path of [...this.paths].sort()) {
      const steps = path.split('.');
      const inside = steps.some((_, i) => i > 0 && this.paths.has(steps.slice(0, i).join('.')));
      if (!inside) kept[path] = 1;
    }
    return { $project: kept };
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
 * The slots the plans of a query read, added to `paths` under `root` (`''` for the
 * statistics, `'q.'` for the sketches): the day totals of plans with a day piece and of
 * days cut in two by a bucket boundary (the larger part is derived from them, see
 * {@link planReads}), the hour slots of the hours of hour pieces, always by explicit
 * paths (`hours.7.fields.delay`): the whole `hours` object holds every minute too, and
 * keeping it was slower in three of four cases measured on the test server, most where
 * hours hold many minutes (an HOUR chart of 10 fields over 6 h of 20 TSBS hosts: 1,216 ms
 * with 61 explicit paths, 6,160 ms with `hours`; of one airport over a day of flights:
 * 522 ms with 25 paths, 727 ms with `hours`); 8% faster only for a day of every route's
 * hours, two fields (49 paths, where flights' sparse hours hold few minutes), the
 * quarter hours of quarter pieces (sketches only, by explicit paths
 * `q.hours.7.quarters.2.delay`) together with the minutes of those quarters (read
 * instead in an hour without quarter-hour sketches, see `quartersOfHour`; a path that a
 * document lacks costs it nothing), and the minutes of minute pieces (explicit minutes up to
 * {@link EXPLICIT_MINUTE_ENTRIES} per hour, else the hour's `minutes`). The statistics
 * also read the hour entry of every hour holding minutes read (pipelines test its count
 * before looking into the hour's minutes).
 */
function addSlotsRead(
  paths: ReadPaths,
  root: '' | 'q.',
  fields: readonly string[],
  plans: readonly DayPlan<SketchLevel>[],
  zoned: boolean,
): void {
  let dayTotals = false;
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
  for (const plan of plans) {
    if (plan.pieces.some((piece) => piece.level === 'day') || (zoned && splitDay(plan) !== null)) dayTotals = true;
    for (const [from, to] of hourRangesOf(plan.pieces)) for (let hour = from; hour < to; hour++) hours.add(hour);
    for (const [from, to] of quarterRangesOf(plan.pieces)) {
      for (let quarter = from; quarter < to; quarter++) quarters.add(quarter);
      addMinutes(from * 15, to * 15);
    }
    for (const [from, to] of minuteRangesOf(plan.pieces)) addMinutes(from, to);
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
 * (index `series_date`, `metric_date` or `metric_tagPairs_date`) that hold the field.
 * Right after `$match`, `$project {paths}` keeps only the paths the pipeline reads (the
 * day, the group key, the statistics of the slots its plans read; see
 * {@link ReadPaths}). When day totals answer everything, one `$group` sums them:
 *
 *   `$match` -> `$match` -> `$project {paths}` -> `$group`
 *
 * (the read runs it without the `$project`, which trims nothing a `$group` reads; the
 * projection still cuts the tail's documents: `stagesRun` in storage/read.ts).
 *
 * Otherwise each document reads the plan of its day (see `query/read-plan.ts`, chosen
 * by a few comparisons on its date, {@link documentReads}), all in one pass:
 *
 *   `$match` -> `$match` -> `$project {paths}` -> `$project {slot}` -> `$unwind` -> `$group` (-> `$set`)
 *
 * - Finer granularities and UTC: the document's slots (`$objectToArray` over the hour
 *   and minute subdocuments, `$filter` by index), each grouped by its bucket start,
 *   computed from the slot's start in milliseconds ({@link bucketStartExpression}).
 * - `DAY` and coarser in other zones: the slots of each day are merged per bucket
 *   ("parts") whose start is known in advance: a constant, or a fixed distance from the
 *   day's midnight, so no per-slot arithmetic is needed; a day cut in two by a local
 *   midnight reads its smaller part and takes the larger from the day totals (see
 *   {@link planReads}); starts are in ms and become dates after grouping (`$set`).
 *   Beyond {@link MAX_KNOWN_PLANS} plans (a boundary day per week or month over many
 *   years), every day is read as if it held a local midnight and each part's bucket is
 *   computed per document, which keeps the pipeline small.
 *
 * `$group` merges the statistics per bucket start and group: `$sum` of count, sum and
 * sum of squares, `$min`, `$max` (Cloudant's `_stats` reducer). No number is added to or
 * subtracted from a date anywhere. Rows come out unsorted; see {@link BucketRow}.
 * @throws InputError INVALID_TIME_ZONE for an unknown `timeZone`.
 */
export function bucketsPipeline(query: BucketQuery): Document[] {
  const fields = query.fields;
  const statistics = statisticsOf(query.firstLast === true);
  const zone = query.timeZone ?? UTC;
  const { from, to, granularity } = query;
  const segments = querySegments(query);
  const match = matchStages(query);
  const group = groupExpression(query.grouping);
  const groupId = (t: unknown, g: unknown) => {
    const id: Document = {};
    if (t !== undefined) id.t = t;
    if (group !== undefined) id.g = g;
    return Object.keys(id).length === 0 ? null : id;
  };

  // Zoned DAY and coarser: each day's reads in parts inside one bucket each, keyed by
  // constants (see `query/read-plan.ts`); otherwise slot by slot.
  let plans: DayPlan[];
  let context: KeyContext | null = null;
  if (granularity !== null && granularity.level === 'day' && zone !== UTC) {
    context = { cut: granularity.cut, zone };
    const starts = [bucketStart(from, granularity.cut, zone), ...bucketBoundaries(from, to, granularity.cut, zone)];
    plans = planDays(segments, { starts, keys: 'known' });
    if (plans.length > MAX_KNOWN_PLANS) {
      // Too many plans to send (a boundary day per week or month over years): read every
      // day as if it held a local midnight, and compute each part's bucket per document.
      const dayCut = GRANULARITIES.DAY.cut;
      const midnights = [bucketStart(from, dayCut, zone), ...bucketBoundaries(from, to, dayCut, zone)];
      plans = planDays(planSegments(from, to, 'day', midnights.slice(1)), { starts: midnights, keys: 'slot' });
    }
  } else {
    plans = planDays(segments);
  }

  const paths = new ReadPaths().group(query.grouping);
  if (query.firstLast) paths.add('v');
  addSlotsRead(paths, '', fields, plans, context !== null);
  const wholeDays = plans.every((plan) => plan.pieces.length === 1 && plan.pieces[0]!.level === 'day');
  // Day totals are in both forms; anything finer is read from a raw document's readings (see `rawSlots`).
  if (!wholeDays) paths.add('r');
  const project = [paths.stage()];

  if (wholeDays) {
    // Day totals answer everything: one $group over the documents, no $unwind.
    let t: unknown;
    if (granularity !== null) {
      if (context === null) t = utcDayKey(granularity.cut, from, to);
      else t = perDay(plans, (plan) => partKey(plan.parts![0]!, plan, context!));
    }
    const grouped = {
      $group: {
        _id: groupId(t, group),
        ...accumulators(fields, statistics, (field) => `$fields.${field}`),
        ...(query.firstLast ? lowestVersion('$v') : {}),
      },
    };
    return context === null ? [...match, ...project, grouped] : [...match, ...project, grouped, startsAsDates];
  }
  const t =
    granularity === null ? undefined : context !== null ? '$slot.k' : bucketStartExpression('$slot.time', granularity.cut, zone, from, to);
  return [
    ...match,
    ...project,
    {
      $project: {
        _id: 0,
        slot: documentReads(fields, plans, context, statistics),
        ...(group === undefined ? {} : { g: group }),
        ...(query.firstLast ? { v: 1 } : {}),
      },
    },
    { $unwind: '$slot' },
    {
      $group: {
        _id: groupId(t, '$g'),
        ...accumulators(fields, statistics, (_field, i) => `$slot.x.v${i}`),
        ...(query.firstLast ? lowestVersion('$v') : {}),
      },
    },
    ...(context === null ? [] : [startsAsDates]),
  ];
}

/**
 * The stored levels (day, hour, minute) a bucket query reads, from the segments of its
 * range (see `query/segments.ts`): a rollup, which keeps no minutes, answers a query
 * only when this holds no `minute`.
 * @throws Error for an empty range.
 */
export function levelsRead(query: BucketQuery): Set<Level> {
  return new Set(querySegments(query).map((segment) => segment.level));
}

/**
 * The segments a query's range is read in (see `query/segments.ts`): cut at the bucket
 * boundaries of its granularity in its zone, or at whole days for an aggregate, in time order.
 * @throws Error for an empty range.
 */
export function querySegments(query: BucketQuery) {
  const zone = query.timeZone ?? UTC;
  const segments = query.granularity
    ? planBucketSegments(query.from, query.to, query.granularity, zone)
    : planSegments(query.from, query.to, 'day');
  if (segments.length === 0) throw new Error('bucketsPipeline: empty range');
  return segments;
}

/**
 * The `$match` stages selecting a query's documents: the first is exactly an index range
 * (`series_date`, `metric_date` or `metric_tagPairs_date`), the second the other tag
 * filters and "holds a reading of a field". MongoDB merges adjacent `$match` stages
 * anyway (manual, "Aggregation Pipeline Optimization": `$match` + `$match` coalescence),
 * and a planner that does not (SecantusDB) would otherwise scan the collection.
 *
 * When the indexed part already holds an operator (`tagPairs: {$in: [...]}` for a tag
 * filter of several values, `series: {$in: [...]}`), the day range goes into the second
 * stage: SecantusDB serves equalities followed by ONE operator field from a compound
 * index, and with two it looks up the first equality alone (every document of the
 * metric); with the `$in` alone it scans the index once per value (every day of those
 * series), always a subset of that.
 */
function matchStages(query: BucketQuery): Document[] {
  const scope = scopeFilter(query.scope);
  const [first, end] = query.dateRange === undefined ? [floorTo(query.from, DAY_MS), query.to] : [query.dateRange.from, query.dateRange.to];
  const days = { date: { $gte: new Date(first), $lt: new Date(end) } };
  const daysFirst = !Object.values(scope.indexed).some((condition) => condition !== null && typeof condition === 'object');
  return [
    { $match: daysFirst ? { ...scope.indexed, ...days } : scope.indexed },
    { $match: { ...(daysFirst ? {} : days), ...scope.residual, ...documentsWithReadings(query.fields) } },
  ];
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
export function sketchPipeline(query: BucketQuery): Document[] {
  const zone = query.timeZone ?? UTC;
  const plans = planDays(planSketchSegments(query.from, query.to, query.granularity, zone));
  const { stages, key } = slotRows(query, plans, 'q.', SKETCH_READER(query.fields));
  return [...stages, { $unwind: '$s.b' }, { $group: { _id: { ...key, f: '$s.b.f', k: '$s.b.k' }, c: { $sum: '$s.b.c' } } }];
}

/**
 * The stages that turn a query's documents into one row per slot read, shared by the
 * sketch and counter pipelines: the query's `$match` stages, a `$project` of the paths
 * read (under `prefix`: `q.` for sketches) and the group key, one of `s`, the slots of
 * each document's day plan as `reader` reads them, `g` the group and `id` the series
 * (with `series`), then `$unwind` of `s`.
 * @returns the stages, and the `$group` key of a row's bucket (`t`, from the slot's
 * start `s.time`; none without a granularity) and group (`g`; none when ungrouped).
 * @throws InputError INVALID_TIME_ZONE for an unknown `timeZone`.
 */
function slotRows(
  query: BucketQuery,
  plans: readonly DayPlan<SketchLevel>[],
  prefix: '' | 'q.',
  reader: SlotReader,
  options: { series?: boolean } = {},
): { stages: Document[]; key: Document } {
  const zone = query.timeZone ?? UTC;
  const group = groupExpression(query.grouping);
  const paths = new ReadPaths().group(query.grouping);
  if (options.series) paths.add('series');
  addSlotsRead(paths, prefix, query.fields, plans, false);
  // A raw document is read from its readings at every level, sketches included, at the
  // levels it lists (`kl`; see `rawSlots`).
  paths.add('r');
  if (prefix === 'q.') paths.add('kl');
  const key: Document = {
    ...(query.granularity === null ? {} : { t: bucketStartExpression('$s.time', query.granularity.cut, zone, query.from, query.to) }),
    ...(group === undefined ? {} : { g: '$g' }),
  };
  const stages = [
    ...matchStages(query),
    paths.stage(),
    {
      $project: {
        _id: 0,
        s: perDay(plans, (plan) => slotsOf(query.fields, plan.pieces, reader)),
        ...(options.series ? { id: '$series' } : {}),
        ...(group === undefined ? {} : { g: group }),
      },
    },
    { $unwind: '$s' },
  ];
  return { stages, key };
}

/**
 * What a counter's slot holds for its increase, as the counter pipeline reads it: count
 * `n`, first and last reading `f` and `l` (`{t, v}`), `i` the sum of reset-aware deltas
 * between its readings (absent when unknown, see `StoredStats.inc`).
 */
export interface CounterSlot {
  n: number;
  f?: { t: Date; v: number };
  l?: { t: Date; v: number };
  i?: number;
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
 * Reads what the increase needs: `x`, `{v0: {n, f, l, i}, …}` of every slot where any
 * field has readings.
 */
const COUNTER_READER = (fields: readonly string[]): SlotReader => ({
  root: '',
  keep: (entry) => anyReadings(fields, entry),
  read: (entry) => ({
    x: Object.fromEntries(
      fields.map((field, i) => [
        `v${i}`,
        { n: `${entry(field)}.n`, f: `${entry(field)}.first`, l: `${entry(field)}.last`, i: `${entry(field)}.inc` },
      ]),
    ),
  }),
  // No increase (`i`): counters are never written in the raw form, so a raw document was
  // written while its metric was not one, and its increases are unknown (`StoredStats.inc`).
  raw: { x: rawEntries(fields, (field) => ({ n: 1, f: rawPair(field), l: rawPair(field) })) },
});

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
export function counterPipeline(query: BucketQuery): Document[] {
  const { stages, key } = slotRows(query, planDays(querySegments(query)), '', COUNTER_READER(query.fields), { series: true });
  return [...stages, { $group: { _id: { s: '$id', ...key }, p: { $push: '$s.x' } } }];
}

/** Plans with constant keys a pipeline may carry; beyond, parts are keyed per document. */
const MAX_KNOWN_PLANS = 128;

/**
 * Expression for the UTC bucket start of a document's day (`$date`) when day totals
 * answer the query; the cheaper form on the test server for each cut (measured,
 * `scripts/bench/zones.ts`): the date itself for days, `$dateTrunc` (MongoDB 5.0) for
 * weeks, months, quarters and years.
 */
function utcDayKey(cut: Cut, from: number, to: number): unknown {
  if (cut.kind === 'calendar') return { $dateTrunc: { date: '$date', unit: cut.unit } };
  if (cut.widthMs === DAY_MS && cut.offsetMs % DAY_MS === 0) return '$date';
  if (cut.widthMs === 7 * DAY_MS) {
    // 1970-01-01 was a Thursday; a week shifted back by `offsetMs` days starts that many days before Thursday.
    const weekday = ['thursday', 'wednesday', 'tuesday', 'monday', 'sunday', 'saturday', 'friday'][cut.offsetMs / DAY_MS]!;
    return { $dateTrunc: { date: '$date', unit: 'week', startOfWeek: weekday } };
  }
  return bucketStartExpression({ $toLong: '$date' }, cut, UTC, from, to);
}
