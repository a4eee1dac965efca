import DataLoader from 'dataloader';
import type { Document } from 'mongodb';
import { aggregateRankingStages, bucketRankingStages } from '../query/ranking.ts';
import type { RequestBudget } from '../query/budget.ts';
import { bucketsPipeline, type BucketQuery, type BucketRow } from '../query/buckets-pipeline.ts';
import type { QueryOptions } from '../storage/query-options.ts';
import { aggregateBuckets } from '../storage/read.ts';
import type { Store } from '../storage/store.ts';
import type { Planning } from './planning.ts';
import { canonicalJson, type RangeQuery } from './query.ts';

/**
 * One field's share of a query: the query value, and for a series query the series it
 * is about. Requests of one GraphQL request with the same {@link batchKey} are answered
 * by one pipeline over all their fields and series: aliases asking for several fields,
 * and `Series.buckets` on every series of a list, cost one pipeline.
 */
export interface LoadRequest {
  query: RangeQuery;
  /** The series id for a query on given series (`query.metric` is null then). */
  series?: string;
}

/** The rows answering a request (only its series' rows for a series request) and the position of its field in them. */
export interface LoadAnswer {
  rows: BucketRow[];
  index: number;
}

/** What the loader of one request works with. */
export interface LoaderScope {
  store: Store;
  /** The request's budget: once it has refused the request, no pipeline runs. */
  budget: RequestBudget;
  /** The request's registry look-ups: pipelines run once none is pending. */
  planning: Planning;
  /** Time limit and abort signal of the pipelines. */
  options: QueryOptions;
}

/** The pipeline query of a batch: the shared query value over `fields`, and the series of a series batch. */
function pipelineQuery(query: RangeQuery, fields: string[], series: string[]): BucketQuery {
  const scope = query.metric === null ? { series } : { metric: query.metric, where: query.where };
  const grouping =
    query.metric === null
      ? ({ by: 'series' } as const)
      : query.groupBy.length > 0
        ? ({ by: 'tags', keys: query.groupBy } as const)
        : ({ by: 'none' } as const);
  return { scope, fields, from: query.from, to: query.to, granularity: query.granularity, grouping, timeZone: query.timeZone };
}

/**
 * The key under which queries share one pipeline: the pipeline query of `query` without
 * its fields and series (scope, range, granularity, grouping), as canonical JSON. It is
 * derived from the very value the pipeline is built from, so two queries share a
 * pipeline exactly when their pipelines would be the same but for the fields and series
 * they read; what only shapes the answer (the fill) is applied per query afterwards.
 */
export function batchKey(query: RangeQuery): string {
  const { fields: _fields, granularity, ...rest } = pipelineQuery(query, [], []);
  // A ranked pipeline ranks by one field: it is a batch of its own.
  const ranked = query.ranking === null ? {} : { ranking: query.ranking, rankedField: query.field };
  return canonicalJson({ ...rest, ...ranked, granularity: granularity === null ? null : { name: granularity.name, cut: granularity.cut } });
}

/** The pipeline of a batch: the bucket pipeline over its fields and series, then the ranking stages of a ranked query (its one field at index 0). */
function batchPipeline(query: RangeQuery, fields: string[], series: string[]): Document[] {
  const pipeline = bucketsPipeline(pipelineQuery(query, fields, series));
  if (query.ranking === null) return pipeline;
  const grouping = pipelineQuery(query, fields, series).grouping;
  const stages =
    query.kind === 'aggregate' ? aggregateRankingStages(query.ranking, grouping, 0) : bucketRankingStages(query.ranking, grouping, 0);
  return [...pipeline, ...stages];
}

/**
 * Builds the request-scoped loader that batches {@link LoadRequest}s into pipelines
 * (one per {@link batchKey}). A batch is dispatched only when the request has no
 * registry look-up pending (see `planning.ts`), so every field has reserved its share of
 * the budget by then; when the budget has refused the request, every request of the
 * batch fails with that refusal and no pipeline runs.
 */
export function createLoader(scope: LoaderScope): DataLoader<LoadRequest, LoadAnswer, string> {
  return new DataLoader<LoadRequest, LoadAnswer, string>(
    async (requests) => {
      const refusal = scope.budget.refusal;
      if (refusal) return requests.map(() => refusal);
      const batches = new Map<string, LoadRequest[]>();
      for (const request of requests) {
        const key = batchKey(request.query);
        const batch = batches.get(key);
        if (batch) batch.push(request);
        else batches.set(key, [request]);
      }
      const answers = new Map<LoadRequest, LoadAnswer>();
      await Promise.all(
        [...batches.values()].map(async (batch) => {
          const fields = [...new Set(batch.map((request) => request.query.field))];
          const series = [...new Set(batch.flatMap((request) => (request.series === undefined ? [] : [request.series])))];
          const pipeline = batchPipeline(batch[0]!.query, fields, series);
          const rows = await aggregateBuckets<BucketRow>(scope.store, pipeline, scope.options);
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
              index: fields.indexOf(request.query.field),
            });
          }
        }),
      );
      return requests.map((request) => answers.get(request)!);
    },
    {
      cacheKeyFn: (request) =>
        `${canonicalJson({ ...request.query, granularity: request.query.granularity?.name ?? null })}\u0000${request.series ?? ''}`,
      batchScheduleFn: (dispatch) => void scope.planning.idle().then(dispatch),
    },
  );
}
