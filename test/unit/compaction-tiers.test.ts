/**
 * The tiered compaction policy (`tieredFrom`, `runsAfter` in src/storage/fold.ts;
 * docs/ingest-design.md, "Compaction"), simulated over many compactions of one day.
 * The expectations are counted independently: which compactions of runs of one size
 * merge the whole day (powers of two, as a binary counter), that the runs always tile
 * the fold numbers from 0 without gaps or overlaps, that their count stays within
 * log2(compactions) + 1, and how many times a fold's parts are rewritten.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { runsAfter, tieredFrom } from '../../src/storage/fold.ts';
import type { CompactionRun } from '../../src/storage/visibility.ts';

/** One day's compactions: `sizes[i]` folds wrote to the day before compaction i. */
function simulate(sizes: readonly number[]): { froms: number[]; runs: CompactionRun[][]; rewrites: number[] } {
  let runs: CompactionRun[] | undefined;
  let last: number | undefined;
  let seq = 0;
  const froms: number[] = [];
  const history: CompactionRun[][] = [];
  /** Per fold number, how many compactions rewrote its parts. */
  const rewrites: number[] = [];
  for (const size of sizes) {
    // The day's folds, numbered one after the other, then the compaction.
    for (let i = 0; i < size; i++) rewrites[++seq] = 0;
    const c = ++seq;
    rewrites[c] = 0;
    const from = tieredFrom(runs, last, size);
    for (let f = from; f < c; f++) rewrites[f] = (rewrites[f] ?? 0) + 1;
    runs = runsAfter(runs, from, size);
    last = c;
    froms.push(from);
    history.push(runs);
  }
  return { froms, runs: history, rewrites };
}

describe('tieredFrom and runsAfter', () => {
  it('merges runs of one size like a binary counter: whole at the 1st, 2nd, 4th, 8th and 16th compaction', () => {
    const { froms, runs } = simulate(Array.from({ length: 20 }, () => 8));
    const whole = froms.flatMap((from, i) => (from === 0 ? [i + 1] : []));
    expect(whole).toEqual([1, 2, 4, 8, 16]);
    // Run sizes after compaction k are the binary digits of k, times 8, largest first.
    runs.forEach((after, i) => {
      const k = i + 1;
      const digits = [...k.toString(2)].map((bit, j, all) => (bit === '1' ? 2 ** (all.length - 1 - j) * 8 : 0)).filter((size) => size > 0);
      expect(after.map((run) => run.folds)).toEqual(digits);
    });
  });

  it('keeps runs that tile the fold numbers, at most log2(compactions) + 1 of them, and rewrites a fold at most that often', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 60 }), (sizes) => {
        const { froms, runs, rewrites } = simulate(sizes);
        expect(froms[0]).toBe(0);
        runs.forEach((after, i) => {
          expect(after[0]?.from).toBe(0);
          for (let j = 1; j < after.length; j++) expect(after[j]!.from).toBeGreaterThan(after[j - 1]!.from);
          // Every fold of the day is in exactly one run: the sizes add up to the folds so far.
          expect(after.reduce((sum, run) => sum + run.folds, 0)).toBe(sizes.slice(0, i + 1).reduce((a, b) => a + b, 0));
          // Each run is more than the runs after it together (else the newest would have taken it in).
          for (let j = 0; j < after.length - 1; j++) {
            expect(after[j]!.folds).toBeGreaterThan(after.slice(j + 1).reduce((sum, run) => sum + run.folds, 0));
          }
        });
        const total = sizes.reduce((a, b) => a + b, 0);
        expect(runs.at(-1)!.length).toBeLessThanOrEqual(Math.floor(Math.log2(total)) + 1);
        expect(Math.max(...rewrites.filter((n) => n !== undefined))).toBeLessThanOrEqual(Math.floor(Math.log2(total)) + 1);
      }),
      { numRuns: 300 },
    );
  });

  it('merges a day whole when it was never compacted or its runs are unknown (a database from before runs were kept, or a compaction it recorded)', () => {
    expect(tieredFrom(undefined, undefined, 8)).toBe(0);
    expect(tieredFrom(undefined, 40, 8)).toBe(0);
    expect(tieredFrom([], 40, 8)).toBe(0);
    expect(tieredFrom([{ from: 0, folds: 32 }], 40, 8)).toBe(41);
    // Runs that do not begin at 0 are not known either.
    expect(tieredFrom([{ from: 9, folds: 32 }], 40, 8)).toBe(0);
    expect(runsAfter(undefined, 0, 8)).toEqual([{ from: 0, folds: 8 }]);
    // A compaction of recent parts recorded by a version that kept no runs: none kept, so the next one is whole.
    expect(runsAfter(undefined, 41, 8)).toEqual([]);
    expect(tieredFrom([], 50, 8)).toBe(0);
    expect(runsAfter([{ from: 0, folds: 32 }], 41, 8)).toEqual([
      { from: 0, folds: 32 },
      { from: 41, folds: 8 },
    ]);
  });
});
