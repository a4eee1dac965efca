/**
 * Fixed limits of the data model. They bound the size of a series-day document (see
 * docs/design.md: worst case measured by `scripts/measure-document-size.ts`, retired after
 * 5e534e9) and keep
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
   * metric keeps a minute slot per field, so this bounds the series-day document size.
   */
  fieldsPerMetric: 32,
  /**
   * Most distinct tag keys one metric may have over its lifetime. Tag keys are listed
   * in the metric's registry document, so without a bound a client could grow it
   * without end (one request with 16,000 keys made a 1.2 MB registry document).
   */
  tagKeysPerMetric: 64,
  /** Most tag keys a query may group by. */
  groupByKeys: 8,
  /**
   * Largest accepted absolute field value. Each slot keeps the sum of squares of its
   * values (for variance), and a square above about 1.8e308 is infinite in IEEE-754
   * doubles: 1e150 squared is 1e300, so more than a hundred million readings at this
   * limit still sum to a finite number.
   */
  maxAbsValue: 1e150,
  /** Earliest time a reading may have and a query may start at: 1970-01-01T00:00:00Z, in ms since the Unix epoch (inclusive). */
  minTimeMs: Date.UTC(1970, 0, 1),
  /**
   * End of the supported time range: 9999-01-01T00:00:00Z. Readings must be earlier
   * (exclusive); a query's `to` may equal it, so every reading that can be recorded can
   * be queried, and the end of every bucket (the year 9998 ends at this instant) still
   * has a four-digit year in RFC 3339.
   */
  maxTimeMs: Date.UTC(9999, 0, 1),
  /** Longest `batchId`, in characters. */
  batchIdLength: 128,
} as const;

/**
 * Default of `Store.maxSeriesPerMetric`: InfluxDB 1.x's default `max-series-per-database`
 * (1,000,000), here per metric. The day summaries and automatic rollups bound
 * themselves per tag key (1,000 values) whatever the series.
 */
export const DEFAULT_MAX_SERIES_PER_METRIC = 1_000_000;

/**
 * The naming rule for metric names, tag keys and field names: a letter or `_`, then
 * letters, digits, `_` or `-`, at most {@link Limits.nameLength} characters. Names are
 * used as MongoDB field names, so `$` and `.` (operators and paths, MongoDB manual
 * "Field Names") are excluded; names starting with `__` are reserved, as in Prometheus.
 */
export const NAME_PATTERN = /^(?!__)[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * True when `text` is well-formed UTF-16: no unpaired surrogate (ECMAScript's
 * `String.prototype.isWellFormed`). Unpaired surrogates cannot be encoded in UTF-8 or
 * BSON, so drivers replace them with U+FFFD and two different strings would become one.
 */
export function isWellFormed(text: string): boolean {
  return text.isWellFormed();
}

/**
 * The rule for a client-chosen `batchId`: 1 to {@link Limits.batchIdLength} characters
 * of letters, digits and `_ - . : / + =` (room for UUIDs, ULIDs, base64 hashes and
 * `source:offset` names).
 */
export const BATCH_ID_PATTERN = /^[A-Za-z0-9_\-.:/+=]+$/;

/** True when `name` satisfies {@link NAME_PATTERN} and {@link Limits.nameLength}. */
export function isValidName(name: string): boolean {
  return name.length <= Limits.nameLength && NAME_PATTERN.test(name);
}
