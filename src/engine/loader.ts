import DataLoader from 'dataloader';
import { aggregateRankingStages, bucketRankingStages, rankRows } from '../query/ranking.ts';
import type { RequestBudget } from '../query/budget.ts';
import { detailExpired, firstExpiredRead, type LevelRead } from '../model/retention-policy.ts';
import { chooseRollup, type RollupDefinition } from '../model/rollup.ts';
import {
  bucketsPipeline,
  counterPipeline,
  levelsRead,
  querySegments,
  rowKey,
  sketchPipeline,
  type BucketQuery,
  type BucketRow,
  type CounterRow,
  type SketchRow,
} from '../query/buckets-pipeline.ts';
import { counterIncreases } from '../query/counters.ts';
import { type QueryOptions, limitedRead } from '../storage/query-options.ts';
import { mergeRows, summaryPlan, summaryRows, summarySketchRows } from '../query/summaries.ts';
import { planSettingsOf } from '../storage/registry.ts';
import { findRollups } from '../storage/rollups.ts';
import type { Store } from '../storage/store.ts';
import type { GranularityName } from '../query/granularity.ts';
import { planBucketSegments, planSegments } from '../query/segments.ts';
import { edgeSplit } from '../query/edges.ts';
import type { Planning } from './planning.ts';
import { canonicalJson, type RangeQuery } from './query.ts';
import type { PlanSettings } from '../documents/from-readings.ts';
import {
  aggregateBuckets,
  aggregateSummarized,
  selectedDocuments,
  withSharedView,
  type SharedView,
  type SummarizedRead,
} from '../storage/aggregate.ts';
import type { ReadSource, TailRead } from '../storage/tail.ts';
import { documentRows, rowsComputable, slotsRead } from '../query/document-rows.ts';
import type { DocumentPipeline } from '../documents/selection.ts';
import type { SketchLevel } from '../query/granularity.ts';
import { DAY_MS, HOUR_MS, QUARTER_MS } from '../model/time.ts';

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
  /** The metric of that series, whose retention the query must respect. */
  seriesMetric?: string;
}

/** The metric whose data a request reads: the query's, or that of its series. */
const metricOf = (request: LoadRequest): string | undefined => request.query.metric ?? request.seriesMetric;

/**
 * The stored levels a pipeline query reads, piece by piece: the segments of its range as
 * the pipeline builder plans them (cut at its buckets in its zone, or at whole days for
 * an aggregate; `query/segments.ts`).
 */
function levelReads(query: BucketQuery): LevelRead[] {
  return query.granularity === null
    ? planSegments(query.from, query.to, 'day')
    : planBucketSegments(query.from, query.to, query.granularity, query.timeZone);
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
  /** Where each pipeline of the request read from, appended as they run (see {@link ReadRecord}). */
  reads: ReadRecord[];
  /** Told how long each pipeline took (for the server's metrics); optional. */
  observe?: PipelineObserver;
}

/**
 * What a finished pipeline was: bucket rows, merged sketches or counter slots, its
 * granularity (null: an aggregate), the finest stored level it read, and whether it read
 * the series-day documents, a rollup's, or day summaries for some of its days (with the
 * documents of the others).
 */
export interface PipelineRun {
  kind: 'buckets' | 'sketches' | 'counters';
  granularity: GranularityName | null;
  level: SketchLevel;
  source: 'documents' | 'rollup' | 'summaries';
}

/** Called once per pipeline when it has answered or failed, with its wall-clock time in milliseconds. */
export type PipelineObserver = (run: PipelineRun, ms: number) => void;

/** The finest of the stored levels a pipeline query reads (`levels`, from `levelsRead`). */
function finestLevel(levels: ReadonlySet<SketchLevel>): SketchLevel {
  return levels.has('minute') ? 'minute' : levels.has('quarter') ? 'quarter' : levels.has('hour') ? 'hour' : 'day';
}

/**
 * How many documents a day `rollup` holds for `query` at most: the product, over its tag
 * keys, of the values the query's filter accepts for each (Infinity for a key it does
 * not filter: as many as the key has values); 1 for a rollup without tag keys.
 */
function rollupDocumentsPerDay(rollup: Pick<RollupDefinition, 'tagKeys'>, query: Pick<RangeQuery, 'where'>): number {
  return rollup.tagKeys.reduce((count, key) => count * (query.where.find((filter) => filter.key === key)?.in.length ?? Infinity), 1);
}

/**
 * Whether day summaries answer at least half the days of a summarized read's range (the
 * rest, its ragged edges, reads the series-day documents).
 */
function mostlySummarized(read: Pick<SummarizedRead, 'from' | 'to' | 'ranges'>): boolean {
  const summarized = read.ranges.reduce((days, range) => days + (range.to - range.from) / DAY_MS, 0);
  const days = Math.ceil((read.to - read.from) / DAY_MS);
  return summarized * 2 >= days;
}

/**
 * Runs `read` and tells `observe` (when set) how long it took, whether it answered or
 * failed. Observing never changes the answer: an error of `run` or `observe` is dropped.
 */
async function timed<T>(observe: PipelineObserver | undefined, run: () => PipelineRun, read: () => Promise<T>): Promise<T> {
  if (observe === undefined) return read();
  const started = performance.now();
  try {
    return await read();
  } finally {
    try {
      observe(run(), performance.now() - started);
    } catch {
      // Metrics only; the pipeline's answer or error stands.
    }
  }
}

/**
 * Where one pipeline read its documents: the series-day documents (`rollup` null) or a
 * rollup's. Sent to clients in the response's `extensions.reads`.
 */
export interface ReadRecord {
  /** The metric queried; null for a query on given series. */
  metric: string | null;
  /** The rollup's name, or null for the series-day documents. */
  rollup: string | null;
  /** The rollup's tag keys (empty for the series-day documents). */
  tagKeys: string[];
  /**
   * Days read from day summaries (docs/design.md, "Day summaries and day sketches") instead of the
   * series-day documents; absent when none was.
   */
  summaryDays?: number;
  /**
   * The log entries not folded yet that the read added (docs/ingest-design.md, "3. Real-time
   * reads"): entries read and their readings of the metric; set once the read ran.
   */
  tail?: { entries: number; readings: number };
  /**
   * The stretches at the range's edges (ISO 8601 instants, UTC, `[from, to)`) read from
   * the series-day documents beside the rollup, which answered the whole hours between
   * them (see `query/edges.ts`); absent when the rollup or the documents read it all.
   */
  edges?: { from: string; to: string }[];
  /**
   * How many documents (the tail's included) were fetched and merged by this server
   * instead of by a pipeline on the database (a short MINUTE chart of a few series; see
   * `mergedHere`); absent when a pipeline read them all.
   */
  fetched?: number;
}

/** A rollup that answers a pipeline query, and whether it reads the rollup's quarter hours (see {@link rollupFor}). */
export interface RollupChoice {
  rollup: RollupDefinition;
  /** The query reads quarter-hour slots (`BucketQuery.quarters`): its range or buckets cut hours at quarter hours. */
  quarters: boolean;
}

/**
 * The rollup that answers a pipeline query, or null for the series-day documents (see
 * `chooseRollup`): only queries on a metric (not on given series) with a ready rollup
 * keeping every tag key they filter on or group by and no dirty day in the range, and
 * whose range reads no minute slots (rollups keep days, hours and, those with
 * `quarters`, quarter hours): read from day and hour slots, or else, when the rollup
 * keeps quarter hours and the quarter hours cover what the minutes would (a bucket
 * boundary at 18:30 UTC, say: Kolkata's local midnight), from them too.
 * @param levels the stored levels the query reads without quarter hours (`levelsRead`).
 * @param quarterLevels the same with quarter hours (`levelsRead` of the query with `quarters`).
 */
export function rollupFor(
  query: BucketQuery,
  rollups: readonly RollupDefinition[],
  levels: ReadonlySet<SketchLevel> = levelsRead(query),
  quarterLevels: ReadonlySet<SketchLevel> = levelsRead({ ...query, quarters: true }),
): RollupChoice | null {
  if (!('metric' in query.scope) || rollups.length === 0) return null;
  const keys = {
    filterKeys: (query.scope.where ?? []).map((filter) => filter.key),
    groupKeys: query.grouping.by === 'tags' ? query.grouping.keys : [],
    from: query.from,
    to: query.to,
  };
  if (!levels.has('minute')) {
    const rollup = chooseRollup(rollups, keys);
    return rollup === null ? null : { rollup, quarters: false };
  }
  if (quarterLevels.has('minute')) return null;
  const rollup = chooseRollup(
    rollups.filter((definition) => definition.quarters === true),
    keys,
  );
  return rollup === null ? null : { rollup, quarters: true };
}

/**
 * A rollup that answers the whole UTC hours (or quarter hours) inside a pipeline query's
 * range, the edges around them (minutes, which rollups do not keep) read from the
 * series-day documents (see `edgeSplit`).
 */
export interface EdgeRead {
  /** The rollup answering the inner stretch, and whether it reads its quarter hours there. */
  choice: RollupChoice;
  /** The query of the inner hours, read from the rollup (with `quarters` when the rollup's quarter hours answer). */
  inner: BucketQuery;
  /** The queries of the edges, read from the series-day documents. */
  edges: BucketQuery[];
}

/**
 * The rollup that answers `query` but for the edges of its range (see {@link EdgeRead}),
 * or null: when `query` splits at whole quarter hours (`edgeSplit`) and a rollup keeping
 * quarter hours answers the inner ones, or at whole hours and any rollup answers them
 * ({@link rollupFor}). Meant for a query no rollup answers whole (`batchRollups` asks
 * {@link rollupFor} first): it does not check that itself.
 */
export function rollupWithEdges(query: BucketQuery, rollups: readonly RollupDefinition[]): EdgeRead | null {
  if (!('metric' in query.scope) || rollups.length === 0) return null;
  // A rollup keeping quarter hours answers the whole quarter hours inside the range,
  // leaving fewer minutes to the documents; any rollup, the whole hours.
  for (const [width, candidates] of [
    [QUARTER_MS, rollups.filter((rollup) => rollup.quarters === true)],
    [HOUR_MS, rollups],
  ] as const) {
    const split = candidates.length === 0 ? null : edgeSplit(query, width);
    const choice = split === null ? null : rollupFor(split.inner, candidates);
    if (split !== null && choice !== null) {
      return { choice, inner: choice.quarters ? { ...split.inner, quarters: true } : split.inner, edges: split.edges };
    }
  }
  return null;
}

/** The pipeline query of a batch: the shared query value over `fields`, and the series of a series batch; first and last readings when `firstLast`. */
function pipelineQuery(query: RangeQuery, fields: string[], series: string[], firstLast = false): BucketQuery {
  const scope = query.metric === null ? { series } : { metric: query.metric, where: query.where };
  const grouping =
    query.metric === null
      ? ({ by: 'series' } as const)
      : query.groupBy.length > 0
        ? ({ by: 'tags', keys: query.groupBy } as const)
        : ({ by: 'none' } as const);
  const bucketQuery: BucketQuery = {
    scope,
    fields,
    from: query.from,
    to: query.to,
    granularity: query.granularity,
    grouping,
    timeZone: query.timeZone,
  };
  if (firstLast) bucketQuery.firstLast = true;
  return bucketQuery;
}

/**
 * The key under which queries share one pipeline: the pipeline query of `query` without
 * its fields and series (scope, range, granularity, grouping), as canonical JSON. It is
 * derived from the very value the pipeline is built from, so two queries share a
 * pipeline exactly when their pipelines would be the same but for the fields and series
 * they read; what only shapes the answer (the fill) is applied per query afterwards.
 * The optional statistics (`wants`) are not part of it: a batch reads those any of its
 * queries wants.
 */
export function batchKey(query: RangeQuery): string {
  const { fields: _fields, granularity, ...rest } = pipelineQuery(query, [], []);
  // A ranked pipeline ranks by one field: it is a batch of its own.
  const ranked = query.ranking === null ? {} : { ranking: query.ranking, rankedField: query.field };
  return canonicalJson({ ...rest, ...ranked, granularity: granularity === null ? null : { name: granularity.name, cut: granularity.cut } });
}

/**
 * The pipeline of a batch: the bucket pipeline of `bucketQuery` (its `pipelineQuery` over
 * its fields and series, with first and last readings when asked and quarter hours when
 * a rollup's are read), then the ranking stages of a ranked query (its one field at index 0).
 */
function batchPipeline(query: RangeQuery, bucketQuery: BucketQuery): DocumentPipeline {
  const pipeline = bucketsPipeline(bucketQuery);
  if (query.ranking === null) return pipeline;
  const stages =
    query.kind === 'aggregate'
      ? aggregateRankingStages(query.ranking, bucketQuery.grouping, 0)
      : bucketRankingStages(query.ranking, bucketQuery.grouping, 0);
  return { ...pipeline, stages: [...pipeline.stages, ...stages] };
}

/**
 * The read of a batch whose whole days day summaries may answer (`summaryPlan`): a
 * query on a metric (a ranking is then applied in memory, `rankRows`), with the sketch
 * pipeline beside its bucket pipeline when `sketch` (a request asks for percentiles);
 * null for any other.
 */
function summarizedRead(
  query: RangeQuery,
  bucketQuery: BucketQuery,
  sketch: boolean,
): (SummarizedRead & { bucketQuery: BucketQuery }) | null {
  if (query.metric === null) return null;
  const plan = summaryPlan(bucketQuery);
  if (plan === null) return null;
  const of = (days: { from: number; to: number } | null) => (days === null ? bucketQuery : { ...bucketQuery, dateRange: days });
  return {
    metric: query.metric,
    from: query.from,
    to: query.to,
    key: plan.key,
    ranges: plan.ranges,
    documents: (days) => bucketsPipeline(of(days)),
    ...(sketch ? { sketches: (days: { from: number; to: number } | null) => sketchPipeline(of(days)) } : {}),
    bucketQuery,
  };
}

/**
 * Puts the merged sketch of each bucket, group and field (the rows of `sketchPipeline`)
 * into the bucket row it belongs to, as `q0`, `q1`, … (bin key -> count; see `rowStats`).
 * Sketch rows of a bucket the bucket rows do not list (a group a ranking left out) are dropped.
 */
function attachSketches(rows: BucketRow[], sketchRows: readonly SketchRow[]): void {
  const byKey = new Map(rows.map((row) => [rowKey(row._id), row]));
  for (const { _id, c } of sketchRows) {
    const row = byKey.get(rowKey(_id));
    if (row === undefined) continue;
    const name = `q${_id.f}`;
    let bins = row[name] as Map<string, number> | undefined;
    if (bins === undefined) {
      bins = new Map();
      row[name] = bins;
    }
    bins.set(_id.k, (bins.get(_id.k) ?? 0) + c);
  }
}

/**
 * Puts the increase of each bucket, group and field (from the rows of `counterPipeline`,
 * see `counterIncreases`) into the bucket row it belongs to, as `inc0`, `inc1`, … (a
 * number, or null when unknown; see `rowStats`). Increases of a bucket the bucket rows do
 * not list (a group a ranking left out) are dropped.
 */
function attachIncreases(rows: BucketRow[], counterRows: readonly CounterRow[], fields: number): void {
  const byKey = new Map(rows.map((row) => [rowKey(row._id), row]));
  // Each counter row's key computed once, not once per field.
  const keys = new Map<unknown, string>(counterRows.map((row) => [row._id, rowKey(row._id)]));
  const keyOf = (id: unknown) => keys.get(id)!;
  for (let index = 0; index < fields; index++) {
    for (const [key, increase] of counterIncreases(counterRows, index, keyOf)) {
      const row = byKey.get(key);
      if (row !== undefined) row[`inc${index}`] = increase;
    }
  }
}

/** One batch of a load: requests that share a pipeline query, with its fields, series and the levels it reads (see `createLoader`). */
interface PlannedBatch {
  batch: LoadRequest[];
  fields: string[];
  series: string[];
  bucketQuery: BucketQuery;
  levels: ReadonlySet<SketchLevel>;
  /** The levels it reads from a source with quarter hours (`BucketQuery.quarters`). */
  quarterLevels: ReadonlySet<SketchLevel>;
}

/**
 * The rollups that could answer a planned batch, of the `rollups` read for the load's
 * metrics: `whole`, one answering its whole range ({@link rollupFor}), and only when there
 * is none, `edged`, one answering it but for the edges of its range
 * ({@link rollupWithEdges}); null where none does. Worked out once per batch, for the
 * view's order (`createLoader`) and for the batch's read (`loadBatch`, which still turns
 * them down for what they cannot answer).
 */
interface BatchRollups {
  whole: RollupChoice | null;
  edged: EdgeRead | null;
}

/** The {@link BatchRollups} of a planned batch. */
function batchRollups(
  { batch, bucketQuery, levels, quarterLevels }: Pick<PlannedBatch, 'batch' | 'bucketQuery' | 'levels' | 'quarterLevels'>,
  rollups: readonly RollupDefinition[],
): BatchRollups {
  const ofMetric = rollups.filter((rollup) => rollup.metric === batch[0]!.query.metric);
  const whole = rollupFor(bucketQuery, ofMetric, levels, quarterLevels);
  return { whole, edged: whole === null ? rollupWithEdges(bucketQuery, ofMetric) : null };
}

/** The stretches of `query`'s range outside `inner`'s, as ISO 8601 instants (`ReadRecord.edges`). */
function edgeStretches(query: Pick<BucketQuery, 'from' | 'to'>, inner: Pick<BucketQuery, 'from' | 'to'>): { from: string; to: string }[] {
  const iso = (ms: number) => new Date(ms).toISOString();
  return [
    ...(query.from < inner.from ? [{ from: iso(query.from), to: iso(inner.from) }] : []),
    ...(inner.to < query.to ? [{ from: iso(inner.to), to: iso(query.to) }] : []),
  ];
}

/**
 * The most slots a read merges in this process reads over its range ({@link mergedHere},
 * `slotsRead`): a day of minutes. Beyond it, the documents' bytes sent grow with the
 * range while a pipeline's reply does not.
 */
export const MERGE_HERE_SLOTS = 1_440;

/**
 * The most documents times slots read a read merges in this process ({@link mergedHere}):
 * its documents' limit is `Store.mergeHereDocuments` or this over its slots, whichever is
 * lower, so the bytes sent stay bounded (a MINUTE chart of five airports' three hours:
 * about 400 documents of 180 minutes, 72,000; a day of minutes of 1,000 dense hosts would
 * be 1,440,000, and runs its pipeline).
 */
export const MERGE_HERE_WORK = 200_000;

/**
 * The rows of a read of the series-day documents merged in this process instead of by
 * the pipeline's stages (docs/read-design.md, "Documents merged in the server"): for a
 * query that reads minute slots, at most {@link MERGE_HERE_SLOTS} over its range, slot by
 * slot (`rowsComputable`), the documents the pipeline selects are fetched with the tail's
 * (`selectedDocuments`) and their slots merged by `documentRows`: the embedded server
 * pays for each slot a pipeline walks (docs/performance.md), far more than for sending a
 * few documents. Null when the query does not qualify, merging here is off
 * (`Store.mergeHereDocuments` 0) or the selection holds more documents than
 * `Store.mergeHereDocuments` and {@link MERGE_HERE_WORK} over the slots allow: the
 * caller runs the pipeline then (the fetch stopped at the first document past the limit).
 * @returns the rows (unranked) and the documents merged, the tail's included.
 * @throws ServiceError QUERY_TIMEOUT when the fetch runs longer than the request's time limit; driver errors.
 */
async function mergedHere(
  scope: LoaderScope,
  query: BucketQuery,
  pipeline: DocumentPipeline,
  source: ReadSource,
  onTail: ((tail: TailRead) => void) | undefined,
  shared: SharedView,
): Promise<{ rows: BucketRow[]; documents: number } | null> {
  if (scope.store.mergeHereDocuments === 0 || !rowsComputable(query)) return null;
  const segments = querySegments(query);
  const slots = slotsRead(segments);
  if (!segments.some((segment) => segment.level === 'minute') || slots > MERGE_HERE_SLOTS) return null;
  const limit = Math.min(scope.store.mergeHereDocuments, Math.floor(MERGE_HERE_WORK / slots));
  const documents = await selectedDocuments(scope.store, pipeline, limit, scope.options, source, onTail, shared);
  return documents === null ? null : { rows: documentRows(query, documents, segments), documents: documents.length };
}

/**
 * Runs the pipelines of one planned batch in `shared` (its view and tails, see
 * `withSharedView`): its buckets, from day summaries for the whole UTC days they answer
 * (`aggregateSummarized`) or from a rollup that answers (`rollupFor`) or the series-day
 * documents, and beside them its merged sketches and counter increases when a request
 * asks for them. Appends where it read to `scope.reads`.
 * @param registry the rollups that could answer the batch (`batchRollups`) and the plan settings of the load's metrics (null: none read).
 * @returns each request's rows (a series request: its series' rows) and its field's index in them.
 * @throws ServiceError QUERY_TIMEOUT when a read runs longer than the request's time limit; driver errors.
 */
async function loadBatch(
  scope: LoaderScope,
  planned: PlannedBatch,
  registry: { rollups: BatchRollups; settings: PlanSettings | null },
  shared: SharedView,
): Promise<[LoadRequest, LoadAnswer][]> {
  const { batch, fields, series } = planned;
  const query = batch[0]!.query;
  const firstLast = batch.some((request) => request.query.wants.firstLast);
  const sketch = batch.some((request) => request.query.wants.sketch);
  const counter = batch.some((request) => request.query.wants.counter);
  // Summaries hold no first and last readings (`summaryPlan` would refuse them too) and
  // nothing a counter's increase needs. Where they answer most of the range's days, they
  // read a few documents a day however many groups there are: a rollup answers instead
  // only where it reads no more (one document a day), else the summaries do.
  const summarizable = !counter && !firstLast ? summarizedRead(query, planned.bucketQuery, sketch) : null;
  // A rollup's quarter hours keep no first and last readings and no sketches.
  const found = registry.rollups.whole;
  const rollup = found?.quarters && (firstLast || sketch) ? null : found;
  // Else a rollup may answer the whole hours inside the range and the documents its
  // edges: rows of statistics merge, first and last readings, sketches and counters' slots do not.
  const edged = rollup === null && !firstLast && !sketch && !counter ? registry.rollups.edged : null;
  const candidate = rollup ?? edged?.choice ?? null;
  const choice =
    summarizable !== null && mostlySummarized(summarizable) && (candidate === null || rollupDocumentsPerDay(candidate.rollup, query) > 1)
      ? null
      : candidate;
  const edges = choice !== null && choice === edged?.choice ? edged : null;
  const source = choice?.rollup ?? null;
  const bucketQuery = choice?.quarters && edges === null ? { ...planned.bucketQuery, quarters: true } : planned.bucketQuery;
  const levels = choice?.quarters && edges === null ? planned.quarterLevels : planned.levels;
  const read: ReadRecord = { metric: query.metric, rollup: source?.name ?? null, tagKeys: source?.tagKeys ?? [] };
  if (edges !== null) read.edges = edgeStretches(planned.bucketQuery, edges.inner);
  scope.reads.push(read);
  // Used only where the tail holds the query's metric alone (`ReadSource.settings`).
  const known = registry.settings === null ? {} : { settings: registry.settings };
  const readSource = { metric: query.metric, rollup: source, ...known };
  const run = (kind: PipelineRun['kind']) => (): PipelineRun => ({
    kind,
    granularity: query.granularity?.name ?? null,
    level: finestLevel(levels),
    source: source !== null ? 'rollup' : read.summaryDays === undefined ? 'documents' : 'summaries',
  });
  const onTail = (tail: TailRead) => {
    read.tail = tail;
  };
  // A percentile's sketches come from the summaries' day sketches where they answer, and
  // from the sketch pipeline over the same documents and tail as the bucket pipeline for
  // the other days (`aggregateSummarized`).
  const summarized = source === null ? summarizable : null;
  const [[rows, summarizedSketchRows], sketchRows, counterRows] = await Promise.all([
    timed(scope.observe, run('buckets'), async (): Promise<[BucketRow[], SketchRow[]]> => {
      if (edges !== null) {
        const parts = await Promise.all([
          aggregateBuckets<BucketRow>(scope.store, bucketsPipeline(edges.inner), scope.options, readSource, onTail, shared),
          ...edges.edges.map(async (edge) => {
            const edgeSource = { metric: query.metric, ...known };
            const pipeline = bucketsPipeline(edge);
            const here = await mergedHere(scope, edge, pipeline, edgeSource, undefined, shared);
            if (here !== null) read.fetched = (read.fetched ?? 0) + here.documents;
            return here?.rows ?? aggregateBuckets<BucketRow>(scope.store, pipeline, scope.options, edgeSource, undefined, shared);
          }),
        ]);
        const merged = mergeRows(parts.flat(), fields.length);
        return [query.ranking === null ? merged : rankRows(merged, query.ranking, planned.bucketQuery.grouping), []];
      }
      if (summarized === null) {
        const quarters = choice?.quarters === true ? { quarters: true } : {};
        const bucketQuery: BucketQuery = { ...pipelineQuery(query, fields, series, firstLast), ...quarters };
        const pipeline = batchPipeline(query, bucketQuery);
        if (source === null) {
          const here = await mergedHere(scope, bucketQuery, pipeline, readSource, onTail, shared);
          if (here !== null) {
            read.fetched = here.documents;
            return [query.ranking === null ? here.rows : rankRows(here.rows, query.ranking, bucketQuery.grouping), []];
          }
        }
        return [await aggregateBuckets<BucketRow>(scope.store, pipeline, scope.options, readSource, onTail, shared), []];
      }
      const answer = await aggregateSummarized<BucketRow, SketchRow>(
        scope.store,
        { ...summarized, ...known },
        scope.options,
        onTail,
        shared,
      );
      if (answer.summaryDays > 0) read.summaryDays = answer.summaryDays;
      const added = summaryRows(summarized.bucketQuery, summarized.key, answer.summaries);
      const merged = mergeRows([...added, ...answer.rows], fields.length);
      const ranked = query.ranking === null ? merged : rankRows(merged, query.ranking, summarized.bucketQuery.grouping);
      const sketched = sketch ? [...summarySketchRows(summarized.bucketQuery, summarized.key, answer.summaries), ...answer.sketchRows] : [];
      return [ranked, sketched];
    }),
    sketch && summarized === null
      ? timed(scope.observe, run('sketches'), () =>
          aggregateBuckets<SketchRow>(scope.store, sketchPipeline(bucketQuery), scope.options, readSource, undefined, shared),
        )
      : [],
    counter
      ? timed(
          scope.observe,
          () => ({ ...run('counters')(), source: 'documents' }),
          () =>
            aggregateBuckets<CounterRow>(
              scope.store,
              counterPipeline(bucketQuery),
              scope.options,
              { metric: query.metric, ...known },
              undefined,
              shared,
            ),
        )
      : [],
  ]);
  if (sketch) attachSketches(rows, [...sketchRows, ...summarizedSketchRows]);
  if (counter) attachIncreases(rows, counterRows, fields.length);
  const bySeries = new Map<string, BucketRow[]>();
  if (series.length > 0) {
    for (const row of rows) {
      const id = row._id?.g as string;
      const list = bySeries.get(id);
      if (list) list.push(row);
      else bySeries.set(id, [row]);
    }
  }
  return batch.map((request) => [
    request,
    { rows: request.series === undefined ? rows : (bySeries.get(request.series) ?? []), index: fields.indexOf(request.query.field) },
  ]);
}

/**
 * Builds the request-scoped loader that batches {@link LoadRequest}s into pipelines
 * (one per {@link batchKey}, and a sketch pipeline beside it when a request of the batch
 * wants percentiles, a counter pipeline when one wants a counter's increase or rate:
 * that one always on the series-day documents, a rollup having merged the series). A batch is dispatched only when the request has no
 * registry look-up pending (see `planning.ts`), so every field has reserved its share of
 * the budget by then; when the budget has refused the request, every request of the
 * batch fails with that refusal and no pipeline runs.
 *
 * A request whose pipeline would read minute or hour slots that its metric's retention
 * removed fails with DETAIL_EXPIRED (`model/retention-policy.ts`) instead of answering zeros
 * there; the metrics' applied horizons are read once per dispatch (beside the rollups),
 * and only for batches that read minute or hour slots. A batch whose every request is
 * refused runs no pipeline.
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
      // Each batch's pipeline query and the levels it reads; rollups are looked up only for
      // the metrics of batches a rollup could answer (on a metric, no minute slots but at the
      // edges of the range, see `query/edges.ts`).
      const planned: PlannedBatch[] = [...batches.values()].map((batch) => {
        const fields = [...new Set(batch.map((request) => request.query.field))];
        const series = [...new Set(batch.flatMap((request) => (request.series === undefined ? [] : [request.series])))];
        const bucketQuery = pipelineQuery(batch[0]!.query, fields, series);
        return {
          batch,
          fields,
          series,
          bucketQuery,
          levels: levelsRead(bucketQuery),
          quarterLevels: levelsRead({ ...bucketQuery, quarters: true }),
        };
      });
      const metrics = [
        ...new Set(
          planned.flatMap(({ batch, bucketQuery, quarterLevels }) =>
            batch[0]!.query.metric === null || (quarterLevels.has('minute') && edgeSplit(bucketQuery, QUARTER_MS) === null)
              ? []
              : [batch[0]!.query.metric],
          ),
        ),
      ];
      const detailed = planned.filter(({ levels }) => levels.has('minute') || levels.has('hour'));
      // The plan settings of every metric read, beside the rollups: they give the
      // retention horizons checked below, and plan each read's tail without a registry
      // read of its own, one wait for the database fewer per read.
      const named = [...new Set(planned.flatMap(({ batch }) => batch.flatMap((request) => metricOf(request) ?? [])))];
      const registry = Promise.all([
        metrics.length === 0 ? [] : findRollups(scope.store, metrics, scope.options),
        named.length === 0 ? null : limitedRead(scope.options, (driver) => planSettingsOf(scope.store, named, driver)),
      ]);
      // One view for every pipeline below; each metric's tail is read once in it, however
      // many pipelines add it. It is read beside the registry, and read again after it
      // when a rollup answers a batch: a rollup day rebuilt after the view was read would
      // be invisible to it, so a rollup's documents are read in a view read after its
      // definition. Series-day documents need no such order.
      const rollupChoices = registry.then(([rollups]) => planned.map((item) => batchRollups(item, rollups)));
      const rollupAnswers = rollupChoices.then((choices) => choices.some(({ whole, edged }) => whole !== null || edged !== null));
      // Awaited by the view's read; a failure must not count as unhandled when the pin's write failed first.
      rollupAnswers.catch(() => undefined);
      const refused = new Map<LoadRequest, Error>();
      await withSharedView(
        scope.store,
        scope.options,
        async (shared) => {
          const [[, settings], choices] = await Promise.all([registry, rollupChoices]);
          for (const { batch, bucketQuery } of detailed) {
            const reads = levelReads(bucketQuery);
            for (const request of batch) {
              const metric = metricOf(request);
              const kept = metric === undefined || settings === null ? undefined : settings.horizonsOf(metric);
              const expired = kept === undefined ? null : firstExpiredRead(reads, kept);
              if (expired !== null) refused.set(request, detailExpired(metric!, expired));
            }
          }
          await Promise.all(
            planned.map(async (item, i) => {
              if (item.batch.every((request) => refused.has(request))) return;
              for (const [request, answer] of await loadBatch(scope, item, { rollups: choices[i]!, settings }, shared)) {
                answers.set(request, answer);
              }
            }),
          );
        },
        rollupAnswers,
      );
      return requests.map((request) => refused.get(request) ?? answers.get(request)!);
    },
    {
      cacheKeyFn: (request) =>
        `${canonicalJson({ ...request.query, granularity: request.query.granularity?.name ?? null })}\u0000${request.series ?? ''}`,
      batchScheduleFn: (dispatch) => void scope.planning.idle().then(dispatch),
    },
  );
}
