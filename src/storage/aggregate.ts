/**
 * Bucket pipelines run on what a reader sees: the visible documents of a view and the
 * tail of the log, in one command (docs/ingest-design.md, "3. Real-time reads"), and
 * the reads that day summaries answer in part.
 */
import type { Db, Document, Filter } from 'mongodb';
import { CollectionName, type Store } from './store.ts';
import { DAY_MS, floorTo } from '../model/time.ts';
import { type DaySummary, sketchesAnswer, summariesOfDay } from '../documents/summaries.ts';
import { type DocumentPipeline, type DocumentSelection, selectionStages, selectsReading, tailTree } from '../documents/selection.ts';
import { FOLDS_ID, FOLD_STATE_COLLECTION, type ReadView, readView, visibleIn } from './fold-state.ts';
import type { PlanSettings } from '../documents/from-readings.ts';
import { type QueryOptions, limitedRead } from './query-options.ts';
import { type ReadSource, type Tail, type TailRead, readTail, tailDocuments } from './tail.ts';
import type { Reading } from '../record/validate.ts';
import { findSummaries } from './summaries.ts';
import { withView } from './read-pins.ts';

/**
 * The cursor batch of a bucket pipeline, in rows: the whole answer in the reply to the
 * `aggregate` command (a MINUTE chart of 3 hours is 180 rows, past the driver's default
 * first batch of 101, which cost one more round trip, a `getMore`). The server still
 * ends a batch at 16 MiB (MongoDB manual, "Cursor Batches").
 */
const WHOLE_ANSWER = 100_000;

/**
 * Runs a pipeline (built by `query/buckets-pipeline.ts`: what it selects of the
 * documents, and its stages) on what a reader sees of the series-day documents, or of a
 * rollup's documents (the same forms), and returns its rows, typed `T` by the caller
 * (docs/ingest-design.md, "3. Real-time reads"):
 * 1. reads the visible fold number V and the compactions in grace (`readView`) and adds
 *    a `$match` of what is visible (`visibleIn`: compactions merge rollup documents too)
 *    after the selection's first `$match`;
 * 2. reads the tail of the source's metric (log entries no visible fold holds) and,
 *    when there is any, plans into documents in memory the readings whose documents the
 *    selection may select (`selectsReading`: their metric, series, tag pairs and day),
 *    keeps of those documents only the paths the selection reads (`tailTree`), and
 *    inserts after the selection's stages a `$unionWith` of the fold-state document
 *    turned into the tail's documents (`$literal`, `$unwind`, `$replaceRoot`) and passed
 *    through the same stages; the pipeline's stages follow. The pipeline adds up the
 *    documents of a bucket, so tail documents add up with folded ones like parts do.
 *    `$unionWith` needs MongoDB 4.4.
 * @param onTail told how many tail entries and readings the read added.
 * @param shared the view and tails shared with the caller's other reads
 *   ({@link withSharedView}): the view of step 1 and the tail of step 2 are taken from it
 *   instead of read here.
 * @throws ServiceError QUERY_TIMEOUT when it runs longer than `options.maxTimeMS`.
 */
export async function aggregateBuckets<T extends Document = Document>(
  store: Store,
  pipeline: DocumentPipeline,
  options: QueryOptions = {},
  source: ReadSource = { metric: null },
  onTail?: (tail: TailRead) => void,
  shared?: SharedView,
): Promise<T[]> {
  const run = async ({ view, tail: tailOf }: SharedView) => {
    const tail = await tailOf(source.metric);
    onTail?.({ entries: tail.entries, readings: tail.readings.length });
    return runWithTail<T>(store, view, tail.readings, pipeline, options, source);
  };
  return shared === undefined ? withSharedView(store, options, run) : run(shared);
}

/**
 * The documents a pipeline selects, fetched instead of run through its stages, for the
 * caller to merge their slots itself (`query/document-rows.ts`): in one view with the
 * tail, as {@link aggregateBuckets} reads them, the visible documents its selection
 * selects (its `$match` stages, the visibility `$match` after the first, its projection
 * of the paths read) and the tail's readings the selection may select planned into the
 * documents the source would hold once folded (`tailDocuments`, cut to the selection's
 * paths), the two read side by side. At most `limit` documents: one more stops the
 * fetch (`$limit`) and gives null, and the caller runs the pipeline instead.
 * @param onTail told how many tail entries and readings the read added (not on null).
 * @param shared the view and tails shared with the caller's other reads ({@link withSharedView}).
 * @returns the documents, the folded ones first; null past `limit`.
 * @throws ServiceError QUERY_TIMEOUT when it runs longer than `options.maxTimeMS`.
 */
export async function selectedDocuments(
  store: Store,
  pipeline: DocumentPipeline,
  limit: number,
  options: QueryOptions = {},
  source: ReadSource = { metric: null },
  onTail?: (tail: TailRead) => void,
  shared?: SharedView,
): Promise<Document[] | null> {
  const run = async ({ view, tail: tailOf }: SharedView): Promise<Document[] | null> => {
    const tail = await tailOf(source.metric);
    const { head } = visibleSelection(pipeline.selection, view, true);
    const [folded, unfolded] = await Promise.all([
      limitedRead(options, (driver) =>
        store.db
          .collection(collectionOf(source))
          .aggregate([...head, { $limit: limit + 1 }], { ...driver, batchSize: WHOLE_ANSWER })
          .toArray(),
      ),
      selectedTail(store, tail.readings, pipeline.selection, source, options),
    ]);
    if (folded.length > limit) return null;
    onTail?.({ entries: tail.entries, readings: tail.readings.length });
    return [...folded, ...unfolded];
  };
  return shared === undefined ? withSharedView(store, options, run) : run(shared);
}

/**
 * One view and the tails of the metrics read in it, shared by the reads of one batch of
 * a request's pipelines ({@link withSharedView}): each tail is read from the log once,
 * however many pipelines add it (a percentile or counter query runs two or three).
 */
export interface SharedView {
  /** The view every read of the batch reads in. */
  view: ReadView;
  /**
   * The tail of `metric` (null: of every metric) in `view`, as `readTail` reads it: read
   * on the first call, the same promise afterwards.
   * @throws ServiceError QUERY_TIMEOUT when the read runs longer than the options' `maxTimeMS`; driver errors.
   */
  tail(metric: string | null): Promise<Tail>;
}

/**
 * Runs `read` with a {@link SharedView}, pinned until `read` settles (`withView`): the
 * view is read first, and each metric's tail on the first ask of a read, once.
 * @param options the reads' time limit (see `query-options.ts`).
 * @param rereadAfter a read the caller started before this call (such as its registry
 *   read), settling to whether the view must be read after it. The view is then read
 *   beside it, one wait for the database fewer, and read again once it settles only when
 *   it says true (a rollup's documents must be read in a view read after its definition,
 *   see `createLoader`); `read` runs once it settled. Absent: the view is read at once.
 * @throws what `read` or `rereadAfter` throws; a driver error when the view or the pin cannot be read or written.
 */
export function withSharedView<T>(
  store: Store,
  options: QueryOptions,
  read: (shared: SharedView) => Promise<T>,
  rereadAfter?: Promise<boolean>,
): Promise<T> {
  const viewOf =
    rereadAfter === undefined
      ? undefined
      : async (db: Db): Promise<ReadView> => {
          const beside = readView({ db });
          // Not awaited when the view is read again; its failure must not count as unhandled then.
          beside.catch(() => undefined);
          return (await rereadAfter) ? readView({ db }) : beside;
        };
  return withView(
    store,
    async (view) => {
      const tails = new Map<string | null, Promise<Tail>>();
      const tail = (metric: string | null) => {
        let reading = tails.get(metric);
        if (reading === undefined) {
          reading = limitedRead(options, (driver) => readTail(store, metric, view, driver));
          tails.set(metric, reading);
        }
        return reading;
      };
      return read({ view, tail });
    },
    viewOf,
  );
}

/** The collection a read of `source` reads: the rollup's, or the series-day documents'. */
const collectionOf = (source: ReadSource) => source.rollup?.collection ?? CollectionName.seriesDays;

/**
 * The stages that select what `view` shows of a selection's documents: `head` for the
 * folded documents (the selection's first `$match`, which stays exactly an index range,
 * then the visibility `$match` as a stage of its own, then the rest; with `only`, that
 * `$match` first instead), and `selecting` for the tail's documents (the selection's
 * `$match` stages), each followed by the selection's projection when `projected`.
 */
function visibleSelection(
  selection: DocumentSelection,
  view: ReadView,
  projected: boolean,
  only?: Document,
): { head: Document[]; selecting: Document[] } {
  const { match, project } = selectionStages(selection);
  const selecting = projected ? [...match, project] : match;
  // A planner that does not merge adjacent $match stages (SecantusDB) picks the index from
  // the first and scans the collection for a merged or $and-wrapped filter.
  const visibility = { $match: visibleIn(view) };
  const head = only === undefined ? [selecting[0]!, visibility, ...selecting.slice(1)] : [{ $match: only }, visibility, ...selecting];
  return { head, selecting };
}

/**
 * The tail's `readings` that `selection` may select (`selectsReading`: their metric,
 * series, tag pairs and day), planned into the documents `source` would hold once they
 * are folded and cut to the selection's paths (`tailDocuments`, `tailTree`); none
 * without a reading selected, and then without a registry read.
 * @throws ServiceError QUERY_TIMEOUT when the registry read runs longer than `options.maxTimeMS`.
 */
function selectedTail(
  store: Store,
  readings: readonly Reading[],
  selection: DocumentSelection,
  source: ReadSource,
  options: QueryOptions,
): Promise<Record<string, unknown>[]> {
  const selected = readings.filter(selectsReading(selection, Boolean(source.rollup)));
  if (selected.length === 0) return Promise.resolve([]);
  return limitedRead(options, (driver) => tailDocuments(store, selected, source, driver, tailTree(selection)));
}

/**
 * Runs `pipeline` in `view` with the tail's `readings` added as {@link aggregateBuckets}
 * describes. With `only`, the folded documents are first selected by the `$match` filter
 * `only` (an index range of its own, such as `_id` `$in`), then by the pipeline's stages;
 * the tail by the pipeline's stages alone.
 */
async function runWithTail<T extends Document>(
  store: Store,
  view: ReadView,
  readings: readonly Reading[],
  pipeline: DocumentPipeline,
  options: QueryOptions,
  source: ReadSource,
  only?: Document,
): Promise<T[]> {
  const { selection, stages } = pipeline;
  // The projection trims nothing a `$group` reads: the database runs it only when the
  // pipeline's own stages walk the documents (see `trimmed`); the tail's documents are
  // cut to the selection's paths in any case.
  const { head, selecting } = visibleSelection(selection, view, trimmed(stages), only);
  const collection = collectionOf(source);
  const documents = await selectedTail(store, readings, selection, source, options);
  if (documents.length === 0) {
    return limitedRead(options, (driver) =>
      store.db
        .collection(collection)
        .aggregate<T>([...head, ...stages], { ...driver, batchSize: WHOLE_ANSWER })
        .toArray(),
    );
  }
  // The tail enters through `$unionWith` of the one fold-state document turned into the
  // tail's documents by `$literal`, so the pipeline itself runs on the collection and its
  // first `$match` keeps its index: a database aggregate of `$documents` and a
  // `$unionWith` of the collection scanned the whole collection on the embedded server
  // (2.4x the plain read of the measured day).
  const tailStages = [
    { $match: { _id: FOLDS_ID } },
    { $project: { _id: 0, d: { $literal: documents } } },
    { $unwind: '$d' },
    { $replaceRoot: { newRoot: '$d' } },
    ...selecting,
  ];
  const combined = [...head, { $unionWith: { coll: FOLD_STATE_COLLECTION, pipeline: tailStages } }, ...stages];
  return limitedRead(options, (driver) =>
    store.db
      .collection(collection)
      .aggregate<T>(combined, { ...driver, batchSize: WHOLE_ANSWER })
      .toArray(),
  );
}

/**
 * Whether the database runs a pipeline's projection: not when its stages start with a
 * `$group`, which reads only the paths its key and accumulators name (all of them among
 * the selection's paths), so the projection changes no answer there, and MongoDB drops
 * such a projection itself (it tracks the fields a pipeline depends on, manual
 * "Aggregation Pipeline Optimization"). The embedded server applies it to each document,
 * compiling the projection again for every one: the mean per origin over two days of
 * flights (8,617 series-day documents, three rounds) took 4.8 to 5.0 s with it and 3.7
 * to 3.8 s without.
 */
const trimmed = (stages: readonly Document[]) => !(stages[0] !== undefined && '$group' in stages[0]);

/**
 * A read of a bucket query that day summaries may answer in part (see
 * `query/summaries.ts`): the days they may answer and the pipeline of the documents.
 */
export interface SummarizedRead {
  /** The metric read. */
  metric: string;
  /** The query's range `[from, to)`, ms since epoch, UTC. */
  from: number;
  to: number;
  /** The tag key a summary must keep to answer (null: any summary answers). */
  key: string | null;
  /** The stretches of whole UTC days of the range whose days a summary may answer (`[from, to)`, midnights, ms, ascending). */
  ranges: readonly { from: number; to: number }[];
  /** The bucket pipeline over the series-day documents of the UTC days in `days` (null: every day of the range). */
  documents: (days: { from: number; to: number } | null) => DocumentPipeline;
  /** The metric's plan settings, when read earlier in the request (see `ReadSource.settings`). */
  settings?: PlanSettings;
  /**
   * For a query asking for percentiles: the sketch pipeline over the series-day documents
   * of the UTC days in `days` (null: every day of the range). A day is then read from its
   * summaries only when their day sketches answer too (`sketchesAnswer`), and the other
   * days' sketches come from this pipeline, read beside the documents' bucket pipeline.
   */
  sketches?: (days: { from: number; to: number } | null) => DocumentPipeline;
}

/**
 * What {@link aggregateSummarized} read: the rows of the documents' pipelines (a bucket
 * and group may be in several), the rows of their sketch pipelines (when `sketches` was
 * given; else empty), the summaries that answer the summarized days (added up by the
 * caller, `summaryRows` and `summarySketchRows` in query/summaries.ts; with their day
 * sketches when `sketches` was given), and how many days they answer.
 */
export interface SummarizedRows<T, S = Document> {
  rows: T[];
  sketchRows: S[];
  summaries: DaySummary[];
  summaryDays: number;
}

/**
 * Runs a bucket query reading its whole days from day summaries where it can
 * (docs/design.md, "Day summaries and day sketches"), in one view (`withView`):
 * 1. reads the tail of the metric, as {@link aggregateBuckets}, and the metric's
 *    summaries of `read.days` (whole: the embedded server returned a month's 62 whole
 *    summaries in 0.5 s, and took twice as long with a projection), and with
 *    `read.sketches` their day sketches, by the same filter;
 * 2. answers each of those days from its summaries when `summariesOfDay` finds
 *    some (they add up the day's documents visible at V) and, with `read.sketches`,
 *    their sketches answer too (`sketchesAnswer`);
 * 3. runs, in parallel: the bucket pipeline over the other days' documents with their
 *    tail, and, when the tail holds readings, the bucket pipeline over the summarized
 *    days' tail alone (their documents left out); with `read.sketches`, the sketch
 *    pipeline over the same documents and tails beside each.
 * Without any summary it runs the query as {@link aggregateBuckets} would. The rows of
 * a bucket and group may come from several sources: the caller merges them.
 * @param shared the view and tails of the caller's other reads ({@link withSharedView}); read here when absent.
 * @throws ServiceError QUERY_TIMEOUT when a read runs longer than `options.maxTimeMS`.
 */
export async function aggregateSummarized<T extends Document = Document, S extends Document = Document>(
  store: Store,
  read: SummarizedRead,
  options: QueryOptions = {},
  onTail?: (tail: TailRead) => void,
  shared?: SharedView,
): Promise<SummarizedRows<T, S>> {
  const source: ReadSource = { metric: read.metric, settings: read.settings };
  const everyDay = read.documents(null);
  const sketchesOf = read.sketches;
  const run = async ({ view, tail: tailOf }: SharedView): Promise<SummarizedRows<T, S>> => {
    const first = read.ranges[0]!.from;
    const last = read.ranges[read.ranges.length - 1]!.to;
    const filter = { metric: read.metric, date: { $gte: new Date(first), $lt: new Date(last) } };
    const [tail, found] = await Promise.all([
      tailOf(read.metric),
      limitedRead(options, (driver) => findSummaries(store, filter, driver, sketchesOf !== undefined)),
    ]);
    onTail?.({ entries: tail.entries, readings: tail.readings.length });
    const inRanges = (day: number) => read.ranges.some((range) => day >= range.from && day < range.to);
    const byDay = new Map<number, DaySummary[]>();
    for (const summary of found) {
      const day = summary.date.getTime();
      if (!inRanges(day)) continue;
      const list = byDay.get(day);
      if (list) list.push(summary);
      else byDay.set(day, [summary]);
    }
    const chosen = [...byDay.values()].flatMap((summaries) => {
      const ofDay = summariesOfDay(summaries, view.visible, read.key);
      return sketchesOf === undefined || sketchesAnswer(ofDay, read.key) ? ofDay : [];
    });
    const summarized = [...new Set(chosen.map((summary) => summary.date.getTime()))].sort((a, b) => a - b);
    const gaps = gapsBetween(floorTo(read.from, DAY_MS), read.to, summarized);
    // The bucket pipeline and, for percentiles, the sketch pipeline over the same documents and tail.
    const both = async (days: { from: number; to: number } | null, readings: readonly Reading[], select?: Filter<Document>) => {
      const [rows, sketchRows] = await Promise.all([
        runWithTail<T>(store, view, readings, days === null ? everyDay : read.documents(days), options, source, select),
        sketchesOf === undefined ? [] : runWithTail<S>(store, view, readings, sketchesOf(days), options, source, select),
      ]);
      return { rows, sketchRows };
    };
    if (summarized.length === 0 || gaps.length > MAX_DOCUMENT_READS) {
      return { ...(await both(null, tail.readings)), summaries: [], summaryDays: 0 };
    }
    const days = new Set(summarized);
    const summarizedTail = tail.readings.filter((reading) => days.has(floorTo(reading.time, DAY_MS)));
    const parts = await Promise.all([
      ...gaps.map((gap) => both(gap, tail.readings)),
      // The summarized days' tail: through the same pipelines, with no document selected.
      ...(summarizedTail.length === 0 ? [] : [both(null, summarizedTail, { _id: { $in: [] } })]),
    ]);
    return {
      rows: parts.flatMap((part) => part.rows),
      sketchRows: parts.flatMap((part) => part.sketchRows),
      summaries: chosen,
      summaryDays: summarized.length,
    };
  };
  return shared === undefined ? withSharedView(store, options, run) : run(shared);
}

/**
 * Reads of the series-day documents one summarized read makes at most, one per stretch
 * of days without summaries; beyond it (summaries scattered over the range) the query
 * reads the documents of every day as without summaries.
 */
const MAX_DOCUMENT_READS = 8;

/** The stretches of `[from, to)` (UTC midnight `from`, ms) between the ascending days `days`, empty ones left out. */
function gapsBetween(from: number, to: number, days: readonly number[]): { from: number; to: number }[] {
  const gaps: { from: number; to: number }[] = [];
  let start = from;
  for (const day of days) {
    if (day > start) gaps.push({ from: start, to: day });
    start = day + DAY_MS;
  }
  if (start < to) gaps.push({ from: start, to });
  return gaps;
}
