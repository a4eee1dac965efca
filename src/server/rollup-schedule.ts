import type { Logger } from '../logger.ts';
import { rebuildDirtyDays } from '../storage/rollups.ts';
import type { Store } from '../storage/store.ts';

/**
 * Runs a rollup maintenance pass (`rebuildDirtyDays`: backfill the rollups still
 * building, rebuild dirty days) every `everySeconds`, one pass at a time, logging what
 * each pass did. Several server instances may run it on the same database: a lease per
 * day keeps them from rebuilding the same day at once.
 * @returns a function that stops the schedule and waits for a pass under way.
 */
export function scheduleRollupRebuilds(
  store: Store,
  logger: Logger,
  options: { everySeconds: number; graceMs: number },
): () => Promise<void> {
  if (options.everySeconds <= 0) return async () => undefined;
  let running: Promise<void> | undefined;
  const pass = async () => {
    try {
      const outcome = await rebuildDirtyDays(store, options.graceMs);
      if (outcome.rebuilt > 0 || outcome.dirty > 0) logger.info(outcome, 'Rollup days rebuilt from the series');
    } catch (error) {
      logger.warn({ err: error }, 'Rollup rebuild pass failed; the next pass tries again');
    }
  };
  const timer = setInterval(() => {
    if (running === undefined) running = pass().finally(() => (running = undefined));
  }, options.everySeconds * 1000);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
