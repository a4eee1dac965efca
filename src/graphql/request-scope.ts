import { RequestBudget, type QueryLimits } from '../query/budget.ts';
import type { QueryOptions } from '../storage/query-options.ts';
import type { Store } from '../storage/store.ts';
import { createBucketLoader } from './bucket-loader.ts';
import type { Context } from './context.ts';
import { Planning } from './planning.ts';

/** The parts of the GraphQL context that live for one request and enforce its limits. */
export type RequestScope = Pick<Context, 'budget' | 'planning' | 'query' | 'bucketLoader'>;

/**
 * A fresh budget, planning tracker and bucket loader for one request.
 * @param limits the request's limits (`MAX_BUCKETS`, `MAX_SERIES`, `MAX_FILTER_VALUES`).
 * @param query time limit (`QUERY_TIMEOUT_MS`) and the request's abort signal, for every read.
 */
export function createRequestScope(store: Store, limits: QueryLimits, query: QueryOptions): RequestScope {
  const budget = new RequestBudget(limits);
  const planning = new Planning();
  return { budget, planning, query, bucketLoader: createBucketLoader({ store, budget, planning, query }) };
}
