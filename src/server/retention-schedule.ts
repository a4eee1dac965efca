import type { Logger } from '../logger.ts';
import { applyRetention } from '../storage/retention.ts';
import type { Store } from '../storage/store.ts';

/**
 * Runs a retention pass (`applyRetention` as of `Date.now()`) at start and then every
 * `everySeconds` (0: never), one pass at a time, logging one line per pass that removed
 * something: per metric and level, the new horizon and the documents changed or deleted.
 * Several server instances may run it on the same database: the passes remove the same
 * ranges, and every step is idempotent.
 * @param now the clock (ms since epoch, UTC); tests pass their own.
 * @returns a function that stops the schedule and waits for a pass under way.
 */
export function scheduleRetention(
  store: Store,
  logger: Logger,
  options: { everySeconds: number; now?: () => number },
): () => Promise<void> {
  if (options.everySeconds <= 0) return async () => undefined;
  const now = options.now ?? Date.now;
  let running: Promise<void> | undefined;
  const pass = async () => {
    try {
      const removed = await applyRetention(store, now());
      const line = { removed: removed.map((entry) => ({ ...entry, horizon: entry.horizon.toISOString() })) };
      if (removed.length > 0) logger.info(line, 'Retention pass removed expired data');
      else logger.debug(line, 'Retention pass: nothing due');
    } catch (error) {
      logger.warn({ err: error }, 'Retention pass failed; the next pass finishes it');
    }
  };
  const start = () => {
    if (running === undefined) running = pass().finally(() => (running = undefined));
  };
  const first = setTimeout(start, 0);
  first.unref();
  const timer = setInterval(start, options.everySeconds * 1000);
  timer.unref();
  return async () => {
    clearTimeout(first);
    clearInterval(timer);
    await running;
  };
}
