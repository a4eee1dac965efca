/**
 * The tail: the log entries no visible fold holds yet, read for a view (one read of the
 * log as a rule), and their readings planned into the documents the pipeline's source
 * would hold once folded (docs/ingest-design.md, "3. Real-time reads").
 */
import type { Document, Filter } from 'mongodb';
import { FOLDS_ID, FOLD_STATE_COLLECTION, type ReadView, unstampedFolded } from './fold-state.ts';
import { type LogEntryDocument, entryKey, ingestLog, readingsKey, readingsOf } from './ingest-log.ts';
import { type PathTree, levelsWithin, projectDocument, slotFormDocument } from '../documents/encode.ts';
import { type PlanSettings, planReadings } from '../documents/from-readings.ts';
import type { Reading } from '../record/validate.ts';
import type { RollupDefinition } from '../model/rollup.ts';
import type { Store } from './store.ts';
import { planSettingsOf } from './registry.ts';
import { rollupContents } from '../documents/rollup.ts';

/**
 * The log entries not yet visible at fold number `visible` (of `metric`, or of every
 * metric when null), as two filters to read in this order: taken by no fold, then taken
 * by a later one (see {@link unfoldedEntries}). Each is one range of an index on `fold` (with
 * `metrics` first when `metric` is given): the embedded server scans the whole log for
 * the `$or` of both, and the log keeps a day of entries.
 */
const unfoldedRanges = (visible: number, metric: string | null): Filter<LogEntryDocument>[] =>
  [{ fold: null }, { fold: { $gt: visible } }].map((range) => (metric === null ? range : { metrics: metric, ...range }));

/**
 * How many fold numbers above a reader's V its one read of the log names
 * ({@link unfoldedEntries}): folds and compactions are numbered one after another, so
 * more than this many made visible while one read runs send it to its second way (two
 * reads in turn). Under steady ingest a read sees one or two.
 */
export const TAIL_FOLDS_AHEAD = 16;

/**
 * The one read of {@link unfoldedEntries}: the entries of `metric` (null: every metric)
 * not stamped or stamped `V + 1` to `V + TAIL_FOLDS_AHEAD` (points of the `{metrics, fold}`
 * or `{fold, receivedAt}` index, in order of arrival; `limit` when given), then, from
 * `$unionWith` in the same command, the fold state's `visible` once the log was read
 * (MongoDB manual, "$unionWith": the input's documents come first, the sub-pipeline's
 * after). A stamp only goes from none (`null`, which sorts before every number) to a
 * higher number, and only once its fold is visible; so an entry this read missed was
 * stamped above `V + TAIL_FOLDS_AHEAD` by a fold made visible before `visible` was read,
 * and `complete` is false exactly when that may have happened.
 */
async function readAhead(
  store: Pick<Store, 'db'>,
  metric: string | null,
  visible: number,
  driver: { maxTimeMS?: number; signal?: AbortSignal },
  limit: number | undefined,
): Promise<{ entries: Pick<LogEntryDocument, '_id' | 'receivedAt'>[]; complete: boolean }> {
  const numbers = [null, ...Array.from({ length: TAIL_FOLDS_AHEAD }, (_, i) => visible + 1 + i)];
  const match = metric === null ? { fold: { $in: numbers } } : { metrics: metric, fold: { $in: numbers } };
  const found = await ingestLog(store)
    .aggregate<Document>(
      [
        { $match: match },
        { $project: { _id: 1, receivedAt: 1 } },
        { $sort: { receivedAt: 1 } },
        ...(limit === undefined ? [] : [{ $limit: limit }]),
        {
          $unionWith: {
            coll: FOLD_STATE_COLLECTION,
            pipeline: [{ $match: { _id: FOLDS_ID } }, { $project: { _id: 0, visibleAfter: '$visible' } }],
          },
        },
      ],
      driver,
    )
    .toArray();
  const entries = found.filter((doc) => doc._id !== undefined) as Pick<LogEntryDocument, '_id' | 'receivedAt'>[];
  const after = (found.find((doc) => doc._id === undefined)?.visibleAfter as number | undefined) ?? 0;
  return { entries, complete: after <= visible + TAIL_FOLDS_AHEAD };
}

/** The unfolded readings a reader must add to the documents it reads. */
export interface Tail {
  /** Log entries read. */
  entries: number;
  /** Their readings of the asked metric, in the order of the log. */
  readings: Reading[];
}

/**
 * The log entries of `metric` (null: of every metric) that no fold visible in `view`
 * holds, as `{_id, receivedAt}` in order of arrival: those not stamped, but for the
 * entries of a visible fold not stamped yet ({@link unstampedFolded}), and those stamped
 * above V. One command of the database as a rule ({@link readAhead}); when more than
 * {@link TAIL_FOLDS_AHEAD} folds were made visible meanwhile, two reads in turn: the
 * entries not stamped (`{metrics, fold}` index), then those stamped above V, so that an
 * entry stamped between the two reads is found by one of them, and found once when both
 * return it.
 * @param limit at most this many entries (each read stops early); all when absent.
 * @param driver.maxTimeMS time limit of the reads (see `query-options.ts`).
 * @param onRange told the entries each read found (but those of `stamping`), as soon as
 *   it has them, before the next read: {@link readTail} fetches their readings meanwhile.
 * @throws driver errors.
 */
export async function unfoldedEntries(
  store: Pick<Store, 'db'>,
  metric: string | null,
  view: Pick<ReadView, 'visible' | 'stamping'>,
  driver: { maxTimeMS?: number; signal?: AbortSignal } = {},
  limit?: number,
  onRange?: (entries: readonly Pick<LogEntryDocument, '_id' | 'receivedAt'>[]) => void,
): Promise<Pick<LogEntryDocument, '_id' | 'receivedAt'>[]> {
  const folded = unstampedFolded(view);
  // Enough to keep `limit` once the entries left out are dropped.
  const kept = limit === undefined ? undefined : folded.size + limit;
  const found: Pick<LogEntryDocument, '_id' | 'receivedAt'>[] = [];
  const ahead = await readAhead(store, metric, view.visible, driver, kept);
  if (ahead.complete) {
    onRange?.(ahead.entries.filter((entry) => !folded.has(entryKey(entry._id))));
    found.push(...ahead.entries);
  } else {
    for (const filter of unfoldedRanges(view.visible, metric)) {
      const cursor = ingestLog(store)
        .find(filter, { ...driver, projection: { _id: 1, receivedAt: 1 } })
        .sort({ receivedAt: 1 });
      if (kept !== undefined) cursor.limit(kept);
      const range = await cursor.toArray();
      onRange?.(range.filter((entry) => !folded.has(entryKey(entry._id))));
      found.push(...range);
    }
  }
  const seen = new Set<string>();
  const entries = found.filter((entry) => {
    const id = entryKey(entry._id);
    if (seen.has(id) || folded.has(id)) return false;
    seen.add(id);
    return true;
  });
  return limit === undefined ? entries : entries.slice(0, limit);
}

/**
 * The tail of `metric` (null: of every metric) in `view`: the readings of that metric in
 * log entries no fold up to V holds (`{metrics, fold}` index): those not stamped, but
 * for the entries of a visible fold not stamped yet ({@link unstampedFolded}), and those
 * stamped above V. An entry stamped by a fold after the reader read its view has a
 * number above V, so it stays in the tail for that reader, whose documents of that fold
 * are invisible. The readings of entries this process has not decoded yet are fetched
 * once the entries are known (`onRange` of {@link unfoldedEntries}; while the second
 * range is read, when there are two), and those it appended are in its decoded-entry
 * cache, so a read of its own entries waits for one read of the log; the readings of
 * the entries it reads are held for the read itself, so a tail of more entries than the
 * process's cache keeps loses none.
 * @param driver.maxTimeMS time limit of the read (see `query-options.ts`).
 * @throws driver errors.
 */
export async function readTail(
  store: Pick<Store, 'db'>,
  metric: string | null,
  view: Pick<ReadView, 'visible' | 'stamping'>,
  driver: { maxTimeMS?: number; signal?: AbortSignal } = {},
): Promise<Tail> {
  const key = (entry: Pick<LogEntryDocument, '_id' | 'receivedAt'>) => readingsKey(store.db, entry);
  // Entries asked for: one stamped between the two ranges is found by both, and read once.
  const requested = new Set<string>();
  const reads: Promise<Map<string, Reading[]>>[] = [];
  const fetchMissing = (entries: readonly Pick<LogEntryDocument, '_id' | 'receivedAt'>[]) => {
    const fresh = entries.filter((entry) => !requested.has(key(entry)));
    if (fresh.length === 0) return;
    for (const entry of fresh) requested.add(key(entry));
    const read = readingsOf(store, fresh, { keep: true, driver });
    // Awaited below, after the ranges; a failure must not count as unhandled meanwhile.
    read.catch(() => undefined);
    reads.push(read);
  };
  const ids = await unfoldedEntries(store, metric, view, driver, undefined, fetchMissing);
  const held = new Map<string, Reading[]>();
  for (const found of await Promise.all(reads)) for (const [at, readings] of found) held.set(at, readings);
  const readings: Reading[] = [];
  for (const entry of ids) {
    for (const reading of held.get(key(entry)) ?? []) if (metric === null || reading.metric === metric) readings.push(reading);
  }
  return { entries: ids.length, readings };
}

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
export async function tailDocuments(
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
