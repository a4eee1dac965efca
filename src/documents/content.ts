/**
 * What readings add up to in one series-day, in memory: the content a fold, a
 * compaction, a rollup rebuild or a reader's tail turns into stored documents
 * (`encode.ts`), and what a stored document is read back as (`decode.ts`). Pure.
 */
import { type SketchBins, mergeSketch } from '../model/sketch.ts';
import { type Stats, type TimedValue, isEarlier, mergeStats } from '../model/stats.ts';
import type { TagMap } from '../model/series.ts';

/** What a batch adds to one slot of one field: its statistics, its first and last reading, and its sketch when the metric keeps one there. */
export interface SlotContent {
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

/** A reading as kept in a document's latest readings: time in ms since the epoch, field values by name. */
export interface TimedReading {
  t: number;
  f: Record<string, number>;
}

/**
 * Everything one batch does to one series-day document (one series, one day), merged in
 * memory: the statistics of every slot it touches, at every level, and the latest
 * readings it brings.
 */
export interface DayContent {
  series: string;
  metric: string;
  tags: TagMap;
  /** The tags as `key=value` strings, sorted by key. */
  tagPairs: string[];
  /** Midnight UTC of the document's day. */
  date: Date;
  /** Merged statistics keyed by slot path (`fields.delay`, `hours.7.fields.delay`, `hours.7.minutes.30.delay`). */
  slots: Map<string, SlotContent>;
  /**
   * Quarter-hour sketches, the level without statistics, keyed by their path under `q`
   * (`hours.7.quarters.2.delay`, see `quarterSketchPath`); empty when the metric keeps none.
   */
  quarters: Map<string, SketchBins>;
  /** The batch's latest readings for this document, oldest first, at most the metric's `latestReadings`. */
  recent: TimedReading[];
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
export interface SeriesInBatch {
  id: string;
  key: string;
  metric: string;
  tags: TagMap;
  tagPairs: string[];
  fields: Set<string>;
}

/** A metric the batch writes to, with the fields and tag keys it uses. */
export interface MetricInBatch {
  name: string;
  fields: Set<string>;
  tagKeys: Set<string>;
  /** Earliest and latest reading time of the batch for this metric, ms since epoch. */
  first: number;
  last: number;
}

/**
 * The parts of a series-day document a plan builds ({@link planContents}): a fold builds
 * them all ({@link ALL_LEVELS}); a reader's tail builds only those its pipeline reads
 * (`levelsWithin` in `documents/encode.ts`), so a day total over the tail does not
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
export interface ContentPlan {
  days: DayContent[];
  series: SeriesInBatch[];
  metrics: MetricInBatch[];
  readings: number;
}

/** The series a batch writes to, and how many series-day documents its readings fall into. */
export interface BatchSeriesPlan {
  series: SeriesInBatch[];
  /** Distinct (series, UTC day) pairs of the readings. */
  documents: number;
}

/** A copy of a slot write (its counter `inc` too, when it has one), so merging into it leaves the batch's own writes untouched. */
export function copySlot(slot: SlotContent): SlotContent {
  const copy: SlotContent = {
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
 * at once (`chainIncrease`), see {@link mergeParts}.
 */
export function mergeSlot(into: SlotContent, other: SlotContent): void {
  mergeStats(into.stats, other.stats);
  if (isEarlier(other.first, into.first)) into.first = other.first;
  if (isEarlier(into.last, other.last)) into.last = other.last;
  if (other.sketch !== null) {
    if (into.sketch === null) into.sketch = new Map();
    mergeSketch(into.sketch, other.sketch);
  }
}
