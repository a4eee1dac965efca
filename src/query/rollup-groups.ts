import type { Document } from 'mongodb';
import type { TagFilter } from './spec.ts';
import { DAY_MS } from '../model/time.ts';
import { seriesGroupsPipeline } from './buckets-pipeline.ts';

/**
 * Pipeline on a rollup's documents that counts the groups a query grouped by `keys` can
 * have over the UTC days that meet `[range.from, range.to)` (ms since the epoch): the
 * registry's count (`seriesGroupsPipeline`) with the days added to its first `$match`,
 * which the rollup's `metric_tagPairs_date` / `metric_date` indexes serve. Rollup
 * documents carry the tags of their group and one document per group and day, so the
 * count reads a few small documents per group and day of the range, where the registry
 * holds one document per series ever recorded. Yields `{groups: n}`, or nothing when no
 * document matches.
 */
export function rollupGroupsPipeline(
  metric: string,
  where: readonly TagFilter[],
  keys: readonly string[],
  range: { from: number; to: number },
): Document[] {
  const [first, ...rest] = seriesGroupsPipeline(metric, where, keys);
  const days = { $gte: new Date(Math.floor(range.from / DAY_MS) * DAY_MS), $lt: new Date(range.to) };
  return [{ $match: { ...(first as { $match: Document }).$match, date: days } }, ...rest];
}
