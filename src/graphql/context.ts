import type DataLoader from 'dataloader';
import type { Logger } from '../logger.ts';
import type { Access } from '../auth/access.ts';
import type { RequestBudget } from '../query/budget.ts';
import type { QueryOptions } from '../storage/query-options.ts';
import type { Store } from '../storage/store.ts';
import type { BucketAnswer, BucketRequest } from './bucket-loader.ts';
import type { Planning } from './planning.ts';

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
  /** Batches bucket and aggregate pipelines of this request (see `bucket-loader.ts`); new for every request. */
  bucketLoader: DataLoader<BucketRequest, BucketAnswer, string>;
  /** What the request's API token allows (every scope when `AUTH=off`); checked by the fields' `authScopes`. */
  access: Access;
  /**
   * What this request may still spend (buckets, listed series, tag-filter values; see
   * `query/budget.ts`): every field reserves its share before it reads anything.
   */
  budget: RequestBudget;
  /** This request's registry look-ups that decide its pipelines; pipelines wait for them (see `planning.ts`). */
  planning: Planning;
  /** Time limit (`QUERY_TIMEOUT_MS`) and abort signal (the client went away) of every database read of this request. */
  query: QueryOptions;
}
