import { ceilTo, floorTo } from '../model/time.ts';
import { LEVELS_COARSE_FIRST, LEVEL_MS, type Level } from './granularity.ts';

/** A piece of a query range read from one stored level: `[from, to)` in ms since epoch, UTC. */
export interface Segment {
  level: Level;
  from: number;
  to: number;
}

/**
 * Splits the range `[from, to)` (whole minutes, ms since epoch) into the fewest pieces
 * that each read the coarsest stored level able to answer them exactly, never coarser
 * than `coarsest` (the level the requested granularity needs). Whole days inside the
 * range read day totals, the hours around them hour slots, and only the minutes at
 * the ragged edges read minute slots. Segments come out in time order.
 *
 * Example: `[Jan 5 12:07, Jan 8 00:00)` with coarsest `day` gives minutes
 * `[12:07, 13:00)`, hours `[13:00, Jan 6 00:00)`, days `[Jan 6, Jan 8)`.
 */
export function planSegments(from: number, to: number, coarsest: Level): Segment[] {
  const segments: Segment[] = [];
  const split = (a: number, b: number, index: number): void => {
    if (a >= b) return;
    const level = LEVELS_COARSE_FIRST[index]!;
    if (level === 'minute') {
      segments.push({ level, from: a, to: b });
      return;
    }
    const width = LEVEL_MS[level];
    const innerFrom = ceilTo(a, width);
    const innerTo = floorTo(b, width);
    if (innerFrom >= innerTo) {
      split(a, b, index + 1);
      return;
    }
    split(a, innerFrom, index + 1);
    segments.push({ level, from: innerFrom, to: innerTo });
    split(innerTo, b, index + 1);
  };
  split(from, to, LEVELS_COARSE_FIRST.indexOf(coarsest));
  return segments;
}
