/**
 * When an idle folder's look writes the fold state (`compactionWork` and `leaseDue` in
 * src/storage/fold.ts): only with a compaction to run or resume, replaced parts to
 * delete, a day due, or a lease to take or renew; which days are due (`dueDays`), with
 * and without the quiet rule. Cases written out by hand.
 */
import { describe, expect, it } from 'vitest';
import { compactionWork, dueDays } from '../../src/storage/compaction.ts';
import { leaseDue } from '../../src/storage/lease.ts';

const NOW = Date.UTC(2026, 10, 29, 12);
const LEASE_MS = 30_000;
const lease = (holder: string, leftMs: number) => ({ lease: { holder, until: new Date(NOW + leftMs) } });

describe('compactionWork', () => {
  it('is false for no fold state, an empty one, and days touched fewer times than due', () => {
    expect(compactionWork(null, 8)).toBe(false);
    expect(compactionWork({ running: null }, 8)).toBe(false);
    expect(compactionWork({ running: null, compactions: [], touched: { '1709251200000': 7 } }, 8)).toBe(false);
  });

  it('is true for a day due, a compaction left running, and compactions whose parts wait for deletion', () => {
    expect(compactionWork({ running: null, touched: { '1709251200000': 8 } }, 8)).toBe(true);
    expect(compactionWork({ running: { seq: 5, entries: [], compact: [1709251200000] } }, 8)).toBe(true);
    expect(compactionWork({ running: null, compactions: [{ c: 4, days: [new Date(1709251200000)], at: new Date(NOW) }] }, 8)).toBe(true);
  });

  it('is false while a fold (not a compaction) is running and nothing else waits', () => {
    expect(compactionWork({ running: { seq: 5, entries: ['b1'] } }, 8)).toBe(false);
  });
});

describe('dueDays with the quiet rule (COMPACT_QUIET_MS)', () => {
  const day = (n: number) => String(Date.UTC(2026, 10, n));
  const ago = (ms: number) => new Date(NOW - ms);

  it('takes a day of two folds or more quiet for quietMs, whatever afterFolds, and leaves one fold alone', () => {
    const state = {
      touched: { [day(1)]: 2, [day(2)]: 7, [day(3)]: 1, [day(4)]: 3 },
      written: { [day(1)]: ago(60_000), [day(2)]: ago(59_999), [day(3)]: ago(3_600_000), [day(4)]: ago(120_000) },
    };
    expect(dueDays(state, 8, { now: NOW, quietMs: 60_000 })).toEqual([Number(day(1)), Number(day(4))]);
    // Without the rule, only afterFolds counts.
    expect(dueDays(state, 8)).toEqual([]);
    expect(dueDays(state, 7)).toEqual([Number(day(2))]);
    // quietMs 0: every day of two folds or more.
    expect(dueDays(state, 8, { now: NOW, quietMs: 0 })).toEqual([Number(day(1)), Number(day(2)), Number(day(4))]);
  });

  it('counts a day folded before `written` was kept as quiet, and compactionWork follows', () => {
    const state = { running: null, touched: { [day(1)]: 2 } };
    expect(dueDays(state, 8, { now: NOW, quietMs: 60_000 })).toEqual([Number(day(1))]);
    expect(compactionWork(state, 8, { now: NOW, quietMs: 60_000 })).toBe(true);
    expect(compactionWork({ ...state, written: { [day(1)]: ago(1_000) } }, 8, { now: NOW, quietMs: 60_000 })).toBe(false);
  });
});

describe('leaseDue', () => {
  it('takes a lease nobody holds or that has expired', () => {
    expect(leaseDue(null, 'me', LEASE_MS, NOW)).toBe(true);
    expect(leaseDue({ lease: null }, 'me', LEASE_MS, NOW)).toBe(true);
    expect(leaseDue(lease('other', -1), 'me', LEASE_MS, NOW)).toBe(true);
  });

  it("renews its own lease once less than half of it is left, and leaves another's alone", () => {
    expect(leaseDue(lease('me', 20_000), 'me', LEASE_MS, NOW)).toBe(false);
    expect(leaseDue(lease('me', 15_000), 'me', LEASE_MS, NOW)).toBe(false);
    expect(leaseDue(lease('me', 14_999), 'me', LEASE_MS, NOW)).toBe(true);
    expect(leaseDue(lease('other', 1_000), 'me', LEASE_MS, NOW)).toBe(false);
  });
});
