/**
 * The rollup maintenance pass as a background job: the automatic rollups defined, the
 * rollups still building backfilled and dirty days rebuilt on a schedule (config
 * `ROLLUP_REBUILD_SECONDS`, `AUTO_ROLLUPS`).
 */
import type { RollupPolicy } from '../model/rollup-policy.ts';
import { defineAutomaticRollups } from '../storage/auto-rollups.ts';
import { rebuildDirtyDays } from '../storage/rollups.ts';
import type { Store } from '../storage/store.ts';
import type { Job } from './scheduler.ts';

/**
 * A job that runs a rollup maintenance pass every `everySeconds` (0: never), the first
 * after one interval: the automatic rollups `policy` proposes defined
 * (`defineAutomaticRollups`; none when it is off), then `rebuildDirtyDays` (backfill the
 * rollups still building, rebuild dirty days that rested `graceMs`). Its log line carries
 * the rollups `defined`, the days `rebuilt` and the days still `dirty`; at info when
 * there were any, at debug when not. Several server instances may run it on the same
 * database: a second definition of the same rollup is refused, and a lease per day keeps
 * them from rebuilding the same day at once.
 */
export function rollupRebuildJob(store: Store, options: { everySeconds: number; graceMs: number; policy: Readonly<RollupPolicy> }): Job {
  return {
    name: 'rollup-rebuild',
    intervalMs: options.everySeconds * 1000,
    async run(signal) {
      const defined = await defineAutomaticRollups(store, options.policy, { signal });
      const outcome = await rebuildDirtyDays(store, options.graceMs, { signal });
      const changed = defined.length > 0 || outcome.rebuilt > 0 || outcome.dirty > 0;
      return {
        changed,
        message: changed ? 'Rollups defined and rollup days rebuilt from the series' : 'Rollup pass: nothing due',
        details: { defined: defined.map((rollup) => `${rollup.metric}/${rollup.name}`), ...outcome },
      };
    },
  };
}
