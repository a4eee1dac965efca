/**
 * Which rollups the server defines by itself (docs/rollups.md, "Automatic rollups"),
 * pure: from the shape of a metric's series (how many there are, how many values each
 * tag key has, how many readings a series holds in a day) and the rollups it has, the
 * ones worth building:
 * - one over each tag key that merges series: at least two values and at most
 *   `maxValues` (a key with more would make about as many documents as the series, and
 *   its values' rollup documents would not pay for their folds), and on average at least
 *   two series per value (a key that names a single series, such as a host name, merges
 *   nothing);
 * - one over every tag key of a dense metric, whose series hold at least
 *   `denseReadings` readings a day: one document per series and day, as many as the
 *   series-day documents, but without their minutes, so hour and day charts of many
 *   series read a sixtieth of the bytes or less;
 * at most `perMetric` in all, those that merge most first (the dense one, then the
 * keys with the fewest values). A rollup the metric already has over the same keys,
 * and keys an operator declined (dropped an automatic rollup over them), are left out.
 */

/** What the automatic rollups are decided from: one metric's series. */
export interface MetricShape {
  metric: string;
  /** Series of the metric in the registry. */
  series: number;
  /** Each tag key and its number of distinct values among those series. */
  keys: { key: string; values: number }[];
  /** Readings a series holds in a day, on average (from the day summaries; null: unknown). */
  readingsPerSeriesDay: number | null;
}

/** The settings of the automatic rollups (config `AUTO_ROLLUPS*`). */
export interface RollupPolicy {
  /** Whether the server defines rollups by itself at all. */
  enabled: boolean;
  /** Most values of a tag key that gets a rollup of its own. */
  maxValues: number;
  /** Fewest readings a series holds a day, on average, for the metric's rollup over every tag key. */
  denseReadings: number;
  /** Most automatic rollups of one metric (they count towards its `ROLLUPS_PER_METRIC`). */
  perMetric: number;
}

/** The defaults of {@link RollupPolicy}: on, keys of up to 1,000 values, dense at 240 readings a series-day (one every 6 minutes), 4 per metric. */
export const DEFAULT_ROLLUP_POLICY: Readonly<RollupPolicy> = { enabled: true, maxValues: 1_000, denseReadings: 240, perMetric: 4 };

/** A rollup to define: its name (`auto_<key>` cut to 64 characters, or `auto-all-keys` for the one over every key) and its sorted tag keys. */
export interface ProposedRollup {
  name: string;
  tagKeys: string[];
}

/** The identity of a rollup's tag keys, to compare definitions: the sorted keys joined. */
export const tagKeysId = (tagKeys: readonly string[]) => [...tagKeys].sort().join('\u0000');

/**
 * The automatic rollups `shape`'s metric should have and has not (see the module comment).
 * @param existing the tag keys of every rollup the metric has, automatic or not.
 * @param declined the tag keys of automatic rollups an operator dropped (never proposed again).
 * @param automatic how many automatic rollups the metric has already.
 */
export function proposeRollups(
  shape: MetricShape,
  policy: Readonly<RollupPolicy>,
  existing: readonly (readonly string[])[],
  declined: readonly (readonly string[])[],
  automatic: number,
): ProposedRollup[] {
  if (!policy.enabled || shape.series < 2 || shape.keys.length === 0) return [];
  const taken = new Set([...existing, ...declined].map(tagKeysId));
  const candidates: ProposedRollup[] = [];
  const every = shape.keys.map((entry) => entry.key).sort();
  if (shape.readingsPerSeriesDay !== null && shape.readingsPerSeriesDay >= policy.denseReadings) {
    candidates.push({ name: 'auto-all-keys', tagKeys: every });
  }
  const merging = shape.keys
    .filter((entry) => entry.values >= 2 && entry.values <= policy.maxValues && shape.series >= 2 * entry.values)
    .sort((a, b) => a.values - b.values || a.key.localeCompare(b.key));
  for (const entry of merging) candidates.push({ name: `auto_${entry.key}`.slice(0, 64), tagKeys: [entry.key] });
  const room = Math.max(0, policy.perMetric - automatic);
  return candidates.filter((candidate) => !taken.has(tagKeysId(candidate.tagKeys))).slice(0, room);
}
