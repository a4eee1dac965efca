import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { ErrorCode, InputError, isDuplicateKeyError } from '../errors.ts';
import { dayKey, dayOfKey, rollupCollectionName, type RollupDefinition } from '../model/rollup.ts';
import { limitedRead, type QueryOptions } from './query-options.ts';
import { planSettingsOf } from './registry.ts';
import { CollectionName, ensureDayIndexes, type Store } from './store.ts';
import { withView } from './read-pins.ts';
import type { SeriesDayDocument } from '../documents/series-day.ts';
import { partDocument } from '../documents/encode.ts';
import { trimToHorizons } from '../documents/from-readings.ts';
import type { DayContent } from '../documents/content.ts';
import { rollupContents } from '../documents/rollup.ts';
import { fullContentOf, oldestVersion } from '../documents/decode.ts';
import { FOLDS_ID, findVisible, foldState, visibleAt } from './fold-state.ts';

/** Most rollups one metric may have: each costs one more update per group and day of every batch. */
export const ROLLUPS_PER_METRIC = 8;

/**
 * How long a dirty day rests before it is rebuilt, in ms (default 60 s): a batch that
 * found the day clean when it started and is still writing to the rollup must have
 * finished by then, or its update could land on the rebuilt documents twice. It must
 * exceed the longest a batch takes (the request time limit and the driver's timeouts).
 */
export const DEFAULT_REBUILD_GRACE_MS = 60_000;

/**
 * How long after a batch read the rollup definitions (and found its days clean) its
 * rollup writes may still start or run, in ms: half the grace period. Past it the batch
 * marks its days dirty instead of writing them, so no rollup write of a batch can land
 * on documents that a rebuild made from series-day documents already holding the batch:
 * a rebuild needs a dirty mark made after the batch's read that has rested the whole
 * grace period. The margin covers clocks that run at slightly different rates, not
 * clocks set apart (keep instances on NTP: see docs/scaling-out.md).
 */
export function rollupWriteWindow(graceMs: number): number {
  return Math.floor(graceMs / 2);
}

/** The registry of rollup definitions (one document per rollup, see `model/rollup.ts`). */
export const ROLLUPS_COLLECTION = CollectionName.rollups;

const definitions = (store: Store) => store.db.collection<RollupDefinition>(ROLLUPS_COLLECTION);
const documentsOf = (store: Store, rollup: Pick<RollupDefinition, 'collection'>): Collection<SeriesDayDocument> =>
  store.db.collection<SeriesDayDocument>(rollup.collection);

/**
 * Creates the indexes of a rollup's collection (idempotent): the series-day collection's,
 * listed and explained at `ensureDayIndexes` in `store.ts` (a rollup group is read and
 * folded as a series is), with the indexes of earlier versions that they replace dropped
 * the same way.
 * @throws driver errors (every step is safe to repeat).
 */
export async function ensureRollupIndexes(db: Db, collection: string): Promise<void> {
  await ensureDayIndexes(db, collection);
}

/**
 * The rollups of the given metrics (all of them when `metrics` is omitted), sorted by
 * metric and name. Read fresh on every call: the record path and the query planner both
 * depend on each rollup's state and dirty days being current.
 * @throws ServiceError QUERY_TIMEOUT when the read runs longer than `options.maxTimeMS`.
 */
export async function findRollups(store: Store, metrics?: readonly string[], options: QueryOptions = {}): Promise<RollupDefinition[]> {
  const filter = metrics === undefined ? {} : { metric: { $in: [...metrics] } };
  return limitedRead(options, (driver) => definitions(store).find(filter, driver).sort({ metric: 1, name: 1 }).toArray());
}

/**
 * Defines a rollup of `metric` over `tagKeys`, in state `building`: from now on every
 * batch of the metric marks the days it writes dirty, and `backfillRollup` (or the
 * server's rebuild schedule, see {@link rebuildDirtyDays}) builds it from the series-day
 * documents and makes it `ready`.
 * @returns the new definition.
 * @throws InputError NOT_FOUND when the metric has no registry entry; INVALID_ARGUMENT
 * when a tag key is not one of the metric's, a key repeats, the metric has a rollup
 * with the same name or the same tag keys, or it has `ROLLUPS_PER_METRIC` already.
 */
export async function createRollup(
  store: Store,
  input: { metric: string; name: string; tagKeys: readonly string[]; automatic?: boolean },
): Promise<RollupDefinition> {
  const metric = await store.metrics.findOne({ _id: input.metric });
  if (metric === null) throw new InputError(ErrorCode.NOT_FOUND, `Metric "${input.metric}" does not exist`, 'metric');
  const tagKeys = [...input.tagKeys].sort();
  if (new Set(tagKeys).size !== tagKeys.length) throw new InputError(ErrorCode.INVALID_ARGUMENT, 'A tag key appears twice', 'tagKeys');
  const unknown = tagKeys.filter((key) => !metric.tagKeys.includes(key));
  if (unknown.length > 0) {
    throw new InputError(
      ErrorCode.INVALID_ARGUMENT,
      `Metric "${input.metric}" has no tag key ${unknown.map((key) => `"${key}"`).join(', ')}; its tag keys are ${metric.tagKeys.join(', ') || 'none'}`,
      'tagKeys',
    );
  }
  const existing = await findRollups(store, [input.metric]);
  const clash = existing.find((rollup) => rollup.name === input.name || rollup.tagKeys.join('\u0000') === tagKeys.join('\u0000'));
  if (clash !== undefined) {
    throw new InputError(
      ErrorCode.INVALID_ARGUMENT,
      `Metric "${input.metric}" already has rollup "${clash.name}" over [${clash.tagKeys.join(', ')}]`,
      clash.name === input.name ? 'name' : 'tagKeys',
    );
  }
  if (existing.length >= ROLLUPS_PER_METRIC) {
    throw new InputError(
      ErrorCode.INVALID_ARGUMENT,
      `Metric "${input.metric}" has ${existing.length} rollups; at most ${ROLLUPS_PER_METRIC} are allowed`,
    );
  }
  const rollup: RollupDefinition = {
    _id: `${input.metric}/${input.name}`,
    metric: input.metric,
    name: input.name,
    tagKeys,
    collection: rollupCollectionName(input.metric, tagKeys),
    state: 'building',
    createdAt: new Date(),
    dirty: {},
    // Its backfill, folds and rebuilds write quarter-hour statistics into every document.
    quarters: true,
    ...(input.automatic === true ? { automatic: true } : {}),
  };
  await ensureRollupIndexes(store.db, rollup.collection);
  // Left-over documents of an earlier rollup over the same keys would be counted twice.
  await documentsOf(store, rollup).deleteMany({});
  try {
    await definitions(store).insertOne(rollup);
  } catch (error) {
    if (isDuplicateKeyError(error))
      throw new InputError(ErrorCode.INVALID_ARGUMENT, `Rollup "${input.name}" was defined concurrently`, 'name');
    throw error;
  }
  return rollup;
}

/**
 * Removes a rollup: its definition first (queries and batches stop using it at once),
 * then its documents. An automatic rollup's tag keys go to the metric's
 * `declinedRollups`, so the server does not define it again.
 * @returns false when there was no such rollup.
 */
export async function dropRollup(store: Store, metric: string, name: string): Promise<boolean> {
  const removed = await definitions(store).findOneAndDelete({ _id: `${metric}/${name}` });
  if (removed === null) return false;
  // An operator who drops an automatic rollup does not want it back: its keys are declined.
  if (removed.automatic === true) {
    await store.metrics.updateOne({ _id: metric }, { $addToSet: { declinedRollups: removed.tagKeys } });
  }
  await documentsOf(store, removed)
    .drop()
    .catch(() => undefined);
  return true;
}

/**
 * Marks days of rollups dirty (see `RollupDefinition.dirty`): `$inc` of each day's
 * counter and `$max` of its time, one update per rollup. Done by a batch before and after
 * it writes the series-day documents of those days, so a rebuild that read the day before
 * the batch's documents were written cannot be committed (see {@link rebuildRollupDay}).
 */
export async function markDirty(store: Store, dirty: readonly { rollup: Pick<RollupDefinition, '_id'>; days: readonly number[] }[]) {
  const now = new Date();
  await Promise.all(dirty.map(({ rollup, days }) => definitions(store).updateOne({ _id: rollup._id }, dirtyDays(days, now))));
}

/** The update marking `days` (UTC midnights, ms) dirty as of `at`: `$inc` of each day's counter, `$max` of its time. */
function dirtyDays(days: Iterable<number>, at: Date): { $inc: Record<string, number>; $max: Record<string, Date> } {
  const update = { $inc: {} as Record<string, number>, $max: {} as Record<string, Date> };
  for (const day of days) {
    update.$inc[`dirty.${dayKey(day)}.n`] = 1;
    update.$max[`dirty.${dayKey(day)}.at`] = at;
  }
  return update;
}

/** What {@link rebuildRollupDay} did. */
export type RebuildOutcome =
  /** The day was rebuilt and is clean now. */
  | 'rebuilt'
  /** The day was not dirty. */
  | 'clean'
  /** A batch marked the day within the grace period, or another process is rebuilding it: left for later. */
  | 'resting'
  /** A batch marked the day while it was being rebuilt: left dirty, for a later rebuild. */
  | 'changed';

/** How long a rebuild holds its lease on a day (another process may take the day over after that), in ms. */
const REBUILD_LEASE_MS = 10 * 60_000;

/**
 * Rebuilds the documents of one dirty day of a rollup from the series-day documents:
 * 1. reads the day's dirty counter `n0` (a day marked within `graceMs` is left alone) and
 *    takes a lease on the day (compare and set on `n0` and no other live lease), so two
 *    server instances never rebuild the same day at once;
 * 2. reads the visible fold number V and every series-day document of the metric and
 *    day visible at V, cuts them to the metric's retention horizons (`trimToHorizons`: no
 *    hour slots for a day past the hour horizon, even from a raw document's readings),
 *    merges them per rollup group (`rollupContents`) and replaces the
 *    day's rollup documents visible at V with the result (deleted, then inserted whole
 *    with `f: V` and the ids of fold V's parts: `partDocument`); rollup parts of later
 *    folds (`f > V`) stay, and add the readings the series-day documents read here did
 *    not hold yet;
 * 3. clears the day only if its counter is still `n0`, the lease still its own, and no
 *    compaction of the day is under way or was made visible after V (it merged rollup
 *    documents this rebuild replaced, and would hide the rebuilt ones: see
 *    `compactOnce`); otherwise gives the lease back and leaves the day dirty.
 * A fold writes a dirty day's series-day parts between two increments of its counter
 * and writes no rollup part for it, so a fold whose parts the rebuild may have missed
 * makes step 3 fail, and the day stays dirty. A fold that finds the day clean writes
 * its own rollup parts, with its number, which add to the rebuilt documents.
 * Queries read the series-day documents of a dirty day, so they never see step 2 half done.
 */
export async function rebuildRollupDay(
  store: Store,
  rollupId: string,
  day: number,
  graceMs = DEFAULT_REBUILD_GRACE_MS,
): Promise<RebuildOutcome> {
  const key = dayKey(day);
  const path = `dirty.${key}`;
  const rollup = await definitions(store).findOne({ _id: rollupId });
  const mark = rollup?.dirty?.[key];
  if (rollup === null || mark === undefined) return 'clean';
  const now = Date.now();
  if (now - mark.at.getTime() < graceMs) return 'resting';
  const lease = randomUUID();
  const taken = await definitions(store).updateOne(
    { _id: rollupId, [`${path}.n`]: mark.n, [`${path}.until`]: { $not: { $gt: new Date(now) } } },
    { $set: { [`${path}.lease`]: lease, [`${path}.until`]: new Date(now + REBUILD_LEASE_MS) } },
  );
  if (taken.modifiedCount !== 1) return 'resting';
  const date = new Date(day);
  const writes: DayContent[] = [];
  const sources: Pick<SeriesDayDocument, 'v'>[] = [];
  // Everything folded up to V now; parts of later folds (f > V) stay, as they add to it.
  // The view stays pinned while the parts are read, so a compaction's clean-up keeps them.
  const visible = await withView(store, async (view) => {
    for await (const doc of findVisible(store.seriesDays, { metric: rollup.metric, date }, view, {
      projection: { recent: 0, batches: 0 },
    })) {
      // Every level, minutes too: the rollup's quarter hours are merged from them.
      writes.push(fullContentOf(doc));
      sources.push(doc);
    }
    return view.visible;
  });
  // Cut to the metric's retention horizons as a fold's writes are: a document in the raw
  // form of a day past the hour horizon still holds its readings, whose hour slots the
  // horizon removed everywhere else.
  const { horizonsOf } = await planSettingsOf(store, [rollup.metric]);
  const merged = rollupContents(trimToHorizons(writes, horizonsOf), rollup);
  const collection = documentsOf(store, rollup);
  // `date` first: a planner that serves one condition of this filter alone (the embedded
  // server) takes the first it has an index for, and `date_f` selects one day.
  await collection.deleteMany({ date, metric: rollup.metric, ...visibleAt(visible) });
  const version = oldestVersion(sources);
  if (merged.length > 0) {
    // Ids of parts of fold V (`partDocument`): the delete above removed every document
    // with `f <= V`, so only a second rebuild of the day at the same V, or a late insert
    // of fold V's own part by a folder that lost its lease, can hold them; whichever
    // inserts second fails with a duplicate key instead of doubling the day.
    const documents = merged.map((write) => partDocument(write, visible, version) as unknown as SeriesDayDocument);
    await collection.insertMany(documents, { ordered: false });
  }
  // A compaction of the day after V merged (or is merging) rollup documents this rebuild
  // replaced, and its merge would hide what was inserted here: the day stays dirty, and
  // a later rebuild reads past that compaction.
  const state = await foldState(store.db).findOne({ _id: FOLDS_ID }, { projection: { running: 1, compacted: 1 } });
  const compacting = state?.running?.compact?.includes(day) === true || (state?.compacted?.[String(day)] ?? 0) > visible;
  const cleared = compacting
    ? { modifiedCount: 0 }
    : await definitions(store).updateOne({ _id: rollupId, [`${path}.n`]: mark.n, [`${path}.lease`]: lease }, { $unset: { [path]: '' } });
  if (cleared.modifiedCount === 1) return 'rebuilt';
  // Marked meanwhile: give the lease back so the next pass can rebuild the day again.
  await definitions(store).updateOne(
    { _id: rollupId, [`${path}.lease`]: lease },
    { $unset: { [`${path}.lease`]: '', [`${path}.until`]: '' } },
  );
  return 'changed';
}

/** Progress of a backfill or a rebuild pass: days done of days to do. */
export type RebuildProgress = (done: number, total: number) => void;

/**
 * Builds a `building` rollup for the data already stored and makes it `ready`:
 * 1. waits until `graceMs` after the definition, so batches that started before it
 *    existed (and so neither write the rollup nor mark days dirty) have finished;
 * 2. marks every day of the metric that has series-day documents dirty and makes the
 *    rollup `ready` in one update (from then on batches write clean days directly);
 * 3. rebuilds the dirty days one by one ({@link rebuildRollupDay}), reporting progress,
 *    until none is left or only days marked within `graceMs` remain (those are rebuilt
 *    by the next pass of {@link rebuildDirtyDays}).
 * Queries use the rollup for a range once it is ready and no day of the range is dirty.
 * @returns the days rebuilt and the days still dirty.
 * @throws InputError NOT_FOUND when there is no such rollup.
 */
export async function backfillRollup(
  store: Store,
  metric: string,
  name: string,
  options: { graceMs?: number; onProgress?: RebuildProgress; sleep?: (ms: number) => Promise<void>; signal?: AbortSignal } = {},
): Promise<{ rebuilt: number; dirty: number }> {
  const graceMs = options.graceMs ?? DEFAULT_REBUILD_GRACE_MS;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const id = `${metric}/${name}`;
  const rollup = await definitions(store).findOne({ _id: id });
  if (rollup === null) throw new InputError(ErrorCode.NOT_FOUND, `Metric "${metric}" has no rollup "${name}"`, 'name');
  const wait = rollup.createdAt.getTime() + graceMs - Date.now();
  if (wait > 0) await sleep(wait);
  if (rollup.state === 'building') {
    const days = ((await store.seriesDays.distinct('date', { metric })) as Date[]).map((date) => date.getTime());
    // Dirty as of the grace period ago, so the days can be rebuilt at once; one update
    // marks them and makes the rollup ready.
    const marks = days.length === 0 ? {} : dirtyDays(days, new Date(Date.now() - graceMs));
    await definitions(store).updateOne({ _id: id }, { ...marks, $set: { state: 'ready' } });
  }
  return rebuildDays(store, id, graceMs, options.onProgress, options.signal);
}

/**
 * Rebuilds the dirty days of one rollup that have rested `graceMs` (see {@link rebuildRollupDay}),
 * one by one; once `signal` is aborted it stops before the next day (the days left stay
 * dirty, so queries read the series for them, and the next pass rebuilds them).
 */
async function rebuildDays(store: Store, id: string, graceMs: number, onProgress?: RebuildProgress, signal?: AbortSignal) {
  let rebuilt = 0;
  const current = await definitions(store).findOne({ _id: id });
  const days = Object.keys(current?.dirty ?? {})
    .sort()
    .map(dayOfKey);
  onProgress?.(0, days.length);
  for (const [index, day] of days.entries()) {
    if (signal?.aborted) break;
    if ((await rebuildRollupDay(store, id, day, graceMs)) === 'rebuilt') rebuilt += 1;
    onProgress?.(index + 1, days.length);
  }
  const after = await definitions(store).findOne({ _id: id });
  return { rebuilt, dirty: Object.keys(after?.dirty ?? {}).length };
}

/**
 * One pass over every rollup: backfills the rollups still `building` once `graceMs` has
 * passed since their definition (see {@link backfillRollup}), and rebuilds the dirty
 * days of the ready ones that have rested `graceMs` (days a retried batch, a failed
 * rollup write or a batch of the building phase marked). The server runs it on a
 * schedule (config `ROLLUP_REBUILD_SECONDS`, `jobs/rollup-job.ts`). Once `options.signal`
 * is aborted the pass stops before the next rollup or day (the next pass does the rest).
 * @returns the days rebuilt and the days still dirty, over the rollups looked at.
 */
export async function rebuildDirtyDays(
  store: Store,
  graceMs = DEFAULT_REBUILD_GRACE_MS,
  options: { signal?: AbortSignal } = {},
): Promise<{ rebuilt: number; dirty: number }> {
  const total = { rebuilt: 0, dirty: 0 };
  for (const rollup of await findRollups(store)) {
    if (options.signal?.aborted) break;
    let outcome: { rebuilt: number; dirty: number } | undefined;
    if (rollup.state === 'building') {
      if (Date.now() - rollup.createdAt.getTime() >= graceMs)
        outcome = await backfillRollup(store, rollup.metric, rollup.name, { graceMs, signal: options.signal });
    } else if (Object.keys(rollup.dirty ?? {}).length > 0) {
      outcome = await rebuildDays(store, rollup._id, graceMs, undefined, options.signal);
    }
    total.rebuilt += outcome?.rebuilt ?? 0;
    total.dirty += outcome?.dirty ?? Object.keys(rollup.dirty ?? {}).length;
  }
  return total;
}
