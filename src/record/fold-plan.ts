/**
 * What a fold writes, and what a reader adds for the tail (docs/ingest-design.md): the
 * readings of log entries planned per series-day (`planWrites`), trimmed below the
 * retention horizons, as whole documents. Pure: no I/O.
 */
import type { Horizons } from '../model/retention.ts';
import { NO_HORIZONS } from '../model/retention.ts';
import type { RollupDefinition } from '../model/rollup.ts';
import type { StatisticsSettings } from '../model/statistics-settings.ts';
import { planWrites, type DayWrite, type WritePlan } from './plan.ts';
import { dayDocument, mergeIntoRollup } from './rollup-plan.ts';
import type { Reading } from './validate.ts';

/** Whether a slot path (see `SlotPath`) lies at the minute level, or at the hour level or below. */
const isMinutePath = (path: string) => path.includes('.minutes.');
const isHourPath = (path: string) => path.startsWith('hours.');

/**
 * Drops from `writes` the slots retention has already removed from their days (pure,
 * in place): minute slots of days before the metric's minute horizon, hour and minute
 * slots of days before its hour horizon (what `trimLateDetail` unsets after a late write
 * today). A late reading for such a day then adds only to what the day still keeps.
 * @param horizonsOf the applied horizons of a metric (UTC midnights, ms; null: none).
 */
export function trimToHorizons(writes: readonly DayWrite[], horizonsOf: (metric: string) => Horizons = () => NO_HORIZONS): void {
  for (const write of writes) {
    const horizons = horizonsOf(write.metric);
    const day = write.date.getTime();
    const dropHours = horizons.hour !== null && day < horizons.hour;
    const dropMinutes = dropHours || (horizons.minute !== null && day < horizons.minute);
    if (!dropMinutes) continue;
    for (const path of [...write.slots.keys()]) {
      if (dropHours ? isHourPath(path) : isMinutePath(path)) write.slots.delete(path);
    }
  }
}

/** How readings are planned: each metric's statistics settings and applied retention horizons. */
export interface PlanSettings {
  settingsOf: (metric: string) => StatisticsSettings;
  horizonsOf: (metric: string) => Horizons;
}

/**
 * Plans readings per series-day document (see `planWrites`), trimmed to the retention
 * horizons: days before the day horizon (deleted by a retention pass after the readings
 * were acknowledged) are left out whole, the rest trimmed by {@link trimToHorizons}.
 */
export function planReadings(readings: readonly Reading[], settings: PlanSettings): WritePlan {
  const plan = planWrites(readings, settings.settingsOf);
  // A day retention deleted after the reading was acknowledged keeps nothing of it.
  plan.buckets = plan.buckets.filter((write) => {
    const day = settings.horizonsOf(write.metric).day;
    return day === null || write.date.getTime() >= day;
  });
  trimToHorizons(plan.buckets, settings.horizonsOf);
  return plan;
}

/**
 * The whole documents of a fold's writes: each series-day write (or rollup group-day
 * write) as the document `dayDocument` makes, with the fold number `f` and the `_id`
 * `"<series>:<day ms>:<f>"`, so a second attempt of the same fold inserts the same ids
 * and fails on them (error 11000) instead of adding the readings twice.
 */
export function foldDocuments(writes: readonly DayWrite[], fold: number): Record<string, unknown>[] {
  return writes.map((write) => ({ _id: `${write.series}:${write.date.getTime()}:${fold}`, ...dayDocument(write), f: fold }));
}

/** The writes of a rollup for planned series-day writes (`mergeIntoRollup`). */
export const rollupWrites = (writes: readonly DayWrite[], rollup: Pick<RollupDefinition, 'metric' | 'tagKeys'>): DayWrite[] =>
  mergeIntoRollup(writes, rollup);
