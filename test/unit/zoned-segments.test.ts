/**
 * The segment planner in time zones: a stored slot (UTC day, hour, minute) is read at its
 * level only when it lies in the range and holds no bucket boundary strictly inside.
 * Hand-derived plans at zone edges, and a property test over random zones and ranges.
 * The sketch planner likewise, with quarter hours between hours and minutes: percentile
 * buckets of an hour or more (and of 15 and 30 minutes) read minutes only at range
 * edges inside a quarter hour, in every zone.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  granularity,
  GRANULARITY_NAMES,
  LEVEL_MS,
  listBuckets,
  type GranularityName,
  type Level,
  type SketchLevel,
} from '../../src/query/granularity.ts';
import { planBucketSegments, planSegments, planSketchSegments, type Segment } from '../../src/query/segments.ts';
import { parseLocalTime } from '../../src/query/zone.ts';

const at = (iso: string) => Date.parse(iso);
const MIN = 60_000;
const H = 60 * MIN;
const D = 24 * H;
const seg = (level: Level, from: string, to: string): Segment => ({ level, from: at(from), to: at(to) });
const plan = (name: GranularityName, zone: string, from: string, to: string) =>
  planBucketSegments(parseLocalTime(from, zone), parseLocalTime(to, zone), granularity(name), zone);

describe('planBucketSegments at zone edges', () => {
  it('a New York MONTH across the 2001 DST change reads day totals inside each month, hour slots on the boundary days', () => {
    // March starts at 05:00Z (EST), April at 05:00Z on 1 April (02:00 comes later), May at 04:00Z (EDT).
    expect(plan('MONTH', 'America/New_York', '2001-03-01', '2001-05-01')).toEqual([
      seg('hour', '2001-03-01T05:00:00Z', '2001-03-02T00:00:00Z'),
      seg('day', '2001-03-02T00:00:00Z', '2001-04-01T00:00:00Z'),
      seg('hour', '2001-04-01T00:00:00Z', '2001-04-02T00:00:00Z'),
      seg('day', '2001-04-02T00:00:00Z', '2001-05-01T00:00:00Z'),
      seg('hour', '2001-05-01T00:00:00Z', '2001-05-01T04:00:00Z'),
    ]);
  });

  it('a New York DAY reads hour slots only (every local midnight is 04:00 or 05:00 UTC), merged into one segment', () => {
    expect(plan('DAY', 'America/New_York', '2001-03-25', '2001-04-08')).toEqual([
      seg('hour', '2001-03-25T05:00:00Z', '2001-04-08T04:00:00Z'),
    ]);
  });

  it('Asia/Kolkata (+05:30) hours read minute slots: every UTC hour holds a boundary at :30', () => {
    expect(plan('HOUR', 'Asia/Kolkata', '2001-04-01', '2001-04-03')).toEqual([
      seg('minute', '2001-03-31T18:30:00Z', '2001-04-02T18:30:00Z'),
    ]);
    expect(plan('THIRTY_MINUTES', 'Asia/Kolkata', '2001-04-01', '2001-04-02')).toEqual([
      seg('minute', '2001-03-31T18:30:00Z', '2001-04-01T18:30:00Z'),
    ]);
    // Six-hour periods start at 18:30, 00:30, 06:30 and 12:30 UTC: hours between, minutes of the hours holding a start.
    expect(plan('SIX_HOURS', 'Asia/Kolkata', '2001-04-01T00:00', '2001-04-01T12:00')).toEqual([
      seg('minute', '2001-03-31T18:30:00Z', '2001-03-31T19:00:00Z'),
      seg('hour', '2001-03-31T19:00:00Z', '2001-04-01T00:00:00Z'),
      seg('minute', '2001-04-01T00:00:00Z', '2001-04-01T01:00:00Z'),
      seg('hour', '2001-04-01T01:00:00Z', '2001-04-01T06:00:00Z'),
      seg('minute', '2001-04-01T06:00:00Z', '2001-04-01T06:30:00Z'),
    ]);
  });

  it('an Asia/Kathmandu (+05:45) DAY reads hour slots, and minutes only in the hour holding each 18:15 UTC boundary', () => {
    expect(plan('DAY', 'Asia/Kathmandu', '2001-04-01', '2001-04-04')).toEqual([
      seg('minute', '2001-03-31T18:15:00Z', '2001-03-31T19:00:00Z'),
      seg('hour', '2001-03-31T19:00:00Z', '2001-04-01T18:00:00Z'),
      seg('minute', '2001-04-01T18:00:00Z', '2001-04-01T19:00:00Z'),
      seg('hour', '2001-04-01T19:00:00Z', '2001-04-02T18:00:00Z'),
      seg('minute', '2001-04-02T18:00:00Z', '2001-04-02T19:00:00Z'),
      seg('hour', '2001-04-02T19:00:00Z', '2001-04-03T18:00:00Z'),
      seg('minute', '2001-04-03T18:00:00Z', '2001-04-03T18:15:00Z'),
    ]);
  });

  it('an Asia/Kathmandu MONTH reads day totals inside the month and finer slots only around its edges', () => {
    expect(plan('MONTH', 'Asia/Kathmandu', '2001-03-01', '2001-05-01')).toEqual([
      seg('minute', '2001-02-28T18:15:00Z', '2001-02-28T19:00:00Z'),
      seg('hour', '2001-02-28T19:00:00Z', '2001-03-01T00:00:00Z'),
      seg('day', '2001-03-01T00:00:00Z', '2001-03-31T00:00:00Z'),
      seg('hour', '2001-03-31T00:00:00Z', '2001-03-31T18:00:00Z'),
      seg('minute', '2001-03-31T18:00:00Z', '2001-03-31T19:00:00Z'),
      seg('hour', '2001-03-31T19:00:00Z', '2001-04-01T00:00:00Z'),
      seg('day', '2001-04-01T00:00:00Z', '2001-04-30T00:00:00Z'),
      seg('hour', '2001-04-30T00:00:00Z', '2001-04-30T18:00:00Z'),
      seg('minute', '2001-04-30T18:00:00Z', '2001-04-30T18:15:00Z'),
    ]);
  });

  it('an Australia/Adelaide DAY across its 2001 DST end (+10:30 -> +09:30) reads minutes at the 30-minute edges', () => {
    // Local midnights: 24th at 13:30Z (+10:30), 25th at 13:30Z, 26th at 14:30Z (+09:30), 27th at 14:30Z.
    expect(plan('DAY', 'Australia/Adelaide', '2001-03-24', '2001-03-27')).toEqual([
      seg('minute', '2001-03-23T13:30:00Z', '2001-03-23T14:00:00Z'),
      seg('hour', '2001-03-23T14:00:00Z', '2001-03-24T13:00:00Z'),
      seg('minute', '2001-03-24T13:00:00Z', '2001-03-24T14:00:00Z'),
      seg('hour', '2001-03-24T14:00:00Z', '2001-03-25T14:00:00Z'),
      seg('minute', '2001-03-25T14:00:00Z', '2001-03-25T15:00:00Z'),
      seg('hour', '2001-03-25T15:00:00Z', '2001-03-26T14:00:00Z'),
      seg('minute', '2001-03-26T14:00:00Z', '2001-03-26T14:30:00Z'),
    ]);
  });

  it('UTC plans exactly as before: the range alone decides', () => {
    expect(plan('DAY', 'UTC', '2001-01-05T12:07', '2001-01-08T03:30')).toEqual([
      seg('minute', '2001-01-05T12:07:00Z', '2001-01-05T13:00:00Z'),
      seg('hour', '2001-01-05T13:00:00Z', '2001-01-06T00:00:00Z'),
      seg('day', '2001-01-06T00:00:00Z', '2001-01-08T00:00:00Z'),
      seg('hour', '2001-01-08T00:00:00Z', '2001-01-08T03:00:00Z'),
      seg('minute', '2001-01-08T03:00:00Z', '2001-01-08T03:30:00Z'),
    ]);
    for (const name of GRANULARITY_NAMES) {
      const from = at('2001-01-30T22:13:00Z');
      const to = at('2001-03-02T01:00:00Z');
      expect(planBucketSegments(from, to, granularity(name), 'UTC')).toEqual(planSegments(from, to, granularity(name).level));
    }
  });

  it('boundaries on slot edges change nothing; one inside a slot sends that slot to the finer level', () => {
    const from = at('2001-01-01T00:00:00Z');
    const to = at('2001-01-04T00:00:00Z');
    expect(planSegments(from, to, 'day', [at('2001-01-02T00:00:00Z'), at('2001-01-03T00:00:00Z')])).toEqual([
      seg('day', '2001-01-01T00:00:00Z', '2001-01-04T00:00:00Z'),
    ]);
    expect(planSegments(from, to, 'day', [at('2001-01-02T05:00:00Z'), at('2001-01-02T07:20:00Z')])).toEqual([
      seg('day', '2001-01-01T00:00:00Z', '2001-01-02T00:00:00Z'),
      seg('hour', '2001-01-02T00:00:00Z', '2001-01-02T07:00:00Z'),
      seg('minute', '2001-01-02T07:00:00Z', '2001-01-02T08:00:00Z'),
      seg('hour', '2001-01-02T08:00:00Z', '2001-01-03T00:00:00Z'),
      seg('day', '2001-01-03T00:00:00Z', '2001-01-04T00:00:00Z'),
    ]);
  });
});

/** Zones with daylight saving, half- and quarter-hour offsets, a skipped day (Apia 2011), 00:01 changes (St. John's). */
const ZONES = [
  'UTC',
  'America/New_York',
  'America/Los_Angeles',
  'America/St_Johns',
  'America/Sao_Paulo',
  'Europe/London',
  'Europe/Berlin',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Asia/Tehran',
  'Australia/Adelaide',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'Pacific/Apia',
  'Africa/Casablanca',
];

/** Typical width of a granularity, to size random ranges to a few hundred buckets at most. */
const TYPICAL_MS: Record<GranularityName, number> = {
  MINUTE: MIN,
  TWO_MINUTES: 2 * MIN,
  FIVE_MINUTES: 5 * MIN,
  TEN_MINUTES: 10 * MIN,
  FIFTEEN_MINUTES: 15 * MIN,
  THIRTY_MINUTES: 30 * MIN,
  HOUR: H,
  TWO_HOURS: 2 * H,
  THREE_HOURS: 3 * H,
  SIX_HOURS: 6 * H,
  TWELVE_HOURS: 12 * H,
  DAY: D,
  WEEK: 7 * D,
  MONTH: 30 * D,
  QUARTER: 91 * D,
  YEAR: 365 * D,
};

const RANK: Record<Level, number> = { minute: 0, hour: 1, day: 2 };
const COARSER: Record<Level, Level[]> = { minute: ['hour', 'day'], hour: ['day'], day: [] };

describe('planBucketSegments, property', () => {
  it('tiles [from, to) exactly with whole slots, never across a bucket boundary, as coarse as the boundaries allow', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.constantFrom(...GRANULARITY_NAMES),
        // Whole minutes from 1973 (after the last offsets with seconds) to 2035.
        fc.integer({ min: Date.UTC(1973, 0, 1) / MIN, max: Date.UTC(2035, 0, 1) / MIN }),
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 0, max: 59 }),
        (zone, name, fromMinute, buckets, ragged) => {
          const g = granularity(name);
          const from = fromMinute * MIN;
          const to = from + buckets * TYPICAL_MS[name] + ragged * MIN;
          const segments = planBucketSegments(from, to, g, zone);
          const boundaries = listBuckets(from, to, g.cut, zone)
            .slice(1)
            .map((b) => b.start);
          // Tiling with whole slots of each level, never coarser than the granularity allows.
          let cursor = from;
          for (const s of segments) {
            expect(s.from).toBe(cursor);
            expect(s.to).toBeGreaterThan(s.from);
            if (s.level !== 'minute') {
              expect(s.from % LEVEL_MS[s.level]).toBe(0);
              expect(s.to % LEVEL_MS[s.level]).toBe(0);
            }
            expect(RANK[s.level]).toBeLessThanOrEqual(RANK[g.level]);
            cursor = s.to;
          }
          expect(cursor).toBe(to);
          // No boundary strictly inside a slot that is read.
          for (const b of boundaries) {
            const holder = segments.find((s) => s.from < b && b < s.to);
            if (holder !== undefined) expect(b % LEVEL_MS[holder.level], `${zone} ${name} ${new Date(b).toISOString()}`).toBe(0);
          }
          // Coarsest: every whole coarser slot (allowed by the granularity) inside a finer segment holds a boundary.
          const cutSlots = (width: number) => new Set(boundaries.filter((b) => b % width !== 0).map((b) => b - (b % width)));
          const cut = { hour: cutSlots(H), day: cutSlots(D) };
          for (const s of segments) {
            for (const level of COARSER[s.level]) {
              if (RANK[level] > RANK[g.level] || level === 'minute') continue;
              const width = LEVEL_MS[level];
              for (let slot = Math.ceil(s.from / width) * width; slot + width <= s.to; slot += width) {
                expect(cut[level].has(slot), `${zone} ${name}: ${level} slot ${new Date(slot).toISOString()} read from ${s.level}`).toBe(
                  true,
                );
              }
            }
          }
          // Few segments: a boundary inside a slot costs at most four more.
          const inside = boundaries.filter((b) => b % MIN === 0 && b % LEVEL_MS[g.level] !== 0).length;
          expect(segments.length).toBeLessThanOrEqual(4 * inside + 5);
        },
      ),
      { numRuns: 400, seed: 20010401 },
    );
  });
});

const Q = 15 * MIN;
const sketchSeg = (level: SketchLevel, from: string, to: string): Segment<SketchLevel> => ({ level, from: at(from), to: at(to) });
const sketchPlan = (name: GranularityName, zone: string, from: string, to: string) =>
  planSketchSegments(parseLocalTime(from, zone), parseLocalTime(to, zone), granularity(name), zone);

describe('planSketchSegments: quarter hours between hours and minutes', () => {
  it('Asia/Kolkata (+05:30) hours read quarter hours, not minutes: every UTC hour holds a boundary at :30', () => {
    expect(sketchPlan('HOUR', 'Asia/Kolkata', '2001-04-01', '2001-04-03')).toEqual([
      sketchSeg('quarter', '2001-03-31T18:30:00Z', '2001-04-02T18:30:00Z'),
    ]);
  });

  it('an Asia/Kathmandu (+05:45) DAY reads hour slots, and quarter hours in the hour holding each 18:15 UTC boundary', () => {
    expect(sketchPlan('DAY', 'Asia/Kathmandu', '2001-04-01', '2001-04-03')).toEqual([
      sketchSeg('quarter', '2001-03-31T18:15:00Z', '2001-03-31T19:00:00Z'),
      sketchSeg('hour', '2001-03-31T19:00:00Z', '2001-04-01T18:00:00Z'),
      sketchSeg('quarter', '2001-04-01T18:00:00Z', '2001-04-01T19:00:00Z'),
      sketchSeg('hour', '2001-04-01T19:00:00Z', '2001-04-02T18:00:00Z'),
      sketchSeg('quarter', '2001-04-02T18:00:00Z', '2001-04-02T18:15:00Z'),
    ]);
  });

  it('an Australia/Adelaide DAY across its 2001 DST end (+10:30 -> +09:30) reads quarter hours at the 30-minute edges', () => {
    expect(sketchPlan('DAY', 'Australia/Adelaide', '2001-03-24', '2001-03-27')).toEqual([
      sketchSeg('quarter', '2001-03-23T13:30:00Z', '2001-03-23T14:00:00Z'),
      sketchSeg('hour', '2001-03-23T14:00:00Z', '2001-03-24T13:00:00Z'),
      sketchSeg('quarter', '2001-03-24T13:00:00Z', '2001-03-24T14:00:00Z'),
      sketchSeg('hour', '2001-03-24T14:00:00Z', '2001-03-25T14:00:00Z'),
      sketchSeg('quarter', '2001-03-25T14:00:00Z', '2001-03-25T15:00:00Z'),
      sketchSeg('hour', '2001-03-25T15:00:00Z', '2001-03-26T14:00:00Z'),
      sketchSeg('quarter', '2001-03-26T14:00:00Z', '2001-03-26T14:30:00Z'),
    ]);
  });

  it('in UTC, only range edges inside a quarter hour read minutes; aggregates alike', () => {
    expect(sketchPlan('DAY', 'UTC', '2001-01-05T12:07', '2001-01-08T03:30')).toEqual([
      sketchSeg('minute', '2001-01-05T12:07:00Z', '2001-01-05T12:15:00Z'),
      sketchSeg('quarter', '2001-01-05T12:15:00Z', '2001-01-05T13:00:00Z'),
      sketchSeg('hour', '2001-01-05T13:00:00Z', '2001-01-06T00:00:00Z'),
      sketchSeg('day', '2001-01-06T00:00:00Z', '2001-01-08T00:00:00Z'),
      sketchSeg('hour', '2001-01-08T00:00:00Z', '2001-01-08T03:00:00Z'),
      sketchSeg('quarter', '2001-01-08T03:00:00Z', '2001-01-08T03:30:00Z'),
    ]);
    expect(planSketchSegments(at('2001-01-05T06:30:00Z'), at('2001-01-05T08:02:00Z'), null)).toEqual([
      sketchSeg('quarter', '2001-01-05T06:30:00Z', '2001-01-05T07:00:00Z'),
      sketchSeg('hour', '2001-01-05T07:00:00Z', '2001-01-05T08:00:00Z'),
      sketchSeg('minute', '2001-01-05T08:00:00Z', '2001-01-05T08:02:00Z'),
    ]);
  });

  it('15 and 30 minute buckets read quarter hours in UTC and Kathmandu; 10 minute buckets read minutes', () => {
    expect(sketchPlan('FIFTEEN_MINUTES', 'UTC', '2001-01-05T10:00', '2001-01-05T12:00')).toEqual([
      sketchSeg('quarter', '2001-01-05T10:00:00Z', '2001-01-05T12:00:00Z'),
    ]);
    expect(sketchPlan('THIRTY_MINUTES', 'Asia/Kathmandu', '2001-01-05T10:00', '2001-01-05T12:00')).toEqual([
      sketchSeg('quarter', '2001-01-05T04:15:00Z', '2001-01-05T06:15:00Z'),
    ]);
    expect(sketchPlan('TEN_MINUTES', 'UTC', '2001-01-05T10:00', '2001-01-05T12:00')).toEqual([
      sketchSeg('minute', '2001-01-05T10:00:00Z', '2001-01-05T12:00:00Z'),
    ]);
  });
});

/** Granularities whose buckets start on quarter-hour edges in the zones of {@link ZONES} since 1973 (offsets are multiples of 15 minutes). */
const QUARTER_ALIGNED = GRANULARITY_NAMES.filter((name) => !['MINUTE', 'TWO_MINUTES', 'FIVE_MINUTES', 'TEN_MINUTES'].includes(name));

describe('planSketchSegments, property', () => {
  it('refines the statistics plan with quarter hours, reads no slot across a boundary, and reads minutes only at ragged range edges', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.constantFrom(...QUARTER_ALIGNED),
        fc.integer({ min: Date.UTC(1973, 0, 1) / MIN, max: Date.UTC(2035, 0, 1) / MIN }),
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 0, max: 59 }),
        (zone, name, fromMinute, buckets, ragged) => {
          const g = granularity(name);
          const from = fromMinute * MIN;
          const to = from + buckets * TYPICAL_MS[name] + ragged * MIN;
          const segments = planSketchSegments(from, to, g, zone);
          const label = `${zone} ${name} [${new Date(from).toISOString()}, ${new Date(to).toISOString()})`;
          // Tiling with whole slots of each level.
          let cursor = from;
          for (const s of segments) {
            expect(s.from, label).toBe(cursor);
            if (s.level !== 'minute') expect([s.from % LEVEL_MS[s.level], s.to % LEVEL_MS[s.level]], label).toEqual([0, 0]);
            cursor = s.to;
          }
          expect(cursor, label).toBe(to);
          // No boundary strictly inside a slot read.
          for (const { start } of listBuckets(from, to, g.cut, zone).slice(1)) {
            const holder = segments.find((s) => s.from < start && start < s.to);
            if (holder !== undefined) expect(start % LEVEL_MS[holder.level], `${label} ${new Date(start).toISOString()}`).toBe(0);
          }
          // Minutes only in the range's ragged quarter hours.
          const firstQuarter = Math.ceil(from / Q) * Q;
          const lastQuarter = Math.floor(to / Q) * Q;
          for (const s of segments.filter((segment) => segment.level === 'minute')) {
            expect(s.to <= firstQuarter || s.from >= lastQuarter || firstQuarter >= lastQuarter, `${label}: minutes ${s.from}`).toBe(true);
          }
          // The statistics plan, with quarters read as minutes: day and hour pieces are the same.
          const asStatistics: Segment[] = [];
          for (const s of segments) {
            const level: Level = s.level === 'quarter' ? 'minute' : s.level;
            const last = asStatistics[asStatistics.length - 1];
            if (last !== undefined && last.level === level && last.to === s.from) last.to = s.to;
            else asStatistics.push({ level, from: s.from, to: s.to });
          }
          expect(asStatistics, label).toEqual(planBucketSegments(from, to, g, zone));
        },
      ),
      { numRuns: 150, seed: 20010331 },
    );
  });
});
