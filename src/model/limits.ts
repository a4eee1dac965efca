/**
 * Fixed limits of the data model. They bound the size of a bucket document (see
 * README "Design": worst case measured by `scripts/measure-document-size.ts`) and keep
 * names safe to use as MongoDB field names.
 */
export const Limits = {
  /** Longest metric name, tag key or field name, in characters. */
  nameLength: 64,
  /** Longest tag value, in characters. */
  tagValueLength: 256,
  /** Most tags one reading (one series) may carry. */
  tagsPerSeries: 32,
  /** Most fields one reading may carry. */
  fieldsPerReading: 32,
  /**
   * Most distinct fields one metric may have over its lifetime. Every series of the
   * metric keeps a minute slot per field, so this bounds the bucket document size.
   */
  fieldsPerMetric: 32,
  /** Most tag keys a query may group by. */
  groupByKeys: 8,
  /** Earliest accepted time (inclusive): 1970-01-01T00:00:00Z, in ms since the Unix epoch. */
  minTimeMs: Date.UTC(1970, 0, 1),
  /** Latest accepted time (exclusive): 10000-01-01T00:00:00Z, past which ISO-8601 needs 5-digit years. */
  maxTimeMs: Date.UTC(10000, 0, 1),
} as const;

/**
 * The naming rule for metric names, tag keys and field names: a letter or `_`, then
 * letters, digits, `_` or `-`, at most {@link Limits.nameLength} characters. Names are
 * used as MongoDB field names, so `$` and `.` (operators and paths, MongoDB manual
 * "Field Names") are excluded; names starting with `__` are reserved, as in Prometheus.
 */
export const NAME_PATTERN = /^(?!__)[A-Za-z_][A-Za-z0-9_-]*$/;

/** True when `name` satisfies {@link NAME_PATTERN} and {@link Limits.nameLength}. */
export function isValidName(name: string): boolean {
  return name.length <= Limits.nameLength && NAME_PATTERN.test(name);
}
