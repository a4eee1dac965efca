/**
 * When the folder folds rather than waits (`foldDue`, `tailSeen` in src/jobs/fold-job.ts):
 * not while batches keep arriving, unless the oldest waited the longest delay, the tail
 * holds its bound of readings or a full fold is there; at once when the writes went
 * quiet; never with nothing to fold.
 */
import { describe, expect, it } from 'vitest';
import { foldDue, tailSeen } from '../../src/jobs/fold-job.ts';

const DELAY = { quietMs: 1_000, maxDelayMs: 5_000, tailReadings: 10_000, fullReadings: 20_000 };
const T = 1_800_000_000_000;
const backlog = (readings: number, oldest: number, newest: number) => ({ readings, entries: Math.ceil(readings / 1000), oldest, newest });

describe('foldDue', () => {
  it('waits while the tail grows, and folds once it stopped growing for quietMs', () => {
    const tail = backlog(8_000, T - 3_000, T - 100);
    expect(foldDue(tail, T, T - 999, DELAY)).toBe(false);
    expect(foldDue(tail, T, T - 1_000, DELAY)).toBe(true);
  });

  it('folds a busy tail once its oldest batch waited maxDelayMs', () => {
    expect(foldDue(backlog(8_000, T - 4_999, T - 10), T, T - 10, DELAY)).toBe(false);
    expect(foldDue(backlog(8_000, T - 5_000, T - 10), T, T - 10, DELAY)).toBe(true);
  });

  it('folds a busy tail once it holds tailReadings readings', () => {
    expect(foldDue(backlog(9_999, T - 10, T - 10), T, T, DELAY)).toBe(false);
    expect(foldDue(backlog(10_000, T - 10, T - 10), T, T, DELAY)).toBe(true);
  });

  it('folds a busy tail holding a full fold, also when tailReadings is larger', () => {
    const large = { ...DELAY, tailReadings: 50_000 };
    expect(foldDue(backlog(19_999, T - 10, T - 10), T, T, large)).toBe(false);
    expect(foldDue(backlog(20_000, T - 10, T - 10), T, T, large)).toBe(true);
  });

  it('never folds nothing, and with quietMs 0 folds any tail at once', () => {
    expect(foldDue({ readings: 0, entries: 0, oldest: null, newest: null }, T, T - 60_000, DELAY)).toBe(false);
    expect(foldDue({ readings: 0, entries: 0, oldest: null, newest: null }, T, T, { ...DELAY, quietMs: 0 })).toBe(false);
    expect(foldDue(backlog(1, T, T), T, T, { ...DELAY, quietMs: 0 })).toBe(true);
  });
});

describe('tailSeen', () => {
  it('keeps the time of the last growth while no entry arrives, also while a fold shrinks the tail', () => {
    let seen = tailSeen(undefined, backlog(3_000, T - 2_000, T - 500), T);
    expect(seen.at).toBe(T);
    seen = tailSeen(seen, backlog(3_000, T - 2_000, T - 500), T + 1_000);
    expect(seen.at).toBe(T);
    seen = tailSeen(seen, backlog(1_000, T - 500, T - 500), T + 2_000);
    expect(seen.at).toBe(T);
  });

  it('moves to now when a new entry arrived, even one received earlier than the newest seen', () => {
    const first = tailSeen(undefined, backlog(3_000, T - 2_000, T - 500), T);
    expect(tailSeen(first, backlog(4_000, T - 2_000, T + 400), T + 1_000).at).toBe(T + 1_000);
    // Registered slowly: its request arrived before the newest entry seen, so the newest is the same.
    expect(tailSeen(first, backlog(4_000, T - 2_000, T - 500), T + 1_000).at).toBe(T + 1_000);
  });
});
