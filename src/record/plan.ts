import { quarterSketchPath, SlotPath } from '../model/day-document.ts';
import { addKeyToSketch, mergeSketch, sketchKey, type SketchBins } from '../model/sketch.ts';
import { counterDelta, type MetricKind } from '../model/counter.ts';
import { addValue, compareTimed, emptyStats, isEarlier, type Stats, type TimedValue } from '../model/stats.ts';
import { DEFAULT_STATISTICS, keepsSketch, type SlotLevel, type StatisticsSettings } from '../model/statistics-settings.ts';
import { tagMap, tagPair, type TagMap } from '../model/series.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS, QUARTER_MS, floorTo } from '../model/time.ts';
import type { Reading } from './validate.ts';

/** What a batch adds to one slot of one field: its statistics, its first and last reading, and its sketch when the metric keeps one there. */
export interface SlotWrite {
  stats: Stats;
  first: TimedValue;
  last: TimedValue;
  /** Bin key -> count (see `model/sketch.ts`); null when the metric keeps no sketch of the field at this level. */
  sketch: SketchBins | null;
  /**
   * Counter metrics only: the sum of the reset-aware deltas between the slot's
   * consecutive readings (`counterDelta`, `model/counter.ts`); absent for other metrics
   * and where it is not known (see `StoredStats.inc`).
   */
  inc?: number;
}

/** The levels at which a metric sketches a field (see `keepsSketch`). */
type SketchedLevels = Record<SlotLevel, boolean>;

/**
 * The slot and quarter-sketch paths of one field (`SlotPath`, `quarterSketchPath`),
 * each made the first time a plan needs it ({@link pathAt}): `hours` by hour of the
 * day, `minutes` by minute of the day (hour × 60 + minute), `quarters` by quarter hour
 * of the day (hour × 4 + quarter). A fold plans up to `FOLD_MAX_READINGS` readings of a few fields each; building
 * every path again for every reading made strings to hash and collect at each of them.
 */
interface FieldPaths {
  day: string;
  hours: string[];
  minutes: string[];
  quarters: string[];
}

/** `paths[index]`, made by `make` the first time it is asked for (see {@link FieldPaths}). */
function pathAt(paths: string[], index: number, make: () => string): string {
  let path = paths[index];
  if (path === undefined) {
    path = make();
    paths[index] = path;
  }
  return path;
}

/** A reading as kept in a document's latest readings: time in ms since the epoch, field values by name. */
export interface RecentWrite {
  t: number;
  f: Record<string, number>;
}

/**
 * Everything one batch does to one series-day document (one series, one day), merged in
 * memory: the statistics of every slot it touches, at every level, and the latest
 * readings it brings.
 */
export interface DayWrite {
  series: string;
  metric: string;
  tags: TagMap;
  /** The tags as `key=value` strings, sorted by key. */
  tagPairs: string[];
  /** Midnight UTC of the document's day. */
  date: Date;
  /** Merged statistics keyed by slot path (`fields.delay`, `hours.7.fields.delay`, `hours.7.minutes.30.delay`). */
  slots: Map<string, SlotWrite>;
  /**
   * Quarter-hour sketches, the level without statistics, keyed by their path under `q`
   * (`hours.7.quarters.2.delay`, see `quarterSketchPath`); empty when the metric keeps none.
   */
  quarters: Map<string, SketchBins>;
  /** The batch's latest readings for this document, oldest first, at most the metric's `latestReadings`. */
  recent: RecentWrite[];
  /** How many latest readings the document keeps (the metric's `latestReadings`). */
  recentKept: number;
  /** Fields the batch writes to this document. */
  fields: Set<string>;
  /** Earliest and latest reading time in ms since the epoch. */
  first: number;
  last: number;
  /** Number of readings merged into this write. */
  readings: number;
}

/** A series the batch writes to, with the fields it writes. */
export interface SeriesWrite {
  id: string;
  key: string;
  metric: string;
  tags: TagMap;
  tagPairs: string[];
  fields: Set<string>;
}

/** A metric the batch writes to, with the fields and tag keys it uses. */
export interface MetricWrite {
  name: string;
  fields: Set<string>;
  tagKeys: Set<string>;
  /** Earliest and latest reading time of the batch for this metric, ms since epoch. */
  first: number;
  last: number;
}

/**
 * The parts of a series-day document a plan builds ({@link planWrites}): a fold builds
 * them all ({@link ALL_LEVELS}); a reader's tail builds only those its pipeline reads
 * (`levelsWithin` in `record/rollup-plan.ts`), so a day total over the tail does not
 * plan the readings' hour and minute slots, sketches and latest readings. The day
 * slots, the identity and the counts are always built.
 */
export interface PlanLevels {
  /** Hour slots (`hours.H.fields.F`). */
  hours: boolean;
  /** Minute slots (`hours.H.minutes.M.F`); planned only with the hour slots. */
  minutes: boolean;
  /** Sketches (`q`), at every level the metric keeps them. */
  sketches: boolean;
  /** Latest readings (`recent`). */
  recent: boolean;
}

/** Every part of a series-day document: what a fold plans. */
export const ALL_LEVELS: Readonly<PlanLevels> = Object.freeze({ hours: true, minutes: true, sketches: true, recent: true });

/** The writes of one validated batch, grouped by target document. */
export interface WritePlan {
  buckets: DayWrite[];
  series: SeriesWrite[];
  metrics: MetricWrite[];
  readings: number;
}

/**
 * Adds one reading's value of a field to the slot at `path`, creating the slot's write on
 * first use, with a sketch when `sketched` (the metric keeps one of the field at this
 * level) and `inc: 0` for a counter field (the deltas are added once every reading is
 * in, see {@link addCounterIncreases}). The value is counted in the sketch under `key`
 * (its bin key, computed once for every level); null leaves the sketch to be merged from
 * the quarter hours' (see {@link planWrites}). Returns the slot's write.
 */
function addToSlot(write: DayWrite, path: string, pair: TimedValue, sketched: boolean, key: string | null, counter: boolean): SlotWrite {
  let slot = write.slots.get(path);
  if (slot === undefined) {
    slot = { stats: emptyStats(), first: pair, last: pair, sketch: sketched ? new Map() : null };
    if (counter) slot.inc = 0;
    write.slots.set(path, slot);
  } else {
    if (isEarlier(pair, slot.first)) slot.first = pair;
    if (isEarlier(slot.last, pair)) slot.last = pair;
  }
  addValue(slot.stats, pair.v);
  if (slot.sketch !== null && key !== null) addKeyToSketch(slot.sketch, key);
  return slot;
}

/**
 * The quarter-hour sketch at `path` of `write` (see {@link DayWrite.quarters}), created
 * on first use; `created` tells whether it was.
 */
function quarterSketch(write: DayWrite, path: string): { bins: SketchBins; created: boolean } {
  const bins = write.quarters.get(path);
  if (bins !== undefined) return { bins, created: false };
  const made: SketchBins = new Map();
  write.quarters.set(path, made);
  return { bins: made, created: true };
}

/** Adds a reading's metric, fields, tag keys and time to the metric writes of a batch. */
function addToMetric(metrics: Map<string, MetricWrite>, reading: Reading): void {
  let metricWrite = metrics.get(reading.metric);
  if (metricWrite === undefined) {
    metricWrite = { name: reading.metric, fields: new Set(), tagKeys: new Set(), first: reading.time, last: reading.time };
    metrics.set(reading.metric, metricWrite);
  }
  if (reading.time < metricWrite.first) metricWrite.first = reading.time;
  if (reading.time > metricWrite.last) metricWrite.last = reading.time;
  for (const tag of reading.tags) metricWrite.tagKeys.add(tag.key);
  for (const field of reading.fields) metricWrite.fields.add(field.name);
}

/**
 * The metrics a validated batch writes to, with the fields, tag keys and time span of
 * each: what the record path checks against the registry (and reads each metric's
 * settings from) before planning the batch's documents. Pure.
 */
export function planMetrics(readings: readonly Reading[]): MetricWrite[] {
  const metrics = new Map<string, MetricWrite>();
  for (const reading of readings) addToMetric(metrics, reading);
  return [...metrics.values()];
}

/** The series a batch writes to, and how many series-day documents its readings fall into. */
export interface SeriesPlan {
  series: SeriesWrite[];
  /** Distinct (series, UTC day) pairs of the readings. */
  documents: number;
}

/**
 * The series of a validated batch, with the fields each writes, and the number of
 * series-day documents the readings fall into: what acknowledging a batch needs
 * (registering its series, counting its documents), without the statistics, sketches
 * and latest readings of {@link planWrites}, which the fold computes. Pure.
 */
export function planSeries(readings: readonly Reading[]): SeriesPlan {
  const series = new Map<string, SeriesWrite>();
  const documents = new Set<string>();
  for (const reading of readings) {
    documents.add(`${reading.seriesId}:${floorTo(reading.time, DAY_MS)}`);
    let write = series.get(reading.seriesId);
    if (write === undefined) {
      write = {
        id: reading.seriesId,
        key: reading.seriesKey,
        metric: reading.metric,
        tags: tagMap(reading.tags),
        tagPairs: reading.tags.map((tag) => tagPair(tag.key, tag.value)),
        fields: new Set(),
      };
      series.set(reading.seriesId, write);
    }
    for (const field of reading.fields) write.fields.add(field.name);
  }
  return { series: [...series.values()], documents: documents.size };
}

/** The readings of one counter field of one series-day write, to be ordered once all are in. */
interface CounterReadings {
  write: DayWrite;
  field: string;
  pairs: TimedValue[];
}

/**
 * Adds to the slots of a counter field the reset-aware deltas between its consecutive
 * readings (pure, in place): the readings in the order of `TimedValue` (time, then value),
 * each delta `counterDelta(previous, next)` added to the `inc` of every slot (day, hour,
 * minute) that holds both readings. The deltas between slots are the query's to add,
 * from the slots' last and first readings (docs/statistics.md, "Counters").
 */
function addCounterIncreases({ write, field, pairs }: CounterReadings): void {
  pairs.sort(compareTimed);
  const day = write.date.getTime();
  for (let i = 1; i < pairs.length; i++) {
    const before = pairs[i - 1]!;
    const after = pairs[i]!;
    const delta = counterDelta(before.v, after.v);
    write.slots.get(SlotPath.day(field))!.inc! += delta;
    const hour = Math.floor((after.t - day) / HOUR_MS);
    if (Math.floor((before.t - day) / HOUR_MS) !== hour) continue;
    // Absent where the plan leaves the level out (see `PlanLevels`).
    const hourSlot = write.slots.get(SlotPath.hour(hour, field));
    if (hourSlot === undefined) continue;
    hourSlot.inc! += delta;
    const minute = Math.floor((after.t % HOUR_MS) / MINUTE_MS);
    if (Math.floor((before.t % HOUR_MS) / MINUTE_MS) !== minute) continue;
    const minuteSlot = write.slots.get(SlotPath.minute(hour, minute, field));
    if (minuteSlot !== undefined) minuteSlot.inc! += delta;
  }
}

/** Orders readings by time (the order `$sort: {t: 1}` keeps them in). */
const byTime = (a: RecentWrite, b: RecentWrite) => a.t - b.t;

/**
 * Groups a validated batch by target series-day document and merges it in memory: every
 * reading lands in its day, hour and minute slot of its series' day document, counts
 * and sums added, min and max combined, first and last reading kept, and its value added
 * to the slot's sketch where `settingsOf` its metric keeps one, and to its quarter
 * hour's sketch where the metric keeps the `quarter` level (the day and hour sketches
 * are then merged from the quarter hours'); the document's latest readings are the
 * batch's newest. For a metric `kindOf` calls a counter, every slot of every field also
 * gets `inc`, the sum of the reset-aware deltas between its consecutive readings (see
 * `addCounterIncreases`). Order and lateness of readings do not matter.
 * Pure: no I/O.
 * @param settingsOf the optional statistics of each metric (its registry entry's, or the default for a new metric).
 * @param kindOf what each metric measures (its registry entry's `kind`; gauge by default).
 * @param levels the parts of the documents to plan (every part by default); a part left
 *   out is absent from every write, as if no reading reached it.
 */
export function planWrites(
  readings: readonly Reading[],
  settingsOf: (metric: string) => StatisticsSettings = () => DEFAULT_STATISTICS,
  kindOf: (metric: string) => MetricKind = () => 'gauge',
  levels: Readonly<PlanLevels> = ALL_LEVELS,
): WritePlan {
  const buckets = new Map<string, DayWrite>();
  const series = new Map<string, SeriesWrite>();
  const metrics = new Map<string, MetricWrite>();
  // Which levels sketch a field, decided once per metric and field rather than per reading.
  const sketchedLevels = new Map<string, Map<string, SketchedLevels>>();
  // Each quarter-hour sketch, with the hour and day sketches to merge it into once it is complete.
  const merges: { bins: SketchBins; hour: SketchBins | null; day: SketchBins | null }[] = [];
  // Counter metrics (decided once per metric), and the readings of each counter field per series-day.
  const counters = new Map<string, boolean>();
  const isCounter = (metric: string) => {
    let counter = counters.get(metric);
    if (counter === undefined) {
      counter = kindOf(metric) === 'counter';
      counters.set(metric, counter);
    }
    return counter;
  };
  const counterReadings = new Map<string, CounterReadings>();
  const sketched = (metric: string, field: string): SketchedLevels => {
    let ofMetric = sketchedLevels.get(metric);
    if (ofMetric === undefined) {
      ofMetric = new Map();
      sketchedLevels.set(metric, ofMetric);
    }
    let at = ofMetric.get(field);
    if (at === undefined) {
      const settings = settingsOf(metric);
      const keeps = (level: SlotLevel) => levels.sketches && keepsSketch(settings, level, field);
      at = { day: keeps('day'), hour: keeps('hour'), quarter: keeps('quarter'), minute: keeps('minute') };
      ofMetric.set(field, at);
    }
    return at;
  };
  // Each field's slot paths, built once per plan rather than once per reading.
  const pathsByField = new Map<string, FieldPaths>();

  for (const reading of readings) {
    const day = floorTo(reading.time, DAY_MS);
    const hour = Math.floor((reading.time - day) / HOUR_MS);
    const minute = Math.floor((reading.time % HOUR_MS) / MINUTE_MS);
    const quarter = Math.floor((reading.time % HOUR_MS) / QUARTER_MS);
    const docKey = `${reading.seriesId}:${day}`;

    let write = buckets.get(docKey);
    if (write === undefined) {
      write = {
        series: reading.seriesId,
        metric: reading.metric,
        tags: tagMap(reading.tags),
        tagPairs: reading.tags.map((tag) => tagPair(tag.key, tag.value)),
        date: new Date(day),
        slots: new Map(),
        quarters: new Map(),
        recent: [],
        recentKept: settingsOf(reading.metric).latestReadings,
        fields: new Set(),
        first: reading.time,
        last: reading.time,
        readings: 0,
      };
      buckets.set(docKey, write);
    }
    write.readings += 1;
    if (reading.time < write.first) write.first = reading.time;
    if (reading.time > write.last) write.last = reading.time;

    let seriesWrite = series.get(reading.seriesId);
    if (seriesWrite === undefined) {
      seriesWrite = {
        id: reading.seriesId,
        key: reading.seriesKey,
        metric: reading.metric,
        tags: write.tags,
        tagPairs: write.tagPairs,
        fields: new Set(),
      };
      series.set(reading.seriesId, seriesWrite);
    }
    addToMetric(metrics, reading);

    const values: Record<string, number> = {};
    const counter = isCounter(reading.metric);
    for (const { name, value } of reading.fields) {
      write.fields.add(name);
      seriesWrite.fields.add(name);
      if (levels.recent) values[name] = value;
      const pair = { t: reading.time, v: value };
      const sketchedAt = sketched(reading.metric, name);
      let paths = pathsByField.get(name);
      if (paths === undefined) {
        paths = { day: SlotPath.day(name), hours: [], minutes: [], quarters: [] };
        pathsByField.set(name, paths);
      }
      // The value's bin key, computed once; with quarter hours, the day and hour sketches are derived from them afterwards.
      const key = sketchedAt.day || sketchedAt.hour || sketchedAt.quarter || sketchedAt.minute ? sketchKey(value) : null;
      const counted = sketchedAt.quarter ? null : key;
      const daySlot = addToSlot(write, paths.day, pair, sketchedAt.day, counted, counter);
      let hourSlot: SlotWrite | null = null;
      if (levels.hours) {
        const hourPath = pathAt(paths.hours, hour, () => SlotPath.hour(hour, name));
        hourSlot = addToSlot(write, hourPath, pair, sketchedAt.hour, counted, counter);
        if (levels.minutes) {
          const minutePath = pathAt(paths.minutes, hour * 60 + minute, () => SlotPath.minute(hour, minute, name));
          addToSlot(write, minutePath, pair, sketchedAt.minute, key, counter);
        }
      }
      if (counter) {
        const counterKey = `${docKey}\u0000${name}`;
        const entry = counterReadings.get(counterKey);
        if (entry === undefined) counterReadings.set(counterKey, { write, field: name, pairs: [pair] });
        else entry.pairs.push(pair);
      }
      if (sketchedAt.quarter) {
        const quarterPath = pathAt(paths.quarters, hour * 4 + quarter, () => quarterSketchPath(hour, quarter, name));
        const { bins, created } = quarterSketch(write, quarterPath);
        addKeyToSketch(bins, key!);
        if (created) merges.push({ bins, hour: hourSlot?.sketch ?? null, day: daySlot.sketch });
      }
    }
    if (levels.recent && write.recentKept > 0) write.recent.push({ t: reading.time, f: values });
  }
  // A field sketched per quarter hour is counted there only: its hour and day sketches
  // are the merge of its quarter hours' (DDSketch merges exactly), one sketch update per
  // value instead of three.
  for (const { bins, hour, day } of merges) {
    if (hour !== null) mergeSketch(hour, bins);
    if (day !== null) mergeSketch(day, bins);
  }
  for (const write of buckets.values()) {
    if (write.recent.length > write.recentKept) write.recent = write.recent.sort(byTime).slice(-write.recentKept);
  }
  for (const entry of counterReadings.values()) addCounterIncreases(entry);
  return {
    buckets: [...buckets.values()],
    series: [...series.values()],
    metrics: [...metrics.values()],
    readings: readings.length,
  };
}
