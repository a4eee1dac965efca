/**
 * The rollup maintenance pass as a background job: rollups still building are
 * backfilled and dirty days rebuilt on a schedule (config `ROLLUP_REBUILD_SECONDS`).
 */
import { rebuildDirtyDays } from '../storage/rollups.ts';
import type { Store } from '../storage/store.ts';
import type { Job } from './scheduler.ts';

/**
 * A job that runs a rollup maintenance pass (`rebuildDirtyDays`: backfill the rollups
 * still building, rebuild dirty days that rested `graceMs`) every `everySeconds` (0:
 * never), the first after one interval. Its log line carries the days `rebuilt` and the
 * days still `dirty`; at info when there were any, at debug when not. Several server
 * instances may run it on the same database: a lease per day keeps them from
 * rebuilding the same day at once.
 */
export function rollupRebuildJob(store: Store, options: { everySeconds: number; graceMs: number }): Job {
  return {
    name: 'rollup-rebuild',
    intervalMs: options.everySeconds * 1000,
    async run(signal) {
      const outcome = await rebuildDirtyDays(store, options.graceMs, { signal });
      const changed = outcome.rebuilt > 0 || outcome.dirty > 0;
      return { changed, message: changed ? 'Rollup days rebuilt from the series' : 'Rollup pass: nothing due', details: outcome };
    },
  };
}
