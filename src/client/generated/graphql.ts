/* eslint-disable */
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
export type Maybe<T> = T | null;
export type InputMaybe<T> = T | null | undefined;
export type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
export type MakeOptional<T, K extends keyof T> = Omit<T, K> & { [SubKey in K]?: Maybe<T[SubKey]> };
export type MakeMaybe<T, K extends keyof T> = Omit<T, K> & { [SubKey in K]: Maybe<T[SubKey]> };
export type MakeEmpty<T extends { [key: string]: unknown }, K extends keyof T> = { [_ in K]?: never };
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
/** All built-in and custom scalars, mapped to their actual values */
export type Scalars = {
  ID: { input: string; output: string; }
  String: { input: string; output: string; }
  Boolean: { input: boolean; output: boolean; }
  Int: { input: number; output: number; }
  Float: { input: number; output: number; }
  /** A point in time as an RFC 3339 date-time string, e.g. `2001-01-05T14:30:00Z` (an offset such as `+02:00` is converted); always returned in UTC. Accepted range: 1970-01-01T00:00:00Z to 9999-01-01T00:00:00Z (a reading must be earlier than the end; a query range may end there). */
  DateTime: { input: string; output: string; }
  /** The `SafeInt` scalar type represents non-fractional signed whole numeric values that are considered safe as defined by the ECMAScript specification. */
  SafeInt: { input: number; output: number; }
  /** A query bound: epoch milliseconds (e.g. `985996800000`, as Grafana's `$__from` gives), an RFC 3339 date-time with an offset or `Z` (e.g. `2001-04-01T00:00:00-05:00`), or a local date or date-time without offset (`2001-04-01`, `2001-04-01T06:30`), read in the query's `timeZone`. A local time that does not exist (skipped by a daylight-saving change) is moved forward by the gap; one that occurs twice is the earlier. Range: 1970-01-01T00:00:00Z to 9999-01-01T00:00:00Z. */
  Time: { input: number | string; output: never; }
};

/** Statistics of one field over the whole range `[from, to)` for one group of series. */
export type Aggregate = Statistics & {
  /** Arithmetic mean, `sum / count`. */
  readonly avg: Maybe<Scalars['Float']['output']>;
  /** Number of readings. */
  readonly count: Scalars['SafeInt']['output'];
  /** The earliest reading (of several in the same millisecond, the smallest value). Null without readings, and when some readings were stored before first and last values were kept (layout version 1). */
  readonly first: Maybe<TimedValue>;
  /** Start of the range, rounded down to the minute. */
  readonly from: Scalars['DateTime']['output'];
  /** Counters only (`setMetricKind(kind: COUNTER)`, else NOT_A_COUNTER): the reset-aware increase, per series the sum over its readings in this span of the reading minus the one before it (the last reading before the span counts when it lies in the query range; a drop is a reset and counts the new value), summed over the group's series; no extrapolation to the span's edges (docs/statistics.md, "Counters"). Null without readings, for readings folded before the metric was a counter, and where parts of a series written by different folds interleave in time (a late reading) until a compaction can separate them. */
  readonly increase: Maybe<Scalars['Float']['output']>;
  /** The latest reading (of several in the same millisecond, the largest value): a "current value". Null without readings, and when some readings were stored before first and last values were kept (layout version 1). */
  readonly last: Maybe<TimedValue>;
  /** Largest value. */
  readonly max: Maybe<Scalars['Float']['output']>;
  /** Smallest value. */
  readonly min: Maybe<Scalars['Float']['output']>;
  /** The median: `percentile(p: 50)`. */
  readonly p50: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 90)`. */
  readonly p90: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 95)`. */
  readonly p95: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 99)`. */
  readonly p99: Maybe<Scalars['Float']['output']>;
  /** The `p` percentile of the values. Within 1% (relative) of the exact value of the reading of rank floor(p/100 x (count - 1)) in value order (0-based), from mergeable DDSketch sketches; exact at p = 0 and 100 (min and max). Null when the readings are not all in sketches: the metric keeps no sketch of this field at a level the query reads (by default day totals, hours and quarter hours are sketched, minutes are not, so a range edge inside a quarter hour, or a bucket shorter than 15 minutes, gives null; edges of hour and coarser buckets fall on quarter hours in every zone), or data written before sketches existed. */
  readonly percentile: Maybe<Scalars['Float']['output']>;
  /** `increase` per second: divided by the seconds of the span inside the query range (a bucket cut by `from` or `to` by the part it covers). Counters only, null with `increase`. */
  readonly rate: Maybe<Scalars['Float']['output']>;
  /** Sample standard deviation, dividing by `count - 1` (as MongoDB `$stdDevSamp`); null when `count < 2`. */
  readonly sampleStddev: Maybe<Scalars['Float']['output']>;
  /** Population standard deviation (as MongoDB `$stdDevPop`). */
  readonly stddev: Maybe<Scalars['Float']['output']>;
  /** Sum of the values. */
  readonly sum: Maybe<Scalars['Float']['output']>;
  /** The group's tag values (the series' tags for `Series.aggregate`); empty when not grouped. */
  readonly tags: ReadonlyArray<Tag>;
  /** End of the range (exclusive), rounded down to the minute. */
  readonly to: Scalars['DateTime']['output'];
  /** Population variance, `sumOfSquares / count - avg^2`. */
  readonly variance: Maybe<Scalars['Float']['output']>;
};


/** Statistics of one field over the whole range `[from, to)` for one group of series. */
export type AggregatePercentileArgs = {
  p: Scalars['Float']['input'];
};

/** One time bucket `[start, end)` (UTC) and the statistics of its readings. */
export type Bucket = Statistics & {
  /** Arithmetic mean, `sum / count`. */
  readonly avg: Maybe<Scalars['Float']['output']>;
  /** `value - previous`. */
  readonly change: Maybe<Scalars['Float']['output']>;
  /** Number of readings. */
  readonly count: Scalars['SafeInt']['output'];
  /** Real end of the bucket (exclusive): a local day with a daylight-saving change lasts 23 or 25 hours. */
  readonly end: Scalars['DateTime']['output'];
  /** True when the bucket has no readings and its statistics come from `fill` (ZERO, PREVIOUS, LINEAR). */
  readonly filled: Scalars['Boolean']['output'];
  /** The earliest reading (of several in the same millisecond, the smallest value). Null without readings, and when some readings were stored before first and last values were kept (layout version 1). */
  readonly first: Maybe<TimedValue>;
  /** Counters only (`setMetricKind(kind: COUNTER)`, else NOT_A_COUNTER): the reset-aware increase, per series the sum over its readings in this span of the reading minus the one before it (the last reading before the span counts when it lies in the query range; a drop is a reset and counts the new value), summed over the group's series; no extrapolation to the span's edges (docs/statistics.md, "Counters"). Null without readings, for readings folded before the metric was a counter, and where parts of a series written by different folds interleave in time (a late reading) until a compaction can separate them. */
  readonly increase: Maybe<Scalars['Float']['output']>;
  /** The latest reading (of several in the same millisecond, the largest value): a "current value". Null without readings, and when some readings were stored before first and last values were kept (layout version 1). */
  readonly last: Maybe<TimedValue>;
  /** The start as wall-clock time of the query's `timeZone` with its offset, RFC 3339, e.g. `2001-04-01T00:00:00-05:00`. */
  readonly localStart: Scalars['String']['output'];
  /** Largest value. */
  readonly max: Maybe<Scalars['Float']['output']>;
  /** Smallest value. */
  readonly min: Maybe<Scalars['Float']['output']>;
  /** The median: `percentile(p: 50)`. */
  readonly p50: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 90)`. */
  readonly p90: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 95)`. */
  readonly p95: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 99)`. */
  readonly p99: Maybe<Scalars['Float']['output']>;
  /** True when the range `[from, to)` covers only part of the bucket (only the first and the last bucket can be): its statistics are of that part. */
  readonly partial: Scalars['Boolean']['output'];
  /** The `p` percentile of the values. Within 1% (relative) of the exact value of the reading of rank floor(p/100 x (count - 1)) in value order (0-based), from mergeable DDSketch sketches; exact at p = 0 and 100 (min and max). Null when the readings are not all in sketches: the metric keeps no sketch of this field at a level the query reads (by default day totals, hours and quarter hours are sketched, minutes are not, so a range edge inside a quarter hour, or a bucket shorter than 15 minutes, gives null; edges of hour and coarser buckets fall on quarter hours in every zone), or data written before sketches existed. */
  readonly percentile: Maybe<Scalars['Float']['output']>;
  /** `value` of the bucket at the same position of the earlier period (`compareWith`); null without one. */
  readonly previous: Maybe<Scalars['Float']['output']>;
  /** Start of that earlier bucket. */
  readonly previousStart: Maybe<Scalars['DateTime']['output']>;
  /** `increase` per second: divided by the seconds of the span inside the query range (a bucket cut by `from` or `to` by the part it covers). Counters only, null with `increase`. */
  readonly rate: Maybe<Scalars['Float']['output']>;
  /** `(value - previous) / |previous|` as a fraction (0.25 is 25% more); null when `previous` is 0 or null. */
  readonly relativeChange: Maybe<Scalars['Float']['output']>;
  /** Sample standard deviation, dividing by `count - 1` (as MongoDB `$stdDevSamp`); null when `count < 2`. */
  readonly sampleStddev: Maybe<Scalars['Float']['output']>;
  /** Start of the bucket, aligned to the granularity. The first bucket may start before `from`; it only counts readings from `from` on. */
  readonly start: Scalars['DateTime']['output'];
  /** Population standard deviation (as MongoDB `$stdDevPop`). */
  readonly stddev: Maybe<Scalars['Float']['output']>;
  /** Sum of the values. */
  readonly sum: Maybe<Scalars['Float']['output']>;
  /** The chosen `statistic`, after `transform` (the statistic itself without one). */
  readonly value: Maybe<Scalars['Float']['output']>;
  /** Population variance, `sumOfSquares / count - avg^2`. */
  readonly variance: Maybe<Scalars['Float']['output']>;
};


/** One time bucket `[start, end)` (UTC) and the statistics of its readings. */
export type BucketPercentileArgs = {
  p: Scalars['Float']['input'];
};

/** The buckets of a list as parallel arrays, index i being the i-th bucket in time order: compact to send and to parse, and the shape chart libraries take. Statistics are null where a bucket has no readings. */
export type BucketColumns = {
  /** Mean per bucket. */
  readonly avg: ReadonlyArray<Maybe<Scalars['Float']['output']>>;
  /** `change` per bucket (with `compareWith`). */
  readonly change: ReadonlyArray<Maybe<Scalars['Float']['output']>>;
  /** Number of readings per bucket. */
  readonly count: ReadonlyArray<Scalars['SafeInt']['output']>;
  /** Bucket ends (exclusive) in epoch milliseconds. */
  readonly ends: ReadonlyArray<Scalars['Float']['output']>;
  /** Whether each bucket was made up by `fill`. */
  readonly filled: ReadonlyArray<Scalars['Boolean']['output']>;
  /** Value of the earliest reading per bucket (see `Bucket.first`). */
  readonly first: ReadonlyArray<Maybe<Scalars['Float']['output']>>;
  /** A counter's reset-aware increase per bucket (see `Bucket.increase`). */
  readonly increase: ReadonlyArray<Maybe<Scalars['Float']['output']>>;
  /** Value of the latest reading per bucket (see `Bucket.last`). */
  readonly last: ReadonlyArray<Maybe<Scalars['Float']['output']>>;
  /** Largest value per bucket. */
  readonly max: ReadonlyArray<Maybe<Scalars['Float']['output']>>;
  /** Smallest value per bucket. */
  readonly min: ReadonlyArray<Maybe<Scalars['Float']['output']>>;
  /** The `p` percentile per bucket. Within 1% (relative) of the exact value of the reading of rank floor(p/100 x (count - 1)) in value order (0-based), from mergeable DDSketch sketches; exact at p = 0 and 100 (min and max). Null when the readings are not all in sketches: the metric keeps no sketch of this field at a level the query reads (by default day totals, hours and quarter hours are sketched, minutes are not, so a range edge inside a quarter hour, or a bucket shorter than 15 minutes, gives null; edges of hour and coarser buckets fall on quarter hours in every zone), or data written before sketches existed. */
  readonly percentile: ReadonlyArray<Maybe<Scalars['Float']['output']>>;
  /** `previous` per bucket (with `compareWith`). */
  readonly previous: ReadonlyArray<Maybe<Scalars['Float']['output']>>;
  /** A counter's increase per second per bucket (see `Bucket.rate`). */
  readonly rate: ReadonlyArray<Maybe<Scalars['Float']['output']>>;
  /** Sample standard deviation per bucket (null below 2 readings). */
  readonly sampleStddev: ReadonlyArray<Maybe<Scalars['Float']['output']>>;
  /** Population standard deviation per bucket. */
  readonly stddev: ReadonlyArray<Maybe<Scalars['Float']['output']>>;
  /** Sum per bucket. */
  readonly sum: ReadonlyArray<Maybe<Scalars['Float']['output']>>;
  /** Bucket starts in epoch milliseconds (UTC instants). */
  readonly times: ReadonlyArray<Scalars['Float']['output']>;
  /** `value` per bucket (the chosen statistic after its transform). */
  readonly value: ReadonlyArray<Maybe<Scalars['Float']['output']>>;
  /** Population variance per bucket. */
  readonly variance: ReadonlyArray<Maybe<Scalars['Float']['output']>>;
};


/** The buckets of a list as parallel arrays, index i being the i-th bucket in time order: compact to send and to parse, and the shape chart libraries take. Statistics are null where a bucket has no readings. */
export type BucketColumnsPercentileArgs = {
  p: Scalars['Float']['input'];
};

/** The buckets of one group of series, in time order. */
export type BucketGroup = {
  /** Buckets in time order. */
  readonly buckets: ReadonlyArray<Bucket>;
  /** The same buckets as parallel arrays (epoch-millisecond times and one array per statistic): the compact, chart-ready form. */
  readonly columns: BucketColumns;
  /** The granularity of the buckets: the one asked for, or the one the engine picked for `maxDataPoints`. */
  readonly granularity: Granularity;
  /** The `groupBy` tag values of this group, in `groupBy` order; empty when the query is not grouped. */
  readonly tags: ReadonlyArray<Tag>;
};

/** What a deletion removed. */
export type DeleteResult = {
  /**
   * The same as `documents` (its former name).
   * @deprecated Use `documents`: "bucket" names the time buckets of query answers.
   */
  readonly buckets: Scalars['SafeInt']['output'];
  /** Series-day documents deleted (one per series and day). */
  readonly documents: Scalars['SafeInt']['output'];
  /** Metric registry entries deleted (0 or 1). */
  readonly metrics: Scalars['Int']['output'];
  /** Series registry entries deleted. */
  readonly series: Scalars['Int']['output'];
};

/** A numeric field of a reading, e.g. `{name: "delay", value: 12}`. */
export type FieldInput = {
  /** Field name: a letter or `_`, then letters, digits, `_` or `-`; at most 64 characters. */
  readonly name: Scalars['String']['input'];
  /** The value; finite (NaN and infinities are refused). */
  readonly value: Scalars['Float']['input'];
};

/** One field's value in a reading. */
export type FieldValue = {
  /** Field name. */
  readonly name: Scalars['String']['output'];
  /** The value. */
  readonly value: Scalars['Float']['output'];
};

/** How a bucket list treats buckets without readings. */
export type Fill =
  /** List every bucket; empty ones interpolate each statistic linearly in time between the nearest buckets with readings (null at the ends); `first`, `last` and percentiles stay null. */
  | 'LINEAR'
  /** List only buckets with readings. */
  | 'NONE'
  /** List every bucket of the range; empty ones have count 0 and null statistics. */
  | 'NULL'
  /** List every bucket; empty ones repeat the statistics of the last bucket with readings, `first`, `last` and percentiles included (null before the first). */
  | 'PREVIOUS'
  /** List every bucket; empty ones have 0 for every statistic but `count` (which stays 0, the real number of readings), and null `first`, `last` and percentiles. */
  | 'ZERO';

/** Bucket size, cut in the query's `timeZone` (default UTC): minutes and hours aligned to the zone's offset (a +05:45 zone starts hours at :45 UTC), six hours, days, weeks (Monday unless `weekStart`), months, quarters and years as local calendar periods (a day with a daylight-saving change lasts 23 or 25 hours). Each bucket is computed from the coarsest stored level (day totals, hour slots or minute slots) that never straddles one of its boundaries. */
export type Granularity =
  /** One local day (23 or 25 hours when clocks change): day totals when it is a UTC day, else hour slots. */
  | 'DAY'
  /** Fifteen minutes (:00, :15, :30, :45 of the local clock), read from minute slots (percentiles from quarter-hour sketches where the metric keeps them). */
  | 'FIFTEEN_MINUTES'
  /** Five minutes (:00, :05, … of the local clock), read from minute slots. */
  | 'FIVE_MINUTES'
  /** One hour of the local clock (an hour repeated when clocks go back is a bucket of its own), read from hour slots, or from minute slots where the offset is not whole hours (percentiles there from quarter-hour sketches). */
  | 'HOUR'
  /** One minute, read from minute slots. */
  | 'MINUTE'
  /** One local calendar month: day totals of the UTC days inside it. */
  | 'MONTH'
  /** One local calendar quarter: day totals of the UTC days inside it. */
  | 'QUARTER'
  /** Six local hours from 00:00, 06:00, 12:00 and 18:00, read from hour slots. */
  | 'SIX_HOURS'
  /** Ten minutes (:00, :10, … of the local clock), read from minute slots. */
  | 'TEN_MINUTES'
  /** Thirty minutes (:00, :30 of the local clock), read from minute slots (percentiles from quarter-hour sketches where the metric keeps them). */
  | 'THIRTY_MINUTES'
  /** Three local hours from 00:00, 03:00, …, 21:00, read from hour slots. */
  | 'THREE_HOURS'
  /** Twelve local hours from 00:00 and 12:00, read from hour slots. */
  | 'TWELVE_HOURS'
  /** Two local hours from an even hour (00:00, 02:00, …), read from hour slots. */
  | 'TWO_HOURS'
  /** Two minutes (:00, :02, … of the local clock), read from minute slots. */
  | 'TWO_MINUTES'
  /** One week from local midnight of Monday (ISO 8601) or the chosen first weekday: day totals of the UTC days inside it. */
  | 'WEEK'
  /** One local calendar year: day totals of the UTC days inside it. */
  | 'YEAR';

/** The latest reading of a field among the series of one group. */
export type GroupLatestValue = {
  /** The latest reading; null when a series of the group has only data written before latest values were kept. */
  readonly latest: Maybe<TimedValue>;
  /** The `groupBy` tag values of the group, in `groupBy` order; empty when not grouped. */
  readonly tags: ReadonlyArray<Tag>;
};

/** One reading of a series as it was recorded: its time and the values of its fields. */
export type LatestReading = {
  /** When the reading was taken (UTC). */
  readonly time: Scalars['DateTime']['output'];
  /** The value of one field; null when the reading does not carry it. */
  readonly value: Maybe<Scalars['Float']['output']>;
  /** Every field of the reading, in the order it was sent. */
  readonly values: ReadonlyArray<FieldValue>;
};


/** One reading of a series as it was recorded: its time and the values of its fields. */
export type LatestReadingValueArgs = {
  field: Scalars['String']['input'];
};

/** A metric (InfluxDB's measurement): a name under which series record numeric fields. */
export type Metric = {
  /** Fields ever recorded, sorted. */
  readonly fields: ReadonlyArray<Scalars['String']['output']>;
  /** Exact time of the earliest reading (UTC). */
  readonly firstReadingAt: Maybe<Scalars['DateTime']['output']>;
  /** What the fields measure: GAUGE unless `setMetricKind` (or a receiver of counters) declared the metric a COUNTER. */
  readonly kind: MetricKind;
  /** Exact time of the latest reading (UTC). */
  readonly lastReadingAt: Maybe<Scalars['DateTime']['output']>;
  /** Metric name, e.g. `flights`. */
  readonly name: Scalars['String']['output'];
  /** How long the metric keeps minute, hour and day data, and where each begins (see `setRetention`). */
  readonly retention: MetricRetention;
  /** The rollups of the metric, sorted by name. */
  readonly rollups: ReadonlyArray<Rollup>;
  /** The series whose tags match `where`, sorted by series key. Errors as `Query.series`. */
  readonly series: ReadonlyArray<Series>;
  /** Number of series. */
  readonly seriesCount: Scalars['SafeInt']['output'];
  /** The optional statistics the metric keeps: quantile sketches and latest readings. */
  readonly statistics: MetricStatistics;
  /** Tag keys ever used, sorted. */
  readonly tagKeys: ReadonlyArray<Scalars['String']['output']>;
  /** The values of tag `key` among the series matching `where`, sorted. */
  readonly tagValues: ReadonlyArray<Scalars['String']['output']>;
};


/** A metric (InfluxDB's measurement): a name under which series record numeric fields. */
export type MetricSeriesArgs = {
  limit?: InputMaybe<Scalars['Int']['input']>;
  where?: InputMaybe<ReadonlyArray<TagFilter>>;
};


/** A metric (InfluxDB's measurement): a name under which series record numeric fields. */
export type MetricTagValuesArgs = {
  key: Scalars['String']['input'];
  where?: InputMaybe<ReadonlyArray<TagFilter>>;
};

/** What a metric's fields measure: values at a time, or running counts (see docs/statistics.md, "Counters"). */
export type MetricKind =
  /** A running count that only grows except when reset to 0 (requests served, bytes sent): its buckets and aggregates have `increase` and `rate`, a drop counting as a reset. */
  | 'COUNTER'
  /** A value at a time (a temperature, a delay): the default. */
  | 'GAUGE';

/** How long a metric keeps each level of its data, in whole UTC days (null: forever), and where each level begins now that retention has removed older data (see docs/retention.md). */
export type MetricRetention = {
  /** UTC midnight from which day documents exist: days before it were deleted, and queries find no readings there. Null: none deleted yet. */
  readonly dataFrom: Maybe<Scalars['DateTime']['output']>;
  /** Days the day documents (day totals, latest readings) and the rollup documents are kept (besides today); null: forever. */
  readonly days: Maybe<Scalars['Int']['output']>;
  /** UTC midnight from which hour slots exist: a query that needs hour slots before it fails with DETAIL_EXPIRED. Null: none removed yet. */
  readonly hourDetailFrom: Maybe<Scalars['DateTime']['output']>;
  /** Days the hour slots are kept (besides today); null: forever. */
  readonly hours: Maybe<Scalars['Int']['output']>;
  /** UTC midnight from which minute slots exist: a query that needs minute slots before it fails with DETAIL_EXPIRED. Null: none removed yet. */
  readonly minuteDetailFrom: Maybe<Scalars['DateTime']['output']>;
  /** Days the minute slots are kept (besides today); null: forever. */
  readonly minutes: Maybe<Scalars['Int']['output']>;
  /** When an admin last set the policy; null: never (everything kept forever). */
  readonly setAt: Maybe<Scalars['DateTime']['output']>;
};

/** Which optional statistics a metric keeps; see docs/statistics.md for what each costs. */
export type MetricStatistics = {
  /** Latest readings kept per series and day (`Series.latest`). */
  readonly latestReadings: Scalars['Int']['output'];
  /** Fields with sketches; null: every field. */
  readonly sketchFields: Maybe<ReadonlyArray<Scalars['String']['output']>>;
  /** Levels whose slots keep a quantile sketch (for percentiles): a query reads percentiles only where every slot it reads has one. */
  readonly sketchLevels: ReadonlyArray<SlotLevel>;
};

/** Recording readings (scope `write`), and changing or deleting metrics and series (scope `admin`). */
export type Mutation = {
  /** Defines a rollup of a metric over some of its tag keys (at most 8 per metric): from then on every batch of the metric also updates the rollup's documents, and the server builds it for the data already stored (`npm run rollups -- backfill` does it at once, with a progress bar). It is BUILDING until then. Each rollup costs one more update per rollup group and day of every batch. Needs scope `admin` and a token that may touch `metric`. Errors: INVALID_NAME, DUPLICATE_NAME, NOT_FOUND (no such metric), INVALID_ARGUMENT (unknown tag key, a rollup with that name or those keys exists, too many rollups), FORBIDDEN. */
  readonly defineRollup: Rollup;
  /** Deletes a metric and all its data: its series-day documents, series and registry entry (its name, layout and fields are free again). Cannot be undone. Stop writers of the metric first: readings recorded while it runs may survive. Needs scope `admin` and a token that may touch `metric`. Errors: INVALID_NAME, NOT_FOUND, FORBIDDEN. */
  readonly deleteMetric: DeleteResult;
  /** Deletes one series and all its readings (its series-day documents and registry entry); the metric keeps its fields and tag keys. Cannot be undone. Needs scope `admin` and a token that may touch the metric the key starts with. Errors: NOT_FOUND, FORBIDDEN. */
  readonly deleteSeries: DeleteResult;
  /** Removes a rollup and its documents; queries read the series again. Returns false when the metric has no such rollup. Needs scope `admin` and a token that may touch `metric`. Errors: INVALID_NAME, FORBIDDEN. */
  readonly dropRollup: Scalars['Boolean']['output'];
  /** Records one reading. Needs scope `write` and a token that may touch its metric (FORBIDDEN otherwise). Errors (nothing is written when any reading is refused): INVALID_NAME, INVALID_TAG_VALUE, DUPLICATE_NAME, NO_FIELDS, TOO_MANY_NAMES (tags or fields per reading, fields or tag keys per metric), INVALID_FIELD_VALUE, INVALID_TIME, READING_EXPIRED (a reading dated before the days deleted by the retention policy of its metric, see `setRetention`), INVALID_BATCH_ID, BATCH_ID_REUSED. UNAVAILABLE: the database could not be reached or did not confirm the write; the batch is then stored whole or not at all, so retry with the same batchId (it is stored once). */
  readonly recordReading: RecordResult;
  /** Records a batch of readings: the whole batch is validated first, then stored as one entry of the ingest log with one insert, confirmed with the configured write concern before the answer (all or nothing; with a batchId, exactly once however often it is sent); the folder later adds it to the series-day documents exactly once, and queries read it meanwhile from the log. Readings may be late or out of order. Needs scope `write` and a token that may touch the metric of every reading; otherwise FORBIDDEN and nothing is written. Errors (nothing is written when any reading is refused): INVALID_NAME, INVALID_TAG_VALUE, DUPLICATE_NAME, NO_FIELDS, TOO_MANY_NAMES (tags or fields per reading, fields or tag keys per metric), INVALID_FIELD_VALUE, INVALID_TIME, READING_EXPIRED (a reading dated before the days deleted by the retention policy of its metric, see `setRetention`), INVALID_BATCH_ID, BATCH_ID_REUSED. UNAVAILABLE: the database could not be reached or did not confirm the write; the batch is then stored whole or not at all, so retry with the same batchId (it is stored once), BATCH_TOO_LARGE (more than MAX_BATCH_SIZE readings). */
  readonly recordReadings: RecordResult;
  /** Declares what a metric's fields measure. A COUNTER's folds keep, per slot, what the reset-aware increase needs, so its buckets and aggregates answer `increase` and `rate` (docs/statistics.md, "Counters"); it applies to every fold from now on, readings acknowledged but not folded yet included, and slots folded before give a null `increase`. GAUGE stops keeping it. Creates the metric if needed. Needs scope `admin` and a token that may touch `metric`. Errors: INVALID_NAME, FORBIDDEN. */
  readonly setMetricKind: Metric;
  /** Chooses which optional statistics a metric keeps from now on (new metrics get SKETCH_LEVELS and LATEST_READINGS): quantile sketches at some levels and for some fields, and how many latest readings per series and day. Data already stored keeps what it was written with; percentiles over slots without a sketch are null. Creates the metric if needed. Needs scope `admin` and a token that may touch `metric`. Errors: INVALID_NAME, DUPLICATE_NAME, INVALID_ARGUMENT, FORBIDDEN. */
  readonly setMetricStatistics: Metric;
  /** Sets how long a metric keeps its minute slots, hour slots and whole day documents, e.g. `minutes: 30, hours: 365` (days forever). The server's retention pass (every RETENTION_SECONDS) then removes, from the series-day documents older than each horizon, the minute slots, the hour slots, or the whole documents with the metric's rollup documents of those days. Queries that need removed minute or hour slots fail with DETAIL_EXPIRED; readings dated before the deleted days' horizon (`Metric.retention.dataFrom`) are refused with READING_EXPIRED. Lengthening a policy does not bring removed data back. Creates the metric if needed. Needs scope `admin` and a token that may touch `metric`. Errors: INVALID_NAME, INVALID_ARGUMENT (a duration outside 1 to 36525, or not minutes <= hours <= days with null as forever), FORBIDDEN. */
  readonly setRetention: Metric;
};


/** Recording readings (scope `write`), and changing or deleting metrics and series (scope `admin`). */
export type MutationDefineRollupArgs = {
  metric: Scalars['String']['input'];
  name: Scalars['String']['input'];
  tagKeys: ReadonlyArray<Scalars['String']['input']>;
};


/** Recording readings (scope `write`), and changing or deleting metrics and series (scope `admin`). */
export type MutationDeleteMetricArgs = {
  metric: Scalars['String']['input'];
};


/** Recording readings (scope `write`), and changing or deleting metrics and series (scope `admin`). */
export type MutationDeleteSeriesArgs = {
  id: Scalars['ID']['input'];
};


/** Recording readings (scope `write`), and changing or deleting metrics and series (scope `admin`). */
export type MutationDropRollupArgs = {
  metric: Scalars['String']['input'];
  name: Scalars['String']['input'];
};


/** Recording readings (scope `write`), and changing or deleting metrics and series (scope `admin`). */
export type MutationRecordReadingArgs = {
  batchId?: InputMaybe<Scalars['String']['input']>;
  reading: ReadingInput;
};


/** Recording readings (scope `write`), and changing or deleting metrics and series (scope `admin`). */
export type MutationRecordReadingsArgs = {
  batchId?: InputMaybe<Scalars['String']['input']>;
  readings: ReadonlyArray<ReadingInput>;
};


/** Recording readings (scope `write`), and changing or deleting metrics and series (scope `admin`). */
export type MutationSetMetricKindArgs = {
  kind: MetricKind;
  metric: Scalars['String']['input'];
};


/** Recording readings (scope `write`), and changing or deleting metrics and series (scope `admin`). */
export type MutationSetMetricStatisticsArgs = {
  latestReadings: Scalars['Int']['input'];
  metric: Scalars['String']['input'];
  sketchFields?: InputMaybe<ReadonlyArray<Scalars['String']['input']>>;
  sketchLevels: ReadonlyArray<SlotLevel>;
};


/** Recording readings (scope `write`), and changing or deleting metrics and series (scope `admin`). */
export type MutationSetRetentionArgs = {
  days?: InputMaybe<Scalars['Int']['input']>;
  hours?: InputMaybe<Scalars['Int']['input']>;
  metric: Scalars['String']['input'];
  minutes?: InputMaybe<Scalars['Int']['input']>;
};

/** An offset back in time, e.g. `{amount: 1, unit: WEEK}` compares each bucket with the same bucket one week before. */
export type OffsetInput = {
  /** How many units, 1 to 1,000. */
  readonly amount: Scalars['Int']['input'];
  /** The unit. */
  readonly unit: OffsetUnit;
};

/** A unit of time for an offset; months, quarters and years are calendar units (March 31 minus a month is the last day of February). */
export type OffsetUnit =
  /** One day. */
  | 'DAY'
  /** One hour. */
  | 'HOUR'
  /** One minute. */
  | 'MINUTE'
  /** One month. */
  | 'MONTH'
  /** One quarter. */
  | 'QUARTER'
  /** One week. */
  | 'WEEK'
  /** One year. */
  | 'YEAR';

/** Ranks groups by a statistic of the field over the whole range, in the pipeline; ties by tag values (ascending); groups without readings are left out. */
export type OrderByInput = {
  /** Largest first by default. */
  readonly direction?: InputMaybe<SortDirection>;
  /** The statistic, e.g. `AVG`. */
  readonly statistic: RankStatistic;
};

/** Discovery of metrics and series, and time-bucketed statistics (scope `read`). */
export type Query = {
  /** count, sum, min, max, avg, variance and standard deviation of one field over `[from, to)`, filtered by tags and optionally grouped by tag keys (one result per group with readings, sorted by tag values). Whole days are read from day totals, the ragged edges of the range from hour and minute slots. Errors: INVALID_NAME, INVALID_TIME, INVALID_RANGE, DUPLICATE_NAME, TOO_MANY_NAMES, TOO_MANY_BUCKETS (each group counts as one bucket of the request's MAX_BUCKETS), TOO_MANY_FILTER_VALUES, QUERY_TIMEOUT, DETAIL_EXPIRED (a range edge inside an hour or day whose minute or hour slots the metric's retention removed). An unknown metric, field or tag value gives an empty list. Needs scope `read` and a token that may touch `metric` (else FORBIDDEN). */
  readonly aggregate: ReadonlyArray<Aggregate>;
  /** Time buckets of one field of a metric over `[from, to)`, filtered by tags and optionally grouped by tag keys (one bucket list per group, sorted by tag values). `from` and `to` are rounded down to the whole minute (the stored resolution). Errors: INVALID_NAME, INVALID_TIME, INVALID_RANGE (from >= to), DUPLICATE_NAME, TOO_MANY_NAMES, TOO_MANY_BUCKETS (the request could return more than MAX_BUCKETS buckets: groups x buckets of the range, summed over every field of the request, a bucket with percentiles counting 10, checked before anything runs), TOO_MANY_FILTER_VALUES (more than MAX_FILTER_VALUES `where` values in the request), QUERY_TIMEOUT (longer than QUERY_TIMEOUT_MS), DETAIL_EXPIRED (the buckets need minute or hour slots removed by the metric retention policy: `extensions.availableFrom` tells where they begin; see `setRetention`). An unknown metric, field or tag value gives an empty list. Needs scope `read` and a token that may touch `metric` (else FORBIDDEN). */
  readonly buckets: ReadonlyArray<BucketGroup>;
  /** The current value of `field` per group: the latest reading among the series of `metric` matching `where`, grouped by `groupBy` (one group without it), sorted by tag values; groups without a reading of the field are left out. Each series is read from its newest document holding the field (one indexed look-up per series), so the series count against MAX_SERIES. Errors: INVALID_NAME, TOO_MANY_SERIES, TOO_MANY_FILTER_VALUES, QUERY_TIMEOUT. Needs scope `read` and a token that may touch `metric` (else FORBIDDEN). */
  readonly latestValues: ReadonlyArray<GroupLatestValue>;
  /** One metric by name; null when it was never recorded. Needs scope `read` and a token that may touch the metric. Errors: INVALID_NAME, FORBIDDEN. */
  readonly metric: Maybe<Metric>;
  /** Every metric the API token may touch (all of them, or those starting with its metric prefixes), sorted by name. Needs scope `read`. */
  readonly metrics: ReadonlyArray<Metric>;
  /** The series of a metric whose tags match `where`, sorted by series key. An unknown metric or tag value gives an empty list. Needs scope `read` and a token that may touch `metric`. Errors: INVALID_NAME, DUPLICATE_NAME, INVALID_ARGUMENT (limit below 1), TOO_MANY_SERIES (limit above MAX_SERIES, or more than MAX_SERIES series listed by the request), TOO_MANY_FILTER_VALUES, QUERY_TIMEOUT, FORBIDDEN. */
  readonly series: ReadonlyArray<Series>;
  /** One series by its id (the series key, e.g. `flights,destination=PHL,origin=LAS`); null when unknown. Counts as one series of the request's MAX_SERIES. Needs scope `read` and a token that may touch the metric the key starts with. Errors: FORBIDDEN. */
  readonly seriesById: Maybe<Series>;
  /** The values of tag `key` among the series of `metric` matching `where`, sorted. Unknown metrics and keys give an empty list. Needs scope `read` and a token that may touch `metric`. Errors: INVALID_NAME, DUPLICATE_NAME, TOO_MANY_FILTER_VALUES, QUERY_TIMEOUT, FORBIDDEN. */
  readonly tagValues: ReadonlyArray<Scalars['String']['output']>;
};


/** Discovery of metrics and series, and time-bucketed statistics (scope `read`). */
export type QueryAggregateArgs = {
  field: Scalars['String']['input'];
  from: Scalars['Time']['input'];
  groupBy?: InputMaybe<ReadonlyArray<Scalars['String']['input']>>;
  limit?: InputMaybe<Scalars['Int']['input']>;
  metric: Scalars['String']['input'];
  orderBy?: InputMaybe<OrderByInput>;
  timeZone?: InputMaybe<Scalars['String']['input']>;
  to: Scalars['Time']['input'];
  where?: InputMaybe<ReadonlyArray<TagFilter>>;
};


/** Discovery of metrics and series, and time-bucketed statistics (scope `read`). */
export type QueryBucketsArgs = {
  compareWith?: InputMaybe<OffsetInput>;
  field: Scalars['String']['input'];
  fill?: InputMaybe<Fill>;
  from: Scalars['Time']['input'];
  granularity?: InputMaybe<Granularity>;
  groupBy?: InputMaybe<ReadonlyArray<Scalars['String']['input']>>;
  limit?: InputMaybe<Scalars['Int']['input']>;
  maxDataPoints?: InputMaybe<Scalars['Int']['input']>;
  metric: Scalars['String']['input'];
  orderBy?: InputMaybe<OrderByInput>;
  statistic?: InputMaybe<Statistic>;
  timeZone?: InputMaybe<Scalars['String']['input']>;
  to: Scalars['Time']['input'];
  transform?: InputMaybe<Transform>;
  weekStart?: InputMaybe<Weekday>;
  where?: InputMaybe<ReadonlyArray<TagFilter>>;
  window?: InputMaybe<Scalars['Int']['input']>;
};


/** Discovery of metrics and series, and time-bucketed statistics (scope `read`). */
export type QueryLatestValuesArgs = {
  field: Scalars['String']['input'];
  groupBy?: InputMaybe<ReadonlyArray<Scalars['String']['input']>>;
  metric: Scalars['String']['input'];
  where?: InputMaybe<ReadonlyArray<TagFilter>>;
};


/** Discovery of metrics and series, and time-bucketed statistics (scope `read`). */
export type QueryMetricArgs = {
  name: Scalars['String']['input'];
};


/** Discovery of metrics and series, and time-bucketed statistics (scope `read`). */
export type QuerySeriesArgs = {
  limit?: InputMaybe<Scalars['Int']['input']>;
  metric: Scalars['String']['input'];
  where?: InputMaybe<ReadonlyArray<TagFilter>>;
};


/** Discovery of metrics and series, and time-bucketed statistics (scope `read`). */
export type QuerySeriesByIdArgs = {
  id: Scalars['ID']['input'];
};


/** Discovery of metrics and series, and time-bucketed statistics (scope `read`). */
export type QueryTagValuesArgs = {
  key: Scalars['String']['input'];
  metric: Scalars['String']['input'];
  where?: InputMaybe<ReadonlyArray<TagFilter>>;
};

/** A statistic of one field over the whole range, to rank groups by. */
export type RankStatistic =
  /** The group's `avg` over the range. */
  | 'AVG'
  /** The group's `count` over the range. */
  | 'COUNT'
  /** The group's `max` over the range. */
  | 'MAX'
  /** The group's `min` over the range. */
  | 'MIN'
  /** The group's `stddev` over the range. */
  | 'STDDEV'
  /** The group's `sum` over the range. */
  | 'SUM';

/** One reading: a metric, the tags of its series, a time and one or more numeric fields. */
export type ReadingInput = {
  /** One to 32 fields; names unique. */
  readonly fields: ReadonlyArray<FieldInput>;
  /** Metric name, e.g. `flights` (naming rule as field names). */
  readonly metric: Scalars['String']['input'];
  /** Tags of the series, at most 32; keys unique. Omitted: no tags. */
  readonly tags?: InputMaybe<ReadonlyArray<TagInput>>;
  /** When the reading was taken; stored at minute resolution. Omitted: the time the server received the request. */
  readonly time?: InputMaybe<Scalars['DateTime']['input']>;
};

/** What a record mutation stored. An answer without errors means every reading of the batch is stored, with the configured write concern (default: majority, journaled). */
export type RecordResult = {
  /** Readings an earlier call with the same `batchId` had already applied, and this call did not apply again. */
  readonly alreadyApplied: Scalars['SafeInt']['output'];
  /** Readings this call applied (equal to `recorded` on the first complete attempt). */
  readonly applied: Scalars['SafeInt']['output'];
  /** The batch id sent with the readings; null when none was sent. */
  readonly batchId: Maybe<Scalars['String']['output']>;
  /**
   * The same as `documents` (its former name).
   * @deprecated Use `documents`: "bucket" names the time buckets of query answers.
   */
  readonly buckets: Scalars['Int']['output'];
  /** Number of series-day documents the batch's readings fall into (a fold writes one part of each, see docs/ingest-design.md). */
  readonly documents: Scalars['Int']['output'];
  /** Number of readings of the batch, all of them stored now. */
  readonly recorded: Scalars['SafeInt']['output'];
  /** Number of distinct series of the batch. */
  readonly series: Scalars['Int']['output'];
};

/** A metric's readings merged over every series that shares the values of some tag keys, kept per UTC day at the day, hour and quarter-hour levels (see docs/rollups.md). Queries that filter and group only by those keys, and read no minute slots, read it instead of the series. The server defines some itself (`automatic`, config AUTO_ROLLUPS). */
export type Rollup = {
  /** Defined by the server itself from the shape of the series (config AUTO_ROLLUPS; docs/rollups.md, "Automatic rollups"); dropping it keeps the server from defining it again. */
  readonly automatic: Scalars['Boolean']['output'];
  /** When it was defined (UTC). */
  readonly createdAt: Scalars['DateTime']['output'];
  /** UTC midnights of the days whose rollup documents are being rebuilt from the series (after a retried batch, or written while building): queries over them read the series instead. */
  readonly dirtyDays: ReadonlyArray<Scalars['DateTime']['output']>;
  /** Name, unique per metric. */
  readonly name: Scalars['String']['output'];
  /** Whether its documents keep quarter-hour statistics (every rollup defined since they exist), so that zoned days cut at quarter hours (+05:30, +05:45) read it. */
  readonly quarterHours: Scalars['Boolean']['output'];
  /** BUILDING until backfilled, then READY. */
  readonly state: RollupState;
  /** The tag keys it keeps, sorted; empty: the whole metric in one document a day. */
  readonly tagKeys: ReadonlyArray<Scalars['String']['output']>;
};

/** Whether queries can use a rollup yet. */
export type RollupState =
  /** Defined; not yet built from the stored data, so no query uses it. */
  | 'BUILDING'
  /** Built: queries use it for every range without dirty days. */
  | 'READY';

/** A series: a metric and one set of tag values (InfluxDB's series), carrying one or more numeric fields. Its `buckets` and `aggregate`, asked for many series in one request, are computed by one pipeline per set of arguments. */
export type Series = {
  /** Statistics of one field of this series over `[from, to)` (count 0 and nulls without readings); batched like `buckets`. Errors as `Query.aggregate`. */
  readonly aggregate: Aggregate;
  /** Time buckets of one field of this series over `[from, to)`. Asked for on many series (or several fields) in one request, they are computed by one pipeline. Errors as `Query.buckets`; TOO_MANY_BUCKETS counts the buckets of every series, field and alias of the request. */
  readonly buckets: ReadonlyArray<Bucket>;
  /** Fields ever recorded, sorted. */
  readonly fields: ReadonlyArray<Scalars['String']['output']>;
  /** Exact time of the earliest reading (UTC); null without readings. */
  readonly firstReadingAt: Maybe<Scalars['DateTime']['output']>;
  /** The series key in InfluxDB line-protocol form, e.g. `flights,destination=PHL,origin=LAS`. */
  readonly id: Scalars['ID']['output'];
  /** Exact time of the latest reading (UTC); null without readings. */
  readonly lastReadingAt: Maybe<Scalars['DateTime']['output']>;
  /** The latest `n` readings of the series, newest first, as recorded (every field of each reading): kept in each series-day document by the same update that records them (the newest 50 of each day at most, fewer if the metric is set to keep fewer, see `setMetricStatistics`). Fewer than `n` when the series has fewer, or when an older day's readings were written before latest readings were kept. Errors: INVALID_ARGUMENT. */
  readonly latest: ReadonlyArray<LatestReading>;
  /** The latest reading of `field`: a dashboard's current value, read from the series' newest series-day document holding the field (one indexed look-up; asked for on many series, they are looked up together). Null without readings, or when that document was written before latest values were kept. Errors: INVALID_NAME. */
  readonly latestValue: Maybe<TimedValue>;
  /** Metric name. */
  readonly metric: Scalars['String']['output'];
  /** Tags, sorted by key. */
  readonly tags: ReadonlyArray<Tag>;
};


/** A series: a metric and one set of tag values (InfluxDB's series), carrying one or more numeric fields. Its `buckets` and `aggregate`, asked for many series in one request, are computed by one pipeline per set of arguments. */
export type SeriesAggregateArgs = {
  field: Scalars['String']['input'];
  from: Scalars['Time']['input'];
  timeZone?: InputMaybe<Scalars['String']['input']>;
  to: Scalars['Time']['input'];
};


/** A series: a metric and one set of tag values (InfluxDB's series), carrying one or more numeric fields. Its `buckets` and `aggregate`, asked for many series in one request, are computed by one pipeline per set of arguments. */
export type SeriesBucketsArgs = {
  compareWith?: InputMaybe<OffsetInput>;
  field: Scalars['String']['input'];
  fill?: InputMaybe<Fill>;
  from: Scalars['Time']['input'];
  granularity?: InputMaybe<Granularity>;
  maxDataPoints?: InputMaybe<Scalars['Int']['input']>;
  statistic?: InputMaybe<Statistic>;
  timeZone?: InputMaybe<Scalars['String']['input']>;
  to: Scalars['Time']['input'];
  transform?: InputMaybe<Transform>;
  weekStart?: InputMaybe<Weekday>;
  window?: InputMaybe<Scalars['Int']['input']>;
};


/** A series: a metric and one set of tag values (InfluxDB's series), carrying one or more numeric fields. Its `buckets` and `aggregate`, asked for many series in one request, are computed by one pipeline per set of arguments. */
export type SeriesLatestArgs = {
  n?: InputMaybe<Scalars['Int']['input']>;
};


/** A series: a metric and one set of tag values (InfluxDB's series), carrying one or more numeric fields. Its `buckets` and `aggregate`, asked for many series in one request, are computed by one pipeline per set of arguments. */
export type SeriesLatestValueArgs = {
  field: Scalars['String']['input'];
};

/** A level of the stored statistics of a series and day. */
export type SlotLevel =
  /** The day totals. */
  | 'DAY'
  /** The 24 hour slots. */
  | 'HOUR'
  /** The 1,440 minute slots. */
  | 'MINUTE'
  /** The 96 quarter hours (UTC :00, :15, :30, :45), a level of sketches only: percentile buckets whose edges fall inside an hour (Asia/Kolkata hours, Asia/Kathmandu days, 30-minute buckets) read them instead of minute slots. */
  | 'QUARTER';

/** Sort order. */
export type SortDirection =
  /** Smallest first. */
  | 'ASC'
  /** Largest first. */
  | 'DESC';

/** A statistic of a bucket, for `value` and its transforms. */
export type Statistic =
  /** The bucket's `avg`. */
  | 'AVG'
  /** The bucket's `count`. */
  | 'COUNT'
  /** The bucket's `first`. */
  | 'FIRST'
  /** The bucket's `increase`: a counter's reset-aware increase (counters only, else NOT_A_COUNTER; see docs/statistics.md, "Counters"). */
  | 'INCREASE'
  /** The bucket's `last`. */
  | 'LAST'
  /** The bucket's `max`. */
  | 'MAX'
  /** The bucket's `min`. */
  | 'MIN'
  /** The bucket's `p50`. */
  | 'P50'
  /** The bucket's `p90`. */
  | 'P90'
  /** The bucket's `p95`. */
  | 'P95'
  /** The bucket's `p99`. */
  | 'P99'
  /** The bucket's `rate`: a counter's increase per second of the bucket inside the range, the same as `statistic: INCREASE, transform: RATE` (counters only, else NOT_A_COUNTER). */
  | 'RATE'
  /** The bucket's `sampleStddev`. */
  | 'SAMPLE_STDDEV'
  /** The bucket's `stddev`. */
  | 'STDDEV'
  /** The bucket's `sum`. */
  | 'SUM'
  /** The bucket's `variance`. */
  | 'VARIANCE';

/** Statistics of one field over a span of time. When `count` is 0 there were no readings and every other value is null (never 0). */
export type Statistics = {
  /** Arithmetic mean, `sum / count`. */
  readonly avg: Maybe<Scalars['Float']['output']>;
  /** Number of readings. */
  readonly count: Scalars['SafeInt']['output'];
  /** The earliest reading (of several in the same millisecond, the smallest value). Null without readings, and when some readings were stored before first and last values were kept (layout version 1). */
  readonly first: Maybe<TimedValue>;
  /** Counters only (`setMetricKind(kind: COUNTER)`, else NOT_A_COUNTER): the reset-aware increase, per series the sum over its readings in this span of the reading minus the one before it (the last reading before the span counts when it lies in the query range; a drop is a reset and counts the new value), summed over the group's series; no extrapolation to the span's edges (docs/statistics.md, "Counters"). Null without readings, for readings folded before the metric was a counter, and where parts of a series written by different folds interleave in time (a late reading) until a compaction can separate them. */
  readonly increase: Maybe<Scalars['Float']['output']>;
  /** The latest reading (of several in the same millisecond, the largest value): a "current value". Null without readings, and when some readings were stored before first and last values were kept (layout version 1). */
  readonly last: Maybe<TimedValue>;
  /** Largest value. */
  readonly max: Maybe<Scalars['Float']['output']>;
  /** Smallest value. */
  readonly min: Maybe<Scalars['Float']['output']>;
  /** The median: `percentile(p: 50)`. */
  readonly p50: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 90)`. */
  readonly p90: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 95)`. */
  readonly p95: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 99)`. */
  readonly p99: Maybe<Scalars['Float']['output']>;
  /** The `p` percentile of the values. Within 1% (relative) of the exact value of the reading of rank floor(p/100 x (count - 1)) in value order (0-based), from mergeable DDSketch sketches; exact at p = 0 and 100 (min and max). Null when the readings are not all in sketches: the metric keeps no sketch of this field at a level the query reads (by default day totals, hours and quarter hours are sketched, minutes are not, so a range edge inside a quarter hour, or a bucket shorter than 15 minutes, gives null; edges of hour and coarser buckets fall on quarter hours in every zone), or data written before sketches existed. */
  readonly percentile: Maybe<Scalars['Float']['output']>;
  /** `increase` per second: divided by the seconds of the span inside the query range (a bucket cut by `from` or `to` by the part it covers). Counters only, null with `increase`. */
  readonly rate: Maybe<Scalars['Float']['output']>;
  /** Sample standard deviation, dividing by `count - 1` (as MongoDB `$stdDevSamp`); null when `count < 2`. */
  readonly sampleStddev: Maybe<Scalars['Float']['output']>;
  /** Population standard deviation (as MongoDB `$stdDevPop`). */
  readonly stddev: Maybe<Scalars['Float']['output']>;
  /** Sum of the values. */
  readonly sum: Maybe<Scalars['Float']['output']>;
  /** Population variance, `sumOfSquares / count - avg^2`. */
  readonly variance: Maybe<Scalars['Float']['output']>;
};


/** Statistics of one field over a span of time. When `count` is 0 there were no readings and every other value is null (never 0). */
export type StatisticsPercentileArgs = {
  p: Scalars['Float']['input'];
};

/** Live answers pushed over Server-Sent Events as readings arrive (scope `read`; see docs/live-updates.md). */
export type Subscription = {
  /** Live `buckets`: the same arguments, answers, limits and errors as `Query.buckets`, pushed over Server-Sent Events (`Accept: text/event-stream`). The first push is the whole answer, at once. Then, whenever readings of `metric` inside the range (or inside the earlier period of `compareWith`) are acknowledged, a push with each group's buckets from the one holding the earliest new reading to the end of the range (they may have changed: fill, transforms and comparisons carry forward); with `fill: LINEAR`, `orderBy` or `limit` every push is the whole answer. Merge pushes into the first by bucket `start`. Writes are coalesced: at most one push every LIVE_MIN_INTERVAL_MS (default 1,000 ms) per subscription. Every push runs the query again, held to MAX_BUCKETS and QUERY_TIMEOUT_MS; a push that fails carries its error (e.g. UNAVAILABLE, QUERY_TIMEOUT) and the subscription goes on. Readings are matched by metric only, so a push may repeat unchanged buckets when the new readings were of series outside `where`. Needs scope `read` and a token that may touch `metric` (else FORBIDDEN). */
  readonly buckets: ReadonlyArray<BucketGroup>;
};


/** Live answers pushed over Server-Sent Events as readings arrive (scope `read`; see docs/live-updates.md). */
export type SubscriptionBucketsArgs = {
  compareWith?: InputMaybe<OffsetInput>;
  field: Scalars['String']['input'];
  fill?: InputMaybe<Fill>;
  from: Scalars['Time']['input'];
  granularity?: InputMaybe<Granularity>;
  groupBy?: InputMaybe<ReadonlyArray<Scalars['String']['input']>>;
  limit?: InputMaybe<Scalars['Int']['input']>;
  maxDataPoints?: InputMaybe<Scalars['Int']['input']>;
  metric: Scalars['String']['input'];
  orderBy?: InputMaybe<OrderByInput>;
  statistic?: InputMaybe<Statistic>;
  timeZone?: InputMaybe<Scalars['String']['input']>;
  to: Scalars['Time']['input'];
  transform?: InputMaybe<Transform>;
  weekStart?: InputMaybe<Weekday>;
  where?: InputMaybe<ReadonlyArray<TagFilter>>;
  window?: InputMaybe<Scalars['Int']['input']>;
};

/** A tag of a series: a key and its string value, e.g. `{key: "origin", value: "LAS"}`. */
export type Tag = {
  /** Tag key, e.g. `origin`. */
  readonly key: Scalars['String']['output'];
  /** Tag value, e.g. `LAS`. */
  readonly value: Scalars['String']['output'];
};

/** Keeps the series whose tag `key` equals one of the values in `in`. Several filters must all hold. A single value may be written without brackets: `{key: "origin", in: "LAS"}`. Unknown keys or values match nothing (an empty result, not an error). */
export type TagFilter = {
  /** Accepted values, e.g. `["LAS", "PHX"]`. */
  readonly in: ReadonlyArray<Scalars['String']['input']>;
  /** Tag key, e.g. `origin`. */
  readonly key: Scalars['String']['input'];
};

/** A tag of a reading. Keys follow the naming rule (a letter or `_`, then letters, digits, `_` or `-`; at most 64 characters; no `$` or `.`); values are non-empty strings of at most 256 characters. */
export type TagInput = {
  /** Tag key, e.g. `origin`. */
  readonly key: Scalars['String']['input'];
  /** Tag value, e.g. `LAS`. */
  readonly value: Scalars['String']['input'];
};

/** One reading's value and its exact time. */
export type TimedValue = {
  /** When the reading was taken (UTC). */
  readonly time: Scalars['DateTime']['output'];
  /** The value. */
  readonly value: Scalars['Float']['output'];
};

/** What a bucket list computes from the chosen `statistic`, bucket by bucket, into `value` (after fill; computed by the engine, see docs/querying.md, "Transforms"). */
export type Transform =
  /** Running total from the start of the range; null values add nothing. */
  | 'CUMULATIVE_SUM'
  /** The statistic minus the previous bucket's; null at the first bucket, next to a null, or after a gap. */
  | 'DIFFERENCE'
  /** Mean of the last `window` non-null values (fewer at the start); null where the bucket's own value is null. */
  | 'MOVING_AVERAGE'
  /** The statistic itself. */
  | 'NONE'
  /** Per second: the statistic divided by the seconds of the bucket inside the range (MMS "avg/sec"; with `statistic: SUM` or `COUNT` a throughput). No counter semantics: for a counter use `statistic: INCREASE` with it, or `statistic: RATE`. */
  | 'RATE';

/** A day of the week. */
export type Weekday =
  /** Friday. */
  | 'FRIDAY'
  /** Monday. */
  | 'MONDAY'
  /** Saturday. */
  | 'SATURDAY'
  /** Sunday. */
  | 'SUNDAY'
  /** Thursday. */
  | 'THURSDAY'
  /** Tuesday. */
  | 'TUESDAY'
  /** Wednesday. */
  | 'WEDNESDAY';

export type DelayPerOriginQueryVariables = Exact<{ [key: string]: never; }>;


export type DelayPerOriginQuery = { readonly aggregate: ReadonlyArray<{ readonly count: number, readonly avg: number | null, readonly min: number | null, readonly max: number | null, readonly stddev: number | null, readonly tags: ReadonlyArray<{ readonly value: string }> }> };

export type CurrentValueQueryVariables = Exact<{ [key: string]: never; }>;


export type CurrentValueQuery = { readonly series: ReadonlyArray<{ readonly id: string, readonly latestValue: { readonly time: string, readonly value: number } | null, readonly buckets: ReadonlyArray<{ readonly start: string, readonly count: number, readonly last: { readonly time: string, readonly value: number } | null }> }> };

export type LasVegasEveningQueryVariables = Exact<{ [key: string]: never; }>;


export type LasVegasEveningQuery = { readonly buckets: ReadonlyArray<{ readonly buckets: ReadonlyArray<{ readonly start: string, readonly count: number, readonly sum: number | null, readonly min: number | null, readonly max: number | null, readonly avg: number | null }> }> };

export type LatestFlightsQueryVariables = Exact<{ [key: string]: never; }>;


export type LatestFlightsQuery = { readonly series: ReadonlyArray<{ readonly id: string, readonly latest: ReadonlyArray<{ readonly time: string, readonly values: ReadonlyArray<{ readonly name: string, readonly value: number }> }> }> };

export type MetricsQueryVariables = Exact<{ [key: string]: never; }>;


export type MetricsQuery = { readonly metrics: ReadonlyArray<{ readonly name: string, readonly fields: ReadonlyArray<string>, readonly tagKeys: ReadonlyArray<string>, readonly seriesCount: number, readonly firstReadingAt: string | null, readonly lastReadingAt: string | null }> };

export type MonthlyDelayByOriginQueryVariables = Exact<{ [key: string]: never; }>;


export type MonthlyDelayByOriginQuery = { readonly buckets: ReadonlyArray<{ readonly tags: ReadonlyArray<{ readonly key: string, readonly value: string }>, readonly buckets: ReadonlyArray<{ readonly start: string, readonly count: number, readonly avg: number | null, readonly max: number | null, readonly stddev: number | null }> }> };

export type NewYorkDailyQueryVariables = Exact<{ [key: string]: never; }>;


export type NewYorkDailyQuery = { readonly buckets: ReadonlyArray<{ readonly granularity: Granularity, readonly buckets: ReadonlyArray<{ readonly localStart: string, readonly end: string, readonly partial: boolean, readonly count: number, readonly avg: number | null }> }> };

export type OrdP95DelayQueryVariables = Exact<{ [key: string]: never; }>;


export type OrdP95DelayQuery = { readonly buckets: ReadonlyArray<{ readonly buckets: ReadonlyArray<{ readonly start: string, readonly count: number, readonly p50: number | null, readonly p95: number | null, readonly p99: number | null, readonly value: number | null }> }> };

export type RecordReadingsMutationVariables = Exact<{ [key: string]: never; }>;


export type RecordReadingsMutation = { readonly recordReadings: { readonly recorded: number, readonly series: number, readonly documents: number } };

export type RoutesFromSanJoseQueryVariables = Exact<{ [key: string]: never; }>;


export type RoutesFromSanJoseQuery = { readonly series: ReadonlyArray<{ readonly id: string, readonly february: ReadonlyArray<{ readonly start: string, readonly count: number }>, readonly quarter: { readonly count: number, readonly avg: number | null } }> };

export type WeekOverWeekQueryVariables = Exact<{ [key: string]: never; }>;


export type WeekOverWeekQuery = { readonly buckets: ReadonlyArray<{ readonly buckets: ReadonlyArray<{ readonly start: string, readonly value: number | null, readonly previous: number | null, readonly change: number | null, readonly relativeChange: number | null }> }> };

export type WorstOriginsQueryVariables = Exact<{ [key: string]: never; }>;


export type WorstOriginsQuery = { readonly aggregate: ReadonlyArray<{ readonly count: number, readonly avg: number | null, readonly tags: ReadonlyArray<{ readonly value: string }> }> };

export type LoadWriteMutationVariables = Exact<{
  readings: ReadonlyArray<ReadingInput> | ReadingInput;
  batchId?: InputMaybe<Scalars['String']['input']>;
}>;


export type LoadWriteMutation = { readonly recordReadings: { readonly recorded: number } };

export type LoadHourBucketsQueryVariables = Exact<{
  metric: Scalars['String']['input'];
  from: Scalars['Time']['input'];
  to: Scalars['Time']['input'];
  hosts: ReadonlyArray<Scalars['String']['input']> | Scalars['String']['input'];
}>;


export type LoadHourBucketsQuery = { readonly buckets: ReadonlyArray<{ readonly buckets: ReadonlyArray<{ readonly start: string, readonly count: number, readonly avg: number | null }> }> };

export type LoadPerHostQueryVariables = Exact<{
  metric: Scalars['String']['input'];
  from: Scalars['Time']['input'];
  to: Scalars['Time']['input'];
}>;


export type LoadPerHostQuery = { readonly aggregate: ReadonlyArray<{ readonly count: number, readonly avg: number | null, readonly max: number | null, readonly tags: ReadonlyArray<{ readonly value: string }> }> };

export type LoadTotalsQueryVariables = Exact<{
  metric: Scalars['String']['input'];
  from: Scalars['Time']['input'];
  to: Scalars['Time']['input'];
}>;


export type LoadTotalsQuery = { readonly aggregate: ReadonlyArray<{ readonly count: number, readonly sum: number | null }> };

export type DashboardMetricsQueryVariables = Exact<{ [key: string]: never; }>;


export type DashboardMetricsQuery = { readonly metrics: ReadonlyArray<{ readonly name: string, readonly fields: ReadonlyArray<string>, readonly tagKeys: ReadonlyArray<string>, readonly firstReadingAt: string | null, readonly lastReadingAt: string | null }> };

export type DashboardChartFragment = { readonly granularity: Granularity, readonly buckets: ReadonlyArray<{ readonly start: string, readonly localStart: string, readonly count: number, readonly avg: number | null, readonly p5: number | null, readonly p95: number | null }> };

export type DashboardBucketsQueryVariables = Exact<{
  metric: Scalars['String']['input'];
  field: Scalars['String']['input'];
  from: Scalars['Time']['input'];
  to: Scalars['Time']['input'];
  timeZone: Scalars['String']['input'];
  where?: InputMaybe<ReadonlyArray<TagFilter> | TagFilter>;
  maxDataPoints: Scalars['Int']['input'];
}>;


export type DashboardBucketsQuery = { readonly buckets: ReadonlyArray<{ readonly granularity: Granularity, readonly buckets: ReadonlyArray<{ readonly start: string, readonly localStart: string, readonly count: number, readonly avg: number | null, readonly p5: number | null, readonly p95: number | null }> }> };

export type DashboardLiveSubscriptionVariables = Exact<{
  metric: Scalars['String']['input'];
  field: Scalars['String']['input'];
  from: Scalars['Time']['input'];
  to: Scalars['Time']['input'];
  timeZone: Scalars['String']['input'];
  where?: InputMaybe<ReadonlyArray<TagFilter> | TagFilter>;
  maxDataPoints: Scalars['Int']['input'];
}>;


export type DashboardLiveSubscription = { readonly buckets: ReadonlyArray<{ readonly granularity: Granularity, readonly buckets: ReadonlyArray<{ readonly start: string, readonly localStart: string, readonly count: number, readonly avg: number | null, readonly p5: number | null, readonly p95: number | null }> }> };

export type ImportBatchMutationVariables = Exact<{
  readings: ReadonlyArray<ReadingInput> | ReadingInput;
  batchId?: InputMaybe<Scalars['String']['input']>;
}>;


export type ImportBatchMutation = { readonly recordReadings: { readonly recorded: number, readonly applied: number, readonly alreadyApplied: number } };

export type CountFlightsQueryVariables = Exact<{ [key: string]: never; }>;


export type CountFlightsQuery = { readonly aggregate: ReadonlyArray<{ readonly count: number }> };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}
export const DashboardChartFragmentDoc = new TypedDocumentString(`
    fragment DashboardChart on BucketGroup {
  granularity
  buckets {
    start
    localStart
    count
    avg
    p5: percentile(p: 5)
    p95: percentile(p: 95)
  }
}
    `, {"fragmentName":"DashboardChart"}) as unknown as TypedDocumentString<DashboardChartFragment, unknown>;
export const DelayPerOriginDocument = new TypedDocumentString(`
    query DelayPerOrigin {
  aggregate(
    metric: "flights"
    field: "delay"
    from: "2001-01-01T00:00:00Z"
    to: "2001-04-01T00:00:00Z"
    where: [{key: "origin", in: ["LAX", "SFO", "SEA", "PHX"]}]
    groupBy: ["origin"]
  ) {
    tags {
      value
    }
    count
    avg
    min
    max
    stddev
  }
}
    `) as unknown as TypedDocumentString<DelayPerOriginQuery, DelayPerOriginQueryVariables>;
export const CurrentValueDocument = new TypedDocumentString(`
    query CurrentValue {
  series(
    metric: "flights"
    where: [{key: "origin", in: "LAS"}, {key: "destination", in: "LAX"}]
  ) {
    id
    latestValue(field: "delay") {
      time
      value
    }
    buckets(field: "delay", granularity: DAY, from: "2001-03-25", to: "2001-04-01") {
      start
      count
      last {
        time
        value
      }
    }
  }
}
    `) as unknown as TypedDocumentString<CurrentValueQuery, CurrentValueQueryVariables>;
export const LasVegasEveningDocument = new TypedDocumentString(`
    query LasVegasEvening {
  buckets(
    metric: "flights"
    field: "delay"
    granularity: HOUR
    from: "2001-01-12T18:00:00Z"
    to: "2001-01-13T00:00:00Z"
    where: [{key: "origin", in: "LAS"}]
  ) {
    buckets {
      start
      count
      sum
      min
      max
      avg
    }
  }
}
    `) as unknown as TypedDocumentString<LasVegasEveningQuery, LasVegasEveningQueryVariables>;
export const LatestFlightsDocument = new TypedDocumentString(`
    query LatestFlights {
  series(
    metric: "flights"
    where: [{key: "origin", in: "LAS"}, {key: "destination", in: "LAX"}]
  ) {
    id
    latest(n: 10) {
      time
      values {
        name
        value
      }
    }
  }
}
    `) as unknown as TypedDocumentString<LatestFlightsQuery, LatestFlightsQueryVariables>;
export const MetricsDocument = new TypedDocumentString(`
    query Metrics {
  metrics {
    name
    fields
    tagKeys
    seriesCount
    firstReadingAt
    lastReadingAt
  }
}
    `) as unknown as TypedDocumentString<MetricsQuery, MetricsQueryVariables>;
export const MonthlyDelayByOriginDocument = new TypedDocumentString(`
    query MonthlyDelayByOrigin {
  buckets(
    metric: "flights"
    field: "delay"
    granularity: MONTH
    from: "2001-01-01T00:00:00Z"
    to: "2001-04-01T00:00:00Z"
    where: [{key: "origin", in: ["ATL", "ORD", "DFW"]}]
    groupBy: ["origin"]
  ) {
    tags {
      key
      value
    }
    buckets {
      start
      count
      avg
      max
      stddev
    }
  }
}
    `) as unknown as TypedDocumentString<MonthlyDelayByOriginQuery, MonthlyDelayByOriginQueryVariables>;
export const NewYorkDailyDocument = new TypedDocumentString(`
    query NewYorkDaily {
  buckets(
    metric: "flights"
    field: "delay"
    from: "2001-03-28"
    to: "2001-04-01T12:00"
    timeZone: "America/New_York"
    maxDataPoints: 8
    where: [{key: "origin", in: ["JFK", "LGA", "EWR"]}]
  ) {
    granularity
    buckets {
      localStart
      end
      partial
      count
      avg
    }
  }
}
    `) as unknown as TypedDocumentString<NewYorkDailyQuery, NewYorkDailyQueryVariables>;
export const OrdP95DelayDocument = new TypedDocumentString(`
    query OrdP95Delay {
  buckets(
    metric: "flights"
    field: "delay"
    granularity: DAY
    from: "2001-03-19"
    to: "2001-03-26"
    where: [{key: "origin", in: ["ORD"]}]
    statistic: P95
  ) {
    buckets {
      start
      count
      p50
      p95
      p99
      value
    }
  }
}
    `) as unknown as TypedDocumentString<OrdP95DelayQuery, OrdP95DelayQueryVariables>;
export const RecordReadingsDocument = new TypedDocumentString(`
    mutation RecordReadings {
  recordReadings(
    readings: [{metric: "cpu", tags: [{key: "host", value: "web-1"}], time: "2024-05-01T08:00:12Z", fields: [{name: "usage", value: 41.5}]}, {metric: "cpu", tags: [{key: "host", value: "web-1"}], time: "2024-05-01T08:00:48Z", fields: [{name: "usage", value: 43.5}]}]
  ) {
    recorded
    series
    documents
  }
}
    `) as unknown as TypedDocumentString<RecordReadingsMutation, RecordReadingsMutationVariables>;
export const RoutesFromSanJoseDocument = new TypedDocumentString(`
    query RoutesFromSanJose {
  series(metric: "flights", where: [{key: "origin", in: "SJC"}]) {
    id
    february: buckets(
      field: "delay"
      granularity: WEEK
      from: "2001-01-29T00:00:00Z"
      to: "2001-03-05T00:00:00Z"
    ) {
      start
      count
    }
    quarter: aggregate(
      field: "distance"
      from: "2001-01-01T00:00:00Z"
      to: "2001-04-01T00:00:00Z"
    ) {
      count
      avg
    }
  }
}
    `) as unknown as TypedDocumentString<RoutesFromSanJoseQuery, RoutesFromSanJoseQueryVariables>;
export const WeekOverWeekDocument = new TypedDocumentString(`
    query WeekOverWeek {
  buckets(
    metric: "flights"
    field: "delay"
    granularity: DAY
    from: "2001-03-19"
    to: "2001-03-26"
    timeZone: "America/Chicago"
    where: [{key: "origin", in: "ORD"}]
    statistic: COUNT
    compareWith: {amount: 1, unit: WEEK}
  ) {
    buckets {
      start
      value
      previous
      change
      relativeChange
    }
  }
}
    `) as unknown as TypedDocumentString<WeekOverWeekQuery, WeekOverWeekQueryVariables>;
export const WorstOriginsDocument = new TypedDocumentString(`
    query WorstOrigins {
  aggregate(
    metric: "flights"
    field: "delay"
    from: "2001-01-01"
    to: "2001-04-01"
    groupBy: ["origin"]
    orderBy: {statistic: AVG, direction: DESC}
    limit: 10
  ) {
    tags {
      value
    }
    count
    avg
  }
}
    `) as unknown as TypedDocumentString<WorstOriginsQuery, WorstOriginsQueryVariables>;
export const LoadWriteDocument = new TypedDocumentString(`
    mutation LoadWrite($readings: [ReadingInput!]!, $batchId: String) {
  recordReadings(readings: $readings, batchId: $batchId) {
    recorded
  }
}
    `) as unknown as TypedDocumentString<LoadWriteMutation, LoadWriteMutationVariables>;
export const LoadHourBucketsDocument = new TypedDocumentString(`
    query LoadHourBuckets($metric: String!, $from: Time!, $to: Time!, $hosts: [String!]!) {
  buckets(
    metric: $metric
    field: "v"
    granularity: HOUR
    from: $from
    to: $to
    where: [{key: "host", in: $hosts}]
  ) {
    buckets {
      start
      count
      avg
    }
  }
}
    `) as unknown as TypedDocumentString<LoadHourBucketsQuery, LoadHourBucketsQueryVariables>;
export const LoadPerHostDocument = new TypedDocumentString(`
    query LoadPerHost($metric: String!, $from: Time!, $to: Time!) {
  aggregate(metric: $metric, field: "v", from: $from, to: $to, groupBy: ["host"]) {
    tags {
      value
    }
    count
    avg
    max
  }
}
    `) as unknown as TypedDocumentString<LoadPerHostQuery, LoadPerHostQueryVariables>;
export const LoadTotalsDocument = new TypedDocumentString(`
    query LoadTotals($metric: String!, $from: Time!, $to: Time!) {
  aggregate(metric: $metric, field: "v", from: $from, to: $to) {
    count
    sum
  }
}
    `) as unknown as TypedDocumentString<LoadTotalsQuery, LoadTotalsQueryVariables>;
export const DashboardMetricsDocument = new TypedDocumentString(`
    query DashboardMetrics {
  metrics {
    name
    fields
    tagKeys
    firstReadingAt
    lastReadingAt
  }
}
    `) as unknown as TypedDocumentString<DashboardMetricsQuery, DashboardMetricsQueryVariables>;
export const DashboardBucketsDocument = new TypedDocumentString(`
    query DashboardBuckets($metric: String!, $field: String!, $from: Time!, $to: Time!, $timeZone: String!, $where: [TagFilter!], $maxDataPoints: Int!) {
  buckets(
    metric: $metric
    field: $field
    from: $from
    to: $to
    timeZone: $timeZone
    where: $where
    maxDataPoints: $maxDataPoints
    fill: NULL
  ) {
    ...DashboardChart
  }
}
    fragment DashboardChart on BucketGroup {
  granularity
  buckets {
    start
    localStart
    count
    avg
    p5: percentile(p: 5)
    p95: percentile(p: 95)
  }
}`) as unknown as TypedDocumentString<DashboardBucketsQuery, DashboardBucketsQueryVariables>;
export const DashboardLiveDocument = new TypedDocumentString(`
    subscription DashboardLive($metric: String!, $field: String!, $from: Time!, $to: Time!, $timeZone: String!, $where: [TagFilter!], $maxDataPoints: Int!) {
  buckets(
    metric: $metric
    field: $field
    from: $from
    to: $to
    timeZone: $timeZone
    where: $where
    maxDataPoints: $maxDataPoints
    fill: NULL
  ) {
    ...DashboardChart
  }
}
    fragment DashboardChart on BucketGroup {
  granularity
  buckets {
    start
    localStart
    count
    avg
    p5: percentile(p: 5)
    p95: percentile(p: 95)
  }
}`) as unknown as TypedDocumentString<DashboardLiveSubscription, DashboardLiveSubscriptionVariables>;
export const ImportBatchDocument = new TypedDocumentString(`
    mutation ImportBatch($readings: [ReadingInput!]!, $batchId: String) {
  recordReadings(readings: $readings, batchId: $batchId) {
    recorded
    applied
    alreadyApplied
  }
}
    `) as unknown as TypedDocumentString<ImportBatchMutation, ImportBatchMutationVariables>;
export const CountFlightsDocument = new TypedDocumentString(`
    query CountFlights {
  aggregate(
    metric: "flights"
    field: "delay"
    from: "1970-01-01T00:00:00Z"
    to: "9999-01-01T00:00:00Z"
  ) {
    count
  }
}
    `) as unknown as TypedDocumentString<CountFlightsQuery, CountFlightsQueryVariables>;