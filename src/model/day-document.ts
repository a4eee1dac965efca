import { Double, type ObjectId } from 'mongodb';
import type { Stats } from './stats.ts';
import type { TagMap } from './series.ts';

/**
 * How the slots of a series-day document come to exist (a per-metric setting):
 * - `sparse`: nothing is pre-allocated; an upsert creates the day document and each
 *   hour and minute slot on its first reading. Storage grows with the data, which
 *   suits irregular and sparse series (a flight route with a few flights a day).
 * - `preallocated`: a zeroed skeleton with every hour and minute slot of the metric's
 *   fields is inserted first (the three-step initialization of "Time series in MongoDB"), so later updates
 *   keep the document's size and WiredTiger can apply them in place (a size-preserving update is a WiredTiger modify, MongoDB source `wiredtiger_record_store.cpp`).
 */
export type DocumentLayout = 'sparse' | 'preallocated';

/** The statistics of every field at one level, keyed by field name. */
export type FieldStats = Record<string, Stats>;

/** One hour of a series-day document. */
export interface HourSlot {
  /** Whole-hour statistics per field. */
  fields: FieldStats;
  /** Per-minute statistics, keyed by the minute of the hour as a string `"0"`..`"59"`. */
  minutes: Record<string, FieldStats>;
}

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
export interface DayDocument {
  _id?: ObjectId;
  /** Series id (see `model/series.ts`). With `date`, the unique key of the document. */
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
  /** Whole-day statistics per field. */
  fields: FieldStats;
  /** Hour slots keyed by the hour of the day as a string `"0"`..`"23"`. */
  hours: Record<string, HourSlot>;
}

/** Dotted update paths of the three levels of a series-day document. */
export const SlotPath = {
  day: (field: string) => `fields.${field}`,
  hour: (hour: number, field: string) => `hours.${hour}.fields.${field}`,
  minute: (hour: number, minute: number, field: string) => `hours.${hour}.minutes.${minute}.${field}`,
} as const;

/**
 * An empty slot as stored in a skeleton: doubles throughout (a later `$inc` must not
 * change the type and so the size), min +Infinity and max -Infinity so
 * `$min`/`$max` need no special case.
 */
function emptySlot(): Record<keyof Stats, Double> {
  const zero = new Double(0);
  return { n: zero, sum: zero, min: new Double(Infinity), max: new Double(-Infinity), sq: zero };
}

function emptyFieldStats(fields: readonly string[]): Record<string, Record<keyof Stats, Double>> {
  const stats: Record<string, Record<keyof Stats, Double>> = {};
  for (const field of fields) stats[field] = emptySlot();
  return stats;
}

/**
 * The zeroed skeleton of a `preallocated` series-day document: all 24 hours and 1,440
 * minutes, each with an empty slot for every field in `fields`.
 */
export function daySkeleton(
  identity: { series: string; metric: string; tags: TagMap; tagPairs: string[]; date: Date },
  fields: readonly string[],
): Omit<DayDocument, 'fields' | 'hours'> & { fields: unknown; hours: unknown } {
  const hours: Record<string, unknown> = {};
  for (let hour = 0; hour < 24; hour++) {
    const minutes: Record<string, unknown> = {};
    for (let minute = 0; minute < 60; minute++) minutes[minute] = emptyFieldStats(fields);
    hours[hour] = { fields: emptyFieldStats(fields), minutes };
  }
  return { ...identity, fields: emptyFieldStats(fields), hours };
}
