/**
 * The folder as a background job (docs/ingest-design.md, "Who folds"): every server
 * instance runs it; the lease in `fold_state` lets one of them fold at a time, and
 * another takes over within the lease's time when that one stops.
 */
import { compactOnce, foldOnce, releaseLease, type FoldOutcome } from '../storage/fold.ts';
import type { Store } from '../storage/store.ts';
import type { Job } from './scheduler.ts';

/**
 * Compactions of a day per whole-day compaction: the others merge only the parts since
 * the day's last compaction, so a day written all day long is not rewritten whole every
 * few folds (measured: whole-day compactions every eighth fold took the embedded server
 * over as the day grew; docs/ingest-design.md, "Measured: the built path").
 */
export const COMPACT_FULL_EVERY = 4;

/** Totals of the folds this process ran, for `/metrics`. */
export interface FoldTotals {
  folds: number;
  readings: number;
  /** Seconds spent folding (the folds that folded something). */
  seconds: number;
}

/**
 * A job that folds the ingest log every `intervalMs` (0: never; then writes pile up
 * until INGEST_BACKLOG): each run folds what is in the log, again at once while the
 * folds come out at least half full (a backlog), until another instance holds the lease
 * or the scheduler stops, then compacts the days due (`compactOnce`: days
 * that `compactAfterFolds` folds wrote to) and deletes the parts earlier compactions
 * replaced once no read pins a view from before them (`storage/read-pins.ts`), or
 * `compactGraceMs` has passed. Its log line carries the folds, readings,
 * parts and compactions of the run, at debug level (it runs every second).
 * @param options.maxReadings readings per fold at most (`FOLD_MAX_READINGS`).
 * @param options.onFold told every fold that folded something, with its duration in seconds.
 */
export function foldJob(
  store: Store,
  options: {
    intervalMs: number;
    maxReadings: number;
    /** Folds that wrote to a day before its parts are compacted (`COMPACT_AFTER_FOLDS`). */
    compactAfterFolds: number;
    /** How long parts replaced by a compaction are kept, in ms: longer than any query runs. */
    compactGraceMs: number;
    onFold?: (outcome: FoldOutcome, seconds: number) => void;
  },
): Job {
  return {
    name: 'fold',
    intervalMs: options.intervalMs,
    runAtStart: true,
    quiet: true,
    async run(signal) {
      const run = { folds: 0, readings: 0, parts: 0, compactions: 0, merged: 0, deleted: 0 };
      while (!signal.aborted) {
        const started = performance.now();
        const outcome = await foldOnce(store, store.holder, { maxReadings: options.maxReadings });
        if (outcome.fold === null) break;
        options.onFold?.(outcome, (performance.now() - started) / 1000);
        run.folds += 1;
        run.readings += outcome.readings;
        run.parts += outcome.parts + outcome.rollupParts;
        // A fold costs about the same few round trips however few readings it takes:
        // fold again at once only while folds come out (nearly) full, else let the next
        // run, an interval later, take what arrived meanwhile in one fold.
        if (outcome.readings < options.maxReadings / 2) break;
      }
      while (!signal.aborted) {
        const compacted = await compactOnce(store, store.holder, {
          afterFolds: options.compactAfterFolds,
          graceMs: options.compactGraceMs,
          pinned: true,
        });
        run.deleted += compacted.deleted;
        if (compacted.compaction === null) break;
        run.compactions += 1;
        run.merged += compacted.merged;
      }
      if (signal.aborted) await releaseLease(store, store.holder).catch(() => undefined);
      return {
        changed: run.folds + run.compactions + run.deleted > 0,
        message: run.folds > 0 ? 'Folded acknowledged readings' : 'Fold: nothing to fold',
        details: run,
      };
    },
  };
}
