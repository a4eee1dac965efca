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
 * The bucket the slots of a part belong to: the one starting at instant `at` (ms since
 * epoch) for every day of the plan, the one starting `after` ms after each day's
 * midnight (negative: before it), or `slot`: computed on the server from the start of
 * the part's first slot.
 */
export type PartKey = { at: number } | { after: number } | { slot: true };

/** Slots of one day that lie in one bucket. */
export interface DayPart<L extends SketchLevel = Level> {
  key: PartKey;
  pieces: DayPiece<L>[];
}

/**
 * Consecutive UTC days `[from, to)` (midnights, ms since epoch) that read the same
 * pieces of themselves. With bucket boundaries (see {@link planDays}) the pieces are
 * also grouped into `parts`, each inside one bucket; without, `parts` is null and each
 * slot's bucket is computed from its own start.
 */
export interface DayPlan<L extends SketchLevel = Level> {
  from: number;
  to: number;
  pieces: DayPiece<L>[];
  parts: DayPart<L>[] | null;
}

/** How {@link planDays} forms parts: at the bucket starts `starts`, keyed as known instants or computed per document. */
export interface PartOptions {
  /** Every bucket start from the one holding the range's start on, ascending (ms since epoch). */
  starts: readonly number[];
  /** `slot` to key every part by a server-side computation instead of constants (for plans that would otherwise differ day by day). */
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
function dayParts<L extends SketchLevel>(day: number, pieces: readonly DayPiece<L>[], options: PartOptions): DayPart<L>[] {
  const parts: DayPart<L>[] = [];
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
      if (start === lastBucket) parts[parts.length - 1]!.pieces.push(slice);
      else parts.push({ key: options.keys === 'slot' ? { slot: true } : { at: start }, pieces: [slice] });
      lastBucket = start;
      from = end;
    }
  }
  return parts;
}

/**
 * Whether the parts of a new day continue a plan: the same pieces in each part, and
 * keys that are the same instant, or the same distance from midnight. A plan of one
 * day still has its keys as instants; the second day decides, per part.
 */
function mergeParts<L extends SketchLevel>(plan: DayPlan<L>, days: number, day: number, parts: readonly DayPart<L>[]): DayPart<L>[] | null {
  if (plan.parts === null || plan.parts.length !== parts.length) return null;
  const merged: DayPart<L>[] = [];
  for (const [i, part] of parts.entries()) {
    const current = plan.parts[i]!;
    if (!samePieces(current.pieces, part.pieces)) return null;
    if ('slot' in current.key || 'slot' in part.key) {
      if (!('slot' in current.key && 'slot' in part.key)) return null;
      merged.push(current);
    } else if ('at' in current.key && 'at' in part.key && current.key.at === part.key.at) {
      merged.push(current);
    } else if ('after' in current.key && 'at' in part.key && current.key.after === part.key.at - day) {
      merged.push(current);
    } else if (days === 1 && 'at' in current.key && 'at' in part.key && current.key.at - plan.from === part.key.at - day) {
      merged.push({ key: { after: part.key.at - day }, pieces: current.pieces });
    } else {
      return null;
    }
  }
  return merged;
}

/**
 * Cuts time-ordered segments by UTC day and merges consecutive days that read the same
 * pieces into plans, in time order. With `parts`, each day's pieces are further split at
 * the bucket starts and grouped by bucket, and days merge only when their parts go to
 * the same bucket or to buckets at the same distance from their midnight (so a New York
 * `DAY` query has one plan per stretch of constant offset, a New York `MONTH` query one
 * plan for the inner days of each month and one for each day holding a month boundary).
 * Work is proportional to the number of days the segments cover.
 */
export function planDays<L extends SketchLevel = Level>(segments: readonly Segment<L>[], parts?: PartOptions): DayPlan<L>[] {
  const plans: DayPlan<L>[] = [];
  let days = 0;
  const append = (day: number, pieces: DayPiece<L>[]) => {
    const dayPartsNow = parts === undefined ? null : dayParts(day, pieces, parts);
    const last = plans[plans.length - 1];
    if (last !== undefined && last.to === day && samePieces(last.pieces, pieces)) {
      if (dayPartsNow === null) {
        last.to = day + DAY_MS;
        days += 1;
        return;
      }
      const merged = mergeParts(last, days, day, dayPartsNow);
      if (merged !== null) {
        last.parts = merged;
        last.to = day + DAY_MS;
        days += 1;
        return;
      }
    }
    plans.push({ from: day, to: day + DAY_MS, pieces, parts: dayPartsNow });
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
