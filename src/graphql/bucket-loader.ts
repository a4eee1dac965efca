import DataLoader from 'dataloader';
import type { Document } from 'mongodb';
import type { BucketRow } from '../query/buckets-pipeline.ts';
import { tooManyBuckets } from '../query/spec.ts';
import { aggregateBuckets } from '../storage/read.ts';
import type { Store } from '../storage/store.ts';

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
  /** Buckets each series' answer may hold, checked against `maxBuckets` over the whole batch. */
  bucketsPerSeries?: number;
}

/** The rows answering a request (only its series' rows for a series request) and the position of its field. */
export interface BucketAnswer {
  rows: BucketRow[];
  index: number;
}

/** Builds the request-scoped loader that batches {@link BucketRequest}s into pipelines. */
export function createBucketLoader(store: Store, maxBuckets: number): DataLoader<BucketRequest, BucketAnswer, string> {
  return new DataLoader<BucketRequest, BucketAnswer, string>(
    async (requests) => {
      const batches = new Map<string, BucketRequest[]>();
      for (const request of requests) {
        const batch = batches.get(request.key);
        if (batch) batch.push(request);
        else batches.set(request.key, [request]);
      }
      const answers = new Map<BucketRequest, BucketAnswer | Error>();
      await Promise.all(
        [...batches.values()].map(async (batch) => {
          const fields = [...new Set(batch.map((request) => request.field))];
          const series = [...new Set(batch.flatMap((request) => (request.series === undefined ? [] : [request.series])))];
          const perSeries = batch[0]!.bucketsPerSeries;
          if (perSeries !== undefined && perSeries * series.length > maxBuckets) {
            const error = tooManyBuckets(perSeries * series.length, maxBuckets);
            for (const request of batch) answers.set(request, error);
            return;
          }
          const rows = await aggregateBuckets(store, batch[0]!.pipeline(fields, series));
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
    { cacheKeyFn: (request) => `${request.key}\u0000${request.field}\u0000${request.series ?? ''}` },
  );
}
