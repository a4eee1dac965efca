/**
 * How each stored form of a series-day (or rollup) document is read as slots, as
 * pipeline expressions (pure): the day totals, hour and minute slots of the slot form,
 * packed minutes (`mc`), quarter-hour sketches (`q.hours.H.quarters`), the raw form's
 * readings (`r`) and counters' increases (`inc`). The query's pipeline builders
 * (`query/buckets-pipeline.ts`) ask for the slots of some ranges of a day and get
 * expressions back; they never spell a stored path. See docs/design.md for each form.
 */
import { Long, type Document } from 'mongodb';
import type { SlotLevel } from '../model/statistics-settings.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS, QUARTER_MS } from '../model/time.ts';
import { type PackedStatistic, RAW_SKETCH_BITS } from './series-day.ts';

/**
 * A stretch of one UTC day read from one stored level: `[from, to)` in ms after the
 * day's midnight, whole slots of `level` (the query's planner cuts them, see
 * `query/read-plan.ts`). Quarter hours are read by sketch pipelines only.
 */
export interface SlotRange<L extends SlotLevel = SlotLevel> {
  level: L;
  from: number;
  to: number;
}

/** The disjunction of `tests` (a query filter or an expression), without `$or` for a single test. */
export const anyOf = (tests: Document[]): Document => (tests.length === 1 ? tests[0]! : { $or: tests });

/** True when any of the fields at `statsPath(field)` has readings. */
const anyReadings = (fields: readonly string[], statsPath: (field: string) => string) =>
  anyOf(fields.map((field) => ({ $gt: [`${statsPath(field)}.n`, 0] })));

/** The statistics of every field as one object `{v0: <stats of field 0>, v1: …}`. */
export const fieldStats = (fields: readonly string[], statsPath: (field: string) => string) =>
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
export const allOf = (tests: (Document | null)[]): Document | null => {
  const kept = tests.filter((test): test is Document => test !== null);
  if (kept.length === 0) return null;
  return kept.length === 1 ? kept[0]! : { $and: kept };
};

/** Joins ranges that touch, e.g. hours [0, 5) and [5, 7) into [0, 7). */
export const joinRanges = (ranges: [number, number][]): [number, number][] =>
  ranges.reduce<[number, number][]>((joined, [from, to]) => {
    const last = joined[joined.length - 1];
    if (last !== undefined && last[1] >= from) last[1] = Math.max(last[1], to);
    else joined.push([from, to]);
    return joined;
  }, []);

/** A number the server keeps as a 64-bit integer (`$toDate` refuses 32-bit ones). */
export const long = (ms: number) => Long.fromNumber(ms);

/** The document's day as ms since epoch, bound once per document by {@link documentReads}. */
export const DAY_START = '$$day';

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
const rangesOf = (pieces: readonly SlotRange[], level: SlotLevel, width: number) =>
  joinRanges(pieces.filter((p) => p.level === level).map((p) => [p.from / width, p.to / width]));

export const hourRangesOf = (pieces: readonly SlotRange[]) => rangesOf(pieces, 'hour', HOUR_MS);

export const quarterRangesOf = (pieces: readonly SlotRange[]) => rangesOf(pieces, 'quarter', QUARTER_MS);

export const minuteRangesOf = (pieces: readonly SlotRange[]) => rangesOf(pieces, 'minute', MINUTE_MS);

/** The hours (index ranges in the day) that hold slots of `ranges` of `perHour` slots an hour. */
const hoursHolding = (ranges: readonly [number, number][], perHour: number) =>
  joinRanges(ranges.map(([from, to]) => [Math.floor(from / perHour), Math.ceil(to / perHour)]));

/**
 * What {@link slotsOf} reads from each slot: the tree it reads (the statistics at the
 * document's root, or the sketches under `q`), which slots it keeps (given the path of a
 * field's entry in the slot), and what it makes of a slot.
 */
export interface SlotReader {
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
  raw: ((level: SlotLevel) => Document) | Document;
  /**
   * Whether `read` reads the slots' first and last readings (default true): when false,
   * packed minutes (`PackedMinutes`) are read without making their `{t, v}` pairs, which
   * is most of what reading a packed minute costs (see {@link minuteEntries}).
   */
  pairs?: boolean;
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

/**
 * Reads the statistics: `x`, `{v0, v1, …}` the statistics of each field, of slots where
 * any field has readings; their first and last readings only when `pairs` (see `SlotReader.pairs`).
 */
export const STATS_READER = (fields: readonly string[], pairs = true): SlotReader => ({
  root: '',
  pairs,
  keep: (entry) => anyReadings(fields, entry),
  read: (entry) => ({ x: fieldStats(fields, entry) }),
  raw: {
    x: rawEntries(fields, (field) => ({
      n: 1,
      sum: rawValue(field),
      min: rawValue(field),
      max: rawValue(field),
      sq: { $multiply: [rawValue(field), rawValue(field)] },
      ...(pairs ? { first: rawPair(field), last: rawPair(field) } : {}),
    })),
  },
});

/**
 * Reads the sketches: `b`, the bins of every field's sketch as `{f, k, c}` (field
 * position, bin key, count), from every slot that has a sketch.
 */
export const SKETCH_READER = (fields: readonly string[]): SlotReader => ({
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
const rawSketches = (level: SlotLevel) => ({
  $eq: [{ $mod: [{ $floor: { $divide: [{ $ifNull: ['$kl', 0] }, RAW_SKETCH_BITS[level]] } }, 2] }, 1],
});

/**
 * Expression for the minute slots of `fields` of the hour at `hour` (a path expression:
 * `$$this.v`, `$hours.7`), which starts at `hourStart` (an expression, ms since epoch), as `$objectToArray` of its `minutes` object lists them, `[{k,
 * v: {<field>: {n, sum, sq, min, max, first, last}}}]` (`k` the minute of the hour, a
 * string or a number), whichever form the hour keeps: an hour with packed minutes (`mc`,
 * see `PackedMinutes`) gives each minute with readings at its index, each field it packs
 * with the minute's shared count and first and last times; no `inc` (counters are never
 * packed, so a packed hour's increases are unknown, see `StoredStats.inc`). Without
 * `pairs`, a packed minute has no first and last readings (a query that does not ask for
 * them: making the two dates of each minute and field was most of a packed hour's cost).
 * With `window` (minutes of the day `[from, to)`, and the hour's index as an expression),
 * only the packed minutes of the hour inside it are looked at, instead of every minute of
 * the hour filtered afterwards; the caller still filters the minutes it reads.
 */
function minuteEntries(
  hour: string,
  hourStart: unknown,
  fields: readonly string[],
  pairs = true,
  window: { from: number; to: number; hourIndex: unknown } | null = null,
): unknown {
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
      ...(pairs ? { first: { t: time('$$pm.tf'), v: column('first') }, last: { t: time('$$pm.tl'), v: column('last') } } : {}),
    };
    return { $cond: [{ $isArray: `$$pm.f.${f}.sum` }, stats, '$$REMOVE'] };
  };
  // The indices of the hour's packed minutes to look at: all of them, or those of the
  // window's minutes of the day that fall in this hour (clamped; an empty range when none).
  const size = { $size: '$$pm.n' };
  let indices: unknown = { $range: [0, size] };
  if (window !== null) {
    const first = { $max: [0, { $subtract: [window.from, { $multiply: [window.hourIndex, 60] }] }] };
    const end = { $min: [size, { $subtract: [window.to, { $multiply: [window.hourIndex, 60] }] }] };
    indices = { $let: { vars: { i0: first }, in: { $range: ['$$i0', { $max: ['$$i0', end] }] } } };
  }
  const packed = {
    $let: {
      vars: { pm: `${hour}.mc` },
      in: {
        $map: {
          input: {
            $filter: { input: indices, as: 'pi', cond: { $gt: [{ $arrayElemAt: ['$$pm.n', '$$pi'] }, 0] } },
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
              ? minuteEntries('$$this.v', hourTime('$$this.k'), fields, reader.pairs !== false, {
                  from: Math.min(...minutes.map(([from]) => from)),
                  to: Math.max(...minutes.map(([, to]) => to)),
                  hourIndex: hourIndex('$$this.k'),
                })
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
 * readings. `raw` says what a document in the raw form gives (see {@link RawAs}); `day`,
 * the document's midnight in ms since epoch when every document read is of that day
 * (a plan of one day), lets its readings be compared with constant dates.
 */
export function slotsOf(
  fields: readonly string[],
  pieces: readonly SlotRange[],
  reader: SlotReader = STATS_READER(fields),
  raw: RawAs = 'slots',
  day?: number,
): unknown {
  const lists: unknown[] = [];
  const root = reader.root;
  const hoursObject = root === '' ? '$hours' : { $ifNull: [`$${root}hours`, {}] };
  if (pieces.some((piece) => piece.level === 'day')) {
    lists.push([{ time: DAY_START, ...reader.read((f) => `$${root}fields.${f}`) }]);
  }
  const hours = hourRangesOf(pieces);
  if (hours.length > 0) {
    const stats = (f: string) => `$$h.v.fields.${f}`;
    lists.push({
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
  if (quarters.length > 0) lists.push(withinHours(hoursHolding(quarters, 4), quartersOfHour(quarters, reader, fields)));
  const minutes = minuteRangesOf(pieces);
  if (minutes.length > 0) lists.push(withinHours(hoursHolding(minutes, 60), minutesOfHour(minutes, reader, fields)));
  const slots = lists.length === 1 ? lists[0] : { $concatArrays: lists };
  return {
    $cond: [
      { $isArray: '$r' },
      raw === 'readings' ? rawIn(pieces, anyOf(fields.map(rawHas)), day) : rawSlots(fields, pieces, reader),
      slots,
    ],
  };
}

/**
 * What {@link slotsOf} makes of a document in the raw form: `'slots'`, each of its
 * readings inside the pieces as a minute slot of one reading, as the reader reads it
 * ({@link rawSlots}); `'readings'`, those readings as they are stored (`{t, f, k}`), for a
 * statistics pipeline that unwinds them beside the slots and merges both
 * ({@link slotOrReadingAccumulators}, {@link slotOrReadingTime}). Building an object per
 * reading in an expression was most of what a raw document cost: ORD's 87 raw route-day
 * documents of a 3-hour MINUTE chart took 27 ms to project as slots, 9 ms as readings
 * (docs/performance.md).
 */
export type RawAs = 'slots' | 'readings';

/**
 * The start of the slot unwound at `path`, ms since epoch (a long): a slot's `time`, or the
 * start of a raw reading's minute, as {@link rawSlots} would have made it (times are at or
 * after 1970, so the remainder is the offset into the minute).
 */
export const slotOrReadingTime = (path: string) => ({
  $ifNull: [
    `$${path}.time`,
    { $let: { vars: { ms: { $toLong: `$${path}.t` } }, in: { $subtract: ['$$ms', { $mod: ['$$ms', MINUTE_MS] }] } } },
  ],
});

/**
 * `$group` accumulators (named as {@link accumulators} names them) over what was unwound at
 * `path`: a slot's statistics `x.v<i>` of the statistics reader, or a raw reading's value
 * of each field (see {@link RawAs}) as the statistics of one reading; a reading without a
 * value of a field adds nothing to that field's.
 */
export function slotOrReadingAccumulators(fields: readonly string[], statistics: readonly Statistic[], path: string): Document {
  return mergedAccumulators(fields, statistics, (field, i, statistic) => {
    const value = `$${path}.f.${field}`;
    const has = { $isNumber: value };
    const pair = { $cond: [has, { t: `$${path}.t`, v: value }, '$$REMOVE'] };
    const ofReading: Record<Statistic, unknown> = {
      n: { $cond: [has, 1, 0] },
      sum: value,
      min: value,
      max: value,
      sq: { $multiply: [value, value] },
      first: pair,
      last: pair,
    };
    return { $ifNull: [`$${path}.x.v${i}.${statistic}`, ofReading[statistic]] };
  });
}

/** The ms since the document's midnight (`$$day`) of the raw reading bound as `$$r` (a long). */
const RAW_OFFSET = { $subtract: [{ $toLong: '$$r.t' }, DAY_START] };

/**
 * The raw readings (`$r`) of the document that lie in `pieces` (and pass `keep`, a test
 * of the reading bound as `$$r`), as an expression for the array. With the document's
 * `day` (its midnight, ms since epoch, when the caller knows it), each reading's time is
 * compared as it is with the pieces' bounds as dates; else its offset into the day is
 * computed and compared (see {@link RAW_OFFSET}).
 */
function rawIn(pieces: readonly SlotRange[], keep: Document | null = null, day?: number): unknown {
  const ranges = joinRanges(pieces.map((piece): [number, number] => [piece.from, piece.to]).sort((a, b) => a[0] - b[0]));
  const inPieces =
    day === undefined
      ? inRanges(RAW_OFFSET, ranges, DAY_MS)
      : ranges.some(([from, to]) => from <= 0 && to >= DAY_MS)
        ? null
        : anyOf(
            ranges.map(([from, to]) => ({ $and: [{ $gte: ['$$r.t', new Date(day + from)] }, { $lt: ['$$r.t', new Date(day + to)] }] })),
          );
  const cond = allOf([inPieces, keep]);
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
function rawSlots(fields: readonly string[], pieces: readonly SlotRange[], reader: SlotReader): unknown {
  const minuteStart = { $subtract: [RAW_OFFSET, { $mod: [RAW_OFFSET, MINUTE_MS] }] };
  const slots = (of: readonly SlotRange[], read: Document) => ({
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
export function rawMergedStats(fields: readonly string[], pieces: readonly SlotRange[], statistics: readonly Statistic[]): unknown {
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

export type Statistic = 'n' | 'sum' | 'min' | 'max' | 'sq' | 'first' | 'last';

export const BASIC_STATISTICS: readonly Statistic[] = ['n', 'sum', 'min', 'max', 'sq'];

export const WITH_FIRST_LAST: readonly Statistic[] = [...BASIC_STATISTICS, 'first', 'last'];

/** The stored statistics a query merges. */
export const statisticsOf = (firstLast: boolean) => (firstLast ? WITH_FIRST_LAST : BASIC_STATISTICS);

/**
 * How statistics merge: counts, sums and squares add up, minima and maxima combine, and
 * so do the first (smallest `{t, v}` pair) and last (largest) readings.
 */
export const MERGE: Record<Statistic, '$sum' | '$min' | '$max'> = {
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
 * (`$objectToArray` of `hours`, filtered by hour index), the quarter-hour slots of quarter
 * pieces (rollup documents, by path) and the minute slots of each hour holding minute
 * pieces (filtered by minute index), each statistic merged over them
 * with `$sum`, `$min` or `$max` of a `$map` (no array paths: not every server follows
 * a path into an array).
 */
export function mergedStats(
  fields: readonly string[],
  pieces: readonly SlotRange[],
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
  // Quarter hours (rollup documents only, `HourSlot.quarters`), read by their paths: a
  // section holds the few of an hour cut by a bucket boundary.
  const quarters: [number, number][] = [];
  for (const [from, to] of quarterRangesOf(pieces)) for (let q = from; q < to; q++) quarters.push([Math.floor(q / 4), q % 4]);
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
    if (quarters.length > 0) {
      each.push({ [MERGE[statistic]]: quarters.map(([hour, quarter]) => `$hours.${hour}.quarters.${quarter}.${field}.${statistic}`) });
    }
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
export function mergedCount(fields: readonly string[], pieces: readonly SlotRange[]): unknown {
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

/**
 * The statistics of the larger section of a day cut in two, from the day totals and the
 * smaller section's statistics (bound as `$$s`): counts, sums and sums of squares are the
 * day's minus the smaller section's (exact for integer values; for fractional values the
 * difference may round differently from summing the slots); the minimum is the day's
 * when the smaller section's is larger, else read from the larger section's own slots (so
 * only then are they looked at), and likewise the maximum and the first and last
 * readings. Fields the smaller section has
 * no readings of are the day's totals as they are.
 */
export function largerSectionStats(fields: readonly string[], larger: readonly SlotRange[], statistics: readonly Statistic[]): Document {
  return Object.fromEntries(
    fields.map((field, i) => {
      const day = (s: Statistic) => `$fields.${field}.${s}`;
      const small = (s: Statistic) => `$$s.v${i}.${s}`;
      // The day's extreme belongs to the larger section unless the smaller section holds it.
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
 * Reads what the increase needs: `x`, `{v0: {n, f, l, i}, …}` of every slot where any
 * field has readings.
 */
export const COUNTER_READER = (fields: readonly string[]): SlotReader => ({
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
 * `$group` accumulators of every field: `n0`, `sum0`, `min0`, `max0`, `sq0`, `n1`… from
 * `statsPath(field, i)`, with `first0`, `last0`, … when `statistics` has them.
 */
export const accumulators = (
  fields: readonly string[],
  statistics: readonly Statistic[],
  statsPath: (field: string, index: number) => string,
) => mergedAccumulators(fields, statistics, (field, i, statistic) => `${statsPath(field, i)}.${statistic}`);

/**
 * `$group` accumulators of every field named as {@link accumulators} names them, each
 * merging (`MERGE`) the expression `input(field, index, statistic)`.
 */
const mergedAccumulators = (
  fields: readonly string[],
  statistics: readonly Statistic[],
  input: (field: string, index: number, statistic: Statistic) => unknown,
): Document =>
  Object.fromEntries(
    fields.flatMap((field, i) => statistics.map((statistic) => [`${statistic}${i}`, { [MERGE[statistic]]: input(field, i, statistic) }])),
  );

/** The lowest layout version among the documents grouped (`ver`; absent `v` is version 1). */
export const lowestVersion = (path: string = DOCUMENT_VERSION_PATH) => ({ ver: { $min: { $ifNull: [path, 1] } } });

/** The document's day (a date, its UTC midnight) as an expression: what plans of days compare. */
export const DOCUMENT_DATE = '$date';

/**
 * `expression` with the document's day bound as `$$day` (ms since epoch, a long), which
 * the slot expressions of this module read ({@link DAY_START}).
 */
export const withDocumentDay = (expression: unknown): Document => ({ $let: { vars: { day: { $toLong: DOCUMENT_DATE } }, in: expression } });

/** The day totals of every field as one object `{v0: <stats of field 0>, v1: …}`, as {@link slotsOf} reads a day piece. */
export const dayTotals = (fields: readonly string[]) => fieldStats(fields, (field) => `$fields.${field}`);

/** The day total of `field` in a document, as an expression: what a `$group` over whole days adds up (see {@link accumulators}). */
export const dayTotalOf = (field: string) => `$fields.${field}`;

/**
 * The group key of a document as an expression: the values of tag keys `keys` (an
 * object keyed by tag key; a document lacking one groups with the others lacking it),
 * the series id (`'series'`; a rollup group's id on a rollup), or none (`null`).
 */
export function groupKey(keys: readonly string[] | 'series' | null): Document | string | undefined {
  if (keys === 'series') return '$series';
  if (keys !== null) return Object.fromEntries(keys.map((key) => [key, `$tags.${key}`]));
  return undefined;
}

/** The series id of a document as an expression. */
export const SERIES_ID = '$series';

/** What a slot projection keeps of the document besides its slots for {@link lowestVersion}: its version (`v`). */
export const KEEP_VERSION: Readonly<Record<string, 1>> = { v: 1 };

/** The document's version as an expression (absent: version 1, see `DOCUMENT_VERSION`). */
export const DOCUMENT_VERSION_PATH = '$v';

/**
 * `raw` for a document in the raw form (see `SeriesDayDocument.r`), `slot` for one in
 * the slot form, as an expression: for reads that take the two forms apart (a zoned
 * day's sections, merged per bucket).
 */
export const byForm = (raw: unknown, slot: unknown): Document => ({ $cond: [{ $isArray: '$r' }, raw, slot] });
