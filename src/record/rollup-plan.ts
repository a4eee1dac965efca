import { LRUCache } from 'lru-cache';
import { Double } from 'mongodb';
import type { DayDocument, StoredStats } from '../model/day-document.ts';
import { LAYOUT_VERSION, quarterSketchPath, RAW_SKETCH_BITS, SlotPath, sketchPath } from '../model/day-document.ts';
import type { SlotLevel } from '../model/statistics-settings.ts';
import { dayKey, type RollupDefinition } from '../model/rollup.ts';
import { mergeSketch, sketchCount, sketchKey } from '../model/sketch.ts';
import { chainIncrease, type CounterPiece } from '../model/counter.ts';
import { isEarlier, mergeStats, type TimedValue } from '../model/stats.ts';
import { HOUR_MS, MINUTE_MS } from '../model/time.ts';
import { seriesId, seriesKey, sortTags, tagList, tagMap, tagPair, type TagMap } from '../model/series.ts';
import { unpackedMinutes } from './packed-minutes.ts';
import { ALL_LEVELS, type DayWrite, type PlanLevels, type SlotWrite, type WritePlan } from './plan.ts';

/** The tags of `tags` whose keys a rollup keeps (the others are merged away). */
export function rollupTags(tags: TagMap, tagKeys: readonly string[]): TagMap {
  return tagMap(sortTags(tagKeys.filter((key) => tags[key] !== undefined).map((key) => ({ key, value: tags[key]! }))));
}

/** Whether a slot path (see `SlotPath`) is at the minute level, which rollups do not keep. */
const isMinutePath = (path: string) => path.includes('.minutes.');

/** A copy of a slot write (its counter `inc` too, when it has one), so merging into it leaves the batch's own writes untouched. */
export function copySlot(slot: SlotWrite): SlotWrite {
  const copy: SlotWrite = {
    stats: { ...slot.stats },
    first: slot.first,
    last: slot.last,
    sketch: slot.sketch === null ? null : new Map(slot.sketch),
  };
  if (slot.inc !== undefined) copy.inc = slot.inc;
  return copy;
}

/**
 * Merges slot write `other` into `into` (statistics, first and last reading, sketch
 * bins). A counter's `inc` is left as it was: merging it needs every piece of the slot
 * at once (`chainIncrease`), see {@link mergeStoredDocuments}.
 */
export function mergeSlot(into: SlotWrite, other: SlotWrite): void {
  mergeStats(into.stats, other.stats);
  if (isEarlier(other.first, into.first)) into.first = other.first;
  if (isEarlier(into.last, other.last)) into.last = other.last;
  if (other.sketch !== null) {
    if (into.sketch === null) into.sketch = new Map();
    mergeSketch(into.sketch, other.sketch);
  }
}

/**
 * Merges series-day writes into the writes of one rollup's documents (pure): every
 * write of the rollup's metric goes to the document of its day and of the values its
 * series has for the rollup's tag keys (a series without one of them is merged with the
 * others that lack it), day and hour slots merged, minute slots and latest readings left
 * out, and so are the quarter-hour sketches (a query reading quarters reads minute
 * statistics beside them, which rollups do not keep: it never reads a rollup). The
 * document's `series` is the id of the rollup group's key (`model/series.ts`), unique
 * within the rollup's collection. Counter increases (`inc`) are left out too: they are
 * per series, and counter queries read the series-day documents.
 */
export function mergeIntoRollup(writes: readonly DayWrite[], rollup: Pick<RollupDefinition, 'metric' | 'tagKeys'>): DayWrite[] {
  const merged = new Map<string, DayWrite>();
  // A series writes one document a day: its group's id is hashed once, not once per day.
  const groups = new Map<string, string>();
  for (const write of writes) {
    if (write.metric !== rollup.metric) continue;
    const tags = rollupTags(write.tags, rollup.tagKeys);
    let group = groups.get(write.series);
    if (group === undefined) {
      group = seriesId(seriesKey({ metric: rollup.metric, tags: tagList(tags) }));
      groups.set(write.series, group);
    }
    const key = `${group}:${write.date.getTime()}`;
    let into = merged.get(key);
    if (into === undefined) {
      into = {
        series: group,
        metric: rollup.metric,
        tags,
        tagPairs: tagList(tags).map((tag) => tagPair(tag.key, tag.value)),
        date: write.date,
        slots: new Map(),
        quarters: new Map(),
        recent: [],
        recentKept: 0,
        fields: new Set(),
        first: write.first,
        last: write.last,
        readings: 0,
      };
      merged.set(key, into);
    }
    into.readings += write.readings;
    if (write.first < into.first) into.first = write.first;
    if (write.last > into.last) into.last = write.last;
    for (const field of write.fields) into.fields.add(field);
    for (const [path, slot] of write.slots) {
      if (isMinutePath(path)) continue;
      const existing = into.slots.get(path);
      if (existing === undefined) {
        // A rollup merges series: the increase of a counter is per series, so none is kept.
        const copy = copySlot(slot);
        delete copy.inc;
        into.slots.set(path, copy);
      } else mergeSlot(existing, slot);
    }
  }
  return [...merged.values()];
}

/** What a batch does to the rollups of its metrics (see {@link planRollups}). */
export interface RollupPlan {
  /** Rollups the batch writes to now, each with its merged document writes. */
  writes: { rollup: RollupDefinition; writes: DayWrite[] }[];
  /** Rollups whose days (UTC midnights, ms) the batch marks dirty instead of writing them. */
  dirty: { rollup: RollupDefinition; days: number[] }[];
}

/**
 * Decides, per rollup of the batch's metrics, which days the batch writes to the rollup
 * in the same pass and which it marks dirty for a rebuild from the series-day documents
 * (pure). A day is written when the rollup is `ready`, the day is not dirty and the
 * attempt is a first attempt; a retry of a batch (which may have reached some rollup
 * documents before it failed, and rollup documents keep no batch marks) marks its days
 * dirty, as does any batch while the rollup is `building`.
 */
export function planRollups(plan: WritePlan, rollups: readonly RollupDefinition[], options: { retry: boolean }): RollupPlan {
  const result: RollupPlan = { writes: [], dirty: [] };
  for (const rollup of rollups) {
    const direct = rollup.state === 'ready' && !options.retry;
    const now: DayWrite[] = [];
    const later = new Set<number>();
    for (const write of plan.buckets) {
      if (write.metric !== rollup.metric) continue;
      if (direct && rollup.dirty?.[dayKey(write.date.getTime())] === undefined) now.push(write);
      else later.add(write.date.getTime());
    }
    if (now.length > 0) result.writes.push({ rollup, writes: mergeIntoRollup(now, rollup) });
    if (later.size > 0) result.dirty.push({ rollup, days: [...later] });
  }
  return result;
}

/** A stored `{t, v}` pair as a {@link TimedValue}; `fallback` when absent (layout version 1). */
const storedPair = (pair: StoredStats['first'], fallback: TimedValue): TimedValue =>
  pair === undefined ? fallback : { t: pair.t.getTime(), v: pair.v };

/** A stored sketch (bin key -> count) as bins; null when the slot has none. */
const storedSketch = (bins: Record<string, number> | undefined) => (bins === undefined ? null : new Map(Object.entries(bins)));

/** A stored slot of a field as the slot write that stored it (statistics, first and last, sketch, counter `inc`). */
function storedSlot(stats: StoredStats, sketch: Record<string, number> | undefined, write: Pick<DayWrite, 'first' | 'last'>): SlotWrite {
  const slot: SlotWrite = {
    stats: { n: stats.n, sum: stats.sum, min: stats.min, max: stats.max, sq: stats.sq },
    first: storedPair(stats.first, { t: write.first, v: stats.min }),
    last: storedPair(stats.last, { t: write.last, v: stats.max }),
    sketch: storedSketch(sketch),
  };
  if (typeof stats.inc === 'number') slot.inc = stats.inc;
  return slot;
}

/**
 * A write of the identity of stored document `doc` with `readings` readings, and no slot,
 * sketch or latest reading yet; its first and last times are the document's (its day's
 * midnight where it has none).
 */
function emptyWrite(doc: DayDocument, readings: number): DayWrite {
  return {
    series: doc.series,
    metric: doc.metric,
    tags: doc.tags,
    tagPairs: doc.tagPairs,
    date: doc.date,
    slots: new Map(),
    quarters: new Map(),
    recent: [],
    recentKept: 0,
    fields: new Set(),
    first: doc.first?.getTime() ?? doc.date.getTime(),
    last: doc.last?.getTime() ?? doc.date.getTime(),
    readings,
  };
}

/**
 * A stored series-day document as the write that would have produced its day and hour
 * slots (pure): what a rebuild merges into rollup documents. Slots without readings
 * (an unused pre-allocated slot) are left out. A document of layout version 1 has no
 * first and last readings: the document's first and last times stand in, and the caller
 * marks the rollup document as version 1 (see {@link oldestVersion}).
 */
export function storedDayWrite(doc: DayDocument): DayWrite {
  if (Array.isArray(doc.r)) return rawWrite(doc, false);
  const write = emptyWrite(doc, doc.readings ?? 0);
  const add = (path: string, stats: StoredStats | undefined, sketch: Record<string, number> | undefined, field: string) => {
    if (stats === undefined || !(stats.n > 0)) return;
    write.fields.add(field);
    write.slots.set(path, storedSlot(stats, sketch, write));
  };
  for (const [field, stats] of Object.entries(doc.fields ?? {})) add(SlotPath.day(field), stats, doc.q?.fields?.[field], field);
  for (const [hour, slot] of Object.entries(doc.hours ?? {})) {
    for (const [field, stats] of Object.entries(slot.fields ?? {})) {
      add(SlotPath.hour(Number(hour), field), stats, doc.q?.hours?.[hour]?.fields?.[field], field);
    }
  }
  return write;
}

/**
 * A stored series-day document (or part) as the write that would have produced all of
 * it (pure): {@link storedDayWrite}'s day and hour slots, plus its minute slots (packed
 * ones unpacked, see `DayDocument.hours`), its quarter-hour sketches and its latest
 * readings. What a compaction merges.
 */
export function storedFullWrite(doc: DayDocument): DayWrite {
  if (Array.isArray(doc.r)) return rawWrite(doc, true);
  const write = storedDayWrite(doc);
  for (const [hour, slot] of Object.entries(doc.hours ?? {})) {
    const minutes = slot.mc === undefined ? (slot.minutes ?? {}) : unpackedMinutes(slot.mc, doc.date.getTime() + Number(hour) * HOUR_MS);
    for (const [minute, fields] of Object.entries(minutes)) {
      for (const [field, stats] of Object.entries(fields ?? {})) {
        if (stats === undefined || !(stats.n > 0)) continue;
        write.fields.add(field);
        write.slots.set(
          SlotPath.minute(Number(hour), Number(minute), field),
          storedSlot(stats, doc.q?.hours?.[hour]?.minutes?.[minute]?.[field], write),
        );
      }
    }
  }
  for (const [hour, sketches] of Object.entries(doc.q?.hours ?? {})) {
    for (const [quarter, fields] of Object.entries(sketches.quarters ?? {})) {
      for (const [field, bins] of Object.entries(fields ?? {})) {
        write.quarters.set(quarterSketchPath(Number(hour), Number(quarter), field), new Map(Object.entries(bins)));
      }
    }
  }
  write.recent = (doc.recent ?? []).map((reading) => ({ t: reading.t.getTime(), f: reading.f }));
  write.recentKept = write.recent.length;
  return write;
}

/**
 * A document in the raw form (see `DayDocument.r`) as the write of its readings (pure):
 * the day and hour slots of every field, and with `full` the minute slots, the
 * quarter-hour sketches and the latest readings (every reading), as
 * {@link storedDayWrite} and {@link storedFullWrite} give them for the slot form. A
 * reading's sketch bin (`k`) counts in the sketches of its field at the levels the
 * document lists (`kl`). Counter increases (`inc`) are left out (unknown): the raw form
 * is not written for counters.
 */
function rawWrite(doc: DayDocument, full: boolean): DayWrite {
  const day = doc.date.getTime();
  const sketches = (level: SlotLevel) => Math.floor((doc.kl ?? 0) / RAW_SKETCH_BITS[level]) % 2 === 1;
  const [dayBins, hourBins, quarterBins, minuteBins] = (['day', 'hour', 'quarter', 'minute'] as const).map(sketches);
  const write = emptyWrite(doc, doc.readings ?? doc.r!.length);
  const add = (path: string, t: number, v: number, key: string | undefined) => {
    const slot: SlotWrite = {
      stats: { n: 1, sum: v, min: v, max: v, sq: v * v },
      first: { t, v },
      last: { t, v },
      sketch: key === undefined ? null : new Map([[key, 1]]),
    };
    const existing = write.slots.get(path);
    if (existing === undefined) write.slots.set(path, slot);
    else mergeSlot(existing, slot);
  };
  for (const reading of doc.r!) {
    const t = reading.t.getTime();
    const hour = Math.floor((t - day) / HOUR_MS);
    const minute = Math.floor((t - day - hour * HOUR_MS) / MINUTE_MS);
    // Numbers as the driver reads them; `Double`s as `rawDayDocument` writes them.
    const values = Object.fromEntries(Object.entries(reading.f).map(([field, value]) => [field, Number(value)]));
    for (const [field, v] of Object.entries(values)) {
      const key = reading.k?.[field];
      write.fields.add(field);
      add(SlotPath.day(field), t, v, dayBins ? key : undefined);
      add(SlotPath.hour(hour, field), t, v, hourBins ? key : undefined);
      if (!full) continue;
      add(SlotPath.minute(hour, minute, field), t, v, minuteBins ? key : undefined);
      if (key === undefined || !quarterBins) continue;
      const path = quarterSketchPath(hour, Math.floor(minute / 15), field);
      const bins = write.quarters.get(path) ?? new Map<string, number>();
      bins.set(key, (bins.get(key) ?? 0) + 1);
      write.quarters.set(path, bins);
    }
    if (full) write.recent.push({ t, f: values });
  }
  write.recentKept = write.recent.length;
  return write;
}

/** The hour of the day of a quarter-hour sketch path (`hours.7.quarters.2.delay`: 7). */
const hourOfQuarterPath = (path: string) => Number(path.split('.')[1]);

/**
 * Gives each of `writes` (the parts of one series-day) that has no quarter-hour sketch
 * in an hour where another has some the quarter-hour sketches of its minute sketches
 * there, in place: a quarter's sketch is the merge of its 15 minutes' (DDSketch merges
 * exactly). A query reads an hour's quarter-hour sketches whenever the hour has any, and
 * its minute sketches only otherwise (`quartersOfHour` in `query/buckets-pipeline.ts`),
 * so without this the merge of a part written while the metric kept minute sketches and
 * one written once it kept quarter hours would answer null where both parts answered.
 */
export function fillQuarters(writes: readonly DayWrite[]): void {
  const hours = new Set<number>();
  for (const write of writes) for (const path of write.quarters.keys()) hours.add(hourOfQuarterPath(path));
  if (hours.size === 0) return;
  for (const write of writes) {
    const own = new Set([...write.quarters.keys()].map(hourOfQuarterPath));
    for (const [path, slot] of write.slots) {
      if (slot.sketch === null || !isMinutePath(path)) continue;
      // `hours.<h>.minutes.<m>.<field>`; names hold no dots (NAME_PATTERN).
      const [, hour, , minute, field] = path.split('.') as [string, string, string, string, string];
      if (!hours.has(Number(hour)) || own.has(Number(hour))) continue;
      const quarter = quarterSketchPath(Number(hour), Math.floor(Number(minute) / 15), field);
      const bins = write.quarters.get(quarter) ?? new Map<string, number>();
      mergeSketch(bins, slot.sketch);
      write.quarters.set(quarter, bins);
    }
  }
}

/**
 * Merges the stored parts of one series-day into the write of one document (pure):
 * statistics, first and last readings and sketch bins of every slot (quarter-hour
 * sketches included, filled in from minute sketches where only some parts have them in
 * an hour: {@link fillQuarters}), readings counted,
 * and the latest readings: the newest `latestReadings` of the parts' lists, but no more
 * than the shortest list of a part that kept fewer than its readings, so the merged list
 * is exactly the day's newest readings (a day's newest k readings are among each part's
 * newest k). Latest readings are kept by time, oldest first. Counter slots get their
 * `inc` merged by {@link mergeIncreases}.
 * @param latestReadings the metric's `latestReadings` setting now.
 * @returns the write, and the layout version the merged document may claim (the oldest of the parts').
 */
export function mergeStoredDocuments(docs: readonly DayDocument[], latestReadings: number): { write: DayWrite; version: number } {
  const writes = docs.map(storedFullWrite);
  fillQuarters(writes);
  const [first, ...rest] = writes;
  if (first === undefined) throw new Error('mergeStoredDocuments: no documents');
  const into: DayWrite = {
    ...first,
    slots: new Map([...first.slots].map(([path, slot]) => [path, copySlot(slot)])),
    quarters: new Map([...first.quarters].map(([path, bins]) => [path, new Map(bins)])),
    fields: new Set(first.fields),
  };
  let kept = latestReadings;
  for (const write of writes) if (write.recent.length < write.readings) kept = Math.min(kept, write.recent.length);
  const recent = [...first.recent];
  for (const write of rest) {
    into.readings += write.readings;
    into.first = Math.min(into.first, write.first);
    into.last = Math.max(into.last, write.last);
    for (const field of write.fields) into.fields.add(field);
    for (const [path, slot] of write.slots) {
      const existing = into.slots.get(path);
      if (existing === undefined) into.slots.set(path, copySlot(slot));
      else mergeSlot(existing, slot);
    }
    for (const [path, bins] of write.quarters) {
      const existing = into.quarters.get(path);
      if (existing === undefined) into.quarters.set(path, new Map(bins));
      else mergeSketch(existing, bins);
    }
    recent.push(...write.recent);
  }
  into.recent = kept > 0 ? recent.sort((a, b) => a.t - b.t).slice(-kept) : [];
  into.recentKept = Math.max(0, kept);
  mergeIncreases(into, writes);
  return { write: into, version: oldestVersion(docs) };
}

/** A slot write as the piece of a counter it holds (see `CounterPiece`). */
const pieceOf = (slot: SlotWrite): CounterPiece => ({ first: slot.first, last: slot.last, n: slot.stats.n, inc: slot.inc ?? null });

/**
 * Sets the counter `inc` of every slot of `into`, the merge of the parts `writes` of one
 * series-day (pure, in place), on the slots where a part has one (other metrics have
 * none, and keep none):
 * - a minute slot: the parts' pieces of it chained (`chainIncrease`): exact unless the
 *   parts' readings in that minute interleave in time, then left without `inc`;
 * - an hour slot: its merged minute slots chained, when each has its `inc` and together
 *   they hold every reading of the hour (their counts add up to the hour's); minute slots
 *   of one hour never interleave, so a late reading that fell between two parts'
 *   readings of the hour, but in a minute of its own, leaves the hour exact. Otherwise
 *   (minutes interleaved, or retention removed them) the parts' pieces of the hour
 *   chained, as for a minute;
 * - the day totals: the same from the merged hour slots, else from the parts' day pieces.
 * A slot whose increase is not known has no `inc`, and queries answer null for it (raw
 * readings are not kept, so nothing can recompute it later).
 */
export function mergeIncreases(into: DayWrite, writes: readonly DayWrite[]): void {
  const pieces = new Map<string, CounterPiece[]>();
  for (const write of writes) {
    for (const [path, slot] of write.slots) {
      const list = pieces.get(path);
      if (list === undefined) pieces.set(path, [pieceOf(slot)]);
      else list.push(pieceOf(slot));
    }
  }
  const counted = (path: string) => pieces.get(path)?.some((piece) => piece.inc !== null) === true;
  // Merged slots of the level below, per slot above: `hours.7.fields.x` <- minutes of hour 7, `fields.x` <- hours.
  const finer = new Map<string, SlotWrite[]>();
  for (const [path, slot] of into.slots) {
    const steps = path.split('.');
    const above = steps.length === 5 ? `hours.${steps[1]}.fields.${steps[4]}` : steps.length === 4 ? `fields.${steps[3]}` : null;
    if (above === null) continue;
    const list = finer.get(above);
    if (list === undefined) finer.set(above, [slot]);
    else list.push(slot);
  }
  // Minutes first, then hours, then the day: each level may chain the merged level below.
  const depth = (path: string) => path.split('.').length;
  const paths = [...into.slots.keys()].filter(counted).sort((a, b) => depth(b) - depth(a));
  for (const path of paths) {
    const slot = into.slots.get(path)!;
    const below = finer.get(path) ?? [];
    const complete =
      below.length > 0 && below.every((part) => part.inc !== undefined) && below.reduce((n, part) => n + part.stats.n, 0) === slot.stats.n;
    const increase = chainIncrease(complete ? below.map(pieceOf) : pieces.get(path)!);
    if (increase === null) delete slot.inc;
    else slot.inc = increase;
  }
}

/** The lowest layout version of `docs` (version 1 for documents without `v`). */
export function oldestVersion(docs: readonly Pick<DayDocument, 'v'>[]): number {
  return docs.reduce((lowest, doc) => Math.min(lowest, doc.v ?? 1), LAYOUT_VERSION);
}

/**
 * Dotted paths split into their keys, and sketch paths of slot paths, kept across calls
 * (least recently used first out past {@link PATHS_KEPT}): a fold builds hundreds of
 * documents whose slots share a few thousand paths (a field's day, 24 hours, 1,440
 * minutes and 96 quarter hours), and splitting each path again for each document took
 * about a quarter of the time of building them.
 */
const PATHS_KEPT = 200_000;
const splitPaths = new LRUCache<string, readonly string[]>({ max: PATHS_KEPT, memoMethod: (path) => path.split('.') });
const sketchPaths = new LRUCache<string, string>({ max: PATHS_KEPT, memoMethod: sketchPath });

/** The keys of dotted `path` (see {@link splitPaths}). */
const pathKeys = (path: string): readonly string[] => splitPaths.memo(path);

/** `sketchPath(path)`, made once per slot path (see {@link splitPaths}). */
const sketchPathOf = (path: string): string => sketchPaths.memo(path);

/** Sets `value` at dotted `path` of `target`, creating the objects on the way. */
function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = pathKeys(path);
  const last = keys.length - 1;
  let node = target;
  for (let i = 0; i < last; i++) {
    const key = keys[i]!;
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[last]!] = value;
}

/**
 * Dotted paths as a tree: `true` where a path ends (its whole value is kept), as an
 * inclusion `$project` of those paths keeps a document.
 */
export type PathTree = { [key: string]: PathTree | true };

/**
 * The parts of a series-day document (`PlanLevels`) whose values a projection to
 * `within` may keep, for planning a reader's tail (`storage/read.ts`): hour slots when
 * it reaches `hours`, minute slots when it reaches an hour's `minutes` (or a whole hour),
 * latest readings when it reaches `recent`. Any path under `q` (a percentile's sketches)
 * plans every part: the day and hour sketches are merged from the quarter hours', and a
 * sketch's path creates `q` even where the projection then drops it. What is left out
 * is what {@link dayDocument} with the same `within` would drop; the embedded documents
 * a left-out minute slot would create on its way (`hours.H`) are created by its hour
 * slot, always planned with it, so the projected documents are the same either way.
 * Without `within` (the whole document), every part.
 */
export function levelsWithin(within: PathTree | null | undefined): Readonly<PlanLevels> {
  if (within === null || within === undefined || 'q' in within) return ALL_LEVELS;
  const hours = within.hours;
  const minutes = hours === true || (hours !== undefined && Object.values(hours).some((hour) => hour === true || 'minutes' in hour));
  return { hours: hours !== undefined, minutes, sketches: false, recent: 'recent' in within };
}

/**
 * Whether a value set at `path` would survive a projection to `within`, with the
 * embedded documents on the way created as {@link setPath} would create them up to the
 * first key the projection drops (so that an embedded document the projection keeps,
 * emptied, exists either way). Without `within`, true.
 */
function kept(target: Record<string, unknown>, path: string, within: PathTree | undefined): boolean {
  if (within === undefined) return true;
  const keys = pathKeys(path);
  let node = target;
  let branch: PathTree | true = within;
  for (const [i, key] of keys.entries()) {
    if (branch === true) return true;
    const next: PathTree | true | undefined = branch[key];
    if (next === undefined) return false;
    if (i === keys.length - 1) return true;
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
    branch = next;
  }
  return true;
}

/**
 * What a document of `write` stores besides its statistics, in both forms: series,
 * metric, tags, tag pairs, day, layout version `version`, readings, and the first and
 * last reading times as dates.
 */
function storedIdentity(write: DayWrite, version: number): Record<string, unknown> {
  return {
    series: write.series,
    metric: write.metric,
    tags: write.tags,
    tagPairs: write.tagPairs,
    date: write.date,
    v: version,
    readings: write.readings,
    first: new Date(write.first),
    last: new Date(write.last),
  };
}

/** A slot's statistics as stored: doubles throughout, `{t: date, v: double}` first and last pairs, `inc` when known. */
function slotAsStored({ stats, first, last, inc }: SlotWrite): Record<string, unknown> {
  const pair = (value: TimedValue) => ({ t: new Date(value.t), v: new Double(value.v) });
  return {
    n: new Double(stats.n),
    sum: new Double(stats.sum),
    min: new Double(stats.min),
    max: new Double(stats.max),
    sq: new Double(stats.sq),
    first: pair(first),
    last: pair(last),
    ...(inc === undefined ? {} : { inc: new Double(inc) }),
  };
}

/**
 * The whole document a write makes when its document does not exist yet (pure): what
 * `dayUpdate`'s upsert would store, with the same BSON types (doubles for statistics,
 * `{t: date, v: double}` pairs, integer bin counts), of layout version `version`. A rebuild
 * inserts these instead of upserting: one insert costs the same however many slots and
 * bins a document has, where an update's cost grows with its paths (see docs/performance.md).
 * @param within when given, the slots, sketches and latest readings that a projection to
 *   these paths would drop are left out (the rest is whole: the caller still projects),
 *   so a reader's tail builds only what its pipeline reads (`storage/read.ts`).
 */
export function dayDocument(write: DayWrite, version: number = LAYOUT_VERSION, within?: PathTree): Record<string, unknown> {
  const doc: Record<string, unknown> = { ...storedIdentity(write, version), fields: {}, hours: {} };
  for (const [path, slot] of write.slots) {
    if (kept(doc, path, within)) setPath(doc, path, slotAsStored(slot));
    const sketch = slot.sketch;
    if (sketch === null) continue;
    const at = sketchPathOf(path);
    if (kept(doc, at, within)) setPath(doc, at, Object.fromEntries(sketch));
  }
  for (const [path, bins] of write.quarters) {
    const at = sketchPathOf(path);
    if (kept(doc, at, within)) setPath(doc, at, Object.fromEntries(bins));
  }
  if (write.recent.length > 0 && (within === undefined || 'recent' in within)) {
    doc.recent = [...write.recent]
      .sort((a, b) => a.t - b.t)
      .slice(-write.recentKept)
      .map((reading) => ({ t: new Date(reading.t), f: reading.f }));
  }
  return doc;
}

/**
 * The document a write makes in the raw form (see `DayDocument.r`), or null when the
 * write cannot be written so: it holds more than `most` readings, or not all of its
 * readings (its latest readings keep fewer than it has: a metric keeping fewer latest
 * readings than `most`), or it is a counter's (its slots keep `inc`, which the raw form
 * does not: `rawWrite` could not give it back to a compaction; a compaction also passes
 * 0 for a counter whose increases it found unknown), or its slots are not whole (see
 * {@link wholeSlots}). Pure. The identity and the day totals (`fields`) are those of
 * {@link dayDocument}; instead of hours, sketches and latest readings it keeps every
 * reading, oldest first, its values as doubles (as the slot form's statistics are: a
 * square of an int32 would be a 64-bit integer on the server), with the sketch bin key
 * of each value of a field the write sketches, and the levels it sketches (`kl`, see
 * `RAW_SKETCH_BITS`): what the slot form's sketches would count, and where.
 */
export function rawDayDocument(write: DayWrite, most: number, version: number = LAYOUT_VERSION): Record<string, unknown> | null {
  if (write.readings > most || write.recent.length !== write.readings) return null;
  for (const slot of write.slots.values()) if (slot.inc !== undefined) return null;
  const fields: Record<string, unknown> = {};
  const sketched = new Set<string>();
  const levels = new Set<SlotLevel>();
  for (const [path, slot] of write.slots) {
    const level = slotLevelOf(path);
    if (slot.sketch !== null) {
      levels.add(level);
      sketched.add(fieldOfPath(path));
    }
    if (level === 'day') fields[fieldOfPath(path)] = slotAsStored(slot);
  }
  for (const path of write.quarters.keys()) {
    levels.add('quarter');
    sketched.add(fieldOfPath(path));
  }
  if (!wholeSlots(write, sketched, levels)) return null;
  const r = [...write.recent]
    .sort((a, b) => a.t - b.t)
    .map((reading) => {
      const keys = Object.entries(reading.f).filter(([field]) => sketched.has(field));
      return {
        t: new Date(reading.t),
        f: Object.fromEntries(Object.entries(reading.f).map(([field, value]) => [field, new Double(value)])),
        ...(keys.length === 0 ? {} : { k: Object.fromEntries(keys.map(([field, value]) => [field, sketchKey(value)])) }),
      };
    });
  return {
    ...storedIdentity(write, version),
    fields,
    r,
    ...(levels.size === 0 ? {} : { kl: [...levels].reduce((sum, level) => sum + RAW_SKETCH_BITS[level], 0) }),
  };
}

/**
 * Whether a write's slots are what its readings alone would make, so that the raw form,
 * which keeps only the readings, says the same: every field's minute slots count every
 * reading of its day (none trimmed away at a retention horizon, `trimToHorizons`), and
 * every field of `sketched` has at each level of `levels`, in every slot, a sketch
 * counting every reading of the slot, and no sketch elsewhere. A compaction of parts
 * written under other statistics settings (sketches of some readings only) is not.
 */
function wholeSlots(write: DayWrite, sketched: ReadonlySet<string>, levels: ReadonlySet<SlotLevel>): boolean {
  const days = new Map<string, number>();
  const minutes = new Map<string, number>();
  const quarters = new Map<string, number>();
  const add = (into: Map<string, number>, field: string, n: number) => into.set(field, (into.get(field) ?? 0) + n);
  for (const [path, slot] of write.slots) {
    const field = fieldOfPath(path);
    const level = slotLevelOf(path);
    if (level === 'day') days.set(field, slot.stats.n);
    else if (level === 'minute') add(minutes, field, slot.stats.n);
    const kept = sketched.has(field) && levels.has(level);
    if (kept ? slot.sketch === null || sketchCount(slot.sketch) !== slot.stats.n : slot.sketch !== null) return false;
  }
  for (const [path, bins] of write.quarters) add(quarters, fieldOfPath(path), sketchCount(bins));
  for (const [field, n] of days) {
    if (minutes.get(field) !== n) return false;
    if (levels.has('quarter') && sketched.has(field) && quarters.get(field) !== n) return false;
  }
  return true;
}

/** The level of a slot path (`fields.delay`: day, `hours.7.fields.delay`: hour, `hours.7.minutes.30.delay`: minute). */
const slotLevelOf = (path: string): SlotLevel => (path.startsWith('fields.') ? 'day' : isMinutePath(path) ? 'minute' : 'hour');

/** The field of a slot or quarter-hour sketch path: its last step (`hours.7.fields.delay`: `delay`). */
const fieldOfPath = (path: string) => path.slice(path.lastIndexOf('.') + 1);
