/**
 * When an idle folder's look writes the fold state (`compactionWork` and `leaseDue` in
 * src/storage/fold.ts): only with a compaction to run or resume, replaced parts to
 * delete, a day due, or a lease to take or renew. Cases written out by hand.
 */
import { describe, expect, it } from 'vitest';
import { compactionWork } from '../../src/storage/compaction.ts';
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
