/**
 * Which of the optional statistics a metric keeps, beyond count, sum, min, max, sum of
 * squares and the first and last reading that every slot keeps: the quantile sketches
 * (per level and field) and the number of latest readings kept per series-day document.
 * They cost storage and write time (see docs/statistics.md), so they are chosen per
 * metric; every choice is applied by the same single update per series-day document.
 */

/**
 * A level of a series-day document: its day totals, its hour slots, its quarter hours
 * (sketches only: see `quarterSketchPath`), its minute slots.
 */
export type SlotLevel = 'day' | 'hour' | 'quarter' | 'minute';

/** Every {@link SlotLevel}, coarsest first. */
export const SLOT_LEVELS: readonly SlotLevel[] = ['day', 'hour', 'quarter', 'minute'];

/** Most latest readings a series-day document keeps (Cloudant's "latest 50" in "Time-series Data Storage"). */
export const MAX_LATEST_READINGS = 50;

/** The optional statistics of a metric. */
export interface StatisticsSettings {
  /** Levels whose slots keep a quantile sketch of each sketched field; empty: no sketches. */
  sketchLevels: SlotLevel[];
  /** Fields that get sketches; null: every field. */
  sketchFields: string[] | null;
  /** Latest readings kept per series-day document, 0 to {@link MAX_LATEST_READINGS}. */
  latestReadings: number;
}

/**
 * The settings a new metric gets unless configured otherwise (config `SKETCH_LEVELS`,
 * `LATEST_READINGS`): sketches at the day, hour and quarter-hour levels, not per minute
 * (a minute sketch costs as much as the rest of the minute slot and more, see
 * docs/statistics.md), and the latest 50 readings. The quarter hours give percentiles
 * of hour and day buckets in every time zone (+05:30, +05:45) for about 9% more bytes
 * per dense reading and 7.5% per sparse one (`npm run bench:write-path -- --only size` at 5e534e9,
 * docs/measurements/2026-11-27.md, "Quarter-hour sketches: bytes and the fold's work").
 */
export const DEFAULT_STATISTICS: StatisticsSettings = {
  sketchLevels: ['day', 'hour', 'quarter'],
  sketchFields: null,
  latestReadings: 50,
};

/** True when `settings` keep a sketch of `field` at `level`. */
export function keepsSketch(settings: StatisticsSettings, level: SlotLevel, field: string): boolean {
  return settings.sketchLevels.includes(level) && (settings.sketchFields === null || settings.sketchFields.includes(field));
}
