/**
 * The tiered compaction policy (`tieredFrom`, `runsAfter` in src/storage/fold.ts;
 * docs/ingest-design.md, "Compaction"), simulated over many compactions of one day.
 * The expectations are counted independently: which compactions of runs of one size
 * merge the whole day (powers of two, as a binary counter), that the runs always tile
 * the fold numbers from 0 without gaps or overlaps, that their count stays within
 * log2(compactions) + 1, and how many times a fold's parts are rewritten; and, with a
 * fan-in of b (`COMPACT_FAN_IN`), a counter in base b whose runs each, times b - 1,
 * stay larger than the newer ones together.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { CompactionRun } from '../../src/storage/fold-state.ts';
import { runsAfter, tieredFrom } from '../../src/storage/compaction.ts';

/**
 * One day's compactions: `sizes[i]` folds wrote to the day before compaction i; runs of
 * one size merged `fanIn` at a time. With `seal`, the day has one series, each fold
 * writes `seal.perFold` readings to it, and runs holding `seal.readings` per document
 * are sealed.
 */
function simulate(
  sizes: readonly number[],
  fanIn = 2,
  seal?: { readings: number; perFold: number },
): { froms: number[]; runs: CompactionRun[][]; rewrites: number[] } {
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
    const from = tieredFrom(runs, last, size, fanIn, seal?.readings);
    for (let f = from; f < c; f++) rewrites[f] = (rewrites[f] ?? 0) + 1;
    // The new run's document: the readings of every fold from `from` on (each fold wrote perFold).
    const folds = size + (runs ?? []).filter((run) => run.from >= from).reduce((sum, run) => sum + run.folds, 0);
    runs = runsAfter(runs, from, size, seal === undefined ? undefined : { documents: 1, readings: folds * seal.perFold });
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

  it('merges runs of one size with a fan-in of b like a counter in base b: whole at the 1st, b-th, b²-th compaction', () => {
    for (const fanIn of [3, 4]) {
      const { froms, runs } = simulate(
        Array.from({ length: 40 }, () => 8),
        fanIn,
      );
      const whole = froms.flatMap((from, i) => (from === 0 ? [i + 1] : []));
      expect(whole).toEqual(fanIn === 3 ? [1, 3, 9, 27] : [1, 4, 16]);
      // Run sizes after compaction k: each base-b digit d of k at place p is d runs of b^p x 8, largest first.
      runs.forEach((after, i) => {
        const digits = [...(i + 1).toString(fanIn)];
        const expected = digits.flatMap((digit, j) => Array.from({ length: Number(digit) }, () => fanIn ** (digits.length - 1 - j) * 8));
        expect(after.map((run) => run.folds)).toEqual(expected);
      });
    }
    // The default is a fan-in of 2.
    expect(simulate([8, 8, 8, 8, 8]).froms).toEqual(simulate([8, 8, 8, 8, 8], 2).froms);
  });

  it('keeps runs that tile the fold numbers, each, times b - 1, more than the newer ones together, at most log base b/(b - 1) of the folds + 1 of them (log2 for the default 2), and rewrites a fold at most that often', () => {
    fc.assert(
      fc.property(
        // The default fan-in half of the time.
        fc.oneof(fc.constant(2), fc.integer({ min: 3, max: 8 })),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 60 }),
        (fanIn, sizes) => {
          const { froms, runs, rewrites } = simulate(sizes, fanIn);
          expect(froms[0]).toBe(0);
          runs.forEach((after, i) => {
            expect(after[0]?.from).toBe(0);
            for (let j = 1; j < after.length; j++) expect(after[j]!.from).toBeGreaterThan(after[j - 1]!.from);
            expect(after.reduce((sum, run) => sum + run.folds, 0)).toBe(sizes.slice(0, i + 1).reduce((a, b) => a + b, 0));
            for (let j = 0; j < after.length - 1; j++) {
              expect(after[j]!.folds * (fanIn - 1)).toBeGreaterThan(after.slice(j + 1).reduce((sum, run) => sum + run.folds, 0));
            }
          });
          const total = sizes.reduce((a, b) => a + b, 0);
          // Older runs grow by more than b/(b - 1) each, and so does the run a rewrite puts a fold's parts into.
          const bound = Math.floor(Math.log(total) / Math.log(fanIn / (fanIn - 1)) + 1e-9) + 1;
          expect(runs.at(-1)!.length).toBeLessThanOrEqual(bound);
          expect(Math.max(...rewrites.filter((n) => n !== undefined))).toBeLessThanOrEqual(bound);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('sealed runs (COMPACT_SEAL_READINGS)', () => {
  /** A run of `folds` folds from `from` whose `documents` documents hold `perDocument` readings each. */
  const run = (from: number, folds: number, documents?: number, perDocument?: number): CompactionRun =>
    documents === undefined ? { from, folds } : { from, folds, documents, readings: documents * (perDocument ?? 0) };

  it('never takes in a run whose documents hold the sealing readings on average, nor any run before it', () => {
    // One run of 8 folds, 100 documents of 2,500 readings: merged whole by 8 new folds unless sealed at 2,000.
    expect(tieredFrom([run(0, 8, 100, 2_500)], 9, 8)).toBe(0);
    expect(tieredFrom([run(0, 8, 100, 2_500)], 9, 8, 2, 2_000)).toBe(10);
    // Exactly the sealing average seals; one reading less does not.
    expect(tieredFrom([run(0, 8, 100, 2_000)], 9, 8, 2, 2_000)).toBe(10);
    expect(tieredFrom([{ from: 0, folds: 8, documents: 100, readings: 199_999 }], 9, 8, 2, 2_000)).toBe(0);
    // Merges begin after the newest sealed run: the open run after it is taken in, not the sealed ones.
    const runs = [run(0, 16, 100, 3_000), run(17, 8, 100, 2_500), run(26, 4, 100, 500)];
    expect(tieredFrom(runs, 30, 4)).toBe(0);
    expect(tieredFrom(runs, 30, 4, 2, 2_000)).toBe(26);
    // A sealed run before an open one: the open one is still merged from its own start.
    expect(tieredFrom([run(0, 16, 100, 3_000), run(17, 8, 100, 500)], 25, 8, 2, 2_000)).toBe(17);
  });

  it('never seals a run recorded without its documents and readings, nor with no sealing set (0)', () => {
    expect(tieredFrom([run(0, 8)], 9, 8, 2, 1)).toBe(0);
    expect(tieredFrom([run(0, 8, 100, 1_000_000)], 9, 8, 2, 0)).toBe(0);
    expect(tieredFrom([run(0, 8, 0, 0)], 9, 8, 2, 1)).toBe(0);
  });

  it('records what the compaction wrote on the new run only', () => {
    expect(runsAfter([run(0, 16, 100, 3_000), run(17, 8, 100, 500)], 17, 8, { documents: 100, readings: 120_000 })).toEqual([
      run(0, 16, 100, 3_000),
      { from: 17, folds: 16, documents: 100, readings: 120_000 },
    ]);
    expect(runsAfter(undefined, 0, 8, { documents: 3, readings: 7 })).toEqual([{ from: 0, folds: 8, documents: 3, readings: 7 }]);
  });

  it('keeps every sealed run as it was, each run at most the fan-in times the seal plus the folds of one compaction, and rewrites a fold at most log base b/(b - 1) of the folds + 1 times', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.constant(2), fc.integer({ min: 3, max: 8 })),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 1, max: 20_000 }),
        (fanIn, sizes, perFold, readings) => {
          const sealed = simulate(sizes, fanIn, { readings, perFold });
          const total = sizes.reduce((a, b) => a + b, 0);
          sealed.runs.forEach((after, i) => {
            // Runs tile the folds from 0.
            expect(after[0]?.from).toBe(0);
            for (let j = 1; j < after.length; j++) expect(after[j]!.from).toBeGreaterThan(after[j - 1]!.from);
            expect(after.reduce((sum, r) => sum + r.folds, 0)).toBe(sizes.slice(0, i + 1).reduce((a, b) => a + b, 0));
            // A run took in open runs only: the oldest of them below the seal and the newer
            // ones below fan-in - 1 times it, so less than fan-in times the seal, plus the new folds.
            for (const r of after) expect(r.readings!).toBeLessThanOrEqual(fanIn * readings + Math.max(...sizes) * perFold);
            // Every run sealed before this compaction is still there, unchanged.
            if (i > 0) {
              for (const before of sealed.runs[i - 1]!) {
                if (before.readings! >= readings) expect(after).toContainEqual(before);
              }
            }
          });
          // A fold's parts are rewritten at most as often as the open policy's bound allows.
          const bound = Math.floor(Math.log(total) / Math.log(fanIn / (fanIn - 1)) + 1e-9) + 1;
          expect(Math.max(...sealed.rewrites.filter((n) => n !== undefined))).toBeLessThanOrEqual(bound);
        },
      ),
      { numRuns: 500 },
    );
  });
});
