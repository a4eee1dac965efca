import { ceilTo, floorTo, QUARTER_MS } from '../model/time.ts';
import {
  bucketBoundaries,
  LEVELS_COARSE_FIRST,
  LEVEL_MS,
  SKETCH_LEVELS_COARSE_FIRST,
  type Granularity,
  type Level,
  type SketchLevel,
} from './granularity.ts';
import { UTC } from './zone.ts';

/**
 * A piece of a query range read from one level: `[from, to)` in ms since epoch, UTC.
 * Statistics are read from the stored levels ({@link Level}); sketches also from the
 * quarter hours ({@link SketchLevel}).
 */
export interface Segment<L extends SketchLevel = Level> {
  level: L;
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
 *
 * `levels` are the levels that may be read, coarsest first, the finest last (it reads
 * whatever is left): the stored levels by default; a sketch pipeline passes
 * {@link SKETCH_LEVELS_COARSE_FIRST}, so pieces of hours that cannot be read whole go
 * to quarter hours before minutes (with them, the example reads the minutes
 * `[12:07, 12:15)` and the quarters `[12:15, 13:00)`).
 */
export function planSegments<L extends SketchLevel = Level>(
  from: number,
  to: number,
  coarsest: L,
  boundaries: readonly number[] = [],
  levels: readonly L[] = LEVELS_COARSE_FIRST as readonly L[],
): Segment<L>[] {
  const segments: Segment<L>[] = [];
  const push = (level: L, a: number, b: number): void => {
    if (a >= b) return;
    const last = segments[segments.length - 1];
    if (last !== undefined && last.level === level && last.to === a) last.to = b;
    else segments.push({ level, from: a, to: b });
  };
  const split = (a: number, b: number, index: number): void => {
    if (a >= b) return;
    const level = levels[index]!;
    if (index === levels.length - 1) {
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
  split(from, to, levels.indexOf(coarsest));
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

/**
 * The coarsest level whose sketches answer buckets of `granularity` in UTC: its stored
 * level, or for the minute granularities whose buckets are whole quarter hours
 * (`FIFTEEN_MINUTES`, `THIRTY_MINUTES`) the quarter hours.
 */
function sketchCoarsest(granularity: Granularity): SketchLevel {
  if (granularity.level !== 'minute') return granularity.level;
  const { cut } = granularity;
  return cut.kind === 'fixed' && cut.widthMs % QUARTER_MS === 0 && cut.offsetMs % QUARTER_MS === 0 ? 'quarter' : 'minute';
}

/**
 * The segments a sketch pipeline reads for a bucket query of `granularity` in `zone`
 * over `[from, to)` (null: an aggregate of the whole range): as
 * {@link planBucketSegments}, with the quarter hours between hours and minutes
 * ({@link SKETCH_LEVELS_COARSE_FIRST}). Every UTC offset of the tz database since
 * October 1979 (Pacific/Kiritimati was -10:40 until then; checked against the runtime's
 * `Intl` data) is a multiple of 15 minutes, so the boundaries of `HOUR` and coarser
 * buckets (and of 15 and 30 minutes) fall on quarter-hour edges in every zone: only a
 * range edge inside a quarter hour (and older offsets with odd minutes or seconds)
 * leaves minutes to read. Each piece the statistics read from minute slots is then read
 * from whole quarter hours where it can.
 * @throws InputError INVALID_TIME_ZONE for an unknown zone.
 */
export function planSketchSegments(from: number, to: number, granularity: Granularity | null, zone: string = UTC): Segment<SketchLevel>[] {
  const levels = SKETCH_LEVELS_COARSE_FIRST;
  if (granularity === null) return planSegments(from, to, 'day', [], levels);
  const coarsest = sketchCoarsest(granularity);
  if (coarsest === 'minute' || zone === UTC) return planSegments(from, to, coarsest, [], levels);
  return planSegments(from, to, coarsest, bucketBoundaries(from, to, granularity.cut, zone), levels);
}
