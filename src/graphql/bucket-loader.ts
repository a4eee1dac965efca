import DataLoader from 'dataloader';
import type { Document } from 'mongodb';
import type { RequestBudget } from '../query/budget.ts';
import type { BucketRow } from '../query/buckets-pipeline.ts';
import type { QueryOptions } from '../storage/query-options.ts';
import { aggregateBuckets } from '../storage/read.ts';
import type { Store } from '../storage/store.ts';
import type { Planning } from './planning.ts';

/**
 * One field's share of a bucket or aggregate query. Requests of one GraphQL request
 * with the same `key` (everything that shapes the pipeline except the field and the
 * series) are answered by one pipeline over all their fields and series: aliases asking
 * for several fields, and `Series.buckets` on every series of a list, cost one pipeline.
 */
export interface BucketRequest {
  /** Identifies the pipeline shape, e.g. JSON of [kind, metric, filters, range, granularity]. */
  key: string;
  field: string;
  /** The series for `Series.buckets` and `Series.aggregate`; the batch then groups by series. */
  series?: string;
  /** Builds the pipeline for the fields (in this order) and series of the batch. */
  pipeline: (fields: string[], series: string[]) => Document[];
}

/** The rows answering a request (only its series' rows for a series request) and the position of its field. */
export interface BucketAnswer {
  rows: BucketRow[];
  index: number;
}

/** What the bucket loader of one request works with. */
export interface BucketLoaderScope {
  store: Store;
  /** The request's budget: once it has refused the request, no pipeline runs. */
  budget: RequestBudget;
  /** The request's registry look-ups: pipelines run once none is pending. */
  planning: Planning;
  /** Time limit and abort signal of the pipelines. */
  query: QueryOptions;
}

/**
 * Builds the request-scoped loader that batches {@link BucketRequest}s into pipelines.
 * A batch is dispatched only when the request has no registry look-up pending (see
 * `planning.ts`), so every field has reserved its share of the budget by then; when
 * the budget has refused the request, every request of the batch fails with that
 * refusal and no pipeline runs.
 */
export function createBucketLoader(scope: BucketLoaderScope): DataLoader<BucketRequest, BucketAnswer, string> {
  return new DataLoader<BucketRequest, BucketAnswer, string>(
    async (requests) => {
      const refusal = scope.budget.refusal;
      if (refusal) return requests.map(() => refusal);
      const batches = new Map<string, BucketRequest[]>();
      for (const request of requests) {
        const batch = batches.get(request.key);
        if (batch) batch.push(request);
        else batches.set(request.key, [request]);
      }
      const answers = new Map<BucketRequest, BucketAnswer>();
      await Promise.all(
        [...batches.values()].map(async (batch) => {
          const fields = [...new Set(batch.map((request) => request.field))];
          const series = [...new Set(batch.flatMap((request) => (request.series === undefined ? [] : [request.series])))];
          const rows = await aggregateBuckets(scope.store, batch[0]!.pipeline(fields, series), scope.query);
          const bySeries = new Map<string, BucketRow[]>();
          if (series.length > 0) {
            for (const row of rows) {
              const id = row._id?.g as string;
              const list = bySeries.get(id);
              if (list) list.push(row);
              else bySeries.set(id, [row]);
            }
          }
          for (const request of batch) {
            answers.set(request, {
              rows: request.series === undefined ? rows : (bySeries.get(request.series) ?? []),
              index: fields.indexOf(request.field),
            });
          }
        }),
      );
      return requests.map((request) => answers.get(request)!);
    },
    {
      cacheKeyFn: (request) => `${request.key}\u0000${request.field}\u0000${request.series ?? ''}`,
      batchScheduleFn: (dispatch) => void scope.planning.idle().then(dispatch),
    },
  );
}
