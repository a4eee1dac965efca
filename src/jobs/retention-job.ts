/**
 * The retention pass as a background job: what retention policies let go is removed
 * on a schedule (config `RETENTION_SECONDS`).
 */
import { applyRetention } from '../storage/expire.ts';
import type { Store } from '../storage/store.ts';
import type { Job } from './scheduler.ts';

/**
 * A job that runs a retention pass (`applyRetention` as of `now()`) at start and then
 * every `everySeconds` (0: never). Its log line names, per metric and level, the new
 * horizon (ISO 8601) and the documents changed or deleted (`removed`); at info when it
 * removed something, at debug when nothing was due. Several server instances may run
 * it on the same database: the passes remove the same ranges, and every step is
 * idempotent, so a pass stopped at shutdown is finished by the next.
 * @param options.now the clock, ms since the epoch (UTC); default `Date.now`; tests pass their own.
 */
export function retentionJob(store: Store, options: { everySeconds: number; now?: () => number }): Job {
  const now = options.now ?? Date.now;
  return {
    name: 'retention',
    intervalMs: options.everySeconds * 1000,
    runAtStart: true,
    async run(signal) {
      const removed = await applyRetention(store, now(), { signal });
      return {
        changed: removed.length > 0,
        message: removed.length > 0 ? 'Retention pass removed expired data' : 'Retention pass: nothing due',
        details: { removed: removed.map((entry) => ({ ...entry, horizon: entry.horizon.toISOString() })) },
      };
    },
  };
}
