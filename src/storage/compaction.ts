/**
 * Compaction (docs/ingest-design.md, "Compaction"): the parts of a day merged into one
 * document per series-day (and rollup group) in runs of similar size, sealed runs left
 * alone, day summaries merged alike, and the replaced parts deleted once no read can
 * still need them.
 */
import type { Collection, Document, Filter } from 'mongodb';
import { CollectionName, type Store, documentForms } from './store.ts';
import { type CompactionRun, FOLDS_ID, type FoldStateDocument, findVisible, foldState, replacedBy } from './fold-state.ts';
import { type DaySummary, mergeSummaries, summariesOfDay, summarizeDays } from '../documents/summaries.ts';
import { type DocumentForms, SLOT_FORM, type SeriesDayDocument } from '../documents/series-day.ts';
import { LeaseLost, leaseDue, takeLease, leaseLeft } from './lease.ts';
import { PIN_REFRESH_MS, lowestPin } from './read-pins.ts';
import { type PlanSettings, trimToHorizons } from '../documents/from-readings.ts';
import { deleteSummaries, findSummaries } from './summaries.ts';
import { findRollups } from './rollups.ts';
import { insertOnce, insertParts, insertSummaries } from './parts.ts';
import { mergeParts } from '../documents/merge.ts';
import { partDocument } from '../documents/encode.ts';
import { planSettingsOf } from './registry.ts';

/** Folds that wrote to a day before a compaction merges its parts (`COMPACT_AFTER_FOLDS`). */
export const DEFAULT_COMPACT_AFTER_FOLDS = 8;

/** Days one compaction merges at most. */
const COMPACT_DAYS = 4;

/** What one call of {@link compactOnce} did. */
export interface CompactOutcome {
  /**
   * False when another holder has the lease, a fold is under way, or there was nothing to
   * do and no lease to take or renew (then it was not asked for); nothing was done.
   */
  leased: boolean;
  /** The compaction made visible, or null when no day was due. */
  compaction: number | null;
  /** Days merged. */
  days: number;
  /** Parts read and merged. */
  merged: number;
  /** Merged documents inserted now. */
  documents: number;
  /** Replaced parts deleted now (of compactions past their grace period). */
  deleted: number;
}

/**
 * Deletes the parts replaced by compactions no reader can still need, one range delete
 * per compaction, then forgets them (`$pull`, by the lease holder): those whose grace
 * period has passed (no reader that began before their flip can still run) and, with
 * `pinned`, those every live read pin has passed (`storage/read-pins.ts`: no read holds
 * a view from before their flip). Deleting first keeps every reader right: one that
 * still reads the record excludes parts that are gone.
 * @returns the parts deleted.
 */
async function dropReplaced(store: Store, holder: string, state: FoldStateDocument, graceMs: number, pinned: boolean): Promise<number> {
  const records = state.compactions ?? [];
  if (records.length === 0) return 0;
  const lowest = pinned ? await lowestPin(store.db, graceMs + PIN_REFRESH_MS) : Number.NEGATIVE_INFINITY;
  const due = records.filter((record) => Date.now() - record.at.getTime() >= graceMs || record.c <= lowest);
  if (due.length === 0) return 0;
  // The rollup collections, read once for every compaction deleted now.
  const collections = [store.seriesDays, ...(await findRollups(store)).map((rollup) => store.db.collection(rollup.collection))];
  let deleted = 0;
  for (const record of due) {
    for (const collection of collections) {
      for (const filter of replacedBy(record)) deleted += (await collection.deleteMany(filter)).deletedCount;
    }
    // The day summaries its new ones replaced: every older one of a day merged whole; on
    // the other days, those of each metric it wrote a `whole` summary for.
    const summaries = store.db.collection<DaySummary>(CollectionName.summaries);
    const whole = record.days.filter((_, i) => (record.from?.[i] ?? 0) === 0);
    const partial = record.days.filter((_, i) => (record.from?.[i] ?? 0) > 0);
    const composed =
      partial.length === 0
        ? []
        : await summaries.find({ date: { $in: partial }, f: record.c, kind: 'whole' }, { projection: { metric: 1, date: 1 } }).toArray();
    const replaced = [
      ...(whole.length > 0 ? [{ date: { $in: whole } }] : []),
      ...composed.map((summary) => ({ metric: summary.metric, date: summary.date })),
    ];
    if (replaced.length > 0) await deleteSummaries(store, { f: { $lt: record.c }, $or: replaced });
    await foldState(store.db).updateOne({ _id: FOLDS_ID, 'lease.holder': holder }, { $pull: { compactions: { c: record.c } } });
  }
  return deleted;
}

/** Default time without a fold writing to a day after which a day of two folds or more is compacted (`COMPACT_QUIET_MS`): one minute. */
export const DEFAULT_COMPACT_QUIET_MS = 60_000;

/**
 * When a day counts as quiet: `now` (ms since the epoch, the caller's clock) and
 * `quietMs`, the time since the last fold that wrote to it (`written`) after which it
 * does. A day without `written` (folded before it was kept) is quiet.
 */
export interface QuietRule {
  now: number;
  quietMs: number;
}

/**
 * The UTC midnights (ms, ascending) of the days due for a compaction: those that
 * `afterFolds` folds or more wrote to since their last compaction (`touched`), and with
 * `quiet`, also those of two folds or more that no fold wrote to for `quiet.quietMs`
 * (a day imported in time order, or yesterday once today's writes began, that would
 * otherwise keep a part per fold until `afterFolds` folds more came). Pure.
 */
export const dueDays = (state: Pick<FoldStateDocument, 'touched' | 'written'>, afterFolds: number, quiet?: QuietRule): number[] =>
  Object.entries(state.touched ?? {})
    .filter(([day, folds]) => {
      if (folds >= afterFolds) return true;
      if (quiet === undefined || folds < 2) return false;
      const written = state.written?.[day];
      return written === undefined || quiet.now - new Date(written).getTime() >= quiet.quietMs;
    })
    .map(([day]) => Number(day))
    .sort((a, b) => a - b);

/**
 * Whether {@link compactOnce} has anything to do in fold state `state`: a compaction
 * under way (left by a holder that stopped), compactions whose replaced parts are still
 * to be deleted, or a day due ({@link dueDays}: `afterFolds` folds wrote to it, or with
 * `quiet`, two or more and it is quiet). Pure.
 */
export function compactionWork(
  state: Pick<FoldStateDocument, 'running' | 'compactions' | 'touched' | 'written'> | null,
  afterFolds: number,
  quiet?: QuietRule,
): boolean {
  if (state === null) return false;
  if (state.running?.compact !== undefined) return true;
  if ((state.compactions ?? []).length > 0) return true;
  return dueDays(state, afterFolds, quiet).length > 0;
}

/**
 * Merges the parts of the days that many folds wrote to (docs/ingest-design.md,
 * "Compaction"), as one numbered step under the lease, like a fold:
 * 1. reads the fold state, and does nothing (without taking the lease) when there is
 *    nothing to do ({@link compactionWork}) and the lease is held with more than half its
 *    time left ({@link leaseDue}); takes or renews the lease; deletes the parts
 *    of earlier compactions whose grace period `graceMs` has passed; does nothing while a
 *    fold is under way;
 * 2. chooses up to 4 days due ({@link dueDays}: their `touched` count reached
 *    `afterFolds`, or with `quietMs` it is two or more and no fold wrote to the day for
 *    `quietMs`; the holder's clock against the folds' `written` times) and records
 *    `running: {seq: V + 1, compact: days}` (compare-and-set, as a fold);
 * 3. reads the series-day documents of those days visible at V (every one for a
 *    whole-day compaction; with `tiered`, only those from the fold number
 *    `tieredFrom` gives: the parts since the day's last compaction and the newest runs
 *    of earlier compactions no larger than them, as log-structured stores merge runs
 *    of similar size), merges each series-day's documents into one
 *    (`mergeParts`, every level, sketches and latest readings; trimmed to the
 *    retention horizons, and none for a day retention deleted meanwhile), and inserts
 *    them with `f: seq` (`_id` `<series>:<day>:<seq>`; a series-day of one document is
 *    rewritten too, so what it replaces is one range per day), with a `whole` day
 *    summary of each metric and day (`_id` `<metric>:<day>:<seq>`): on the days merged
 *    whole from the merged documents (`summarizeDays`), on the others from the day's
 *    summaries visible at V (`composeSummaries`; none where those are one `whole`
 *    summary already or answer nothing); the older summaries they replace are deleted
 *    with the parts the compaction replaced. A day whose summaries a deletion's `void`
 *    made answer nothing is merged whole (`voidedDays`). The rollup documents of every
 *    rollup in the same range are merged too, whatever their metric;
 * 4. makes it visible: compare-and-set `visible: seq`, resets the days' `touched`, keeps
 *    the days' runs (`runsAfter`), and records `{c: seq, days, from}`: from then on
 *    readers skip the documents of those days it replaced (`visibleIn`, `replacedBy`),
 *    and after `graceMs` they are deleted.
 * The documents of the metrics' rollups on those days are merged the same way, per
 * rollup group and day, and skipped by readers alike. A rollup rebuild of such a day
 * that read the fold state before this compaction's flip leaves the day dirty
 * (`rebuildRollupDay`), so a merge of parts the rebuild replaced never stays visible.
 * A crash between any two steps is completed by the next holder with the same days and
 * the same document ids.
 * @param options.afterFolds folds that wrote to a day before it is compacted (default 8).
 * @param options.tiered merge in tiers (`tieredFrom`; the server's fold job does);
 * default false: every compaction merges its days whole.
 * @param options.fanIn with `tiered`, runs of one size merged at once (`tieredFrom`; default 2).
 * @param options.sealReadings with `tiered`, readings per document on average that seal
 * a run (`tieredFrom`, `COMPACT_SEAL_READINGS`); default 0: none is sealed.
 * @param options.graceMs how long replaced parts are kept after the flip: longer than any
 * query may run (the server uses QUERY_TIMEOUT_MS + 30 s; default 60 s).
 * @param options.pinned delete replaced parts before the grace period ends once every
 * live read pin is past the compaction (`storage/read-pins.ts`; the server's fold job
 * does; default false: only after the grace period).
 */
export async function compactOnce(
  store: Store,
  holder: string,
  options: {
    afterFolds?: number;
    quietMs?: number;
    graceMs?: number;
    tiered?: boolean;
    fanIn?: number;
    sealReadings?: number;
    pinned?: boolean;
  } = {},
): Promise<CompactOutcome> {
  const outcome: CompactOutcome = { leased: false, compaction: null, days: 0, merged: 0, documents: 0, deleted: 0 };
  const afterFolds = options.afterFolds ?? DEFAULT_COMPACT_AFTER_FOLDS;
  const quiet = options.quietMs === undefined ? undefined : { now: Date.now(), quietMs: options.quietMs };
  // Read first, and leased only with something to do or a lease to take or renew: an
  // idle server's folder looks several times a second, and each lease is a journaled
  // write of the fold state.
  const current = await foldState(store.db).findOne(
    { _id: FOLDS_ID },
    { projection: { running: 1, compactions: 1, touched: 1, written: 1, lease: 1 } },
  );
  if (!compactionWork(current, afterFolds, quiet) && !leaseDue(current, holder, store.foldLeaseMs, Date.now())) return outcome;
  const state = await takeLease(store, holder);
  if (state === null) return outcome;
  outcome.deleted = await dropReplaced(store, holder, state, options.graceMs ?? 60_000, options.pinned ?? false);
  let running = state.running;
  if (running !== null && running.compact === undefined) return outcome;
  outcome.leased = true;
  if (running === null) {
    const due = dueDays(state, afterFolds, quiet).slice(0, COMPACT_DAYS);
    if (due.length === 0) return outcome;
    const voided = options.tiered === true ? await voidedDays(store, due) : new Set<number>();
    const from = due.map((day) =>
      options.tiered === true && !voided.has(day)
        ? tieredFrom(
            state.runs?.[String(day)],
            state.compacted?.[String(day)],
            state.touched?.[String(day)] ?? 0,
            options.fanIn,
            options.sealReadings,
          )
        : 0,
    );
    running = { seq: state.visible + 1, entries: [], compact: due, from };
    const recorded = await foldState(store.db).updateOne(
      { _id: FOLDS_ID, visible: state.visible, running: null, 'lease.holder': holder },
      { $set: { running } },
    );
    if (recorded.modifiedCount !== 1) return { ...outcome, leased: false };
  }
  const seq = running.seq;
  const days = (running.compact ?? []).map((day) => new Date(day));
  const view = { visible: seq - 1, compactions: (state.compactions ?? []).filter((record) => record.c < seq) };
  const from = running.from ?? days.map(() => 0);
  // What the compaction replaces on each day: every document visible at V (a whole-day
  // compaction), or the parts since the day's last compaction.
  // Read by the `date_f` index (see `findVisible`), then kept when visible at V.
  const replacedOn = (date: Date, i: number): Filter<Document> => ({
    date,
    ...(from[i]! > 0 ? { f: { $gte: from[i], $lt: seq } } : {}),
  });
  // Every rollup, not only those of the metrics merged here (read beside the documents):
  // readers skip, and the clean-up deletes, what the compaction replaced in every rollup
  // collection, and a rollup rebuilt at a fold number in a partial compaction's range
  // may belong to a metric with no part there.
  const [byDay, rollups] = await Promise.all([
    Promise.all(days.map((date, i) => findVisible(store.seriesDays, replacedOn(date, i), view).toArray())),
    findRollups(store),
  ]);
  const docs = byDay.flat();
  const metrics = [...new Set([...docs.map((doc) => doc.metric), ...rollups.map((rollup) => rollup.metric)])];
  const settings = await planSettingsOf(store, metrics);
  const merged = mergeDays(
    docs,
    settings,
    (metric) => settings.settingsOf(metric).latestReadings,
    seq,
    documentForms(store),
  ) as SeriesDayDocument[];
  // The day summaries of the days merged whole: what the merged documents of each metric
  // add up to; of the others, the metrics' summaries visible at V merged into one.
  const wholeDays = new Set(days.filter((_, i) => from[i] === 0).map((day) => day.getTime()));
  const summaries = [
    ...summarizeDays(
      merged.filter((doc) => wholeDays.has(doc.date.getTime())),
      seq,
    ),
    ...(await composeSummaries(
      store,
      merged.filter((doc) => !wholeDays.has(doc.date.getTime())),
      seq,
    )),
  ];
  // The rollups of the same metrics, over the same documents of the same days: the
  // readers' `visibleIn` skips what the compaction replaced in every collection alike.
  const rollupMerged: { collection: Collection<Document>; documents: Document[] }[] = [];
  for (const rollup of rollups) {
    const collection = store.db.collection<SeriesDayDocument>(rollup.collection);
    const rollupDocs = (await Promise.all(days.map((date, i) => findVisible(collection, replacedOn(date, i), view).toArray()))).flat();
    outcome.merged += rollupDocs.length;
    rollupMerged.push({
      collection: collection as unknown as Collection<Document>,
      documents: mergeDays(rollupDocs, settings, () => 0, seq),
    });
  }
  try {
    outcome.documents = await insertParts(store, holder, store.seriesDays as unknown as Collection<Document>, merged, 'compact:mid-merge');
    for (const { collection, documents } of rollupMerged) {
      outcome.documents += await insertOnce(collection, documents, await leaseLeft(store, holder));
    }
    await insertSummaries(store, summaries, await leaseLeft(store, holder));
  } catch (error) {
    if (error instanceof LeaseLost) return { ...outcome, leased: false };
    throw error;
  }
  const flipped = await foldState(store.db).updateOne(
    { _id: FOLDS_ID, visible: seq - 1, 'running.seq': seq, 'lease.holder': holder },
    {
      $set: {
        visible: seq,
        running: null,
        ...Object.fromEntries(
          days.flatMap((day, i) => [
            [`compacted.${day.getTime()}`, seq],
            [
              `runs.${day.getTime()}`,
              runsAfter(state.runs?.[String(day.getTime())], from[i]!, state.touched?.[String(day.getTime())] ?? 0, writtenOn(merged, day)),
            ],
          ]),
        ),
      },
      $unset: Object.fromEntries(days.flatMap((day) => [`touched.${day.getTime()}`, `written.${day.getTime()}`].map((path) => [path, '']))),
      $push: { compactions: { c: seq, days, from, at: new Date() } },
    },
  );
  if (flipped.modifiedCount !== 1) return { ...outcome, leased: false };
  return { ...outcome, compaction: seq, days: days.length, merged: outcome.merged + docs.length };
}

/**
 * Where a tiered compaction of a day begins (pure; docs/ingest-design.md, "Compaction"),
 * as log-structured stores merge runs of similar size: the parts of the `folds` folds
 * since the day's last compaction `last` form a new run, which takes in every run from
 * the oldest one whose size (in folds) times `fanIn - 1` is no more than all the runs
 * after it and the new folds together. With the default fan-in of 2, each run then stays
 * larger than all newer runs together, so a day keeps at most log2(its folds) + 1 runs,
 * and a fold's parts are rewritten only into a run at least twice as large, at most
 * log2(its day's folds) + 1 times; merging the whole day every few compactions rewrites
 * them a number of times that grows with the day. With runs of one size this is a
 * counter in base `fanIn`: with 2, a day is merged whole at its 1st, 2nd, 4th, 8th...
 * compaction; with 4, at its 1st, 4th, 16th..., keeping up to 3 runs of each size,
 * each fold's parts rewritten about half as often (the "minimum threshold" of
 * size-tiered compaction in Cassandra). In general each run times `fanIn - 1` stays
 * larger than all newer runs together, and a rewrite puts a fold's parts into a run at
 * least `fanIn / (fanIn - 1)` times as large as the one they leave.
 *
 * A run whose documents hold `sealReadings` readings or more each on average (over the
 * day's series-days) is sealed: it is never taken in again, and neither is any run
 * before it, so merges begin after the newest sealed run. The open runs after it then
 * hold fewer readings than that each, and a merge takes in at most about `fanIn` times
 * the newest of them taken in (each run times `fanIn - 1` being larger than the newer
 * ones together), so on a day of dense series a compaction rewrites at most about
 * `fanIn` times `sealReadings` readings of a series-day plus the new folds, however full
 * the day. A sparse day's documents never reach it and merge as before (the largest-run
 * limit of LevelDB's and Cassandra's compactions, counted in readings per series-day
 * rather than in bytes). A day merged whole (never compacted, runs unknown, or voided by
 * a deletion) takes in its sealed runs too.
 * @param runs the day's runs, oldest first (`FoldStateDocument.runs`); absent: none known.
 * @param last the number of the day's last compaction; absent: never compacted.
 * @param folds the folds that wrote to the day since then (`FoldStateDocument.touched`).
 * @param fanIn runs of one size merged at once, at least 2 (`COMPACT_FAN_IN`).
 * @param sealReadings readings per document on average that seal a run
 * (`COMPACT_SEAL_READINGS`); absent or 0: no run is sealed.
 * @returns the lowest fold number to merge: 0 (the whole day, documents without `f`
 * included) when the day has no known runs (none, or runs that do not begin at 0) or
 * the oldest run is taken in.
 */
export function tieredFrom(
  runs: readonly CompactionRun[] | undefined,
  last: number | undefined,
  folds: number,
  fanIn = 2,
  sealReadings = 0,
): number {
  if (last === undefined || runs === undefined || runs[0]?.from !== 0) return 0;
  const open = runs.slice(runs.findLastIndex((run) => isSealed(run, sealReadings)) + 1);
  let newer = folds + open.reduce((sum, run) => sum + run.folds, 0);
  for (const run of open) {
    newer -= run.folds;
    if (run.folds * (fanIn - 1) <= newer) return run.from;
  }
  return last + 1;
}

/** Whether `run` is sealed: its documents hold `sealReadings` readings or more each on average (never when 0, or when not counted). */
const isSealed = (run: CompactionRun, sealReadings: number) =>
  sealReadings > 0 &&
  run.documents !== undefined &&
  run.readings !== undefined &&
  run.documents > 0 &&
  run.readings >= sealReadings * run.documents;

/**
 * A day's runs once a compaction merged its documents from fold number `from` (pure):
 * the runs that begin below `from` stay, the others and the `folds` folds since the last
 * compaction become one run beginning at `from` (0: the whole day, one run). None when
 * `from` is above 0 and the day's runs were not known (a compaction recorded by a
 * version that kept none): its next compaction then merges it whole.
 * @param runs the day's runs before the compaction, oldest first; absent: none known.
 * @param from the lowest fold number the compaction merged on the day (`tieredFrom`, or 0).
 * @param folds the folds that wrote to the day since its last compaction.
 * @param written the series-day documents the compaction wrote for the day and the
 * readings they hold, recorded on the new run (see `CompactionRun.documents`); absent:
 * not recorded.
 * @returns the day's runs after it, oldest first.
 */
export function runsAfter(
  runs: readonly CompactionRun[] | undefined,
  from: number,
  folds: number,
  written?: { documents: number; readings: number },
): CompactionRun[] {
  if (from > 0 && (runs === undefined || runs[0]?.from !== 0)) return [];
  const kept = (runs ?? []).filter((run) => run.from < from);
  const taken = (runs ?? []).filter((run) => run.from >= from).reduce((sum, run) => sum + run.folds, 0);
  return [...kept, { from, folds: taken + folds, ...written }];
}

/** The documents among `merged` of `day` (a compaction's new run there) and the readings they hold. */
function writtenOn(merged: readonly SeriesDayDocument[], day: Date): { documents: number; readings: number } {
  const written = { documents: 0, readings: 0 };
  for (const doc of merged) {
    if (doc.date.getTime() !== day.getTime()) continue;
    written.documents += 1;
    written.readings += doc.readings ?? 0;
  }
  return written;
}

/**
 * The UTC days among `days` (ms) where some metric's day summaries answer nothing
 * because a deletion's `void` is as new as its newest `whole` one or newer (see
 * `summariesOfDay`): a compaction in tiers merges those whole, since only a whole-day
 * merge can write the summary that answers them again.
 */
async function voidedDays(store: Store, days: readonly number[]): Promise<Set<number>> {
  const found = await store.db
    .collection<DaySummary>(CollectionName.summaries)
    .find(
      { date: { $in: days.map((day) => new Date(day)) }, kind: { $in: ['whole', 'void'] } },
      { projection: { metric: 1, date: 1, f: 1, kind: 1 } },
    )
    .toArray();
  // A metric-day with a `whole` or a `void` summary whose summaries answer nothing at any view.
  const voided = new Set<number>();
  for (const ofMetricDay of byMetricDay(found).values()) {
    if (summariesOfDay(ofMetricDay, Number.POSITIVE_INFINITY, null).length === 0) voided.add(ofMetricDay[0]!.date.getTime());
  }
  return voided;
}

/** `items` grouped by the key `keyOf` gives, each group and the groups in the items' order. */
function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/** `summaries` grouped by metric and day (`<metric>:<day ms>`). */
const byMetricDay = <S extends Pick<DaySummary, 'metric' | 'date'>>(summaries: readonly S[]): Map<string, S[]> =>
  groupBy(summaries, (summary) => `${summary.metric}:${summary.date.getTime()}`);

/**
 * The `whole` day summaries of compaction `seq` on days it did not merge whole: for each
 * metric and day among `merged`, the summaries visible at `seq - 1` that answer it
 * (`summariesOfDay`) merged into one (`mergeSummaries`), when there are more than one.
 * None for a metric-day whose summaries answer nothing (none whole, or a deletion's
 * `void` as new): its next whole-day compaction writes one (for a voided day, its
 * next compaction: `voidedDays`). Readers at `seq` or later
 * then read that summary and the folds' after it, a few per day however long ago the
 * day was merged whole.
 */
async function composeSummaries(store: Store, merged: readonly SeriesDayDocument[], seq: number): Promise<DaySummary[]> {
  const pairs = new Map<string, { metric: string; date: Date }>();
  for (const doc of merged) pairs.set(`${doc.metric}:${doc.date.getTime()}`, { metric: doc.metric, date: doc.date });
  if (pairs.size === 0) return [];
  const metrics = [...new Set([...pairs.values()].map((pair) => pair.metric))];
  const dates = [...new Map([...pairs.values()].map((pair) => [pair.date.getTime(), pair.date])).values()];
  const grouped = byMetricDay(await findSummaries(store, { metric: { $in: metrics }, date: { $in: dates }, f: { $lt: seq } }, {}, true));
  const composed: DaySummary[] = [];
  for (const key of pairs.keys()) {
    const chosen = summariesOfDay(grouped.get(key) ?? [], seq - 1, null);
    if (chosen.length > 1) composed.push(mergeSummaries(chosen, seq));
  }
  return composed;
}

/**
 * The merged documents of a compaction (pure): `docs` grouped per series (or rollup
 * group) and day, each group merged into one document (`mergeParts`) with
 * `f: seq`, none for a day before its metric's retention horizons.
 * @param latestReadings latest readings kept per document of a metric (0 for rollups, which keep none).
 * @param forms the forms the documents are written in (`partDocument`; by default the
 *   slot form only, as for rollups, whose documents keep no readings or minutes anyway),
 *   except a counter's, always in the slot form: its increases may have become unknown
 *   in the merge, which neither the raw form nor packed minutes could say.
 */
function mergeDays(
  docs: readonly SeriesDayDocument[],
  settings: Pick<PlanSettings, 'horizonsOf' | 'kindOf'>,
  latestReadings: (metric: string) => number,
  seq: number,
  forms: Readonly<DocumentForms> = SLOT_FORM,
): Document[] {
  const groups = groupBy(docs, (doc) => `${doc.series}:${doc.date.getTime()}`);
  const writes = [...groups.values()].map((group) => mergeParts(group, latestReadings(group[0]!.metric)));
  const kept = new Set(
    trimToHorizons(
      writes.map(({ write }) => write),
      settings.horizonsOf,
    ),
  );
  const formsOf = (metric: string) => (settings.kindOf?.(metric) === 'counter' ? SLOT_FORM : forms);
  return writes
    .filter(({ write }) => kept.has(write))
    .map(({ write, version }) => partDocument(write, seq, version, formsOf(write.metric)));
}
