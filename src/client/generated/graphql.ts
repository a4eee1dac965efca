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
  avg: Maybe<Scalars['Float']['output']>;
  /** Number of readings. */
  count: Scalars['SafeInt']['output'];
  /** The earliest reading (of several in the same millisecond, the smallest value). Null without readings, and when some readings were stored before first and last values were kept (layout version 1). */
  first: Maybe<TimedValue>;
  /** Start of the range, rounded down to the minute. */
  from: Scalars['DateTime']['output'];
  /** The latest reading (of several in the same millisecond, the largest value): a "current value". Null without readings, and when some readings were stored before first and last values were kept (layout version 1). */
  last: Maybe<TimedValue>;
  /** Largest value. */
  max: Maybe<Scalars['Float']['output']>;
  /** Smallest value. */
  min: Maybe<Scalars['Float']['output']>;
  /** The median: `percentile(p: 50)`. */
  p50: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 90)`. */
  p90: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 95)`. */
  p95: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 99)`. */
  p99: Maybe<Scalars['Float']['output']>;
  /** The `p` percentile of the values. Within 1% (relative) of the exact value of the reading of rank floor(p/100 x (count - 1)) in value order (0-based), from mergeable DDSketch sketches; exact at p = 0 and 100 (min and max). Null when the readings are not all in sketches: the metric keeps no sketch of this field at a level the query reads (by default day and hour slots are sketched, minute slots are not, so a range or bucket edge inside an hour gives null), or data written before sketches existed. */
  percentile: Maybe<Scalars['Float']['output']>;
  /** Sample standard deviation, dividing by `count - 1` (as MongoDB `$stdDevSamp`); null when `count < 2`. */
  sampleStddev: Maybe<Scalars['Float']['output']>;
  /** Population standard deviation (as MongoDB `$stdDevPop`). */
  stddev: Maybe<Scalars['Float']['output']>;
  /** Sum of the values. */
  sum: Maybe<Scalars['Float']['output']>;
  /** The group's tag values (the series' tags for `Series.aggregate`); empty when not grouped. */
  tags: Array<Tag>;
  /** End of the range (exclusive), rounded down to the minute. */
  to: Scalars['DateTime']['output'];
  /** Population variance, `sumOfSquares / count - avg^2`. */
  variance: Maybe<Scalars['Float']['output']>;
};


/** Statistics of one field over the whole range `[from, to)` for one group of series. */
export type AggregatePercentileArgs = {
  p: Scalars['Float']['input'];
};

/** One time bucket `[start, end)` (UTC) and the statistics of its readings. */
export type Bucket = Statistics & {
  /** Arithmetic mean, `sum / count`. */
  avg: Maybe<Scalars['Float']['output']>;
  /** `value - previous`. */
  change: Maybe<Scalars['Float']['output']>;
  /** Number of readings. */
  count: Scalars['SafeInt']['output'];
  /** Real end of the bucket (exclusive): a local day with a daylight-saving change lasts 23 or 25 hours. */
  end: Scalars['DateTime']['output'];
  /** True when the bucket has no readings and its statistics come from `fill` (ZERO, PREVIOUS, LINEAR). */
  filled: Scalars['Boolean']['output'];
  /** The earliest reading (of several in the same millisecond, the smallest value). Null without readings, and when some readings were stored before first and last values were kept (layout version 1). */
  first: Maybe<TimedValue>;
  /** The latest reading (of several in the same millisecond, the largest value): a "current value". Null without readings, and when some readings were stored before first and last values were kept (layout version 1). */
  last: Maybe<TimedValue>;
  /** The start as wall-clock time of the query's `timeZone` with its offset, RFC 3339, e.g. `2001-04-01T00:00:00-05:00`. */
  localStart: Scalars['String']['output'];
  /** Largest value. */
  max: Maybe<Scalars['Float']['output']>;
  /** Smallest value. */
  min: Maybe<Scalars['Float']['output']>;
  /** The median: `percentile(p: 50)`. */
  p50: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 90)`. */
  p90: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 95)`. */
  p95: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 99)`. */
  p99: Maybe<Scalars['Float']['output']>;
  /** True when the range `[from, to)` covers only part of the bucket (only the first and the last bucket can be): its statistics are of that part. */
  partial: Scalars['Boolean']['output'];
  /** The `p` percentile of the values. Within 1% (relative) of the exact value of the reading of rank floor(p/100 x (count - 1)) in value order (0-based), from mergeable DDSketch sketches; exact at p = 0 and 100 (min and max). Null when the readings are not all in sketches: the metric keeps no sketch of this field at a level the query reads (by default day and hour slots are sketched, minute slots are not, so a range or bucket edge inside an hour gives null), or data written before sketches existed. */
  percentile: Maybe<Scalars['Float']['output']>;
  /** `value` of the bucket at the same position of the earlier period (`compareWith`); null without one. */
  previous: Maybe<Scalars['Float']['output']>;
  /** Start of that earlier bucket. */
  previousStart: Maybe<Scalars['DateTime']['output']>;
  /** `(value - previous) / |previous|` as a fraction (0.25 is 25% more); null when `previous` is 0 or null. */
  relativeChange: Maybe<Scalars['Float']['output']>;
  /** Sample standard deviation, dividing by `count - 1` (as MongoDB `$stdDevSamp`); null when `count < 2`. */
  sampleStddev: Maybe<Scalars['Float']['output']>;
  /** Start of the bucket, aligned to the granularity. The first bucket may start before `from`; it only counts readings from `from` on. */
  start: Scalars['DateTime']['output'];
  /** Population standard deviation (as MongoDB `$stdDevPop`). */
  stddev: Maybe<Scalars['Float']['output']>;
  /** Sum of the values. */
  sum: Maybe<Scalars['Float']['output']>;
  /** The chosen `statistic`, after `transform` (the statistic itself without one). */
  value: Maybe<Scalars['Float']['output']>;
  /** Population variance, `sumOfSquares / count - avg^2`. */
  variance: Maybe<Scalars['Float']['output']>;
};


/** One time bucket `[start, end)` (UTC) and the statistics of its readings. */
export type BucketPercentileArgs = {
  p: Scalars['Float']['input'];
};

/** The buckets of a list as parallel arrays, index i being the i-th bucket in time order: compact to send and to parse, and the shape chart libraries take. Statistics are null where a bucket has no readings. */
export type BucketColumns = {
  /** Mean per bucket. */
  avg: Array<Maybe<Scalars['Float']['output']>>;
  /** `change` per bucket (with `compareWith`). */
  change: Array<Maybe<Scalars['Float']['output']>>;
  /** Number of readings per bucket. */
  count: Array<Scalars['SafeInt']['output']>;
  /** Bucket ends (exclusive) in epoch milliseconds. */
  ends: Array<Scalars['Float']['output']>;
  /** Whether each bucket was made up by `fill`. */
  filled: Array<Scalars['Boolean']['output']>;
  /** Value of the earliest reading per bucket (see `Bucket.first`). */
  first: Array<Maybe<Scalars['Float']['output']>>;
  /** Value of the latest reading per bucket (see `Bucket.last`). */
  last: Array<Maybe<Scalars['Float']['output']>>;
  /** Largest value per bucket. */
  max: Array<Maybe<Scalars['Float']['output']>>;
  /** Smallest value per bucket. */
  min: Array<Maybe<Scalars['Float']['output']>>;
  /** The `p` percentile per bucket. Within 1% (relative) of the exact value of the reading of rank floor(p/100 x (count - 1)) in value order (0-based), from mergeable DDSketch sketches; exact at p = 0 and 100 (min and max). Null when the readings are not all in sketches: the metric keeps no sketch of this field at a level the query reads (by default day and hour slots are sketched, minute slots are not, so a range or bucket edge inside an hour gives null), or data written before sketches existed. */
  percentile: Array<Maybe<Scalars['Float']['output']>>;
  /** `previous` per bucket (with `compareWith`). */
  previous: Array<Maybe<Scalars['Float']['output']>>;
  /** Sample standard deviation per bucket (null below 2 readings). */
  sampleStddev: Array<Maybe<Scalars['Float']['output']>>;
  /** Population standard deviation per bucket. */
  stddev: Array<Maybe<Scalars['Float']['output']>>;
  /** Sum per bucket. */
  sum: Array<Maybe<Scalars['Float']['output']>>;
  /** Bucket starts in epoch milliseconds (UTC instants). */
  times: Array<Scalars['Float']['output']>;
  /** `value` per bucket (the chosen statistic after its transform). */
  value: Array<Maybe<Scalars['Float']['output']>>;
  /** Population variance per bucket. */
  variance: Array<Maybe<Scalars['Float']['output']>>;
};


/** The buckets of a list as parallel arrays, index i being the i-th bucket in time order: compact to send and to parse, and the shape chart libraries take. Statistics are null where a bucket has no readings. */
export type BucketColumnsPercentileArgs = {
  p: Scalars['Float']['input'];
};

/** The buckets of one group of series, in time order. */
export type BucketGroup = {
  /** Buckets in time order. */
  buckets: Array<Bucket>;
  /** The same buckets as parallel arrays (epoch-millisecond times and one array per statistic): the compact, chart-ready form. */
  columns: BucketColumns;
  /** The granularity of the buckets: the one asked for, or the one the engine picked for `maxDataPoints`. */
  granularity: Granularity;
  /** The `groupBy` tag values of this group, in `groupBy` order; empty when the query is not grouped. */
  tags: Array<Tag>;
};

/** What a deletion removed. */
export type DeleteResult = {
  /**
   * The same as `documents` (its former name).
   * @deprecated Use `documents`: "bucket" names the time buckets of query answers.
   */
  buckets: Scalars['SafeInt']['output'];
  /** Series-day documents deleted (one per series and day). */
  documents: Scalars['SafeInt']['output'];
  /** Metric registry entries deleted (0 or 1). */
  metrics: Scalars['Int']['output'];
  /** Series registry entries deleted. */
  series: Scalars['Int']['output'];
};

/** How the series-day documents of a metric are laid out; fixed when the metric is first recorded (config DEFAULT_LAYOUT). */
export type DocumentLayout =
  /** Day documents inserted as a zeroed skeleton of all 1,440 minutes first, then updated in place. */
  | 'PREALLOCATED'
  /** Day documents whose hour and minute slots are created by their first reading. */
  | 'SPARSE';

/** A numeric field of a reading, e.g. `{name: "delay", value: 12}`. */
export type FieldInput = {
  /** Field name: a letter or `_`, then letters, digits, `_` or `-`; at most 64 characters. */
  name: Scalars['String']['input'];
  /** The value; finite (NaN and infinities are refused). */
  value: Scalars['Float']['input'];
};

/** One field's value in a reading. */
export type FieldValue = {
  /** Field name. */
  name: Scalars['String']['output'];
  /** The value. */
  value: Scalars['Float']['output'];
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
  /** Fifteen minutes (:00, :15, :30, :45 of the local clock), read from minute slots. */
  | 'FIFTEEN_MINUTES'
  /** Five minutes (:00, :05, … of the local clock), read from minute slots. */
  | 'FIVE_MINUTES'
  /** One hour of the local clock (an hour repeated when clocks go back is a bucket of its own), read from hour slots, or from minute slots where the offset is not whole hours. */
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
  /** Thirty minutes (:00, :30 of the local clock), read from minute slots. */
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
  latest: Maybe<TimedValue>;
  /** The `groupBy` tag values of the group, in `groupBy` order; empty when not grouped. */
  tags: Array<Tag>;
};

/** One reading of a series as it was recorded: its time and the values of its fields. */
export type LatestReading = {
  /** When the reading was taken (UTC). */
  time: Scalars['DateTime']['output'];
  /** The value of one field; null when the reading does not carry it. */
  value: Maybe<Scalars['Float']['output']>;
  /** Every field of the reading, in the order it was sent. */
  values: Array<FieldValue>;
};


/** One reading of a series as it was recorded: its time and the values of its fields. */
export type LatestReadingValueArgs = {
  field: Scalars['String']['input'];
};

/** A metric (InfluxDB's measurement): a name under which series record numeric fields. */
export type Metric = {
  /** Fields ever recorded, sorted. */
  fields: Array<Scalars['String']['output']>;
  /** Exact time of the earliest reading (UTC). */
  firstReadingAt: Maybe<Scalars['DateTime']['output']>;
  /** Exact time of the latest reading (UTC). */
  lastReadingAt: Maybe<Scalars['DateTime']['output']>;
  /** Series-day document layout. */
  layout: DocumentLayout;
  /** Metric name, e.g. `flights`. */
  name: Scalars['String']['output'];
  /** The rollups of the metric, sorted by name. */
  rollups: Array<Rollup>;
  /** The series whose tags match `where`, sorted by series key. Errors as `Query.series`. */
  series: Array<Series>;
  /** Number of series. */
  seriesCount: Scalars['SafeInt']['output'];
  /** The optional statistics the metric keeps: quantile sketches and latest readings. */
  statistics: MetricStatistics;
  /** Tag keys ever used, sorted. */
  tagKeys: Array<Scalars['String']['output']>;
  /** The values of tag `key` among the series matching `where`, sorted. */
  tagValues: Array<Scalars['String']['output']>;
};


/** A metric (InfluxDB's measurement): a name under which series record numeric fields. */
export type MetricSeriesArgs = {
  limit?: InputMaybe<Scalars['Int']['input']>;
  where?: InputMaybe<Array<TagFilter>>;
};


/** A metric (InfluxDB's measurement): a name under which series record numeric fields. */
export type MetricTagValuesArgs = {
  key: Scalars['String']['input'];
  where?: InputMaybe<Array<TagFilter>>;
};

/** Which optional statistics a metric keeps; see README "Statistics" for what each costs. */
export type MetricStatistics = {
  /** Latest readings kept per series and day (`Series.latest`). */
  latestReadings: Scalars['Int']['output'];
  /** Fields with sketches; null: every field. */
  sketchFields: Maybe<Array<Scalars['String']['output']>>;
  /** Levels whose slots keep a quantile sketch (for percentiles): a query reads percentiles only where every slot it reads has one. */
  sketchLevels: Array<SlotLevel>;
};

/** Recording readings (scope `write`), and changing or deleting metrics and series (scope `admin`). */
export type Mutation = {
  /** Defines a rollup of a metric over some of its tag keys (at most 8 per metric): from then on every batch of the metric also updates the rollup's documents, and the server builds it for the data already stored (`npm run rollups -- backfill` does it at once, with a progress bar). It is BUILDING until then. Each rollup costs one more update per rollup group and day of every batch. Needs scope `admin` and a token that may touch `metric`. Errors: INVALID_NAME, DUPLICATE_NAME, NOT_FOUND (no such metric), INVALID_ARGUMENT (unknown tag key, a rollup with that name or those keys exists, too many rollups), FORBIDDEN. */
  defineRollup: Rollup;
  /** Deletes a metric and all its data: its series-day documents, series and registry entry (its name, layout and fields are free again). Cannot be undone. Stop writers of the metric first: readings recorded while it runs may survive. Needs scope `admin` and a token that may touch `metric`. Errors: INVALID_NAME, NOT_FOUND, FORBIDDEN. */
  deleteMetric: DeleteResult;
  /** Deletes one series and all its readings (its series-day documents and registry entry); the metric keeps its fields and tag keys. Cannot be undone. Needs scope `admin` and a token that may touch the metric the key starts with. Errors: NOT_FOUND, FORBIDDEN. */
  deleteSeries: DeleteResult;
  /** Removes a rollup and its documents; queries read the series again. Returns false when the metric has no such rollup. Needs scope `admin` and a token that may touch `metric`. Errors: INVALID_NAME, FORBIDDEN. */
  dropRollup: Scalars['Boolean']['output'];
  /** Records one reading. Needs scope `write` and a token that may touch its metric (FORBIDDEN otherwise). Errors (nothing is written when any reading is refused): INVALID_NAME, INVALID_TAG_VALUE, DUPLICATE_NAME, NO_FIELDS, TOO_MANY_NAMES (tags or fields per reading, fields or tag keys per metric), INVALID_FIELD_VALUE, INVALID_TIME, INVALID_BATCH_ID, BATCH_ID_REUSED. UNAVAILABLE: the database could not be reached or did not confirm the write; part of the batch may be stored, so retry with the same batchId. */
  recordReading: RecordResult;
  /** Records a batch of readings: the whole batch is validated first, then grouped by series-day document and written with one atomic update per document. Readings may be late or out of order. Needs scope `write` and a token that may touch the metric of every reading; otherwise FORBIDDEN and nothing is written. Errors (nothing is written when any reading is refused): INVALID_NAME, INVALID_TAG_VALUE, DUPLICATE_NAME, NO_FIELDS, TOO_MANY_NAMES (tags or fields per reading, fields or tag keys per metric), INVALID_FIELD_VALUE, INVALID_TIME, INVALID_BATCH_ID, BATCH_ID_REUSED. UNAVAILABLE: the database could not be reached or did not confirm the write; part of the batch may be stored, so retry with the same batchId, BATCH_TOO_LARGE (more than MAX_BATCH_SIZE readings). */
  recordReadings: RecordResult;
  /** Chooses the bucket layout of a metric before its first reading (new metrics otherwise get DEFAULT_LAYOUT, `sparse` unless configured): PREALLOCATED suits dense metrics with a reading in most minutes, SPARSE everything else (see README "Performance"). Creates the metric if needed. Needs scope `admin` and a token that may touch `metric`. Errors: INVALID_NAME, LAYOUT_LOCKED (the metric already has data in another layout), FORBIDDEN. */
  setMetricLayout: Metric;
  /** Chooses which optional statistics a metric keeps from now on (new metrics get SKETCH_LEVELS and LATEST_READINGS): quantile sketches at some levels and for some fields, and how many latest readings per series and day. Data already stored keeps what it was written with; percentiles over slots without a sketch are null. Creates the metric if needed. Needs scope `admin` and a token that may touch `metric`. Errors: INVALID_NAME, DUPLICATE_NAME, INVALID_ARGUMENT, FORBIDDEN. */
  setMetricStatistics: Metric;
};


/** Recording readings (scope `write`), and changing or deleting metrics and series (scope `admin`). */
export type MutationDefineRollupArgs = {
  metric: Scalars['String']['input'];
  name: Scalars['String']['input'];
  tagKeys: Array<Scalars['String']['input']>;
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
  readings: Array<ReadingInput>;
};


/** Recording readings (scope `write`), and changing or deleting metrics and series (scope `admin`). */
export type MutationSetMetricLayoutArgs = {
  layout: DocumentLayout;
  metric: Scalars['String']['input'];
};


/** Recording readings (scope `write`), and changing or deleting metrics and series (scope `admin`). */
export type MutationSetMetricStatisticsArgs = {
  latestReadings: Scalars['Int']['input'];
  metric: Scalars['String']['input'];
  sketchFields?: InputMaybe<Array<Scalars['String']['input']>>;
  sketchLevels: Array<SlotLevel>;
};

/** An offset back in time, e.g. `{amount: 1, unit: WEEK}` compares each bucket with the same bucket one week before. */
export type OffsetInput = {
  /** How many units, 1 to 1,000. */
  amount: Scalars['Int']['input'];
  /** The unit. */
  unit: OffsetUnit;
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
  direction?: InputMaybe<SortDirection>;
  /** The statistic, e.g. `AVG`. */
  statistic: RankStatistic;
};

/** Discovery of metrics and series, and time-bucketed statistics (scope `read`). */
export type Query = {
  /** count, sum, min, max, avg, variance and standard deviation of one field over `[from, to)`, filtered by tags and optionally grouped by tag keys (one result per group with readings, sorted by tag values). Whole days are read from day totals, the ragged edges of the range from hour and minute slots. Errors: INVALID_NAME, INVALID_TIME, INVALID_RANGE, DUPLICATE_NAME, TOO_MANY_NAMES, TOO_MANY_BUCKETS (each group counts as one bucket of the request's MAX_BUCKETS), TOO_MANY_FILTER_VALUES, QUERY_TIMEOUT. An unknown metric, field or tag value gives an empty list. Needs scope `read` and a token that may touch `metric` (else FORBIDDEN). */
  aggregate: Array<Aggregate>;
  /** Time buckets of one field of a metric over `[from, to)`, filtered by tags and optionally grouped by tag keys (one bucket list per group, sorted by tag values). `from` and `to` are rounded down to the whole minute (the stored resolution). Errors: INVALID_NAME, INVALID_TIME, INVALID_RANGE (from >= to), DUPLICATE_NAME, TOO_MANY_NAMES, TOO_MANY_BUCKETS (the request could return more than MAX_BUCKETS buckets: groups x buckets of the range, summed over every field of the request, a bucket with percentiles counting 10, checked before anything runs), TOO_MANY_FILTER_VALUES (more than MAX_FILTER_VALUES `where` values in the request), QUERY_TIMEOUT (longer than QUERY_TIMEOUT_MS). An unknown metric, field or tag value gives an empty list. Needs scope `read` and a token that may touch `metric` (else FORBIDDEN). */
  buckets: Array<BucketGroup>;
  /** The current value of `field` per group: the latest reading among the series of `metric` matching `where`, grouped by `groupBy` (one group without it), sorted by tag values; groups without a reading of the field are left out. Each series is read from its newest document holding the field (one indexed look-up per series), so the series count against MAX_SERIES. Errors: INVALID_NAME, TOO_MANY_SERIES, TOO_MANY_FILTER_VALUES, QUERY_TIMEOUT. Needs scope `read` and a token that may touch `metric` (else FORBIDDEN). */
  latestValues: Array<GroupLatestValue>;
  /** One metric by name; null when it was never recorded. Needs scope `read` and a token that may touch the metric. Errors: INVALID_NAME, FORBIDDEN. */
  metric: Maybe<Metric>;
  /** Every metric the API token may touch (all of them, or those starting with its metric prefixes), sorted by name. Needs scope `read`. */
  metrics: Array<Metric>;
  /** The series of a metric whose tags match `where`, sorted by series key. An unknown metric or tag value gives an empty list. Needs scope `read` and a token that may touch `metric`. Errors: INVALID_NAME, DUPLICATE_NAME, INVALID_ARGUMENT (limit below 1), TOO_MANY_SERIES (limit above MAX_SERIES, or more than MAX_SERIES series listed by the request), TOO_MANY_FILTER_VALUES, QUERY_TIMEOUT, FORBIDDEN. */
  series: Array<Series>;
  /** One series by its id (the series key, e.g. `flights,destination=PHL,origin=LAS`); null when unknown. Counts as one series of the request's MAX_SERIES. Needs scope `read` and a token that may touch the metric the key starts with. Errors: FORBIDDEN. */
  seriesById: Maybe<Series>;
  /** The values of tag `key` among the series of `metric` matching `where`, sorted. Unknown metrics and keys give an empty list. Needs scope `read` and a token that may touch `metric`. Errors: INVALID_NAME, DUPLICATE_NAME, TOO_MANY_FILTER_VALUES, QUERY_TIMEOUT, FORBIDDEN. */
  tagValues: Array<Scalars['String']['output']>;
};


/** Discovery of metrics and series, and time-bucketed statistics (scope `read`). */
export type QueryAggregateArgs = {
  field: Scalars['String']['input'];
  from: Scalars['Time']['input'];
  groupBy?: InputMaybe<Array<Scalars['String']['input']>>;
  limit?: InputMaybe<Scalars['Int']['input']>;
  metric: Scalars['String']['input'];
  orderBy?: InputMaybe<OrderByInput>;
  timeZone?: InputMaybe<Scalars['String']['input']>;
  to: Scalars['Time']['input'];
  where?: InputMaybe<Array<TagFilter>>;
};


/** Discovery of metrics and series, and time-bucketed statistics (scope `read`). */
export type QueryBucketsArgs = {
  compareWith?: InputMaybe<OffsetInput>;
  field: Scalars['String']['input'];
  fill?: InputMaybe<Fill>;
  from: Scalars['Time']['input'];
  granularity?: InputMaybe<Granularity>;
  groupBy?: InputMaybe<Array<Scalars['String']['input']>>;
  limit?: InputMaybe<Scalars['Int']['input']>;
  maxDataPoints?: InputMaybe<Scalars['Int']['input']>;
  metric: Scalars['String']['input'];
  orderBy?: InputMaybe<OrderByInput>;
  statistic?: InputMaybe<Statistic>;
  timeZone?: InputMaybe<Scalars['String']['input']>;
  to: Scalars['Time']['input'];
  transform?: InputMaybe<Transform>;
  weekStart?: InputMaybe<Weekday>;
  where?: InputMaybe<Array<TagFilter>>;
  window?: InputMaybe<Scalars['Int']['input']>;
};


/** Discovery of metrics and series, and time-bucketed statistics (scope `read`). */
export type QueryLatestValuesArgs = {
  field: Scalars['String']['input'];
  groupBy?: InputMaybe<Array<Scalars['String']['input']>>;
  metric: Scalars['String']['input'];
  where?: InputMaybe<Array<TagFilter>>;
};


/** Discovery of metrics and series, and time-bucketed statistics (scope `read`). */
export type QueryMetricArgs = {
  name: Scalars['String']['input'];
};


/** Discovery of metrics and series, and time-bucketed statistics (scope `read`). */
export type QuerySeriesArgs = {
  limit?: InputMaybe<Scalars['Int']['input']>;
  metric: Scalars['String']['input'];
  where?: InputMaybe<Array<TagFilter>>;
};


/** Discovery of metrics and series, and time-bucketed statistics (scope `read`). */
export type QuerySeriesByIdArgs = {
  id: Scalars['ID']['input'];
};


/** Discovery of metrics and series, and time-bucketed statistics (scope `read`). */
export type QueryTagValuesArgs = {
  key: Scalars['String']['input'];
  metric: Scalars['String']['input'];
  where?: InputMaybe<Array<TagFilter>>;
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
  fields: Array<FieldInput>;
  /** Metric name, e.g. `flights` (naming rule as field names). */
  metric: Scalars['String']['input'];
  /** Tags of the series, at most 32; keys unique. Omitted: no tags. */
  tags?: InputMaybe<Array<TagInput>>;
  /** When the reading was taken; stored at minute resolution. Omitted: the time the server received the request. */
  time?: InputMaybe<Scalars['DateTime']['input']>;
};

/** What a record mutation stored. An answer without errors means every reading of the batch is stored, with the configured write concern (default: majority, journaled). */
export type RecordResult = {
  /** Readings an earlier call with the same `batchId` had already applied, and this call did not apply again. */
  alreadyApplied: Scalars['SafeInt']['output'];
  /** Readings this call applied (equal to `recorded` on the first complete attempt). */
  applied: Scalars['SafeInt']['output'];
  /** The batch id sent with the readings; null when none was sent. */
  batchId: Maybe<Scalars['String']['output']>;
  /**
   * The same as `documents` (its former name).
   * @deprecated Use `documents`: "bucket" names the time buckets of query answers.
   */
  buckets: Scalars['Int']['output'];
  /** Number of series-day documents of the batch (one atomic update each). */
  documents: Scalars['Int']['output'];
  /** Number of readings of the batch, all of them stored now. */
  recorded: Scalars['SafeInt']['output'];
  /** Number of distinct series of the batch. */
  series: Scalars['Int']['output'];
};

/** A metric's readings merged over every series that shares the values of some tag keys, kept per UTC day at the day and hour levels (see README "Rollups"). Queries that filter and group only by those keys, and read no minute slots, read it instead of the series. */
export type Rollup = {
  /** When it was defined (UTC). */
  createdAt: Scalars['DateTime']['output'];
  /** UTC midnights of the days whose rollup documents are being rebuilt from the series (after a retried batch, or written while building): queries over them read the series instead. */
  dirtyDays: Array<Scalars['DateTime']['output']>;
  /** Name, unique per metric. */
  name: Scalars['String']['output'];
  /** BUILDING until backfilled, then READY. */
  state: RollupState;
  /** The tag keys it keeps, sorted; empty: the whole metric in one document a day. */
  tagKeys: Array<Scalars['String']['output']>;
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
  aggregate: Aggregate;
  /** Time buckets of one field of this series over `[from, to)`. Asked for on many series (or several fields) in one request, they are computed by one pipeline. Errors as `Query.buckets`; TOO_MANY_BUCKETS counts the buckets of every series, field and alias of the request. */
  buckets: Array<Bucket>;
  /** Fields ever recorded, sorted. */
  fields: Array<Scalars['String']['output']>;
  /** Exact time of the earliest reading (UTC); null without readings. */
  firstReadingAt: Maybe<Scalars['DateTime']['output']>;
  /** The series key in InfluxDB line-protocol form, e.g. `flights,destination=PHL,origin=LAS`. */
  id: Scalars['ID']['output'];
  /** Exact time of the latest reading (UTC); null without readings. */
  lastReadingAt: Maybe<Scalars['DateTime']['output']>;
  /** The latest `n` readings of the series, newest first, as recorded (every field of each reading): kept in each series-day document by the same update that records them (the newest 50 of each day at most, fewer if the metric is set to keep fewer, see `setMetricStatistics`). Fewer than `n` when the series has fewer, or when an older day's readings were written before latest readings were kept. Errors: INVALID_ARGUMENT. */
  latest: Array<LatestReading>;
  /** The latest reading of `field`: a dashboard's current value, read from the series' newest series-day document holding the field (one indexed look-up; asked for on many series, they are looked up together). Null without readings, or when that document was written before latest values were kept. Errors: INVALID_NAME. */
  latestValue: Maybe<TimedValue>;
  /** Metric name. */
  metric: Scalars['String']['output'];
  /** Tags, sorted by key. */
  tags: Array<Tag>;
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
  | 'MINUTE';

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
  avg: Maybe<Scalars['Float']['output']>;
  /** Number of readings. */
  count: Scalars['SafeInt']['output'];
  /** The earliest reading (of several in the same millisecond, the smallest value). Null without readings, and when some readings were stored before first and last values were kept (layout version 1). */
  first: Maybe<TimedValue>;
  /** The latest reading (of several in the same millisecond, the largest value): a "current value". Null without readings, and when some readings were stored before first and last values were kept (layout version 1). */
  last: Maybe<TimedValue>;
  /** Largest value. */
  max: Maybe<Scalars['Float']['output']>;
  /** Smallest value. */
  min: Maybe<Scalars['Float']['output']>;
  /** The median: `percentile(p: 50)`. */
  p50: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 90)`. */
  p90: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 95)`. */
  p95: Maybe<Scalars['Float']['output']>;
  /** `percentile(p: 99)`. */
  p99: Maybe<Scalars['Float']['output']>;
  /** The `p` percentile of the values. Within 1% (relative) of the exact value of the reading of rank floor(p/100 x (count - 1)) in value order (0-based), from mergeable DDSketch sketches; exact at p = 0 and 100 (min and max). Null when the readings are not all in sketches: the metric keeps no sketch of this field at a level the query reads (by default day and hour slots are sketched, minute slots are not, so a range or bucket edge inside an hour gives null), or data written before sketches existed. */
  percentile: Maybe<Scalars['Float']['output']>;
  /** Sample standard deviation, dividing by `count - 1` (as MongoDB `$stdDevSamp`); null when `count < 2`. */
  sampleStddev: Maybe<Scalars['Float']['output']>;
  /** Population standard deviation (as MongoDB `$stdDevPop`). */
  stddev: Maybe<Scalars['Float']['output']>;
  /** Sum of the values. */
  sum: Maybe<Scalars['Float']['output']>;
  /** Population variance, `sumOfSquares / count - avg^2`. */
  variance: Maybe<Scalars['Float']['output']>;
};


/** Statistics of one field over a span of time. When `count` is 0 there were no readings and every other value is null (never 0). */
export type StatisticsPercentileArgs = {
  p: Scalars['Float']['input'];
};

/** A tag of a series: a key and its string value, e.g. `{key: "origin", value: "LAS"}`. */
export type Tag = {
  /** Tag key, e.g. `origin`. */
  key: Scalars['String']['output'];
  /** Tag value, e.g. `LAS`. */
  value: Scalars['String']['output'];
};

/** Keeps the series whose tag `key` equals one of the values in `in`. Several filters must all hold. A single value may be written without brackets: `{key: "origin", in: "LAS"}`. Unknown keys or values match nothing (an empty result, not an error). */
export type TagFilter = {
  /** Accepted values, e.g. `["LAS", "PHX"]`. */
  in: Array<Scalars['String']['input']>;
  /** Tag key, e.g. `origin`. */
  key: Scalars['String']['input'];
};

/** A tag of a reading. Keys follow the naming rule (a letter or `_`, then letters, digits, `_` or `-`; at most 64 characters; no `$` or `.`); values are non-empty strings of at most 256 characters. */
export type TagInput = {
  /** Tag key, e.g. `origin`. */
  key: Scalars['String']['input'];
  /** Tag value, e.g. `LAS`. */
  value: Scalars['String']['input'];
};

/** One reading's value and its exact time. */
export type TimedValue = {
  /** When the reading was taken (UTC). */
  time: Scalars['DateTime']['output'];
  /** The value. */
  value: Scalars['Float']['output'];
};

/** What a bucket list computes from the chosen `statistic`, bucket by bucket, into `value` (after fill; computed by the engine, see README "Transforms"). */
export type Transform =
  /** Running total from the start of the range; null values add nothing. */
  | 'CUMULATIVE_SUM'
  /** The statistic minus the previous bucket's; null at the first bucket, next to a null, or after a gap. */
  | 'DIFFERENCE'
  /** Mean of the last `window` non-null values (fewer at the start); null where the bucket's own value is null. */
  | 'MOVING_AVERAGE'
  /** The statistic itself. */
  | 'NONE'
  /** Per second: the statistic divided by the seconds of the bucket inside the range (MMS "avg/sec"; with `statistic: SUM` or `COUNT` a throughput). */
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


export type DelayPerOriginQuery = { aggregate: Array<{ count: number, avg: number | null, min: number | null, max: number | null, stddev: number | null, tags: Array<{ value: string }> }> };

export type CurrentValueQueryVariables = Exact<{ [key: string]: never; }>;


export type CurrentValueQuery = { series: Array<{ id: string, latestValue: { time: string, value: number } | null, buckets: Array<{ start: string, count: number, last: { time: string, value: number } | null }> }> };

export type LasVegasEveningQueryVariables = Exact<{ [key: string]: never; }>;


export type LasVegasEveningQuery = { buckets: Array<{ buckets: Array<{ start: string, count: number, sum: number | null, min: number | null, max: number | null, avg: number | null }> }> };

export type LatestFlightsQueryVariables = Exact<{ [key: string]: never; }>;


export type LatestFlightsQuery = { series: Array<{ id: string, latest: Array<{ time: string, values: Array<{ name: string, value: number }> }> }> };

export type MetricsQueryVariables = Exact<{ [key: string]: never; }>;


export type MetricsQuery = { metrics: Array<{ name: string, fields: Array<string>, tagKeys: Array<string>, seriesCount: number, firstReadingAt: string | null, lastReadingAt: string | null }> };

export type MonthlyDelayByOriginQueryVariables = Exact<{ [key: string]: never; }>;


export type MonthlyDelayByOriginQuery = { buckets: Array<{ tags: Array<{ key: string, value: string }>, buckets: Array<{ start: string, count: number, avg: number | null, max: number | null, stddev: number | null }> }> };

export type NewYorkDailyQueryVariables = Exact<{ [key: string]: never; }>;


export type NewYorkDailyQuery = { buckets: Array<{ granularity: Granularity, buckets: Array<{ localStart: string, end: string, partial: boolean, count: number, avg: number | null }> }> };

export type OrdP95DelayQueryVariables = Exact<{ [key: string]: never; }>;


export type OrdP95DelayQuery = { buckets: Array<{ buckets: Array<{ start: string, count: number, p50: number | null, p95: number | null, p99: number | null, value: number | null }> }> };

export type RecordReadingsMutationVariables = Exact<{ [key: string]: never; }>;


export type RecordReadingsMutation = { recordReadings: { recorded: number, series: number, documents: number } };

export type RoutesFromSanJoseQueryVariables = Exact<{ [key: string]: never; }>;


export type RoutesFromSanJoseQuery = { series: Array<{ id: string, february: Array<{ start: string, count: number }>, quarter: { count: number, avg: number | null } }> };

export type WeekOverWeekQueryVariables = Exact<{ [key: string]: never; }>;


export type WeekOverWeekQuery = { buckets: Array<{ buckets: Array<{ start: string, value: number | null, previous: number | null, change: number | null, relativeChange: number | null }> }> };

export type WorstOriginsQueryVariables = Exact<{ [key: string]: never; }>;


export type WorstOriginsQuery = { aggregate: Array<{ count: number, avg: number | null, tags: Array<{ value: string }> }> };

export type LoadWriteMutationVariables = Exact<{
  readings: Array<ReadingInput> | ReadingInput;
  batchId?: InputMaybe<Scalars['String']['input']>;
}>;


export type LoadWriteMutation = { recordReadings: { recorded: number } };

export type LoadHourBucketsQueryVariables = Exact<{
  metric: Scalars['String']['input'];
  from: Scalars['Time']['input'];
  to: Scalars['Time']['input'];
  hosts: Array<Scalars['String']['input']> | Scalars['String']['input'];
}>;


export type LoadHourBucketsQuery = { buckets: Array<{ buckets: Array<{ start: string, count: number, avg: number | null }> }> };

export type LoadPerHostQueryVariables = Exact<{
  metric: Scalars['String']['input'];
  from: Scalars['Time']['input'];
  to: Scalars['Time']['input'];
}>;


export type LoadPerHostQuery = { aggregate: Array<{ count: number, avg: number | null, max: number | null, tags: Array<{ value: string }> }> };

export type LoadTotalsQueryVariables = Exact<{
  metric: Scalars['String']['input'];
  from: Scalars['Time']['input'];
  to: Scalars['Time']['input'];
}>;


export type LoadTotalsQuery = { aggregate: Array<{ count: number, sum: number | null }> };

export type ImportBatchMutationVariables = Exact<{
  readings: Array<ReadingInput> | ReadingInput;
  batchId?: InputMaybe<Scalars['String']['input']>;
}>;


export type ImportBatchMutation = { recordReadings: { recorded: number, applied: number, alreadyApplied: number } };

export type CountFlightsQueryVariables = Exact<{ [key: string]: never; }>;


export type CountFlightsQuery = { aggregate: Array<{ count: number }> };

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