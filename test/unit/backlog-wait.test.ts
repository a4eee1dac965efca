/**
 * `Retry-After` of a write refused for the ingest backlog (`backlogWait`,
 * src/storage/ingest-log.ts): the time the folder needs, at its fold rate, for what is
 * past the bounds; the expected seconds are worked out by hand in each case.
 */
import { describe, expect, it } from 'vitest';
import { backlogWait, type Backlog } from '../../src/storage/ingest-log.ts';

const NOW = Date.UTC(2024, 0, 1, 12);
const bounds = { maxTailReadings: 200_000, maxTailSeconds: 60, foldRate: 5_000 };
/** A backlog of `readings` whose oldest entry arrived `age` seconds before NOW. */
const backlog = (readings: number, age: number): Backlog => ({
  readings,
  entries: Math.ceil(readings / 1000),
  oldest: NOW - age * 1000,
  newest: NOW,
});

describe('backlogWait', () => {
  it('is 0 within both bounds, and with the bounds off', () => {
    expect(backlogWait(backlog(200_000, 60), NOW, bounds)).toBe(0);
    expect(backlogWait({ readings: 0, entries: 0, oldest: null, newest: null }, NOW, bounds)).toBe(0);
    expect(backlogWait(backlog(5_000_000, 3_600), NOW, { ...bounds, maxTailReadings: 0, maxTailSeconds: 0 })).toBe(0);
  });

  it('past the readings bound: the excess readings at the fold rate', () => {
    // 50,000 readings over the bound, 5,000 folded a second: 10 s.
    expect(backlogWait(backlog(250_000, 10), NOW, bounds)).toBe(10);
    // 3 readings over: at least 1 s.
    expect(backlogWait(backlog(200_003, 10), NOW, bounds)).toBe(1);
  });

  it('past the age bound: the readings older than the bound at the fold rate, not the excess age', () => {
    // 100,000 readings over 120 s, bound 60 s: the older half, 50,000 readings, takes 10 s (not 60).
    expect(backlogWait(backlog(100_000, 120), NOW, bounds)).toBe(10);
    // 12,000 readings over 61 s: 1/61 of them, about 197 readings, at least 1 s.
    expect(backlogWait(backlog(12_000, 61), NOW, bounds)).toBe(1);
    // The age bound alone (no readings bound): 40,000 readings over 100 s, 40 s past 60: 16,000 readings, 3.2 s, so 4.
    expect(backlogWait(backlog(40_000, 100), NOW, { ...bounds, maxTailReadings: 0 })).toBe(4);
  });

  it('past both: the larger of the two', () => {
    // 300,000 readings over 90 s: 100,000 over the readings bound; 30 of 90 s past the age bound, 100,000 readings
    // older than it. At 2,000 a second: 50 s.
    expect(backlogWait(backlog(300_000, 90), NOW, { ...bounds, foldRate: 2_000 })).toBe(50);
    // 400,000 readings over 66 s: 200,000 over the readings bound against 36,364 older than 60 s: 40 s at 5,000.
    expect(backlogWait(backlog(400_000, 66), NOW, bounds)).toBe(40);
  });
});
