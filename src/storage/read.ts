import type { Db, Document, Filter } from 'mongodb';
import type { RollupDefinition } from '../model/rollup.ts';
import { isEarlier, type TimedValue } from '../model/stats.ts';
import { tagPair } from '../model/series.ts';
import { DAY_MS, floorTo } from '../model/time.ts';
import type { Reading } from '../record/validate.ts';
import { limitedRead, type QueryOptions } from './query-options.ts';
import { planSettingsOf } from './registry.ts';
import { CollectionName, type MetricDocument, type SeriesDocument, type Store } from './store.ts';
import { withView } from './read-pins.ts';
import { findSummaries } from './summaries.ts';
import { FOLD_STATE_COLLECTION, FOLDS_ID, findVisible, readTail, readView, type ReadView, type Tail, visibleIn } from './visibility.ts';
import { DOCUMENT_VERSION } from '../documents/series-day.ts';
import { sketchesAnswer, summariesOfDay, type DaySummary } from '../documents/summaries.ts';
import { planReadings, type PlanSettings } from '../documents/from-readings.ts';
import { slotFormDocument, levelsWithin, type PathTree } from '../documents/encode.ts';
import { rollupContents } from '../documents/rollup.ts';

/**
 * What a pipeline reads: the metric (for the tail; null for a query on given series,
 * whose tail is read across metrics and selected by the pipeline's `$match`), and the
 * rollup whose documents it reads (none: the series-day documents).
 */
export interface ReadSource {
  metric: string | null;
  rollup?: Pick<RollupDefinition, 'collection' | 'metric' | 'tagKeys'> | null;
  /**
   * The plan settings of `metric` (`planSettingsOf`), when the caller read them earlier
   * in the request, beside its other registry reads: the tail's documents are then
   * planned without a registry read of their own, one wait for the database fewer.
   * Used only with a metric, whose tail holds that metric's readings alone; otherwise,
   * and when absent, read with the tail's documents.
   */
  settings?: PlanSettings;
}

/** The tail one read added: log entries read and their readings of the metric. */
export interface TailRead {
  entries: number;
  readings: number;
}

/**
 * The tail's readings as the documents the pipeline's source would hold once they are
 * folded: series-day documents, or the rollup's group-day documents, planned with the
 * metric's current settings and retention horizons (the same planner as a fold).
 */
async function tailDocuments(
  store: Store,
  readings: readonly Reading[],
  source: ReadSource,
  driver: { maxTimeMS?: number; signal?: AbortSignal },
  tree: PathTree | null,
): Promise<Record<string, unknown>[]> {
  const metrics = [...new Set(readings.map((reading) => reading.metric))];
  const settings =
    source.settings !== undefined && source.metric !== null && metrics.every((metric) => metric === source.metric)
      ? source.settings
      : await planSettingsOf(store, metrics, driver);
  const plan = planReadings(readings, settings, levelsWithin(tree));
  const writes = source.rollup ? rollupContents(plan.days, source.rollup) : plan.days;
  return writes.map((write) => {
    const doc = slotFormDocument(write, undefined, tree ?? undefined);
    return tree === null ? doc : projectDocument(doc, tree);
  });
}

/** The field paths a filter reads (its keys outside operators), e.g. `date`, `tagPairs`, `fields.delay.n`. */
function filterPaths(filter: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(filter)) for (const item of filter) filterPaths(item, into);
  else if (filter !== null && typeof filter === 'object' && !(filter instanceof Date)) {
    for (const [key, value] of Object.entries(filter)) {
      if (key.startsWith('$')) filterPaths(value, into);
      else into.add(key);
    }
  }
  return into;
}

/** The tree of `paths`; a path inside another ends at the outer one. */
export function pathTree(paths: readonly string[]): PathTree {
  const root: PathTree = {};
  for (const path of paths) {
    let node = root;
    const keys = path.split('.');
    for (const [i, key] of keys.entries()) {
      const next = node[key];
      if (next === true) break;
      if (i === keys.length - 1) {
        node[key] = true;
        break;
      }
      if (next === undefined) {
        const branch: PathTree = {};
        node[key] = branch;
        node = branch;
      } else node = next;
    }
  }
  return root;
}

/**
 * `doc` cut down to the paths of `tree`, as an inclusion `$project` cuts it (keys in the
 * document's order, embedded documents on a path kept even when nothing inside them
 * is): what the pipeline's own `$project` would keep, plus what its `$match` stages
 * read, done before the tail is sent, so a read ships the paths it needs and not whole
 * documents (sending them whole cost 1.87x in the write-path prototype).
 */
export function projectDocument(doc: Record<string, unknown>, tree: PathTree): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(doc)) {
    const branch = tree[key];
    if (branch === undefined) continue;
    if (branch === true) out[key] = value;
    // An embedded document on a path stays, emptied, as an inclusion `$project` keeps it
    // (pipelines read `$objectToArray` of such a level and need an object, not nothing).
    else if (value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)) {
      out[key] = projectDocument(value as Record<string, unknown>, branch);
    }
  }
  return out;
}

/**
 * The paths to send of the tail's documents for a pipeline whose selecting stages are
 * `stages`: those its inclusion `$project` keeps and those its `$match` stages read; null
 * (send whole documents) when the stages have no `$project` of plain inclusions.
 */
function tailPaths(stages: readonly Document[]): string[] | null {
  const project = stages.find((stage) => '$project' in stage)?.$project as Record<string, unknown> | undefined;
  if (project === undefined) return null;
  const kept = Object.entries(project).filter(([key]) => key !== '_id');
  if (kept.some(([, value]) => value !== 1 && value !== true)) return null;
  const paths = new Set(kept.map(([key]) => key));
  for (const stage of stages) if ('$match' in stage) filterPaths(stage.$match, paths);
  return [...paths];
}

/** A value as the filters of `query/buckets-pipeline.ts` compare it: dates by their time. */
function comparable(value: unknown): unknown {
  return value instanceof Date ? value.getTime() : value;
}

/** Whether `value` equals `wanted` as a query equality does: itself, or an element of an array. */
function holds(value: unknown, wanted: unknown): boolean {
  const target = comparable(wanted);
  if (Array.isArray(value)) return value.some((element) => comparable(element) === target);
  return comparable(value) === target;
}

/**
 * False when `doc` certainly fails `filter`, the first `$match` of a pipeline (an index
 * range: `metric`, `series`, `tagPairs`, `date` by equality, `$in`, `$gte`, `$lt`); true
 * otherwise. Conditions of any other form count as met, so this only ever keeps too
 * much: the pipeline's own `$match` runs on what it keeps. The tail's documents of a
 * whole metric are cut down this way before they are sent, so a query of one series
 * does not plan, ship and unwind the documents of every series the tail holds.
 * @param doc a document (readings are filtered by `readingFilter`, compiled the same way).
 * @param filter a `$match` filter, with dates as `Date` or ms since epoch.
 * @returns false only when `doc` fails a condition of the forms above.
 */
export function mayMatch(doc: Record<string, unknown>, filter: Document): boolean {
  return checksOf(filter).every((check) => check.holds(doc[check.key]));
}

/** A condition of a filter that {@link mayMatch} checks: the top-level field it reads and whether a value meets it. */
interface Check {
  key: string;
  holds: (value: unknown) => boolean;
}

/**
 * The conditions of `filter` that {@link mayMatch} checks, compiled once for every
 * document or reading it is applied to: equality to a string, number or date, `$in` of
 * such values, `$gte` and `$lt` of a date or number, on fields without a dot.
 */
function checksOf(filter: Document): Check[] {
  const checks: Check[] = [];
  for (const [key, condition] of Object.entries(filter)) {
    if (key.startsWith('$') || key.includes('.')) continue;
    const isOperators = condition !== null && typeof condition === 'object' && !Array.isArray(condition) && !(condition instanceof Date);
    if (!isOperators) {
      if (typeof condition === 'string' || typeof condition === 'number' || condition instanceof Date) {
        checks.push({ key, holds: (value) => holds(value, condition) });
      }
      continue;
    }
    for (const [operator, operand] of Object.entries(condition as Record<string, unknown>)) {
      if (operator === '$in' && Array.isArray(operand)) {
        // NaN equals nothing, as in `holds`; a set keeps a long `$in` of tag pairs cheap.
        const wanted = new Set(operand.map(comparable).filter((target) => !Number.isNaN(target)));
        const has = (element: unknown) => wanted.has(comparable(element));
        checks.push({ key, holds: (value) => (Array.isArray(value) ? value.some(has) : has(value)) });
      } else if ((operator === '$gte' || operator === '$lt') && (operand instanceof Date || typeof operand === 'number')) {
        const bound = comparable(operand) as number;
        const gte = operator === '$gte';
        checks.push({
          key,
          holds: (value) => {
            const at = comparable(value);
            if (typeof at !== 'number') return true;
            // A NaN value or bound fails neither comparison, so it keeps the document, as before.
            return gte ? !(at < bound) : !(at >= bound);
          },
        });
      }
    }
  }
  return checks;
}

/**
 * A filter on readings that keeps those whose documents {@link mayMatch} keeps for
 * `filter` (a pipeline's leading `$match`), compiled once: of a reading it reads only
 * the keys of its document that such a filter names, its metric, series id, tag pairs
 * and UTC day (ms since epoch), so a whole-metric read builds no tag pairs. For a
 * rollup the series id is left out (a rollup document's `series` is its group's id) and
 * its tag pairs are a subset of the reading's, so a rollup document that
 * {@link mayMatch} keeps has all its readings kept too.
 */
function readingFilter(filter: Document, rollup: boolean): (reading: Reading) => boolean {
  const checks = checksOf(filter);
  const keyOf = (reading: Reading, key: string): unknown => {
    switch (key) {
      case 'metric':
        return reading.metric;
      case 'series':
        return rollup ? undefined : reading.seriesId;
      case 'tagPairs':
        return reading.tags.map((tag) => tagPair(tag.key, tag.value));
      case 'date':
        return floorTo(reading.time, DAY_MS);
      default:
        return undefined;
    }
  };
  return (reading) => {
    for (const check of checks) if (!check.holds(keyOf(reading, check.key))) return false;
    return true;
  };
}

/**
 * The fields the leading `$match` stages of `pipeline` (up to `selecting`) name outside
 * operators, merged into one filter for {@link mayMatch}: the first stage's condition on
 * a field wins (a later one on the same field is left out, which only keeps more).
 */
function leadingMatch(pipeline: readonly Document[], selecting: number): Document {
  const merged: Document = {};
  for (const stage of pipeline.slice(0, selecting)) {
    if (!('$match' in stage)) break;
    for (const [key, condition] of Object.entries(stage.$match as Document)) {
      if (!key.startsWith('$') && !(key in merged)) merged[key] = condition;
    }
  }
  return merged;
}

/** How many leading stages of a pipeline select and trim documents (its `$match` stages and the `$project` right after them). */
function selectingStages(pipeline: readonly Document[]): number {
  let count = 0;
  while (count < pipeline.length && '$match' in pipeline[count]!) count += 1;
  if (count < pipeline.length && '$project' in pipeline[count]!) count += 1;
  return count;
}

/**
 * The selecting stages of `pipeline` (its first `selecting` stages) as the database runs
 * them: without the trimming `$project` when a `$group` follows it. A `$group` reads only
 * the paths its key and accumulators name, which the builder's `$project` keeps
 * (`ReadPaths`, query/buckets-pipeline.ts), so the projection changes no answer there,
 * and MongoDB drops such a projection itself (it tracks the fields a pipeline depends
 * on, manual "Aggregation Pipeline Optimization"). The embedded server applies it to
 * each document, compiling the projection again for every one: the mean per origin over
 * two days of flights (8,617 series-day documents, three rounds) took 4.8 to 5.0 s with
 * it and 3.7 to 3.8 s without. The tail's documents are still cut to its paths in Node
 * (`tailPaths`) before they are sent.
 */
function stagesRun(pipeline: readonly Document[], selecting: number): Document[] {
  const stages = pipeline.slice(0, selecting);
  const trims =
    selecting > 0 && '$project' in stages[selecting - 1]! && pipeline[selecting] !== undefined && '$group' in pipeline[selecting]!;
  return trims ? stages.slice(0, -1) : stages;
}

/**
 * Runs a pipeline (built by `query/buckets-pipeline.ts`, starting with `$match`) on what
 * a reader sees of the series-day documents, or of a rollup's documents (the same
 * layout), and returns its rows, typed `T` by the caller (docs/ingest-design.md,
 * "Real-time reads"):
 * 1. reads the visible fold number V and the compactions in grace (`readView`) and adds
 *    a `$match` of what is visible (`visibleIn`: compactions merge rollup documents too) after the first `$match`;
 * 2. reads the tail of the source's metric (log entries no visible fold holds) and,
 *    when there is any, plans into documents in memory the readings whose documents the
 *    pipeline's leading `$match` stages may select ({@link mayMatch} of their metric,
 *    series, tag pairs and day), keeps of those documents only the paths
 *    the pipeline's `$match` and `$project` stages read, and inserts after the
 *    pipeline's `$match` and `$project` stages (the `$project` left out when a `$group`
 *    follows it, see {@link stagesRun}) a `$unionWith` of the fold-state document
 *    turned into the tail's documents (`$literal`, `$unwind`, `$replaceRoot`) and passed
 *    through the same stages; the rest of the pipeline follows. The pipeline adds up the
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
  pipeline: Document[],
  options: QueryOptions = {},
  source: ReadSource = { metric: null },
  onTail?: (tail: TailRead) => void,
  shared?: SharedView,
): Promise<T[]> {
  checkFirstMatch(pipeline);
  const run = async ({ view, tail: tailOf }: SharedView) => {
    const tail = await tailOf(source.metric);
    onTail?.({ entries: tail.entries, readings: tail.readings.length });
    return runWithTail<T>(store, view, tail.readings, pipeline, options, source);
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

/** @throws Error when `pipeline` does not start with `$match` (every builder's pipeline does). */
function checkFirstMatch(pipeline: readonly Document[]): void {
  const [first] = pipeline;
  if (first === undefined || !('$match' in first)) throw new Error('aggregateBuckets: the pipeline must start with $match');
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
  pipeline: Document[],
  options: QueryOptions,
  source: ReadSource,
  only?: Document,
): Promise<T[]> {
  const first = pipeline[0]!;
  // A stage of its own after the first $match, which stays exactly an index range: a
  // planner that does not merge adjacent $match stages (SecantusDB) picks the index from
  // the first and scans the collection for a merged or $and-wrapped filter.
  const visibility = { $match: visibleIn(view) };
  const collection = source.rollup?.collection ?? CollectionName.buckets;
  const selecting = selectingStages(pipeline);
  // Only the readings whose documents the leading $match stages may select are planned
  // and sent (each condition of theirs must hold, so all of them together filter).
  const rollup = Boolean(source.rollup);
  const match = leadingMatch(pipeline, selecting);
  const selected = readings.filter(readingFilter(match, rollup));
  const paths = tailPaths(pipeline.slice(0, selecting));
  const tree = paths === null ? null : pathTree(paths);
  const documents =
    selected.length === 0 ? [] : await limitedRead(options, (driver) => tailDocuments(store, selected, source, driver, tree));
  const selectingRun = stagesRun(pipeline, selecting);
  const head = only === undefined ? [first, visibility, ...selectingRun.slice(1)] : [{ $match: only }, visibility, ...selectingRun];
  if (documents.length === 0) {
    return limitedRead(options, (driver) =>
      store.db
        .collection(collection)
        .aggregate<T>([...head, ...pipeline.slice(selecting)], driver)
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
    ...selectingRun,
  ];
  const combined = [...head, { $unionWith: { coll: FOLD_STATE_COLLECTION, pipeline: tailStages } }, ...pipeline.slice(selecting)];
  return limitedRead(options, (driver) => store.db.collection(collection).aggregate<T>(combined, driver).toArray());
}

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
  documents: (days: { from: number; to: number } | null) => Document[];
  /** The metric's plan settings, when read earlier in the request (see `ReadSource.settings`). */
  settings?: PlanSettings;
  /**
   * For a query asking for percentiles: the sketch pipeline over the series-day documents
   * of the UTC days in `days` (null: every day of the range). A day is then read from its
   * summaries only when their day sketches answer too (`sketchesAnswer`), and the other
   * days' sketches come from this pipeline, read beside the documents' bucket pipeline.
   */
  sketches?: (days: { from: number; to: number } | null) => Document[];
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
 * (docs/ingest-design.md, "Day summaries"), in one view (`withView`):
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
  checkFirstMatch(everyDay);
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

/**
 * All metrics, sorted by name.
 * @throws ServiceError QUERY_TIMEOUT when the read runs longer than `options.maxTimeMS`.
 */
export async function listMetrics(store: Store, options: QueryOptions = {}): Promise<MetricDocument[]> {
  return limitedRead(options, (driver) => store.metrics.find({}, driver).sort({ _id: 1 }).toArray());
}

/**
 * One metric by name, or null when it was never recorded.
 * @throws ServiceError QUERY_TIMEOUT when the read runs longer than `options.maxTimeMS`.
 */
export async function findMetric(store: Store, name: string, options: QueryOptions = {}): Promise<MetricDocument | null> {
  return limitedRead(options, (driver) => store.metrics.findOne({ _id: name }, driver));
}

/**
 * The registry entries matching `filter` (see `registryFilter` in `query/buckets-pipeline.ts`),
 * sorted by series key, at most `limit` of them (all when `limit` is omitted).
 * @throws ServiceError QUERY_TIMEOUT when the read runs longer than `options.maxTimeMS`.
 */
export async function findSeries(
  store: Store,
  filter: Filter<SeriesDocument>,
  limit?: number,
  options: QueryOptions = {},
): Promise<SeriesDocument[]> {
  return limitedRead(options, (driver) => {
    const cursor = store.series.find(filter, driver).sort({ metric: 1, key: 1 });
    if (limit !== undefined) cursor.limit(limit);
    return cursor.toArray();
  });
}

/**
 * Registry entries by series id, in the order of `ids` (null where unknown).
 * @throws ServiceError QUERY_TIMEOUT when the read runs longer than `options.maxTimeMS`.
 */
export async function findSeriesByIds(
  store: Store,
  ids: readonly string[],
  options: QueryOptions = {},
): Promise<(SeriesDocument | null)[]> {
  const docs = await limitedRead(options, (driver) => store.series.find({ _id: { $in: [...ids] } }, driver).toArray());
  const found = new Map(docs.map((doc) => [doc._id, doc]));
  return ids.map((id) => found.get(id) ?? null);
}

/**
 * Number of registry entries matching `filter`.
 * @throws ServiceError QUERY_TIMEOUT when the count runs longer than `options.maxTimeMS`.
 */
export async function countSeries(store: Store, filter: Filter<SeriesDocument>, options: QueryOptions = {}): Promise<number> {
  return limitedRead(options, (driver) => store.series.countDocuments(filter, driver));
}

/**
 * Runs a counting pipeline on the series registry (see `seriesGroupsPipeline`) and
 * returns its `groups`; 0 when it returns no row.
 * @throws ServiceError QUERY_TIMEOUT when the count runs longer than `options.maxTimeMS`.
 */
export async function countSeriesGroups(store: Store, pipeline: Document[], options: QueryOptions = {}): Promise<number> {
  const [result] = await limitedRead(options, (driver) => store.series.aggregate<{ groups: number }>(pipeline, driver).toArray());
  return result?.groups ?? 0;
}

/**
 * The distinct values of tag `key` among the registry entries matching `filter`, sorted.
 * @throws ServiceError QUERY_TIMEOUT when the read runs longer than `options.maxTimeMS`.
 */
export async function tagValues(store: Store, key: string, filter: Filter<SeriesDocument>, options: QueryOptions = {}): Promise<string[]> {
  const values = await limitedRead(options, (driver) => store.series.distinct(`tags.${key}`, filter, driver));
  return values.filter((value): value is string => typeof value === 'string').sort();
}

/** Which end of a series' readings to look up: the earliest (`first`) or the latest (`last`). */
export type Edge = 'first' | 'last';

/**
 * The readings of the tail (every metric) of the series `ids`, by series id: what the
 * point look-ups below add to the folded documents.
 */
async function tailBySeries(store: Store, ids: readonly string[], view: ReadView, options: QueryOptions): Promise<Map<string, Reading[]>> {
  const wanted = new Set(ids);
  const tail = await limitedRead(options, (driver) => readTail(store, null, view, driver));
  const bySeries = new Map<string, Reading[]>();
  for (const reading of tail.readings) {
    if (!wanted.has(reading.seriesId)) continue;
    const list = bySeries.get(reading.seriesId);
    if (list) list.push(reading);
    else bySeries.set(reading.seriesId, [reading]);
  }
  return bySeries;
}

/**
 * The visible parts of the earliest (`direction` 1) or latest (-1) series-day among the
 * documents `filter` selects (a filter on one series, see {@link findVisible}): one
 * indexed look-up of that day on `{series, date}`, then one read of its parts, each
 * with `projection`. Empty when the filter selects no visible document.
 */
async function partsOfEdgeDay(
  store: Store,
  view: ReadView,
  filter: Document,
  direction: 1 | -1,
  projection: Document,
  driver: { maxTimeMS?: number; signal?: AbortSignal },
): Promise<Document[]> {
  const [edge] = await findVisible(store.buckets, filter, view, {
    ...driver,
    sort: { series: 1, date: direction },
    limit: 1,
    projection: { date: 1 },
  }).toArray();
  if (edge === undefined) return [];
  return findVisible(store.buckets, { ...filter, date: edge.date }, view, { ...driver, projection }).toArray();
}

/**
 * Exact time of the earliest (`first`) or latest (`last`) reading of each series of
 * `ids`, in that order (null for a series without readings): the `first` (or `last`)
 * over the parts of its earliest (or latest) visible series-day, found with one index
 * look-up on `{series, date}` and one read of that day's parts per series, and over
 * its readings in the tail.
 * @throws ServiceError QUERY_TIMEOUT when a lookup runs longer than `options.maxTimeMS`.
 */
export async function seriesReadingTimes(
  store: Store,
  ids: readonly string[],
  edge: Edge,
  options: QueryOptions = {},
): Promise<(Date | null)[]> {
  const direction = edge === 'first' ? 1 : -1;
  return withView(store, async (view) => {
    const tail = await tailBySeries(store, ids, view, options);
    const better = (a: number, b: number) => (edge === 'first' ? a < b : a > b);
    return Promise.all(
      ids.map(async (series) => {
        let best: number | null = null;
        for (const reading of tail.get(series) ?? []) if (best === null || better(reading.time, best)) best = reading.time;
        const stored = await limitedRead(options, (driver) =>
          partsOfEdgeDay(store, view, { series, [edge]: { $exists: true } }, direction, { [edge]: 1 }, driver),
        );
        for (const doc of stored) {
          const time = doc[edge]?.getTime();
          if (time !== undefined && (best === null || better(time, best))) best = time;
        }
        return best === null ? null : new Date(best);
      }),
    );
  });
}

/**
 * Exact time of the earliest (`first`) or latest (`last`) reading of `metric` (null
 * without readings): its registry entry's `first`/`last`, which each fold widens before
 * making its readings visible, and its readings in the tail. The entry is read after the
 * tail, so a fold made visible in between has widened what it reads.
 * @throws ServiceError QUERY_TIMEOUT when a read runs longer than `options.maxTimeMS`.
 */
export async function metricReadingTime(store: Store, metric: string, edge: Edge, options: QueryOptions = {}): Promise<Date | null> {
  return limitedRead(options, async (driver) => {
    const tail = await readTail(store, metric, await readView(store), driver);
    const entry = await store.metrics.findOne({ _id: metric }, { projection: { first: 1, last: 1 }, ...driver });
    let best = entry?.[edge]?.getTime() ?? null;
    for (const reading of tail.readings) {
      if (best === null || (edge === 'first' ? reading.time < best : reading.time > best)) best = reading.time;
    }
    return best === null ? null : new Date(best);
  });
}

/**
 * A series' latest reading of one field (see {@link latestValues}): the reading; null
 * when it is unknown (the newest document holding the field is of layout version 1);
 * undefined when the series has no reading of the field.
 */
export type LatestValue = TimedValue | null | undefined;

/**
 * The latest reading of `field` in each series of `ids`, in that order: the latest of
 * the `last` pairs of the day totals of the visible parts of the newest series-day
 * holding the field (one indexed look-up per series, `series_date_f`, and one read of
 * that day's parts), and of the series' readings of the field in the tail. Undefined
 * when the series has no reading of the field; null when that day's document was created
 * before first and last values were kept (layout version 1), whose `last` may miss readings.
 * @throws ServiceError QUERY_TIMEOUT when a look-up runs longer than `options.maxTimeMS`.
 */
export async function latestValues(
  store: Store,
  ids: readonly string[],
  field: string,
  options: QueryOptions = {},
): Promise<LatestValue[]> {
  return withView(store, async (view) => {
    const tail = await tailBySeries(store, ids, view, options);
    return Promise.all(
      ids.map(async (id) => {
        let best: TimedValue | undefined;
        for (const reading of tail.get(id) ?? []) {
          const value = reading.fields.find((entry) => entry.name === field)?.value;
          if (value === undefined) continue;
          const pair = { t: reading.time, v: value };
          if (best === undefined || isEarlier(best, pair)) best = pair;
        }
        const docs = await limitedRead(options, (driver) =>
          partsOfEdgeDay(
            store,
            view,
            { series: id, [`fields.${field}.n`]: { $gt: 0 } },
            -1,
            { _id: 0, v: 1, date: 1, [`fields.${field}.last`]: 1 },
            driver,
          ),
        );
        // A document of layout version 1 may hold any reading of its day: unknown unless
        // something later than that day is known.
        let unknownUntil = Number.NEGATIVE_INFINITY;
        for (const doc of docs) {
          const last = doc.fields?.[field]?.last;
          if ((doc.v ?? 1) < DOCUMENT_VERSION || last === undefined) {
            unknownUntil = Math.max(unknownUntil, doc.date.getTime() + DAY_MS);
            continue;
          }
          const pair = { t: last.t.getTime(), v: last.v };
          if (best === undefined || isEarlier(best, pair)) best = pair;
        }
        if (unknownUntil > Number.NEGATIVE_INFINITY && (best === undefined || best.t < unknownUntil)) return null;
        return best;
      }),
    );
  });
}

/** One of a series' latest readings: time in ms since the epoch (UTC) and field values by name. */
export interface LatestReading {
  t: number;
  f: Record<string, number>;
}

/**
 * The latest `n` readings of series `id`, newest first: its readings in the tail, and
 * the `recent` lists of the visible parts of its newest series-days (days read newest
 * first until `n` readings are found). A part's list holds its own latest readings
 * only, so the walk stops at a day with a part whose list is shorter than its readings,
 * keeping only the readings of that day no later than the earliest such part's list
 * could have left out; and before a document of layout version 1 (which has none):
 * fewer than `n` readings come back then, never a wrong one.
 * @throws ServiceError QUERY_TIMEOUT when the read runs longer than `options.maxTimeMS`.
 */
export async function latestReadings(store: Store, id: string, n: number, options: QueryOptions = {}): Promise<LatestReading[]> {
  return withView(store, async (view) => {
    const tail = (await tailBySeries(store, [id], view, options)).get(id) ?? [];
    const stored: LatestReading[] = [];
    // Stored readings later than this are all in `stored`; -Infinity once the walk saw every day.
    let cutoff = -Infinity;
    await limitedRead(options, async (driver) => {
      const cursor = findVisible(store.buckets, { series: id }, view, {
        ...driver,
        sort: { date: -1 },
        projection: { _id: 0, date: 1, v: 1, readings: 1, recent: 1, r: 1 },
        batchSize: 16,
      });
      let day: number | null = null;
      let dayReadings: LatestReading[] = [];
      let dayCutoff = -Infinity;
      let stop = false;
      const closeDay = () => {
        dayReadings.sort((a, b) => b.t - a.t);
        for (const reading of dayReadings) if (reading.t >= dayCutoff) stored.push(reading);
        if (dayCutoff > -Infinity || stored.length >= n) {
          cutoff = dayCutoff > -Infinity ? dayCutoff : (stored[stored.length - 1]?.t ?? -Infinity);
          stop = true;
        }
        dayReadings = [];
        dayCutoff = -Infinity;
      };
      try {
        for await (const doc of cursor) {
          const date = doc.date.getTime();
          if (day !== null && date !== day) {
            closeDay();
            if (stop) break;
          }
          day = date;
          if ((doc.v ?? 1) < DOCUMENT_VERSION) {
            // No latest readings kept: nothing of this day or earlier can be vouched for.
            dayCutoff = Math.max(dayCutoff, date + DAY_MS);
            continue;
          }
          // A document in the raw form keeps every reading (`r`) and no `recent`.
          const recent = doc.r ?? doc.recent ?? [];
          for (const reading of recent) dayReadings.push({ t: reading.t.getTime(), f: reading.f });
          if (recent.length < (doc.readings ?? 0)) dayCutoff = Math.max(dayCutoff, recent[0]?.t.getTime() ?? Infinity);
        }
        if (!stop && day !== null) closeDay();
      } finally {
        await cursor.close();
      }
    });
    const merged = [
      ...stored,
      ...tail.filter((reading) => reading.time >= cutoff).map((reading) => ({ t: reading.time, f: fieldsOf(reading) })),
    ];
    merged.sort((a, b) => b.t - a.t);
    return merged.slice(0, n);
  });
}

/** A reading's field values by name. */
const fieldsOf = (reading: Reading): Record<string, number> => Object.fromEntries(reading.fields.map((field) => [field.name, field.value]));
