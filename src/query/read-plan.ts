import { DAY_MS, floorTo } from '../model/time.ts';
import type { Level, SketchLevel } from './granularity.ts';
import type { Segment } from './segments.ts';

/**
 * What each bucket document reads. Bucket documents hold one UTC day each, so the
 * segments of a query (see `query/segments.ts`) are cut by UTC day into pieces relative
 * to the day's midnight, and consecutive days that read the same pieces share one plan:
 * a pipeline then picks a document's plan with a few comparisons on its date.
 */

/** A piece of one UTC day read from one level: `[from, to)` in ms after the day's midnight. */
export interface DayPiece<L extends SketchLevel = Level> {
  level: L;
  from: number;
  to: number;
}

/**
 * The bucket the slots of a section belong to: the one starting at instant `at` (ms since
 * epoch) for every day of the plan, the one starting `after` ms after each day's
 * midnight (negative: before it), or `slot`: computed on the server from the start of
 * the section's first slot.
 */
export type SectionKey = { at: number } | { after: number } | { slot: true };

/** Slots of one day that lie in one bucket. */
export interface DaySection<L extends SketchLevel = Level> {
  key: SectionKey;
  pieces: DayPiece<L>[];
}

/**
 * Consecutive UTC days `[from, to)` (midnights, ms since epoch) that read the same
 * pieces of themselves. With bucket boundaries (see {@link planDays}) the pieces are
 * also grouped into `sections`, each inside one bucket; without, `sections` is null and each
 * slot's bucket is computed from its own start.
 */
export interface DayPlan<L extends SketchLevel = Level> {
  from: number;
  to: number;
  pieces: DayPiece<L>[];
  sections: DaySection<L>[] | null;
}

/** How {@link planDays} forms sections: at the bucket starts `starts`, keyed as known instants or computed per document. */
export interface SectionOptions {
  /** Every bucket start from the one holding the range's start on, ascending (ms since epoch). */
  starts: readonly number[];
  /** `slot` to key every section by a server-side computation instead of constants (for plans that would otherwise differ day by day). */
  keys: 'known' | 'slot';
}

const samePieces = <L extends SketchLevel>(a: readonly DayPiece<L>[], b: readonly DayPiece<L>[]) =>
  a.length === b.length && a.every((piece, i) => piece.level === b[i]!.level && piece.from === b[i]!.from && piece.to === b[i]!.to);

/** Index of the last element of ascending `values` at most `value` (-1 when none). */
function lastAtMost(values: readonly number[], value: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid]! <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** Splits one day's pieces at the bucket starts inside them and groups them by bucket, in time order. */
function daySections<L extends SketchLevel>(day: number, pieces: readonly DayPiece<L>[], options: SectionOptions): DaySection<L>[] {
  const sections: DaySection<L>[] = [];
  let lastBucket = Number.NaN;
  for (const piece of pieces) {
    let from = day + piece.from;
    const to = day + piece.to;
    while (from < to) {
      const index = lastAtMost(options.starts, from);
      const start = options.starts[index] ?? from;
      const next = options.starts[index + 1];
      const end = next !== undefined && next < to ? next : to;
      const slice = { level: piece.level, from: from - day, to: end - day };
      if (start === lastBucket) sections[sections.length - 1]!.pieces.push(slice);
      else sections.push({ key: options.keys === 'slot' ? { slot: true } : { at: start }, pieces: [slice] });
      lastBucket = start;
      from = end;
    }
  }
  return sections;
}

/**
 * Whether the sections of a new day continue a plan: the same pieces in each section, and
 * keys that are the same instant, or the same distance from midnight. A plan of one
 * day still has its keys as instants; the second day decides, per section.
 */
function mergeSections<L extends SketchLevel>(
  plan: DayPlan<L>,
  days: number,
  day: number,
  sections: readonly DaySection<L>[],
): DaySection<L>[] | null {
  if (plan.sections === null || plan.sections.length !== sections.length) return null;
  const merged: DaySection<L>[] = [];
  for (const [i, section] of sections.entries()) {
    const current = plan.sections[i]!;
    if (!samePieces(current.pieces, section.pieces)) return null;
    if ('slot' in current.key || 'slot' in section.key) {
      if (!('slot' in current.key && 'slot' in section.key)) return null;
      merged.push(current);
    } else if ('at' in current.key && 'at' in section.key && current.key.at === section.key.at) {
      merged.push(current);
    } else if ('after' in current.key && 'at' in section.key && current.key.after === section.key.at - day) {
      merged.push(current);
    } else if (days === 1 && 'at' in current.key && 'at' in section.key && current.key.at - plan.from === section.key.at - day) {
      merged.push({ key: { after: section.key.at - day }, pieces: current.pieces });
    } else {
      return null;
    }
  }
  return merged;
}

/**
 * Cuts time-ordered segments by UTC day and merges consecutive days that read the same
 * pieces into plans, in time order. With `sections`, each day's pieces are further split at
 * the bucket starts and grouped by bucket, and days merge only when their sections go to
 * the same bucket or to buckets at the same distance from their midnight (so a New York
 * `DAY` query has one plan per stretch of constant offset, a New York `MONTH` query one
 * plan for the inner days of each month and one for each day holding a month boundary).
 * Work is proportional to the number of days the segments cover.
 */
export function planDays<L extends SketchLevel = Level>(segments: readonly Segment<L>[], sections?: SectionOptions): DayPlan<L>[] {
  const plans: DayPlan<L>[] = [];
  let days = 0;
  const append = (day: number, pieces: DayPiece<L>[]) => {
    const daySectionsNow = sections === undefined ? null : daySections(day, pieces, sections);
    const last = plans[plans.length - 1];
    if (last !== undefined && last.to === day && samePieces(last.pieces, pieces)) {
      if (daySectionsNow === null) {
        last.to = day + DAY_MS;
        days += 1;
        return;
      }
      const merged = mergeSections(last, days, day, daySectionsNow);
      if (merged !== null) {
        last.sections = merged;
        last.to = day + DAY_MS;
        days += 1;
        return;
      }
    }
    plans.push({ from: day, to: day + DAY_MS, pieces, sections: daySectionsNow });
    days = 1;
  };
  let day = -1;
  let pieces: DayPiece<L>[] = [];
  for (const segment of segments) {
    for (let d = floorTo(segment.from, DAY_MS); d < segment.to; d += DAY_MS) {
      if (d !== day) {
        if (day >= 0) append(day, pieces);
        day = d;
        pieces = [];
      }
      pieces.push({ level: segment.level, from: Math.max(segment.from, d) - d, to: Math.min(segment.to, d + DAY_MS) - d });
    }
  }
  if (day >= 0) append(day, pieces);
  return plans;
}
