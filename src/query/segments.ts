import { ceilTo, floorTo } from '../model/time.ts';
import { bucketBoundaries, LEVELS_COARSE_FIRST, LEVEL_MS, type Granularity, type Level } from './granularity.ts';
import { UTC } from './zone.ts';

/** A piece of a query range read from one stored level: `[from, to)` in ms since epoch, UTC. */
export interface Segment {
  level: Level;
  from: number;
  to: number;
}

/** Index of the first element of ascending `values` greater than `value`. */
function firstAbove(values: readonly number[], value: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid]! <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Splits the range `[from, to)` (whole minutes, ms since epoch) into the fewest pieces
 * that each read the coarsest stored level able to answer them exactly, never coarser
 * than `coarsest` (the level the requested granularity needs in UTC). A stored slot (a
 * UTC day, hour or minute) is read at its level only when it lies inside the range and
 * no bucket boundary lies strictly inside it: `boundaries` (ascending, ms since epoch)
 * are the starts of the query's buckets; boundaries on a slot's edge do no harm, so in
 * UTC, where every boundary is on the edges of slots of the granularity's level, they
 * change nothing. Whole days inside the range read day totals, the hours around them
 * hour slots, and only the minutes at ragged edges and around boundaries inside hours
 * (a Kathmandu day starts at 18:15 UTC) read minute slots. Neighbouring pieces of one
 * level are merged; segments come out in time order and tile `[from, to)` exactly.
 *
 * A boundary inside a minute (offsets with seconds, before 1972 in a few zones) cannot
 * be honoured at the stored resolution: that minute is read whole and goes to the bucket
 * holding its start.
 *
 * Example: `[Jan 5 12:07, Jan 8 00:00)` in UTC with coarsest `day` gives minutes
 * `[12:07, 13:00)`, hours `[13:00, Jan 6 00:00)`, days `[Jan 6, Jan 8)`.
 */
export function planSegments(from: number, to: number, coarsest: Level, boundaries: readonly number[] = []): Segment[] {
  const segments: Segment[] = [];
  const push = (level: Level, a: number, b: number): void => {
    if (a >= b) return;
    const last = segments[segments.length - 1];
    if (last !== undefined && last.level === level && last.to === a) last.to = b;
    else segments.push({ level, from: a, to: b });
  };
  const split = (a: number, b: number, index: number): void => {
    if (a >= b) return;
    const level = LEVELS_COARSE_FIRST[index]!;
    if (level === 'minute') {
      push(level, a, b);
      return;
    }
    const width = LEVEL_MS[level];
    const innerFrom = ceilTo(a, width);
    const innerTo = floorTo(b, width);
    if (innerFrom >= innerTo) {
      split(a, b, index + 1);
      return;
    }
    // Whole slots in [innerFrom, innerTo) are read at this level unless a boundary lies
    // strictly inside; the rest (ragged edges and those slots) goes to finer levels.
    let finerFrom = a;
    let goodFrom = innerFrom;
    for (let i = firstAbove(boundaries, innerFrom); i < boundaries.length && boundaries[i]! < innerTo; i++) {
      const boundary = boundaries[i]!;
      if (boundary % width === 0) continue;
      const slot = floorTo(boundary, width);
      if (slot < goodFrom) continue; // a second boundary in the same slot
      if (slot > goodFrom) {
        split(finerFrom, goodFrom, index + 1);
        push(level, goodFrom, slot);
        finerFrom = slot;
      }
      goodFrom = slot + width;
    }
    if (goodFrom < innerTo) {
      split(finerFrom, goodFrom, index + 1);
      push(level, goodFrom, innerTo);
      finerFrom = innerTo;
    }
    split(finerFrom, b, index + 1);
  };
  split(from, to, LEVELS_COARSE_FIRST.indexOf(coarsest));
  return segments;
}

/**
 * The segments of a bucket query of `granularity` in `zone` (an IANA name) over
 * `[from, to)`: {@link planSegments} with the query's bucket boundaries. Granularities
 * read from minute slots need none; in UTC every boundary is on a slot edge of the
 * granularity's level, so they are not listed either (the plan is that of the range
 * alone). Otherwise the boundaries are listed, at most one per bucket of the query.
 * @throws InputError INVALID_TIME_ZONE for an unknown zone.
 */
export function planBucketSegments(from: number, to: number, granularity: Granularity, zone: string = UTC): Segment[] {
  if (granularity.level === 'minute' || zone === UTC) return planSegments(from, to, granularity.level);
  return planSegments(from, to, granularity.level, bucketBoundaries(from, to, granularity.cut, zone));
}
