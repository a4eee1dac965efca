/**
 * The stored shapes of series-day documents (collection `series_days`; rollup documents share
 * them): the slot form (day totals, hour and minute slots, sketches under `q`, latest
 * readings), packed minutes (`mc`), the raw form (`r`, `kl`), parts (`f`), and the
 * paths of their slots. docs/design.md describes each form and names every stored field.
 */
import type { ObjectId } from 'mongodb';
import type { Stats } from '../model/stats.ts';
import type { TagMap } from '../model/series.ts';
import type { SlotLevel } from '../model/statistics-settings.ts';

/**
 * The statistics of one field in one slot as stored: {@link Stats} plus, from layout
 * version 2 on, the first and the last reading of the slot as `{t, v}` pairs (`t` a
 * date, see `TimedValue` for their order), kept by `$min` and `$max` of the pair.
 */
export interface StoredStats extends Stats {
  first?: { t: Date; v: number };
  last?: { t: Date; v: number };
  /**
   * Counter metrics only (see `model/counter.ts`): the sum of the reset-aware deltas
   * between the slot's consecutive readings. Absent for other metrics, for readings
   * stored before the metric was declared a counter, and where it is not known exactly
   * (a compaction merged parts whose readings interleave in time, see `chainIncrease`).
   */
  inc?: number;
}

/** The statistics of every field at one level, keyed by field name. */
export type FieldStats = Record<string, StoredStats>;

/**
 * The layout version written by this code into every series-day document it creates
 * (`v`). Version 1 (documents without `v`) kept count, sum, min, max and sum of squares
 * only; version 2 adds the first and last reading of every slot, the quantile sketches
 * (`q`) and the latest readings (`recent`). A document created before version 2 may have
 * been updated since, so its first and last values describe only part of its readings:
 * queries answer them only when every document read is of version 2.
 */
export const DOCUMENT_VERSION = 2;

/** One raw reading kept in a document's `recent` list: its time and its field values. */
export interface RecentReading {
  t: Date;
  /** Field values by field name. */
  f: Record<string, number>;
}

/** One hour of a series-day document. */
export interface HourSlot {
  /** Whole-hour statistics per field. */
  fields: FieldStats;
  /**
   * Per-minute statistics, keyed by the minute of the hour as a string `"0"`..`"59"`.
   * Absent in an hour whose minutes are packed (`mc`).
   */
  minutes?: Record<string, FieldStats>;
  /** The hour's minute slots as arrays (see {@link PackedMinutes}), instead of `minutes`. */
  mc?: PackedMinutes;
  /**
   * Rollup documents only (see `documents/rollup.ts`): per-quarter-hour statistics, keyed
   * by the quarter of the hour as a string `"0"`..`"3"` (minutes 0-14, 15-29, 30-44,
   * 45-59), the merge of the series' minute slots of that quarter: count, sum, minimum,
   * maximum and sum of squares only (no first and last reading, no sketch: a query that
   * asks for those reads the series where it would read quarter hours). A rollup keeps no
   * minutes; its quarters let a bucket whose edges fall inside an hour (every UTC offset
   * of the tz database since 1979 is a multiple of 15 minutes) read it.
   */
  quarters?: Record<string, FieldStats>;
}

/**
 * The minute slots of an hour as arrays indexed by the minute of the hour (from 0 to
 * the last minute with readings): the packed form of `HourSlot.minutes`, written for an
 * hour whose minutes hold every field with the same count and the same first and last
 * reading times (as when every reading carries every field: dense series, a TSBS host's
 * ten fields every 10 s), so a minute's count and those times are kept once (`n`, `tf`, `tl`; the times as
 * int32 offsets from the hour's start, 4 bytes less than a date each), and each field
 * keeps six numbers a minute. A minute without readings has `n` 0 and null elsewhere.
 * Against the object form (`minutes.30.usage_user: {n, sum, sq, min, max, first: {t, v},
 * last: {t, v}}`), about half the bytes (docs/design.md, "Packed minutes").
 * Written by `packHours` (`documents/packed-minutes.ts`); the pipelines read a packed
 * minute as the slot it stands for (`minuteEntries` in `documents/slots.ts`).
 *
 * ```
 * { n: [6, 6, …], tf: [0, 60000, …], tl: [50000, 110000, …],
 *   f: { usage_user: { sum: […], sq: […], min: […], max: […], first: […], last: […] }, … } }
 * ```
 */
export interface PackedMinutes {
  /** Readings per minute (int32), the same for every field; 0 for a minute without readings. */
  n: number[];
  /** The time of each minute's first reading, in ms since the hour's start (int32; null without readings). */
  tf: (number | null)[];
  /** The time of each minute's last reading, in ms since the hour's start (int32; null without readings). */
  tl: (number | null)[];
  /** Per field, each statistic per minute as a double (null without readings): `first` and `last` are the values at `tf` and `tl`. */
  f: Record<string, Record<PackedStatistic, (number | null)[]>>;
}

/** The statistics a packed minute keeps per field, each a column of {@link PackedMinutes.f}. */
export const PACKED_STATISTICS = ['sum', 'sq', 'min', 'max', 'first', 'last'] as const;

/** One of {@link PACKED_STATISTICS}. */
export type PackedStatistic = (typeof PACKED_STATISTICS)[number];

/**
 * One series-day document: one series, one UTC day, with the day's statistics and nested
 * hour and minute subdocuments (the days -> hours -> minutes of "Time series in MongoDB", one document a
 * day so it stays far below the 16 MiB BSON limit at minute detail). Slots are
 * objects keyed by number (`hours.7.minutes.30`) so an update can address them
 * directly, and the query side flattens them with `$objectToArray` + `$unwind`.
 *
 * ```
 * { series: "8a1c…", metric: "flights", tags: { origin: "LAS", destination: "PHL" },
 *   tagPairs: ["destination=PHL", "origin=LAS"], date: 2001-01-05T00:00Z, first: 2001-01-05T07:30Z, last: 2001-01-05T19:02Z,
 *   fields: { delay: { n, sum, min, max, sq }, distance: {…} },
 *   hours: { "7": { fields: { delay: {…} }, minutes: { "30": { delay: {…} } } } } }
 * ```
 */
export interface SeriesDayDocument {
  /**
   * An ObjectId for a document written before folds; a part's is the string
   * `<series>:<day ms>:<f>` (see `series`), which this type leaves out so that the plain
   * `Filter<Document>` filters the storage code builds apply to the collection as typed.
   */
  _id?: ObjectId;
  /**
   * Series id (see `model/series.ts`). With `date` and the fold number `f`, what a part's
   * `_id` is made of (`<series>:<day ms>:<f>`); documents written before folds have one
   * per series and day, no `f` and an ObjectId.
   */
  series: string;
  metric: string;
  tags: TagMap;
  /**
   * The tags as `key=value` strings (see `tagPair`): the multikey index
   * `{metric, tagPairs, date}` lets a tag filter select documents directly.
   */
  tagPairs: string[];
  /** Midnight UTC of the day this document covers. */
  date: Date;
  /** Exact time of the earliest reading in the document (absent in an unused skeleton). */
  first?: Date;
  /** Exact time of the latest reading in the document (absent in an unused skeleton). */
  last?: Date;
  /**
   * Marks (see `model/batch.ts`) of the last batches with a `batchId` applied to this
   * document, oldest first, at most `BATCH_MARKS_KEPT`: the update that applies a batch
   * appends its mark and is refused while the mark is present, so a batch is applied
   * to a document at most once. Absent until such a batch writes.
   */
  batches?: string[];
  /** Layout version (see {@link DOCUMENT_VERSION}); absent in documents of version 1. */
  v?: number;
  /**
   * Readings recorded into the document (a reading counts once whatever its fields; from
   * version 2 on). `recent` holds every reading of the document while it is no longer
   * than this.
   */
  readings?: number;
  /** Whole-day statistics per field. */
  fields: FieldStats;
  /** Hour slots keyed by the hour of the day as a string `"0"`..`"23"`. */
  hours: Record<string, HourSlot>;
  /**
   * Quantile sketches (see `model/sketch.ts`), in the same tree as the statistics
   * (`q.fields.delay`, `q.hours.7.fields.delay`, `q.hours.7.minutes.30.delay`), each a
   * map from bin key to count, at the levels the metric keeps them (see
   * `model/statistics-settings.ts`), plus the quarter hours, which keep sketches only
   * (`q.hours.7.quarters.2.delay`: 07:30 to 07:45 UTC; see {@link quarterSketchPath}).
   * Kept apart from the statistics so queries that do not ask for percentiles never walk them.
   */
  q?: {
    fields?: Record<string, Record<string, number>>;
    hours?: Record<
      string,
      {
        fields?: Record<string, Record<string, number>>;
        quarters?: Record<string, Record<string, Record<string, number>>>;
        minutes?: Record<string, Record<string, Record<string, number>>>;
      }
    >;
  };
  /**
   * The latest readings of the day, oldest first, at most the metric's `latestReadings`
   * (`$push` with `$sort` by time and `$slice` in the same update that adds them).
   */
  recent?: RecentReading[];
  /**
   * The raw form: every reading of the document, oldest first, each with its quantile
   * sketch bin per field (see {@link RawReading}). A document in the raw form keeps its
   * identity and its day totals (`fields`) and no `hours`, `q` or `recent`: the
   * pipelines read each raw reading as a minute slot of one reading (see `slotsOf` in
   * `documents/slots.ts`), its latest readings are these. It suits documents of
   * few readings (a flight route's day, a fold's part of a second), where the slot form
   * repeats each reading at the day, hour and minute levels with a sketch at each
   * (docs/design.md, "The raw form").
   */
  r?: RawReading[];
  /**
   * In the raw form: the levels the document would keep sketches at in the slot form,
   * as a sum of {@link RAW_SKETCH_BITS} (absent: none), so a raw document answers a
   * percentile exactly where the slot form would: a minute bucket of a metric that
   * sketches no minutes gets none from either form.
   */
  kl?: number;
}

/**
 * The bit of each sketch level in `SeriesDayDocument.kl`: tested on the server by arithmetic
 * (`$mod` of `$floor` of a division; `$bitAnd` needs MongoDB 6.3).
 */
export const RAW_SKETCH_BITS: Readonly<Record<SlotLevel, number>> = { day: 1, hour: 2, quarter: 4, minute: 8 };

/**
 * Most readings of a series-day document written in the raw form unless configured
 * (`RAW_READINGS`, `Store.rawReadings`): chosen by `npm run bench:raw-form` at 5e534e9
 * (docs/measurements/2026-11-28.md, "The raw form").
 */
export const DEFAULT_RAW_READINGS = 16;

/**
 * Fewest minutes with readings of an hour written with its minutes packed (see
 * {@link PackedMinutes}) unless configured (`PACKED_MINUTES`, `Store.packedMinutes`):
 * an hour of one minute is smaller in the object form, of two or more in the packed
 * one (BSON sizes counted in docs/design.md, "Packed minutes").
 */
export const DEFAULT_PACKED_MINUTES = 2;

/**
 * The forms in which a fold or compaction writes its documents (`partDocument` in
 * `documents/encode.ts`): the raw form for documents of at most `rawReadings` readings
 * (0: never, see {@link SeriesDayDocument.r}), packed minutes for hours of at least
 * `packedMinutes` minutes with readings (0: never, see {@link PackedMinutes}).
 */
export interface DocumentForms {
  rawReadings: number;
  packedMinutes: number;
}

/** Neither the raw form nor packed minutes: every document in the slot form (rollups, counters). */
export const SLOT_FORM: Readonly<DocumentForms> = { rawReadings: 0, packedMinutes: 0 };

/**
 * One reading of a document in the raw form (see {@link SeriesDayDocument.r}): its time, its
 * field values by field name, and the key of each value's sketch bin by field name
 * (`sketchKey` of `model/sketch.ts`; only for the fields the metric sketches), so a
 * server computes no logarithm and every server bins a value alike.
 */
export interface RawReading extends RecentReading {
  k?: Record<string, string>;
}

/** Dotted update paths of the three levels of a series-day document. */
export const SlotPath = {
  day: (field: string) => `fields.${field}`,
  hour: (hour: number, field: string) => `hours.${hour}.fields.${field}`,
  minute: (hour: number, minute: number, field: string) => `hours.${hour}.minutes.${minute}.${field}`,
  /** A quarter hour's statistics (rollup documents only, see {@link HourSlot.quarters}): the same path as its sketch's under `q`. */
  quarter: (hour: number, quarter: number, field: string) => `hours.${hour}.quarters.${quarter}.${field}`,
} as const;

/** Whether a slot path lies at the quarter-hour level (`hours.7.quarters.2.delay`, rollup documents only). */
export const isQuarterPath = (path: string) => path.includes('.quarters.');

/** Whether a slot path (see {@link SlotPath}) lies at the minute level (`hours.7.minutes.30.delay`). */
export const isMinutePath = (path: string) => path.includes('.minutes.');

/** Whether a slot path lies at the hour level or below (`hours.7.fields.delay`, `hours.7.minutes.30.delay`). */
export const isHourPath = (path: string) => path.startsWith('hours.');

/** Path of the quantile sketch of a slot: the slot's statistics path under `q` (see {@link SeriesDayDocument.q}). */
export const sketchPath = (slotPath: string) => `q.${slotPath}`;

/**
 * Path, relative to `q`, of the quantile sketch of `field` in quarter `quarter` (0 to 3:
 * minutes 0-14, 15-29, 30-44, 45-59) of hour `hour` of the day (UTC): a level with
 * sketches only, whose statistics are those of its minute slots. Quarters let a
 * percentile bucket whose edges fall inside an hour (every offset of the tz database
 * since October 1979 is a multiple of 15 minutes: +05:30 Kolkata, +05:45 Kathmandu) read
 * sketches instead of minute slots.
 */
export const quarterSketchPath = (hour: number, quarter: number, field: string) => `hours.${hour}.quarters.${quarter}.${field}`;

/**
 * The update paths (for `$unset`) of every hour's minute slots (in either form:
 * `minutes`, or packed, `mc`) and minute sketches, and of its quarter-hour sketches and
 * (rollup documents) statistics: what retention removes at the minute horizon (a query
 * reads quarter-hour sketches only beside the minute slots' statistics, and a rollup's
 * quarter hours are the detail of its series' minutes).
 */
export const MINUTE_DETAIL: Readonly<Record<string, ''>> = Object.fromEntries(
  Array.from({ length: 24 }, (_, hour) => [
    [`hours.${hour}.minutes`, ''],
    [`hours.${hour}.mc`, ''],
    [`q.hours.${hour}.minutes`, ''],
    [`q.hours.${hour}.quarters`, ''],
    [`hours.${hour}.quarters`, ''],
  ]).flat(),
);

/** The update paths of the hour slots (which hold the minutes) and their sketches: what retention removes at the hour horizon. */
export const HOUR_DETAIL: Readonly<Record<string, ''>> = { hours: '', 'q.hours': '' };

/** The projection of what a series' latest readings are read from: the day, the version, the readings count, `recent` and the raw form's `r`. */
export const LATEST_READINGS_PATHS: Readonly<Record<string, 0 | 1>> = { _id: 0, date: 1, v: 1, readings: 1, recent: 1, r: 1 };

/** The projection of what a series' latest reading of `field` is read from: the day, the version and the field's day `last`. */
export const latestValuePaths = (field: string): Record<string, 0 | 1> => ({ _id: 0, v: 1, date: 1, [`fields.${field}.last`]: 1 });

/**
 * The latest readings a stored document keeps, oldest first: `recent`, or every reading
 * of a document in the raw form (`r`); none in a document of version 1.
 */
export const keptReadings = (doc: Pick<SeriesDayDocument, 'r' | 'recent'>): readonly RecentReading[] => doc.r ?? doc.recent ?? [];
