import type { Logger } from '../logger.ts';
import type { Access } from '../auth/access.ts';
import type { QueryEngine } from '../engine/engine.ts';
import type { LiveEvents } from '../events/live-events.ts';
import type { Store } from '../storage/store.ts';

/** Request context handed to every resolver. */
export interface Context {
  store: Store;
  /** The process logger (pino). */
  logger: Logger;
  limits: {
    /** Largest accepted `recordReadings` batch (config `MAX_BATCH_SIZE`). */
    maxBatchSize: number;
    /** Largest number of buckets one query may return (config `MAX_BUCKETS`). */
    maxBuckets: number;
  };
  /**
   * Runs a write so a graceful shutdown can wait for it; the server passes its
   * in-flight tracker, tests may pass `(work) => work`.
   */
  trackWrite: <T>(work: Promise<T>) => Promise<T>;
  /**
   * The query engine of this request (new for every request): it answers every query,
   * holds the request's budget and batches its pipelines (see `engine/engine.ts`).
   */
  engine: QueryEngine;
  /** What the request's API token allows (every scope when `AUTH=off`); checked by the fields' `authScopes`. */
  access: Access;
  /** Live subscriptions and the record paths that feed them (see `events/live-events.ts`). */
  live: {
    /** The server's feed of new readings, keyed by metric; record resolvers report acknowledged writes to it. */
    events: LiveEvents;
    /** Shortest time between two pushes of one subscription, in ms (config `LIVE_MIN_INTERVAL_MS`). */
    minIntervalMs: number;
    /**
     * A new query engine with the request's limits, time limit and abort signal, and a
     * budget of its own: each push after a subscription's first runs its query on one
     * (the first uses `engine`).
     */
    newEngine(): QueryEngine;
  };
}
