/**
 * What a fold writes, and what a reader adds for the tail (docs/ingest-design.md): the
 * readings of log entries planned per series-day (`planWrites`), trimmed below the
 * retention horizons, as whole documents. Pure: no I/O.
 */
import type { MetricKind } from '../model/counter.ts';
import type { Horizons } from '../model/retention.ts';
import { NO_HORIZONS } from '../model/retention.ts';
import { type DocumentForms, LAYOUT_VERSION, SLOT_FORM } from '../model/day-document.ts';
import type { StatisticsSettings } from '../model/statistics-settings.ts';
import { ALL_LEVELS, planWrites, type DayWrite, type PlanLevels, type WritePlan } from './plan.ts';
import { packHours } from './packed-minutes.ts';
import { dayDocument, rawDayDocument } from './rollup-plan.ts';
import type { Reading } from './validate.ts';

/** Whether a slot path (see `SlotPath`) lies at the minute level, or at the hour level or below. */
const isMinutePath = (path: string) => path.includes('.minutes.');
const isHourPath = (path: string) => path.startsWith('hours.');

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
export function trimToHorizons(writes: readonly DayWrite[], horizonsOf: (metric: string) => Horizons = () => NO_HORIZONS): DayWrite[] {
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
  /** Whether a metric is a counter (its slots then keep `inc`, see `planWrites`); gauge when absent. */
  kindOf?: (metric: string) => MetricKind;
}

/**
 * Plans readings per series-day document (see `planWrites`), cut to the retention
 * horizons ({@link trimToHorizons}).
 * @param levels the parts of the documents to plan: all for a fold, those a reader's
 *   pipeline reads for its tail (`levelsWithin`, `record/rollup-plan.ts`).
 */
export function planReadings(readings: readonly Reading[], settings: PlanSettings, levels: Readonly<PlanLevels> = ALL_LEVELS): WritePlan {
  const plan = planWrites(readings, settings.settingsOf, settings.kindOf, levels);
  plan.buckets = trimToHorizons(plan.buckets, settings.horizonsOf);
  return plan;
}

/**
 * The whole document of a part: a series-day write (or rollup group-day write) as the
 * document `dayDocument` makes, of layout version `version`, with the fold (or
 * compaction) number `f` and the `_id` `"<series>:<day ms>:<f>"`, so a second attempt
 * of the same fold inserts the same ids and fails on them (error 11000) instead of
 * adding the readings twice. In the forms `forms` allows: the raw form
 * (`rawDayDocument`) when the write can be (at most `forms.rawReadings` readings, all of
 * them among its latest readings, not a counter's); else the slot form, with the minutes
 * of each hour of at least `forms.packedMinutes` minutes packed where they can be
 * (`packHours`).
 */
export function partDocument(
  write: DayWrite,
  fold: number,
  version: number = LAYOUT_VERSION,
  forms: Readonly<DocumentForms> = SLOT_FORM,
): Record<string, unknown> {
  const raw = forms.rawReadings > 0 ? rawDayDocument(write, forms.rawReadings, version) : null;
  const doc = raw ?? dayDocument(write, version);
  if (raw === null) packHours(doc, forms.packedMinutes);
  return { _id: `${write.series}:${write.date.getTime()}:${fold}`, ...doc, f: fold };
}

/**
 * The parts of a fold's writes, one per write ({@link partDocument} with fold number
 * `fold` and the current layout version), in the forms `forms` allows (by default the
 * slot form only: rollups). Pure.
 */
export function foldDocuments(
  writes: readonly DayWrite[],
  fold: number,
  forms: Readonly<DocumentForms> = SLOT_FORM,
): Record<string, unknown>[] {
  return writes.map((write) => partDocument(write, fold, LAYOUT_VERSION, forms));
}
