/**
 * Stored series-day documents read back as their contents (`content.ts`), pure:
 * either form, packed minutes unpacked, what a compaction merges and a rollup rebuild
 * adds up.
 */
import { DOCUMENT_VERSION, RAW_SKETCH_BITS, type SeriesDayDocument, SlotPath, type StoredStats, quarterSketchPath } from './series-day.ts';
import { type DayContent, type SlotContent, mergeSlot } from './content.ts';
import { HOUR_MS, MINUTE_MS } from '../model/time.ts';
import type { SlotLevel } from '../model/statistics-settings.ts';
import type { TimedValue } from '../model/stats.ts';
import { unpackedMinutes } from './packed-minutes.ts';

/** A stored `{t, v}` pair as a {@link TimedValue}; `fallback` when absent (layout version 1). */
const storedPair = (pair: StoredStats['first'], fallback: TimedValue): TimedValue =>
  pair === undefined ? fallback : { t: pair.t.getTime(), v: pair.v };

/** A stored sketch (bin key -> count) as bins; null when the slot has none. */
const storedSketch = (bins: Record<string, number> | undefined) => (bins === undefined ? null : new Map(Object.entries(bins)));

/** A stored slot of a field as the slot write that stored it (statistics, first and last, sketch, counter `inc`). */
function storedSlot(
  stats: StoredStats,
  sketch: Record<string, number> | undefined,
  write: Pick<DayContent, 'first' | 'last'>,
): SlotContent {
  const slot: SlotContent = {
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
function emptyContent(doc: SeriesDayDocument, readings: number): DayContent {
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
export function dayContentOf(doc: SeriesDayDocument): DayContent {
  if (Array.isArray(doc.r)) return rawContentOf(doc, false);
  const write = emptyContent(doc, doc.readings ?? 0);
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
 * it (pure): {@link dayContentOf}'s day and hour slots, plus its minute slots (packed
 * ones unpacked, see `SeriesDayDocument.hours`), a rollup document's quarter-hour
 * statistics, its quarter-hour sketches and its latest readings. What a compaction
 * merges, and what a rollup rebuild adds up.
 */
export function fullContentOf(doc: SeriesDayDocument): DayContent {
  if (Array.isArray(doc.r)) return rawContentOf(doc, true);
  const write = dayContentOf(doc);
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
  for (const [hour, slot] of Object.entries(doc.hours ?? {})) {
    // Rollup documents keep quarter-hour statistics (their sketches are read below).
    for (const [quarter, fields] of Object.entries(slot.quarters ?? {})) {
      for (const [field, stats] of Object.entries(fields ?? {})) {
        if (stats === undefined || !(stats.n > 0)) continue;
        write.fields.add(field);
        write.slots.set(SlotPath.quarter(Number(hour), Number(quarter), field), storedSlot(stats, undefined, write));
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
 * A document in the raw form (see `SeriesDayDocument.r`) as the write of its readings (pure):
 * the day and hour slots of every field, and with `full` the minute slots, the
 * quarter-hour sketches and the latest readings (every reading), as
 * {@link dayContentOf} and {@link fullContentOf} give them for the slot form. A
 * reading's sketch bin (`k`) counts in the sketches of its field at the levels the
 * document lists (`kl`). Counter increases (`inc`) are left out (unknown): the raw form
 * is not written for counters.
 */
function rawContentOf(doc: SeriesDayDocument, full: boolean): DayContent {
  const day = doc.date.getTime();
  const sketches = (level: SlotLevel) => Math.floor((doc.kl ?? 0) / RAW_SKETCH_BITS[level]) % 2 === 1;
  const [dayBins, hourBins, quarterBins, minuteBins] = (['day', 'hour', 'quarter', 'minute'] as const).map(sketches);
  const write = emptyContent(doc, doc.readings ?? doc.r!.length);
  const add = (path: string, t: number, v: number, key: string | undefined) => {
    const slot: SlotContent = {
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
    // Numbers as the driver reads them; `Double`s as `rawFormDocument` writes them.
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

/** The lowest layout version of `docs` (version 1 for documents without `v`). */
export function oldestVersion(docs: readonly Pick<SeriesDayDocument, 'v'>[]): number {
  return docs.reduce((lowest, doc) => Math.min(lowest, doc.v ?? 1), DOCUMENT_VERSION);
}
