/**
 * Readings into series-day contents (`content.ts`), pure: every reading in its day,
 * hour and minute slot, with sketches, latest readings and counters' increases where
 * the metric keeps them, cut to the retention horizons. What a fold plans, and what a
 * reader's tail plans as far as its pipeline reads.
 */
import {
  ALL_LEVELS,
  type BatchSeriesPlan,
  type ContentPlan,
  type DayContent,
  type MetricInBatch,
  type PlanLevels,
  type SeriesInBatch,
  type SlotContent,
  type TimedReading,
} from './content.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS, QUARTER_MS, floorTo } from '../model/time.ts';
import { DEFAULT_STATISTICS, type SlotLevel, type StatisticsSettings, keepsSketch } from '../model/statistics-settings.ts';
import { type Horizons, NO_HORIZONS } from '../model/retention-policy.ts';
import type { Reading } from '../record/validate.ts';
import { type SketchBins, addKeyToSketch, mergeSketch, sketchKey } from '../model/sketch.ts';
import { SlotPath, quarterSketchPath, isHourPath, isMinutePath } from './series-day.ts';
import { type TimedValue, addValue, compareTimed, emptyStats, isEarlier } from '../model/stats.ts';
import { counterDelta, type MetricKind } from '../model/counter.ts';
import { tagMap, tagPair } from '../model/series.ts';

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

/**
 * Adds one reading's value of a field to the slot at `path`, creating the slot's write on
 * first use, with a sketch when `sketched` (the metric keeps one of the field at this
 * level) and `inc: 0` for a counter field (the deltas are added once every reading is
 * in, see {@link addCounterIncreases}). The value is counted in the sketch under `key`
 * (its bin key, computed once for every level); null leaves the sketch to be merged from
 * the quarter hours' (see {@link planContents}). Returns the slot's write.
 */
function addToSlot(
  write: DayContent,
  path: string,
  pair: TimedValue,
  sketched: boolean,
  key: string | null,
  counter: boolean,
): SlotContent {
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
 * The quarter-hour sketch at `path` of `write` (see {@link DayContent.quarters}), created
 * on first use; `created` tells whether it was.
 */
function quarterSketch(write: DayContent, path: string): { bins: SketchBins; created: boolean } {
  const bins = write.quarters.get(path);
  if (bins !== undefined) return { bins, created: false };
  const made: SketchBins = new Map();
  write.quarters.set(path, made);
  return { bins: made, created: true };
}

/** Adds a reading's metric, fields, tag keys and time to the metric writes of a batch. */
function addToMetric(metrics: Map<string, MetricInBatch>, reading: Reading): void {
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
export function batchMetrics(readings: readonly Reading[]): MetricInBatch[] {
  const metrics = new Map<string, MetricInBatch>();
  for (const reading of readings) addToMetric(metrics, reading);
  return [...metrics.values()];
}

/**
 * The series of a validated batch, with the fields each writes, and the number of
 * series-day documents the readings fall into: what acknowledging a batch needs
 * (registering its series, counting its documents), without the statistics, sketches
 * and latest readings of {@link planContents}, which the fold computes. Pure.
 */
export function batchSeries(readings: readonly Reading[]): BatchSeriesPlan {
  const series = new Map<string, SeriesInBatch>();
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
  write: DayContent;
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
const byTime = (a: TimedReading, b: TimedReading) => a.t - b.t;

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
export function planContents(
  readings: readonly Reading[],
  settingsOf: (metric: string) => StatisticsSettings = () => DEFAULT_STATISTICS,
  kindOf: (metric: string) => MetricKind = () => 'gauge',
  levels: Readonly<PlanLevels> = ALL_LEVELS,
): ContentPlan {
  const days = new Map<string, DayContent>();
  const series = new Map<string, SeriesInBatch>();
  const metrics = new Map<string, MetricInBatch>();
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

    let write = days.get(docKey);
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
      days.set(docKey, write);
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
      let hourSlot: SlotContent | null = null;
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
  for (const write of days.values()) {
    if (write.recent.length > write.recentKept) write.recent = write.recent.sort(byTime).slice(-write.recentKept);
  }
  for (const entry of counterReadings.values()) addCounterIncreases(entry);
  return {
    days: [...days.values()],
    series: [...series.values()],
    metrics: [...metrics.values()],
    readings: readings.length,
  };
}

/**
 * `writes` cut to what retention keeps of their days (pure; the writes kept are trimmed
 * in place): none of a day before the metric's day horizon (deleted by a retention pass
 * after the readings were acknowledged), no minute slots (nor quarter-hour sketches,
 * which answer only beside them) of a day before its minute horizon, no hour, quarter
 * and minute detail of a day before its hour horizon. A late reading for
 * such a day then adds only to what the day still keeps.
 * @param horizonsOf the applied horizons of a metric (UTC midnights, ms; null: none).
 * @returns the writes of the days still kept.
 */
export function trimToHorizons(writes: readonly DayContent[], horizonsOf: (metric: string) => Horizons = () => NO_HORIZONS): DayContent[] {
  return writes.filter((write) => {
    const horizons = horizonsOf(write.metric);
    const day = write.date.getTime();
    if (horizons.day !== null && day < horizons.day) return false;
    const dropHours = horizons.hour !== null && day < horizons.hour;
    const dropMinutes = dropHours || (horizons.minute !== null && day < horizons.minute);
    if (dropMinutes) {
      for (const path of [...write.slots.keys()]) {
        if (dropHours ? isHourPath(path) : isMinutePath(path)) write.slots.delete(path);
      }
      write.quarters.clear();
    }
    return true;
  });
}

/** How readings are planned: each metric's statistics settings, applied retention horizons and kind. */
export interface PlanSettings {
  settingsOf: (metric: string) => StatisticsSettings;
  horizonsOf: (metric: string) => Horizons;
  /** Whether a metric is a counter (its slots then keep `inc`, see `planContents`); gauge when absent. */
  kindOf?: (metric: string) => MetricKind;
}

/**
 * Plans readings per series-day document (see `planContents`), cut to the retention
 * horizons ({@link trimToHorizons}).
 * @param levels the parts of the documents to plan: all for a fold, those a reader's
 *   pipeline reads for its tail (`levelsWithin`, `documents/encode.ts`).
 */
export function planReadings(readings: readonly Reading[], settings: PlanSettings, levels: Readonly<PlanLevels> = ALL_LEVELS): ContentPlan {
  const plan = planContents(readings, settings.settingsOf, settings.kindOf, levels);
  plan.days = trimToHorizons(plan.days, settings.horizonsOf);
  return plan;
}
