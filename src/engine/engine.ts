import DataLoader from 'dataloader';
import { notACounter, type MetricKind } from '../model/counter.ts';
import { isEarlier, summarize, type TimedValue } from '../model/stats.ts';
import { tagList, type Tag } from '../model/series.ts';
import { formatCount, RequestBudget, type QueryLimits } from '../query/budget.ts';
import { rowStats, seriesGroupsPipeline } from '../query/buckets-pipeline.ts';
import { bucketsPerGroup, filterValueCount, SKETCH_BUCKET_WEIGHT } from '../query/cost.ts';
import { registryFilter } from '../query/registry.ts';
import { fillBuckets, type BucketSpan } from '../query/fill.ts';
import { listBuckets, type GranularityName } from '../query/granularity.ts';
import { compareWithPrevious, shiftedRange, type Comparison } from '../query/offset.ts';
import { sortByRank } from '../query/ranking.ts';
import {
  bucketList,
  compareTags,
  shapeAggregates,
  shapeBucketGroups,
  statsByStart,
  type AggregateResult,
  type Bucket,
} from '../query/shape.ts';
import { transformBuckets, type TransformedBucket } from '../query/transforms.ts';
import type { TagFilter } from '../query/spec.ts';
import type { QueryOptions } from '../storage/query-options.ts';
import type { MetricDocument, SeriesDocument, Store } from '../storage/store.ts';
import { createLoader, type LoadAnswer, type LoadRequest, type PipelineObserver, type ReadRecord } from './loader.ts';
import { Planning } from './planning.ts';
import type { RangeQuery } from './query.ts';
import { countSeries, countSeriesGroups, findMetric, findSeries, findSeriesByIds, listMetrics, tagValues } from '../storage/registry.ts';
import {
  latestReadings,
  metricReadingTime,
  seriesReadingTimes,
  type Edge,
  type LatestReading,
  type LatestValue,
  latestValuesOf,
} from '../storage/latest.ts';

/** A bucket as a chart gets it: its statistics, whether fill made it up, the chosen `value`, and the comparison with the earlier period (nulls without one). */
export type ChartBucket = TransformedBucket & Comparison;

/** The chart-ready buckets of one group. */
export interface ChartGroup {
  tags: Tag[];
  /** The granularity of the buckets: the one asked for, or the one picked for `maxDataPoints`. */
  granularity: GranularityName;
  buckets: ChartBucket[];
}

/** The spans and transformed buckets of the earlier period of a comparison, for one group. */
interface Earlier {
  spans: BucketSpan[];
  buckets: TransformedBucket[];
}

/** A group's identity for matching the groups of two periods. */
const tagsKey = (tags: readonly Tag[]) => JSON.stringify(tags.map((tag) => [tag.key, tag.value]));

/** Every bucket of a query's range in its zone, in time order, with its real end, whether the range cuts it, and its local start. */
function bucketSpans(query: RangeQuery): BucketSpan[] {
  return listBuckets(query.from, query.to, query.granularity!.cut, query.timeZone).map((span) => ({
    start: new Date(span.start),
    end: new Date(span.end),
    partial: span.partial,
    localStart: span.localStart,
  }));
}

/** How a refusal explains the weight of percentile buckets (see `SKETCH_BUCKET_WEIGHT`); empty without percentiles. */
const weighing = (query: RangeQuery) => (query.wants.sketch ? ` (with percentiles, each bucket counts ${SKETCH_BUCKET_WEIGHT})` : '');

const NO_COMPARISON: Comparison = { previous: null, previousStart: null, change: null, relativeChange: null };

/**
 * The chart chain of one group's buckets (those with readings, in time order): fill
 * over every span of the range, the transform of the chosen statistic into `value`,
 * and the comparison with the earlier period's buckets when there is one.
 */
function chart(buckets: readonly Bucket[], spans: readonly BucketSpan[], query: RangeQuery, previous?: Earlier): ChartBucket[] {
  const transformed = transformBuckets(fillBuckets(spans, buckets, query.fill), {
    statistic: query.statistic,
    transform: query.transform,
    range: query,
  });
  if (query.compareWith === null) return transformed.map((bucket) => Object.assign(bucket, NO_COMPARISON));
  return compareWithPrevious({ spans, buckets: transformed }, previous ?? { spans: [], buckets: [] });
}

/**
 * The query engine of one request: it owns the request's budget (buckets, listed
 * series, tag-filter values), its planning (the registry look-ups its pipelines wait
 * for) and its loader (one pipeline per batch key), and answers the query values of
 * `query.ts`. Resolvers only parse their arguments and call one method. Every read
 * carries the request's time limit and abort signal.
 */
export class QueryEngine {
  readonly budget: RequestBudget;
  readonly planning = new Planning();
  /** Where the request's pipelines read (series-day documents or which rollup), in the order they ran. */
  readonly reads: ReadRecord[] = [];
  private readonly loader: DataLoader<LoadRequest, LoadAnswer, string>;
  /**
   * The latest values the request's `latestValues` fields ask for, looked up together
   * (`latestValuesOf`: one view, one read of the tail, for a series still reporting one
   * read of its newest day for all its fields), so ten aliases over a hundred hosts cost
   * about a hundred reads, not two thousand.
   */
  private readonly latest: DataLoader<{ id: string; field: string; metric?: string }, LatestValue, string>;
  /** The kind of each metric a counter query of this request asked about (null: no such metric), looked up once. */
  private readonly kinds = new Map<string, Promise<MetricKind | null>>();

  /**
   * @param limits the request's limits (`MAX_BUCKETS`, `MAX_SERIES`, `MAX_FILTER_VALUES`).
   * @param options time limit (`QUERY_TIMEOUT_MS`) and the request's abort signal, for every read.
   * @param observePipeline told the time of every bucket and sketch pipeline (the server's metrics).
   */
  constructor(
    private readonly store: Store,
    limits: QueryLimits,
    private readonly options: QueryOptions,
    observePipeline?: PipelineObserver,
  ) {
    this.budget = new RequestBudget(limits);
    this.loader = createLoader({
      store,
      budget: this.budget,
      planning: this.planning,
      options,
      reads: this.reads,
      observe: observePipeline,
    });
    // Dispatched once every registry look-up of the request settled (as the bucket loader),
    // so the series of every alias are asked together.
    this.latest = new DataLoader((keys) => latestValuesOf(store, keys, options), {
      cacheKeyFn: (key) => `${key.id}\u0000${key.field}`,
      batchScheduleFn: (dispatch) => void this.planning.idle().then(dispatch),
    });
  }

  /**
   * The bucket lists of a `buckets` query, one per group with readings, sorted by tag
   * values; an empty list when nothing matched.
   * @throws InputError TOO_MANY_BUCKETS or TOO_MANY_FILTER_VALUES (nothing runs then);
   * NOT_A_COUNTER (see {@link reserveCounter}); DETAIL_EXPIRED (see `loader.ts`);
   * ServiceError QUERY_TIMEOUT.
   */
  async buckets(query: RangeQuery): Promise<ChartGroup[]> {
    if (query.wants.counter && !(await this.reserveCounter(query))) return [];
    if ((await this.reserve(query)) === 0) return [];
    const earlier = query.compareWith === null ? undefined : this.earlierGroups(query);
    const { rows, index } = await this.loader.load({ query });
    let groups = shapeBucketGroups(rows, { ...query, fill: 'NONE', cut: query.granularity!.cut, groupBy: query.groupBy }, index);
    if (query.ranking !== null) groups = sortByRank(groups, rows, query.ranking, query.groupBy);
    const previous = await earlier;
    const spans = bucketSpans(query);
    return groups.map((group) => ({
      tags: group.tags,
      granularity: query.granularity!.name,
      buckets: chart(group.buckets, spans, query, previous?.get(tagsKey(group.tags))),
    }));
  }

  /**
   * The bucket lists of the earlier period a query compares with (the same query over
   * the range shifted back by `compareWith`, reserved from the budget like any query),
   * by group, with their spans and values, to align with the current period's.
   */
  private async earlierGroups(query: RangeQuery): Promise<Map<string, Earlier>> {
    const shifted = shiftedRange(query, query.compareWith!, query.timeZone);
    const earlier: RangeQuery = { ...query, ...shifted, compareWith: null, ranking: null };
    const byGroup = new Map<string, Earlier>();
    if ((earlier.wants.counter && !(await this.reserveCounter(earlier))) || (await this.reserve(earlier, false)) === 0) return byGroup;
    const { rows, index } = await this.loader.load({ query: earlier });
    const spans = bucketSpans(earlier);
    for (const group of shapeBucketGroups(
      rows,
      { ...earlier, fill: 'NONE', cut: earlier.granularity!.cut, groupBy: earlier.groupBy },
      index,
    )) {
      byGroup.set(tagsKey(group.tags), { spans, buckets: chart(group.buckets, spans, earlier) });
    }
    return byGroup;
  }

  /**
   * The results of an `aggregate` query, one per group with readings, sorted by tag values.
   * @throws InputError TOO_MANY_BUCKETS (a group counts 1), TOO_MANY_FILTER_VALUES, NOT_A_COUNTER or DETAIL_EXPIRED; ServiceError QUERY_TIMEOUT.
   */
  async aggregate(query: RangeQuery): Promise<AggregateResult[]> {
    if (query.wants.counter && !(await this.reserveCounter(query))) return [];
    if ((await this.reserve(query)) === 0) return [];
    const { rows, index } = await this.loader.load({ query });
    const results = shapeAggregates(rows, { ...query, groupBy: query.groupBy }, index);
    return query.ranking === null ? results : sortByRank(results, rows, query.ranking, query.groupBy);
  }

  /**
   * The buckets of one series (`Series.buckets`); asked for many series with the same
   * query value, they share one pipeline.
   * @throws InputError TOO_MANY_BUCKETS (counted per series), NOT_A_COUNTER, DETAIL_EXPIRED; ServiceError QUERY_TIMEOUT.
   */
  async seriesBuckets(series: SeriesDocument, query: RangeQuery): Promise<ChartBucket[]> {
    const perSeries = bucketsPerGroup(query) + this.counterBuckets(query);
    if (perSeries === 0) return [];
    if (query.wants.counter) await this.requireCounter(series.metric);
    this.budget.reserve(
      'buckets',
      perSeries * (query.compareWith === null ? 1 : 2),
      `this field: ${formatCount(perSeries)} buckets per series${weighing(query)}`,
    );
    let previous: Earlier | undefined;
    if (query.compareWith !== null) {
      const earlier: RangeQuery = { ...query, ...shiftedRange(query, query.compareWith, query.timeZone), compareWith: null };
      const spans = bucketSpans(earlier);
      const answer = await this.loader.load({ query: earlier, series: series._id, seriesMetric: series.metric });
      previous = {
        spans,
        buckets: chart(
          bucketList(statsByStart(answer.rows, answer.index), { ...earlier, fill: 'NONE', cut: earlier.granularity!.cut }),
          spans,
          earlier,
        ),
      };
    }
    const { rows, index } = await this.loader.load({ query, series: series._id, seriesMetric: series.metric });
    const buckets = bucketList(statsByStart(rows, index), { ...query, fill: 'NONE', cut: query.granularity!.cut });
    return chart(buckets, bucketSpans(query), query, previous);
  }

  /**
   * The statistics of one series over the range (`Series.aggregate`): count 0 and nulls
   * without readings; batched like {@link seriesBuckets}.
   * @throws InputError TOO_MANY_BUCKETS (1 per series, 10 with percentiles, 1 more for a counter's increase), NOT_A_COUNTER, DETAIL_EXPIRED; ServiceError QUERY_TIMEOUT.
   */
  async seriesAggregate(series: SeriesDocument, query: RangeQuery): Promise<AggregateResult> {
    const span = { tags: tagList(series.tags), from: new Date(query.from), to: new Date(query.to) };
    if (query.from >= query.to) return { ...span, ...summarize(null) };
    if (query.wants.counter) await this.requireCounter(series.metric);
    this.budget.reserve('buckets', bucketsPerGroup(query) + this.counterBuckets(query), 'this field: an aggregate per series');
    const { rows, index } = await this.loader.load({ query, series: series._id, seriesMetric: series.metric });
    return { ...span, ...summarize(rows[0] ? rowStats(rows[0], index) : null, (query.to - query.from) / 1000) };
  }

  /**
   * The series of `metric` matching `where`, sorted by key, at most `limit`; they are
   * reserved from the request's series budget. The look-up counts as planning: the
   * request's pipelines wait for it, so the `buckets` of the series it lists reserve
   * theirs first.
   * @throws InputError TOO_MANY_SERIES (a `limit` above MAX_SERIES, or more series than
   * the request has left), TOO_MANY_FILTER_VALUES; ServiceError QUERY_TIMEOUT.
   */
  async listSeries(metric: string, where: readonly TagFilter[], limit: number): Promise<SeriesDocument[]> {
    this.reserveFilterValues(where);
    if (limit > this.budget.limits.maxSeries) this.budget.refuse('series', limit, `limit: ${formatCount(limit)}`);
    const take = Math.min(limit, this.budget.remaining('series') + 1);
    const found = await this.planning.track(findSeries(this.store, registryFilter(metric, where), take, this.options));
    this.budget.reserve(
      'series',
      found.length,
      `this list: ${formatCount(found.length)}${found.length === take && take < limit ? ' or more' : ''}`,
    );
    return found;
  }

  /** One series by its id (the hash of its key), or null; counts as one listed series. @throws InputError TOO_MANY_SERIES. */
  async seriesById(id: string): Promise<SeriesDocument | null> {
    this.budget.reserve('series', 1, 'seriesById');
    return (await this.planning.track(findSeriesByIds(this.store, [id], this.options)))[0] ?? null;
  }

  /** Every metric, sorted by name. */
  metrics(): Promise<MetricDocument[]> {
    return this.planning.track(listMetrics(this.store, this.options));
  }

  /** One metric by name, or null. */
  metric(name: string): Promise<MetricDocument | null> {
    return this.planning.track(findMetric(this.store, name, this.options));
  }

  /** Number of series of `metric`. */
  seriesCount(metric: string): Promise<number> {
    return countSeries(this.store, registryFilter(metric, []), this.options);
  }

  /** The values of tag `key` among the series of `metric` matching `where`, sorted. @throws InputError TOO_MANY_FILTER_VALUES. */
  tagValues(metric: string, key: string, where: readonly TagFilter[]): Promise<string[]> {
    this.reserveFilterValues(where);
    return tagValues(this.store, key, registryFilter(metric, where), this.options);
  }

  /** Exact time of the earliest or latest reading of `metric`, folded or not (null without readings). */
  metricReadingTime(metric: string, edge: Edge): Promise<Date | null> {
    return metricReadingTime(this.store, metric, edge, this.options);
  }

  /** Exact time of the earliest or latest reading of each series of `ids`, in that order (null without readings). */
  readingTimes(ids: readonly string[], edge: Edge): Promise<(Date | null)[]> {
    return seriesReadingTimes(this.store, ids, edge, this.options);
  }

  /**
   * The latest reading of the field of each `{id, field, metric?}` (a series, a field and
   * the series' metric, which lets a series still reporting be read once), in that
   * order; null where unknown (see `latestValuesOf` in `storage/latest.ts`). Asked through
   * the request's `latest` loader, so `Series.latestValue` and `Query.latestValues` of one
   * request share one view and one tail read.
   * @throws ServiceError QUERY_TIMEOUT when a look-up runs longer than the request's time limit.
   */
  async latestValues(keys: readonly { id: string; field: string; metric?: string }[]): Promise<LatestValue[]> {
    return Promise.all(keys.map((key) => this.latest.load(key)));
  }

  /**
   * The latest reading of `field` per group of the series of `metric` matching `where`,
   * grouped by the values of `groupBy` (one group without it), sorted by tag values: the
   * latest of its series' latest readings (each from the series' newest document
   * holding the field, see `latestValuesOf` in `storage/latest.ts`). A group is left out
   * when none of its series has a reading of the field; its value is null when one of
   * them has only documents written before latest values were kept. The series are
   * listed from the registry and count against the request's MAX_SERIES.
   * @throws InputError TOO_MANY_SERIES, TOO_MANY_FILTER_VALUES; ServiceError QUERY_TIMEOUT.
   */
  async latestByGroup(
    metric: string,
    field: string,
    where: readonly TagFilter[],
    groupBy: readonly string[],
  ): Promise<{ tags: Tag[]; latest: TimedValue | null }[]> {
    const series = await this.listSeries(metric, where, this.budget.remaining('series'));
    const values = await Promise.all(series.map((entry) => this.latest.load({ id: entry._id, field, metric })));
    const groups = new Map<string, { tags: Tag[]; latest: TimedValue | null }>();
    series.forEach((entry, i) => {
      const value = values[i];
      if (value === undefined) return;
      const tags = groupBy.flatMap((key) => (entry.tags[key] === undefined ? [] : [{ key, value: entry.tags[key]! }]));
      const id = tagsKey(tags);
      const group = groups.get(id);
      if (group === undefined) groups.set(id, { tags, latest: value });
      else if (group.latest !== null) group.latest = value === null || isEarlier(group.latest, value) ? value : group.latest;
    });
    return [...groups.values()].sort((a, b) => compareTags(a.tags, b.tags));
  }

  /** The latest `n` readings of series `id`, newest first (see `latestReadings` in `storage/latest.ts`). */
  latestReadings(id: string, n: number): Promise<LatestReading[]> {
    return latestReadings(this.store, id, n, this.options);
  }

  /**
   * Checks that `metric` is a counter, looking its kind up once per request (a registry
   * read the request's pipelines wait for).
   * @returns false when there is no such metric (the query has nothing to answer).
   * @throws InputError NOT_A_COUNTER when the metric is not declared a counter.
   */
  private async requireCounter(metric: string): Promise<boolean> {
    let kind = this.kinds.get(metric);
    if (kind === undefined) {
      kind = this.planning
        .track(findMetric(this.store, metric, this.options))
        .then((entry) => (entry === null ? null : (entry.kind ?? 'gauge')));
      this.kinds.set(metric, kind);
    }
    const found = await kind;
    if (found === null) return false;
    if (found !== 'counter') throw notACounter(metric);
    return true;
  }

  /**
   * The buckets a counter's increase adds per series: the counter pipeline returns one
   * row per series and bucket (the increase is per series, see `query/counters.ts`),
   * so each counts one bucket more, without the weight of percentiles; 0 when the query
   * asks for no increase or rate.
   */
  private counterBuckets(query: RangeQuery): number {
    return query.wants.counter ? bucketsPerGroup({ ...query, wants: { sketch: false } }) : 0;
  }

  /**
   * For a query over a metric that asks for `increase` or `rate`: checks that the metric
   * is a counter ({@link requireCounter}), counts the series it reads in the registry and
   * reserves {@link counterBuckets} for each, beside what {@link reserve} reserves for the
   * groups. True for any other query.
   * @returns false when the metric does not exist.
   * @throws InputError NOT_A_COUNTER, TOO_MANY_BUCKETS; ServiceError QUERY_TIMEOUT.
   */
  private async reserveCounter(query: RangeQuery): Promise<boolean> {
    if (!query.wants.counter || query.metric === null) return true;
    const perSeries = this.counterBuckets(query);
    const counted = this.planning.track(countSeries(this.store, registryFilter(query.metric, query.where), this.options));
    if (!(await this.requireCounter(query.metric))) return false;
    const series = await counted;
    this.budget.reserve(
      'buckets',
      series * perSeries,
      `this field's increase: ${formatCount(series)} series x ${query.granularity === null ? 'an aggregate' : `${formatCount(perSeries)} buckets`}`,
    );
    return true;
  }

  /** Reserves the values of `where` from the request's filter-value budget. @throws InputError TOO_MANY_FILTER_VALUES. */
  private reserveFilterValues(where: readonly TagFilter[]): void {
    const count = filterValueCount(where);
    if (count > 0) this.budget.reserve('filterValues', count, `this field: ${formatCount(count)}`);
  }

  /**
   * Reserves the most buckets a query over a metric's series can return: buckets per
   * group x groups (an aggregate counts 1 per group). A grouped query first checks that
   * one group fits, then counts its groups in the series registry (a look-up the
   * request's pipelines wait for); the reservation is that upper bound whatever the fill.
   * @param countFilterValues false for a second query of the same field (the earlier period of a comparison).
   * @returns the number of groups reserved for; 0 when the query cannot return anything.
   */
  private async reserve(query: RangeQuery, countFilterValues = true): Promise<number> {
    if (countFilterValues) this.reserveFilterValues(query.where);
    const perGroup = bucketsPerGroup(query);
    if (perGroup === 0) return 0;
    const unit = `${query.granularity === null ? 'aggregate' : `${formatCount(perGroup)} buckets`}${weighing(query)}`;
    if (query.groupBy.length === 0) {
      this.budget.reserve('buckets', perGroup, `this field: ${unit}`);
      return 1;
    }
    this.budget.check('buckets', perGroup, `this field: ${unit} per group`);
    const pipeline = seriesGroupsPipeline(query.metric!, query.where, query.groupBy);
    const groups = await this.planning.track(countSeriesGroups(this.store, pipeline, this.options));
    this.budget.reserve('buckets', groups * perGroup, `this field: ${formatCount(groups)} groups x ${unit}`);
    return groups;
  }
}
