import type { Collection, Document, Filter } from 'mongodb';
import {
  horizonsOf,
  RETENTION_LEVELS,
  targetHorizons,
  type Horizons,
  type RetentionLevel,
  type RetentionPolicy,
} from '../model/retention-policy.ts';
import { dayOfKey, type RollupDefinition } from '../model/rollup.ts';
import { ROLLUPS_COLLECTION, findRollups } from './rollups.ts';
import { deleteSummaries } from './summaries.ts';
import type { MetricDocument, Store } from './store.ts';
import type { SeriesDayDocument } from '../documents/series-day.ts';
import { finishRunning } from './fold.ts';
import { HOUR_DETAIL, MINUTE_DETAIL } from '../documents/series-day.ts';

/**
 * Sets the retention policy of metric `name` (see `model/retention-policy.ts`; validated by the
 * caller), creating its registry entry when it has none yet (with the default layout and
 * statistics). It takes effect at the next retention pass; the horizons already applied
 * stay (data removed is not brought back when a policy is lengthened).
 * @returns the metric's registry entry after the change.
 */
export async function setRetention(store: Store, name: string, policy: RetentionPolicy, now = new Date()): Promise<MetricDocument> {
  const updated = await store.metrics.findOneAndUpdate(
    { _id: name },
    {
      $set: { 'retention.policy': policy, 'retention.setAt': now },
      $setOnInsert: { fields: [], tagKeys: [], statistics: store.defaultStatistics, createdAt: now },
    },
    { upsert: true, returnDocument: 'after' },
  );
  return updated!;
}

/** What a retention pass removed at one level of one metric. */
export interface RetentionRemoval {
  metric: string;
  level: RetentionLevel;
  /** The new horizon: UTC midnight before which the level is gone. */
  horizon: Date;
  /** Series-day documents changed (`minute`, `hour`: slots unset) or deleted (`day`). */
  documents: number;
  /** Rollup documents changed (`hour`, `minute`: their quarter hours) or deleted (`day`). */
  rollupDocuments: number;
}

const rollupDocuments = (store: Store, rollup: RollupDefinition): Collection<SeriesDayDocument> =>
  store.db.collection<SeriesDayDocument>(rollup.collection);

/** `{$gte: from, $lt: to}` on `date`, without the lower end when `from` is null. */
const dateRange = (from: number | null, to: number) =>
  from === null ? { $lt: new Date(to) } : { $gte: new Date(from), $lt: new Date(to) };

/**
 * One retention pass over every metric with a policy (or only `options.metric`), as of
 * `now` (ms since epoch, UTC; the schedule passes `Date.now()`). For each metric:
 * 1. computes the horizons its policy sets at `now` (`targetHorizons`: never earlier
 *    than those applied) and raises the stored `horizons` to them first, so from then on
 *    queries refuse the levels about to go and writes refuse readings before the day
 *    horizon;
 * 2. deletes the series-day documents and the rollup documents dated before the day
 *    horizon (`deleteMany` on a `date` range: `metric_date_last` index) and the rollups'
 *    dirty marks of those days, so no rebuild re-creates them; then moves the metric's
 *    first reading time up to its earliest remaining document's;
 * 3. unsets the hour slots (`hours`, `q.hours`) of the series-day and rollup documents
 *    from the hour level's `removed` mark up to the hour horizon (`updateMany`);
 * 4. unsets the minute slots (`hours.<h>.minutes`, `q.hours.<h>.minutes` and the
 *    quarter-hour sketches `q.hours.<h>.quarters` for every hour) of the series-day documents from the minute level's `removed` mark (or the hour
 *    horizon, if later) up to the minute horizon;
 * 5. records each level's `removed` mark after its step.
 * Latest readings (`recent`, at most 50 per series and day) and day totals stay until the
 * document goes. Every step is idempotent and starts where the last one ended, so an
 * interrupted pass is finished by the next, and a pass with nothing due changes nothing.
 * Several server instances may run passes at once: they remove the same ranges.
 * With `options.metric` only that metric is looked at; once `options.signal` is aborted
 * the pass stops before the next metric (the next pass does the rest).
 * @returns what was removed, one entry per metric and level that moved (none: nothing due).
 */
export async function applyRetention(
  store: Store,
  now: number,
  options: { metric?: string; signal?: AbortSignal } = {},
): Promise<RetentionRemoval[]> {
  const filter: Filter<MetricDocument> = { 'retention.policy': { $exists: true } };
  if (options.metric !== undefined) filter._id = options.metric;
  const removals: RetentionRemoval[] = [];
  for (const metric of await store.metrics.find(filter).sort({ _id: 1 }).toArray()) {
    if (options.signal?.aborted) break;
    removals.push(...(await applyMetricRetention(store, metric, now)));
  }
  return removals;
}

/** One metric's share of {@link applyRetention}. */
async function applyMetricRetention(store: Store, metric: MetricDocument, now: number): Promise<RetentionRemoval[]> {
  const retention = metric.retention!;
  const applied = horizonsOf(retention.horizons);
  const removed = horizonsOf(retention.removed);
  const target = targetHorizons(retention.policy, applied, now);
  const due = RETENTION_LEVELS.filter((level) => target[level] !== null && target[level] !== removed[level]);
  if (due.length === 0) return [];
  const raise = Object.fromEntries(due.map((level) => [`retention.horizons.${level}`, new Date(target[level]!)]));
  await store.metrics.updateOne({ _id: metric._id }, { $max: raise });
  // A fold or compaction that read the old horizons is under way now, if at all: let it
  // end before deleting, or it could write into the removed range afterwards (every
  // later one reads the raised horizons and leaves the range alone).
  await finishRunning(store, 2 * store.foldLeaseMs);
  const rollups = await findRollups(store, [metric._id]);
  const removals: RetentionRemoval[] = [];
  const done = async (level: RetentionLevel, documents: number, rollupCount: number) => {
    const horizon = new Date(target[level]!);
    await store.metrics.updateOne({ _id: metric._id }, { $max: { [`retention.removed.${level}`]: horizon } });
    removals.push({ metric: metric._id, level, horizon, documents, rollupDocuments: rollupCount });
  };

  if (due.includes('day')) {
    const before = { metric: metric._id, date: { $lt: new Date(target.day!) } };
    const deleted = await store.seriesDays.deleteMany(before);
    // The day summaries after the documents: a fold finding none of a day takes it for
    // empty (`foldSummaries` in fold.ts), so none may go while documents remain.
    await deleteSummaries(store, before);
    let rollupCount = 0;
    for (const rollup of rollups) {
      rollupCount += (await rollupDocuments(store, rollup).deleteMany(before)).deletedCount;
      await forgetDirtyDays(store, rollup, target.day!);
    }
    if (deleted.deletedCount > 0) await moveFirstReading(store, metric._id);
    await done('day', deleted.deletedCount, rollupCount);
  }
  if (due.includes('hour')) {
    const range = { metric: metric._id, date: dateRange(later(removed.hour, target.day), target.hour!) };
    const changed = await store.seriesDays.updateMany(range, { $unset: HOUR_DETAIL });
    let rollupCount = 0;
    for (const rollup of rollups)
      rollupCount += (await rollupDocuments(store, rollup).updateMany(range, { $unset: HOUR_DETAIL })).modifiedCount;
    await done('hour', changed.modifiedCount, rollupCount);
  }
  if (due.includes('minute')) {
    const from = later(later(removed.minute, target.hour), target.day);
    const range = { metric: metric._id, date: dateRange(from, target.minute!) };
    const empty = from !== null && from >= target.minute!;
    const changed = empty ? 0 : (await store.seriesDays.updateMany(range, { $unset: MINUTE_DETAIL })).modifiedCount;
    // Rollups keep no minutes, but their quarter hours are minute detail: they go too.
    let rollupCount = 0;
    if (!empty) {
      for (const rollup of rollups)
        rollupCount += (await rollupDocuments(store, rollup).updateMany(range, { $unset: MINUTE_DETAIL })).modifiedCount;
    }
    await done('minute', changed, rollupCount);
  }
  return removals;
}

/** The later of two horizons (null: none). */
const later = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));

/** Removes a rollup's dirty marks of days before `horizon` (their documents are gone; a rebuild must not run for them). */
async function forgetDirtyDays(store: Store, rollup: RollupDefinition, horizon: number): Promise<void> {
  const keys = Object.keys(rollup.dirty ?? {}).filter((key) => dayOfKey(key) < horizon);
  if (keys.length === 0) return;
  await store.db
    .collection<RollupDefinition>(ROLLUPS_COLLECTION)
    .updateOne({ _id: rollup._id }, { $unset: Object.fromEntries(keys.map((key) => [`dirty.${key}`, ''])) });
}

/**
 * After whole days were deleted: moves the metric's first reading time (`first`) up to
 * the earliest `first` of its earliest remaining day (`$max`, so it never moves back).
 */
async function moveFirstReading(store: Store, metric: string): Promise<void> {
  const earliestDay = await store.seriesDays.findOne({ metric }, { sort: { metric: 1, date: 1 }, projection: { _id: 0, date: 1 } });
  if (earliestDay === null) return;
  const earliest = await store.seriesDays.findOne(
    { metric, date: earliestDay.date, first: { $exists: true } },
    { sort: { first: 1 }, projection: { _id: 0, first: 1 } },
  );
  if (earliest?.first !== undefined) await store.metrics.updateOne({ _id: metric }, { $max: { first: earliest.first } });
}

/**
 * Removes what a batch just wrote below the applied horizons of its metrics: a reading
 * may arrive late for a day whose minutes (or hours) retention already removed, and
 * would otherwise leave a few minute (or hour) slots there that no query reads. One
 * `updateMany` per metric and level with such days, on the series-day documents and, for
 * hours, the metric's rollup documents. Days before the day horizon never get here: the
 * record path refuses their readings.
 * @param registered the metrics' registry entries as the batch read them.
 * @param days the UTC midnights (ms) the batch wrote, per metric.
 * @param rollups the metrics' rollups as the batch read them.
 */
export async function trimLateDetail(
  store: Store,
  registered: ReadonlyMap<string, MetricDocument>,
  days: ReadonlyMap<string, ReadonlySet<number>>,
  rollups: readonly RollupDefinition[],
): Promise<void> {
  for (const [metric, written] of days) {
    const horizons: Horizons = horizonsOf(registered.get(metric)?.retention?.horizons);
    if (horizons.minute === null && horizons.hour === null) continue;
    const hourDays = [...written].filter((day) => horizons.hour !== null && day < horizons.hour);
    const minuteDays = [...written].filter((day) => horizons.minute !== null && day < horizons.minute && !hourDays.includes(day));
    const on = (list: number[]): Filter<Document> => ({ metric, date: { $in: list.map((day) => new Date(day)) } });
    if (minuteDays.length > 0) await store.seriesDays.updateMany(on(minuteDays), { $unset: MINUTE_DETAIL });
    if (hourDays.length > 0) {
      await store.seriesDays.updateMany(on(hourDays), { $unset: HOUR_DETAIL });
      for (const rollup of rollups.filter((entry) => entry.metric === metric)) {
        await rollupDocuments(store, rollup).updateMany(on(hourDays), { $unset: HOUR_DETAIL });
      }
    }
  }
}
