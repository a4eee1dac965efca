import { describe, expect, it } from 'vitest';
import { planSegments, type Segment } from '../../src/query/segments.ts';
import type { Level } from '../../src/query/granularity.ts';

const MIN = 60_000;
const H = 60 * MIN;
const D = 24 * H;
const at = (iso: string) => Date.parse(iso);
const width: Record<Level, number> = { minute: MIN, hour: H, day: D };

/** Checks, minute by minute, that the segments tile [from, to) exactly once with whole slots of their level. */
function checkTiling(segments: Segment[], from: number, to: number) {
  let cursor = from;
  for (const segment of segments) {
    expect(segment.from).toBe(cursor);
    expect(segment.to).toBeGreaterThan(segment.from);
    expect(segment.from % width[segment.level]).toBe(0);
    expect(segment.to % width[segment.level]).toBe(0);
    cursor = segment.to;
  }
  expect(cursor).toBe(to);
}

describe('planSegments', () => {
  it('reads whole days inside the range from day totals and only the ragged edges from finer levels', () => {
    const from = at('2001-01-05T12:07:00Z');
    const to = at('2001-01-08T03:30:00Z');
    const segments = planSegments(from, to, 'day');
    expect(segments).toEqual([
      { level: 'minute', from, to: at('2001-01-05T13:00:00Z') },
      { level: 'hour', from: at('2001-01-05T13:00:00Z'), to: at('2001-01-06T00:00:00Z') },
      { level: 'day', from: at('2001-01-06T00:00:00Z'), to: at('2001-01-08T00:00:00Z') },
      { level: 'hour', from: at('2001-01-08T00:00:00Z'), to: at('2001-01-08T03:00:00Z') },
      { level: 'minute', from: at('2001-01-08T03:00:00Z'), to },
    ]);
  });

  it('uses one segment at the coarsest level when the range is aligned to it', () => {
    expect(planSegments(at('2001-01-01T00:00:00Z'), at('2001-02-01T00:00:00Z'), 'day')).toEqual([
      { level: 'day', from: at('2001-01-01T00:00:00Z'), to: at('2001-02-01T00:00:00Z') },
    ]);
    expect(planSegments(at('2001-01-01T05:00:00Z'), at('2001-01-03T07:00:00Z'), 'hour')).toEqual([
      { level: 'hour', from: at('2001-01-01T05:00:00Z'), to: at('2001-01-03T07:00:00Z') },
    ]);
  });

  it('never reads a level coarser than the granularity allows', () => {
    const segments = planSegments(at('2001-01-01T00:00:00Z'), at('2001-01-03T00:00:00Z'), 'minute');
    expect(segments).toEqual([{ level: 'minute', from: at('2001-01-01T00:00:00Z'), to: at('2001-01-03T00:00:00Z') }]);
  });

  it('falls back to finer levels when no whole slot of a level fits', () => {
    const from = at('2001-01-01T10:10:00Z');
    const to = at('2001-01-01T10:50:00Z');
    expect(planSegments(from, to, 'day')).toEqual([{ level: 'minute', from, to }]);
  });

  it('returns nothing for an empty range', () => {
    expect(planSegments(at('2001-01-01T10:10:00Z'), at('2001-01-01T10:10:00Z'), 'day')).toEqual([]);
  });

  it('tiles 2,000 pseudo-random ranges exactly, with at most five segments', () => {
    let seed = 12345;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const base = at('2001-01-01T00:00:00Z');
    for (let i = 0; i < 2000; i++) {
      const from = base + Math.floor(random() * 60 * 24 * 10) * MIN;
      const to = from + Math.floor(1 + random() * 60 * 24 * 5) * MIN;
      for (const coarsest of ['day', 'hour', 'minute'] as const) {
        const segments = planSegments(from, to, coarsest);
        checkTiling(segments, from, to);
        expect(segments.length).toBeLessThanOrEqual(5);
        const rank = { minute: 0, hour: 1, day: 2 };
        for (const segment of segments) expect(rank[segment.level]).toBeLessThanOrEqual(rank[coarsest]);
        // Coarsest possible: no two neighbouring minute segments, and a day segment whenever a whole day fits.
        const firstDay = Math.ceil(from / D) * D;
        if (coarsest === 'day' && firstDay + D <= to) expect(segments.some((s) => s.level === 'day')).toBe(true);
      }
    }
  });
});
