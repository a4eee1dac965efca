/**
 * Point look-ups of series: the time of a series' or metric's earliest and latest
 * reading, a series' latest reading of a field, and its latest readings, from the
 * visible parts of its newest (or oldest) days and the tail.
 */
import type { Document } from 'mongodb';
import { DAY_MS, floorTo } from '../model/time.ts';
import { DOCUMENT_VERSION } from '../documents/series-day.ts';
import { type QueryOptions, limitedRead } from './query-options.ts';
import { type ReadView, findVisible, readView } from './fold-state.ts';
import type { Reading } from '../record/validate.ts';
import type { Store } from './store.ts';
import { type TimedValue, isEarlier } from '../model/stats.ts';
import { readTail } from './tail.ts';
import { withView } from './read-pins.ts';
import { LATEST_READINGS_PATHS, keptReadings, latestValuePaths } from '../documents/series-day.ts';
import { holdingReadings } from '../documents/selection.ts';

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
  const [edge] = await findVisible(store.seriesDays, filter, view, {
    ...driver,
    sort: { series: 1, date: direction },
    limit: 1,
    projection: { date: 1 },
  }).toArray();
  if (edge === undefined) return [];
  return findVisible(store.seriesDays, { ...filter, date: edge.date }, view, { ...driver, projection }).toArray();
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
 * A series' latest reading of one field (see {@link latestValuesOf}): the reading; null
 * when it is unknown (the newest document holding the field is of layout version 1);
 * undefined when the series has no reading of the field.
 */
export type LatestValue = TimedValue | null | undefined;

/**
 * How far before its metric's latest folded reading a series' latest reading of a field
 * must lie to be answered by the metric's one read of its newest day (see
 * {@link latestValuesOf}), ms: an hour, so a series reporting at least hourly (a TSBS host
 * every 10 s, a Prometheus scrape every 15 s) is answered there, and that read fetches the
 * documents of the day's last hour only (of 100 TSBS hosts, 7.9 MB of the day's 158 MB:
 * docs/performance.md, "Documents selected by their last reading").
 */
export const METRIC_READ_REACH_MS = 3_600_000;

/**
 * The latest reading of the field of each `{id, field}` (a series and a field), in that
 * order, all in one view and one read of the tail. When the keys name at least half of a
 * metric's series (`seriesCount` of its registry entry), first one read of that metric's
 * documents of the day of its latest folded reading (its entry's `last`, read once for
 * all: no visible document is later, as each fold widens it before its parts become
 * visible) whose `last` is at most {@link METRIC_READ_REACH_MS} earlier: an index range
 * of `{metric, date, last}` (`metric_date_last`). A series whose every field asked is
 * answered there is done: its documents read hold the field, all of layout version 2,
 * one with the field's `last` at or after that bound (every document not read ends
 * before it, or lies on an earlier day). Per other series: when the key names the
 * series' `metric`, one read of its documents from that day on, which for a series still
 * reporting is its newest day's parts; otherwise, or when that day holds none of the
 * fields, one indexed look-up of its newest visible series-day holding any of the fields
 * asked of it (`series_date_f`) and one read of that day's parts, each with every
 * field's day `last`; and only for a field those parts do not hold, the same two for
 * that field alone. The latest of those `last` pairs and of the series' readings of the
 * field in the tail is the answer: undefined when the series has no reading of the
 * field; null when the day read holds a document created before first and last values
 * were kept (document version 1), whose `last` may miss readings, and nothing later is
 * known.
 * @throws ServiceError QUERY_TIMEOUT when a look-up runs longer than `options.maxTimeMS`.
 */
export async function latestValuesOf(
  store: Store,
  keys: readonly { id: string; field: string; metric?: string }[],
  options: QueryOptions = {},
): Promise<LatestValue[]> {
  const fieldsOf = new Map<string, string[]>();
  const metricOf = new Map<string, string>();
  for (const { id, field, metric } of keys) {
    const fields = fieldsOf.get(id) ?? [];
    if (!fields.includes(field)) fields.push(field);
    fieldsOf.set(id, fields);
    if (metric !== undefined) metricOf.set(id, metric);
  }
  const metrics = [...new Set(metricOf.values())];
  const answers = await withView(store, async (view) => {
    const [tail, entries] = await Promise.all([
      tailBySeries(store, [...fieldsOf.keys()], view, options),
      metrics.length === 0
        ? []
        : limitedRead(options, (driver) =>
            store.metrics.find({ _id: { $in: metrics } }, { projection: { last: 1, seriesCount: 1 }, ...driver }).toArray(),
          ),
    ]);
    const lastDay = new Map(
      entries.flatMap((entry) =>
        entry.last instanceof Date ? [[entry._id, new Date(floorTo(entry.last.getTime(), DAY_MS))] as const] : [],
      ),
    );
    const reached = await readMetricsNewest(store, view, entries, fieldsOf, metricOf, options);
    const found = new Map<string, LatestValue>();
    await Promise.all(
      [...fieldsOf].map(async ([id, fields]) => {
        const readings = tail.get(id) ?? [];
        const near = reached.get(id);
        if (near !== undefined && fields.every((field) => answersLatest(near.docs, field, near.since))) {
          for (const field of fields) found.set(`${id}\u0000${field}`, latestOf(field, readings, near.docs));
          return;
        }
        const projection = Object.assign({}, ...fields.map(latestValuePaths));
        const metric = metricOf.get(id);
        const from = metric === undefined ? undefined : lastDay.get(metric);
        const recent =
          from === undefined
            ? []
            : // One read on `{series, date}`: the range first, the fields' test in a stage of its own.
              await limitedRead(options, (driver) =>
                findVisible(store.seriesDays, { series: id, date: { $gte: from } }, view, {
                  ...driver,
                  residual: holdingReadings(fields),
                  projection,
                }).toArray(),
              );
        const newest =
          recent.length > 0
            ? recent
            : await limitedRead(options, (driver) =>
                partsOfEdgeDay(store, view, { series: id, ...holdingReadings(fields) }, -1, projection, driver),
              );
        await Promise.all(
          fields.map(async (field) => {
            // The newest day holding any of the fields may not hold this one: its own newest then.
            const docs = newest.some((doc) => doc.fields?.[field] !== undefined)
              ? newest
              : await limitedRead(options, (driver) =>
                  partsOfEdgeDay(store, view, { series: id, ...holdingReadings([field]) }, -1, latestValuePaths(field), driver),
                );
            found.set(`${id}\u0000${field}`, latestOf(field, readings, docs));
          }),
        );
      }),
    );
    return found;
  });
  return keys.map(({ id, field }) => answers.get(`${id}\u0000${field}`));
}

/**
 * The documents of each series read by the metric-wide reads of {@link latestValuesOf},
 * by series id, with the bound on `last` of their read (ms since epoch, UTC): one read
 * per metric of `entries` (registry entries with `last` and `seriesCount`) whose series
 * the keys name at least half of, of its documents of the day of its `last` whose own
 * `last` is at most {@link METRIC_READ_REACH_MS} earlier, each with the series, the
 * version, the day and every field's day `last` asked of the metric's series. A series
 * with no document there is absent.
 * @throws ServiceError QUERY_TIMEOUT when a read runs longer than `options.maxTimeMS`.
 */
async function readMetricsNewest(
  store: Store,
  view: ReadView,
  entries: readonly Document[],
  fieldsOf: ReadonlyMap<string, readonly string[]>,
  metricOf: ReadonlyMap<string, string>,
  options: QueryOptions,
): Promise<Map<string, { docs: Document[]; since: number }>> {
  const reached = new Map<string, { docs: Document[]; since: number }>();
  await Promise.all(
    entries.map(async (entry) => {
      const ids = [...metricOf].filter(([, metric]) => metric === entry._id).map(([id]) => id);
      if (!(entry.last instanceof Date) || typeof entry.seriesCount !== 'number' || ids.length * 2 < entry.seriesCount) return;
      const fields = [...new Set(ids.flatMap((id) => fieldsOf.get(id) ?? []))];
      const since = entry.last.getTime() - METRIC_READ_REACH_MS;
      const filter = { metric: entry._id, date: new Date(floorTo(entry.last.getTime(), DAY_MS)), last: { $gte: new Date(since) } };
      const projection = Object.assign({ series: 1 }, ...fields.map(latestValuePaths));
      const docs = await limitedRead(options, (driver) => findVisible(store.seriesDays, filter, view, { ...driver, projection }).toArray());
      for (const doc of docs) {
        const near = reached.get(doc.series) ?? { docs: [], since };
        near.docs.push(doc);
        reached.set(doc.series, near);
      }
    }),
  );
  return reached;
}

/**
 * Whether `docs` (a series' documents of its metric's newest day whose `last` is at or
 * after `since`, ms) answer the series' latest reading of `field` exactly: every one
 * holding the field is of layout version 2 or later with the field's day `last`, and one
 * of those is at or after `since`, later than any reading of the documents not read.
 */
function answersLatest(docs: readonly Document[], field: string, since: number): boolean {
  const holding = docs.filter((doc) => doc.fields?.[field] !== undefined);
  return (
    holding.every((doc) => (doc.v ?? 1) >= DOCUMENT_VERSION && doc.fields[field].last !== undefined) &&
    holding.some((doc) => doc.fields[field].last.t.getTime() >= since)
  );
}

/**
 * The latest reading of `field` among `readings` (the tail's) and the day totals'
 * `last` of `docs` (the parts of the newest stored day holding the field), as
 * {@link latestValuesOf} answers it.
 */
function latestOf(field: string, readings: readonly Reading[], docs: readonly Document[]): LatestValue {
  let best: TimedValue | undefined;
  for (const reading of readings) {
    const value = reading.fields.find((entry) => entry.name === field)?.value;
    if (value === undefined) continue;
    const pair = { t: reading.time, v: value };
    if (best === undefined || isEarlier(best, pair)) best = pair;
  }
  // A document of version 1 may hold any reading of its day: unknown unless something
  // later than that day is known.
  let unknownUntil = Number.NEGATIVE_INFINITY;
  for (const doc of docs) {
    if (doc.fields?.[field] === undefined) continue;
    const last = doc.fields[field].last;
    if ((doc.v ?? 1) < DOCUMENT_VERSION || last === undefined) {
      unknownUntil = Math.max(unknownUntil, doc.date.getTime() + DAY_MS);
      continue;
    }
    const pair = { t: last.t.getTime(), v: last.v };
    if (best === undefined || isEarlier(best, pair)) best = pair;
  }
  if (unknownUntil > Number.NEGATIVE_INFINITY && (best === undefined || best.t < unknownUntil)) return null;
  return best;
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
      const cursor = findVisible(store.seriesDays, { series: id }, view, {
        ...driver,
        sort: { date: -1 },
        projection: LATEST_READINGS_PATHS,
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
          const recent = keptReadings(doc);
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
