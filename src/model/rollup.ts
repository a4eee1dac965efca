import { createHash } from 'node:crypto';
import { DAY_MS } from './time.ts';

/**
 * A rollup of a metric: its readings merged over every series that shares the values of
 * some of its tag keys (Cube's pre-aggregations, Druid's roll-up). `tagKeys: []` merges the
 * whole metric into one document a day, `["origin"]` one a day per origin. Rollup
 * documents have the layout of series-day documents (`documents/series-day.ts`) at the day
 * and hour levels, without minutes and without latest readings, so the same pipelines
 * read them.
 */
export interface RollupDefinition {
  /** Registry id: `<metric>/<name>`. */
  _id: string;
  metric: string;
  /** The admin's name for it, unique per metric (letters, digits, `_`, `-`). */
  name: string;
  /** Tag keys it keeps, sorted; the documents merge every series sharing their values. */
  tagKeys: string[];
  /** The collection holding its documents (see {@link rollupCollectionName}). */
  collection: string;
  /**
   * `building` until the backfill has made every day with data dirty once (see `dirty`):
   * while building, batches do not write to the rollup and mark the days they touch
   * dirty; `ready` afterwards. Queries use only ready rollups.
   */
  state: 'building' | 'ready';
  createdAt: Date;
  /**
   * Days whose rollup documents may not match the series-day documents, by
   * {@link dayKey}: `n` counts the batches that marked it (a rebuild is committed only
   * if `n` did not change meanwhile), `at` is the last marking. Queries over a dirty day
   * read the series-day documents; a rebuild (`storage/rollups.ts`) makes it clean.
   */
  dirty: Record<string, DirtyDay>;
  /**
   * Every document of the rollup keeps quarter-hour statistics (`HourSlot.quarters`):
   * true for rollups defined since they exist (their backfill, folds and rebuilds write
   * them), so queries whose buckets or range cut hours at quarter hours (zoned days at
   * +05:30, say) read it; absent for rollups defined before, which answer day and hour
   * slots only.
   */
  quarters?: boolean;
  /** Defined by the server itself (`model/rollup-policy.ts`), not by an operator; absent: defined by an operator. */
  automatic?: boolean;
}

/** A dirty day of a rollup: batches that marked it, the last marking, and the lease of a rebuild under way. */
export interface DirtyDay {
  n: number;
  at: Date;
  /** The id of the rebuild holding the day, and until when (`storage/rollups.ts`). */
  lease?: string;
  until?: Date;
}

/** The key of a UTC day in {@link RollupDefinition.dirty}: `YYYY-MM-DD`. */
export const dayKey = (dayMs: number) => new Date(dayMs).toISOString().slice(0, 10);

/** Midnight UTC (ms since epoch) of a {@link dayKey}. */
export const dayOfKey = (key: string) => Date.parse(`${key}T00:00:00.000Z`);

/**
 * The collection of a rollup: `rollup_` and the first 16 hex characters of the SHA-256
 * of its metric and sorted tag keys. Fixed length and safe characters whatever the
 * names; defining the same tag keys again under another name gets the same documents.
 */
export function rollupCollectionName(metric: string, tagKeys: readonly string[]): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([metric, [...tagKeys].sort()]))
    .digest('hex');
  return `rollup_${digest.slice(0, 16)}`;
}

/**
 * Whether a rollup can answer a query that filters on `filterKeys` and groups by
 * `groupKeys`: it must keep every one of those tag keys.
 */
export function rollupCovers(rollup: Pick<RollupDefinition, 'tagKeys'>, filterKeys: readonly string[], groupKeys: readonly string[]) {
  const kept = new Set(rollup.tagKeys);
  return [...filterKeys, ...groupKeys].every((key) => kept.has(key));
}

/**
 * The rollup a query over `days` (UTC midnights, ms) filtering on `filterKeys` and
 * grouping by `groupKeys` reads: among the ready rollups that keep those tag keys and
 * have no dirty day in the range, the one with the fewest tag keys (fewest documents),
 * ties broken by name; null when none fits and the series-day documents answer.
 */
export function chooseRollup(
  rollups: readonly RollupDefinition[],
  query: { filterKeys: readonly string[]; groupKeys: readonly string[]; from: number; to: number },
): RollupDefinition | null {
  const fits = rollups.filter(
    (rollup) =>
      rollup.state === 'ready' && rollupCovers(rollup, query.filterKeys, query.groupKeys) && !hasDirtyDay(rollup, query.from, query.to),
  );
  fits.sort((a, b) => a.tagKeys.length - b.tagKeys.length || a.name.localeCompare(b.name));
  return fits[0] ?? null;
}

/** Whether a dirty day of `rollup` overlaps `[from, to)` (ms since epoch, UTC). */
export function hasDirtyDay(rollup: Pick<RollupDefinition, 'dirty'>, from: number, to: number): boolean {
  return Object.keys(rollup.dirty ?? {}).some((key) => {
    const day = dayOfKey(key);
    return day + DAY_MS > from && day < to;
  });
}
