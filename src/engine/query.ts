/**
 * The boundary between the API and the query engine: GraphQL arguments in, one
 * validated, normalized query value out (Cube's `normalizeQuery` is the model). Every
 * rule and input path of a query lives here; the engine and the pipeline builders only
 * ever see these values, and the request's pipelines are batched by a key derived from
 * them ({@link batchKey}), never built by hand.
 */
import { ErrorCode, InputError } from '../errors.ts';
import { isValidName, Limits, NAME_PATTERN } from '../model/limits.ts';
import { MAX_LATEST_READINGS, SLOT_LEVELS, type SlotLevel, type StatisticsSettings } from '../model/statistics-settings.ts';
import {
  granularity as granularityNamed,
  GRANULARITY_NAMES,
  pickGranularity,
  type Granularity,
  type GranularityName,
  type Weekday,
} from '../query/granularity.ts';
import { normalizeTimeZone, parseLocalTime } from '../query/zone.ts';
import type { FillMode } from '../query/fill.ts';
import { validateOffset, type Offset } from '../query/offset.ts';
import { RANK_LIMIT, validateRanking, type RankStatistic, type Ranking, type SortDirection } from '../query/ranking.ts';
import { normalizeRange, normalizeSelection, type TagFilter } from '../query/spec.ts';
import { needsCounter, needsFirstLast, needsSketch, validateTransform, type Statistic, type Transform } from '../query/transforms.ts';

/**
 * A bucket or aggregate query over the series of a metric (`Query.buckets`,
 * `Query.aggregate`), or over given series (`Series.buckets`, `Series.aggregate`: no
 * `metric`, `where` or `groupBy`; the engine adds the series).
 */
export interface RangeQuery {
  /** `buckets`: time buckets of `granularity`; `aggregate`: one result over the whole range. */
  kind: 'buckets' | 'aggregate';
  /** The metric whose series are read, or null for a query on given series. */
  metric: string | null;
  /** Tag filters, all of which must hold (empty for a query on given series). */
  where: TagFilter[];
  /** Tag keys to group by, at most `Limits.groupByKeys` (empty: one group). */
  groupBy: string[];
  /** The field whose statistics are read. */
  field: string;
  /** Half-open range `[from, to)` in ms since the epoch, UTC, rounded down to the minute; may be empty (`from == to`). */
  from: number;
  to: number;
  /** IANA time zone the buckets are cut in (`UTC` by default; see `query/zone.ts`). */
  timeZone: string;
  /** The bucket size; null for an aggregate. */
  granularity: Granularity | null;
  /** How empty buckets are listed and filled (buckets only). */
  fill: FillMode;
  /** The statistic each bucket's `value` carries (buckets only; default `avg`). */
  statistic: Statistic;
  /** What is computed from `statistic` bucket by bucket (default none: the statistic itself). */
  transform: Transform;
  /** Compare each bucket with the aligned bucket this long before (null: no comparison). */
  compareWith: Offset | null;
  /** Keep the first groups by a statistic over the whole range (null: every group, sorted by tag values). */
  ranking: Ranking | null;
  /** The optional statistics to read: those the client selected and those `statistic` needs. */
  wants: Wants;
}

/**
 * Which optional statistics a query reads besides count, sum, min, max and variance:
 * the first and last readings (two more accumulators per field), the merged sketches
 * (a second pipeline, for percentiles) and a counter's increase (a counter pipeline, per
 * series; only of a metric declared a counter). Each is read only when something needs it.
 */
export interface Wants {
  firstLast: boolean;
  sketch: boolean;
  /** `increase` or `rate` (see `query/counters.ts`). */
  counter: boolean;
}

/** Nothing beyond the basic statistics. */
export const NO_WANTS: Wants = { firstLast: false, sketch: false, counter: false };

/** What `selected` (from the client's selection set) and `statistic` (the buckets' `value`) need. */
function wantsOf(selected: Wants, statistic: Statistic): Wants {
  return {
    firstLast: selected.firstLast || needsFirstLast(statistic),
    sketch: selected.sketch || needsSketch(statistic),
    counter: selected.counter || needsCounter(statistic),
  };
}

/** Chart options of a bucket list as GraphQL hands them over (all optional). */
export interface ChartArgs {
  fill?: FillMode | null;
  statistic?: Statistic | null;
  transform?: 'NONE' | 'RATE' | 'DIFFERENCE' | 'CUMULATIVE_SUM' | 'MOVING_AVERAGE' | null;
  window?: number | null;
  compareWith?: Offset | null;
}

/** Ranking options of a grouped query as GraphQL hands them over. */
export interface RankingArgs {
  orderBy?: { statistic: RankStatistic; direction?: SortDirection | null } | null;
  limit?: number | null;
}

/**
 * A range bound as the client wrote it: epoch milliseconds (UTC), RFC 3339 text with an
 * offset, or a local date or date-time without offset (`2001-04-01`, `2001-04-01T06:30`)
 * read in the query's zone (see `parseLocalTime` in `query/zone.ts`).
 */
export type BoundInput = number | string;

/** Arguments of `Query.buckets` as GraphQL hands them over. */
export interface BucketsArgs {
  metric: string;
  field: string;
  from: BoundInput;
  to: BoundInput;
  /** IANA time zone of the buckets and of local bounds (default `UTC`). */
  timeZone?: string | null;
  where?: readonly TagFilter[] | null;
  groupBy?: readonly string[] | null;
  /** The bucket size; omitted: the finest one whose bucket count stays within `maxDataPoints`. */
  granularity?: GranularityName | null;
  /** The most buckets a list may have when the engine picks the granularity (default 1,000). */
  maxDataPoints?: number | null;
  /** First day of a WEEK bucket (default MONDAY, as ISO 8601). */
  weekStart?: Weekday | null;
}

/** Buckets a list may have when the engine picks the granularity and the client said nothing. */
export const DEFAULT_MAX_DATA_POINTS = 1000;

/**
 * The granularity of a bucket list: the one asked for, or the finest whose bucket count
 * over the range in the zone stays within `maxDataPoints` (Grafana's maxDataPoints).
 * @throws InputError BAD_USER_INPUT (unknown granularity or weekday), INVALID_ARGUMENT
 * (maxDataPoints not a positive integer), TOO_MANY_BUCKETS (not even YEAR fits).
 */
function parseGranularity(
  args: { granularity?: GranularityName | null; maxDataPoints?: number | null; weekStart?: Weekday | null },
  range: { from: number; to: number; timeZone: string },
): Granularity {
  if (args.granularity !== null && args.granularity !== undefined) {
    if (!GRANULARITY_NAMES.includes(args.granularity)) {
      throw new InputError(ErrorCode.BAD_USER_INPUT, `Unknown granularity ${String(args.granularity)}`, 'granularity');
    }
    return granularityNamed(args.granularity, { weekStart: args.weekStart });
  }
  if (range.from >= range.to) return granularityNamed('YEAR', { weekStart: args.weekStart });
  return pickGranularity(range.from, range.to, args.maxDataPoints ?? DEFAULT_MAX_DATA_POINTS, range.timeZone, {
    weekStart: args.weekStart,
  });
}

/** Arguments of `Query.aggregate`. */
export type AggregateArgs = Omit<BucketsArgs, 'granularity' | 'maxDataPoints' | 'weekStart'> & RankingArgs;
/** Arguments of `Series.buckets`. */
export type SeriesBucketsArgs = Omit<BucketsArgs, 'metric' | 'where' | 'groupBy'> & ChartArgs;
/** Arguments of `Series.aggregate`. */
export type SeriesAggregateArgs = Omit<BucketsArgs, 'metric' | 'where' | 'groupBy' | 'granularity' | 'maxDataPoints' | 'weekStart'>;

const TRANSFORMS = {
  NONE: { kind: 'none' },
  RATE: { kind: 'rate' },
  DIFFERENCE: { kind: 'difference' },
  CUMULATIVE_SUM: { kind: 'cumulativeSum' },
} as const;

/**
 * The chart options of a bucket list: fill (default NULL), statistic (default avg),
 * transform (a moving average needs `window`), comparison offset.
 * @throws InputError INVALID_ARGUMENT (a window outside 1..1000 or given without a moving
 * average; an offset amount outside 1..1000).
 */
function parseChart(args: ChartArgs): Pick<RangeQuery, 'fill' | 'statistic' | 'transform' | 'compareWith'> {
  const kind = args.transform ?? 'NONE';
  if (kind !== 'MOVING_AVERAGE' && args.window !== null && args.window !== undefined) {
    throw new InputError(ErrorCode.INVALID_ARGUMENT, '`window` only applies to transform: MOVING_AVERAGE', 'window');
  }
  const transform: Transform =
    kind === 'MOVING_AVERAGE' ? validateTransform({ kind: 'movingAverage', window: args.window ?? 5 }) : TRANSFORMS[kind];
  return {
    fill: args.fill ?? 'NULL',
    statistic: args.statistic ?? 'avg',
    transform,
    compareWith: args.compareWith ? validateOffset(args.compareWith, 'compareWith') : null,
  };
}

/**
 * The ranking of a grouped query: `orderBy` a statistic (direction DESC unless given),
 * keeping the first `limit` groups (all of them, up to 10,000, without a limit).
 * @throws InputError INVALID_ARGUMENT (a limit outside 1..10,000, or a limit without orderBy).
 */
function parseRanking(args: RankingArgs): Ranking | null {
  if (!args.orderBy) {
    if (args.limit !== null && args.limit !== undefined) {
      throw new InputError(ErrorCode.INVALID_ARGUMENT, '`limit` keeps the first groups of an `orderBy`; give `orderBy` too', 'limit');
    }
    return null;
  }
  return validateRanking({
    orderBy: args.orderBy.statistic,
    direction: args.orderBy.direction ?? 'DESC',
    limit: args.limit ?? RANK_LIMIT.max,
  });
}

/**
 * `Query.buckets` arguments as a query value.
 * @throws InputError INVALID_NAME, INVALID_TIME, INVALID_RANGE, DUPLICATE_NAME,
 * TOO_MANY_NAMES, INVALID_TAG_VALUE, BAD_USER_INPUT (an unknown granularity), each with
 * the argument's path.
 */
export function parseBucketsQuery(args: BucketsArgs & ChartArgs & RankingArgs, selected: Wants = NO_WANTS): RangeQuery {
  const selection = normalizeSelection(args);
  const range = parseRange(args);
  const chart = parseChart(args);
  return {
    kind: 'buckets',
    ...selection,
    ...range,
    granularity: parseGranularity(args, range),
    ...chart,
    ranking: parseRanking(args),
    wants: wantsOf(selected, chart.statistic),
  };
}

/** Defaults of the chart options for queries without a bucket list. */
const NO_CHART = { fill: 'NULL', statistic: 'avg', transform: { kind: 'none' }, compareWith: null, ranking: null } as const;

/** `Query.aggregate` arguments as a query value. @throws InputError as {@link parseBucketsQuery}. */
export function parseAggregateQuery(args: AggregateArgs, selected: Wants = NO_WANTS): RangeQuery {
  const selection = normalizeSelection(args);
  const range = parseRange(args);
  return { kind: 'aggregate', ...selection, ...range, granularity: null, ...NO_CHART, ranking: parseRanking(args), wants: selected };
}

/** `Series.buckets` arguments as a query value (the engine adds the series). @throws InputError as {@link parseBucketsQuery}. */
export function parseSeriesBucketsQuery(args: SeriesBucketsArgs, selected: Wants = NO_WANTS): RangeQuery {
  const range = parseRange(args);
  const chart = parseChart(args);
  return {
    kind: 'buckets',
    metric: null,
    where: [],
    groupBy: [],
    ...range,
    granularity: parseGranularity(args, range),
    ...chart,
    ranking: null,
    wants: wantsOf(selected, chart.statistic),
  };
}

/** `Series.aggregate` arguments as a query value. @throws InputError as {@link parseBucketsQuery}. */
export function parseSeriesAggregateQuery(args: SeriesAggregateArgs, selected: Wants = NO_WANTS): RangeQuery {
  const range = parseRange(args);
  return { kind: 'aggregate', metric: null, where: [], groupBy: [], ...range, granularity: null, ...NO_CHART, wants: selected };
}

/**
 * The instant of a range bound: epoch ms or RFC 3339 as is; a local date or date-time as that
 * wall-clock time in `zone` (`parseLocalTime`: a time skipped by a daylight-saving change
 * moves forward by the gap, a repeated one is the earlier instant).
 * @throws InputError INVALID_TIME (at `path`) outside [1970-01-01, 9999-01-01].
 */
function boundInstant(bound: BoundInput, zone: string, path: string): Date {
  const ms = parseLocalTime(bound, zone);
  if (!(ms >= Limits.minTimeMs && ms <= Limits.maxTimeMs)) {
    throw new InputError(ErrorCode.INVALID_TIME, `${path}: the time lies outside 1970-01-01T00:00:00Z .. 9999-01-01T00:00:00Z`, path);
  }
  return new Date(ms);
}

/** The validated range of a query: the zone, then the bounds read in it. */
function parseRange(args: { field: string; from: BoundInput; to: BoundInput; timeZone?: string | null }) {
  const timeZone = normalizeTimeZone(args.timeZone);
  return {
    ...normalizeRange({ field: args.field, from: boundInstant(args.from, timeZone, 'from'), to: boundInstant(args.to, timeZone, 'to') }),
    timeZone,
  };
}

/** JSON with object keys sorted at every level, so equal values give equal text (a key derived from a value, never built by hand). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}

/** A metric name argument, validated under its own input path (`name` for `metric(name:)`). @throws InputError INVALID_NAME. */
export function parseMetricName(name: string, path: string): string {
  return renamePath(() => normalizeSelection({ metric: name }).metric, 'metric', path);
}

/**
 * A field name argument (`latestValue(field:)`).
 * @throws InputError INVALID_NAME when it breaks the naming rule (`model/limits.ts`).
 */
export function parseFieldName(name: string, path: string): string {
  if (!isValidName(name)) {
    throw new InputError(
      ErrorCode.INVALID_NAME,
      `The field name must match ${NAME_PATTERN} and be at most ${Limits.nameLength} characters`,
      path,
    );
  }
  return name;
}

/**
 * The arguments of `defineRollup`: the metric, the rollup's name and its tag keys, each a
 * valid name, keys without repeats.
 * @throws InputError INVALID_NAME (under `metric`, `name` or `tagKeys[i]`), DUPLICATE_NAME.
 */
export function parseRollupDefinition(args: { metric: string; name: string; tagKeys: readonly string[] }) {
  const metric = parseMetricName(args.metric, 'metric');
  const name = parseFieldName(args.name, 'name');
  const tagKeys = args.tagKeys.map((key, i) => parseFieldName(key, `tagKeys[${i}]`));
  const repeated = tagKeys.findIndex((key, i) => tagKeys.indexOf(key) !== i);
  if (repeated >= 0) throw new InputError(ErrorCode.DUPLICATE_NAME, `Tag key "${tagKeys[repeated]}" appears twice`, `tagKeys[${repeated}]`);
  return { metric, name, tagKeys };
}

/**
 * The arguments of `setMetricStatistics` as settings: levels without repeats, field
 * names checked, latest readings 0 to {@link MAX_LATEST_READINGS}.
 * @throws InputError INVALID_NAME (a sketch field), DUPLICATE_NAME, INVALID_ARGUMENT (latestReadings).
 */
export function parseStatisticsSettings(args: {
  sketchLevels: readonly SlotLevel[];
  sketchFields?: readonly string[] | null;
  latestReadings: number;
}): StatisticsSettings {
  const fields = args.sketchFields ?? null;
  for (const [i, field] of (fields ?? []).entries()) parseFieldName(field, `sketchFields[${i}]`);
  if (fields !== null && new Set(fields).size !== fields.length) {
    throw new InputError(ErrorCode.DUPLICATE_NAME, 'sketchFields lists a field twice', 'sketchFields');
  }
  if (!Number.isInteger(args.latestReadings) || args.latestReadings < 0 || args.latestReadings > MAX_LATEST_READINGS) {
    throw new InputError(
      ErrorCode.INVALID_ARGUMENT,
      `latestReadings must be an integer from 0 to ${MAX_LATEST_READINGS}; got ${args.latestReadings}`,
      'latestReadings',
    );
  }
  return {
    sketchLevels: SLOT_LEVELS.filter((level) => args.sketchLevels.includes(level)),
    sketchFields: fields === null ? null : [...fields],
    latestReadings: args.latestReadings,
  };
}

/**
 * The arguments of `Query.latestValues`: metric, field, tag filters and grouping, each
 * validated under its own input path.
 * @throws InputError INVALID_NAME, DUPLICATE_NAME, TOO_MANY_NAMES, INVALID_TAG_VALUE.
 */
export function parseLatestValuesQuery(args: {
  metric: string;
  field: string;
  where?: readonly TagFilter[] | null;
  groupBy?: readonly string[] | null;
}): { metric: string; field: string; where: TagFilter[]; groupBy: string[] } {
  const selection = normalizeSelection(args);
  return { ...selection, field: parseFieldName(args.field, 'field') };
}

/**
 * How many latest readings `Series.latest` returns.
 * @throws InputError INVALID_ARGUMENT unless an integer from 1 to {@link MAX_LATEST_READINGS}.
 */
export function parseLatestCount(n: number, path: string): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_LATEST_READINGS) {
    throw new InputError(ErrorCode.INVALID_ARGUMENT, `n must be an integer from 1 to ${MAX_LATEST_READINGS}; got ${n}`, path);
  }
  return n;
}

/**
 * The arguments of a tag-values query: metric, tag key and filters, each validated
 * under its own input path (`key`, not `groupBy[0]`).
 * @throws InputError INVALID_NAME, DUPLICATE_NAME, INVALID_TAG_VALUE.
 */
export function parseTagValuesQuery(args: { metric: string; key: string; where?: readonly TagFilter[] | null }): {
  metric: string;
  key: string;
  where: TagFilter[];
} {
  const selection = normalizeSelection({ metric: args.metric, where: args.where });
  const key = renamePath(() => normalizeSelection({ metric: args.metric, groupBy: [args.key] }).groupBy[0]!, 'groupBy[0]', 'key');
  return { metric: selection.metric, key, where: selection.where };
}

/** The arguments of a series list: metric, filters and limit (validated by the engine against the budget). */
export function parseSeriesListQuery(args: { metric: string; where?: readonly TagFilter[] | null; limit?: number | null }): {
  metric: string;
  where: TagFilter[];
  limit: number;
} {
  const selection = normalizeSelection({ metric: args.metric, where: args.where });
  const limit = args.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1) throw new InputError(ErrorCode.INVALID_ARGUMENT, 'limit must be at least 1', 'limit');
  return { metric: selection.metric, where: selection.where, limit };
}

/** Runs `parse` and reports an input error at `path` where it said `from` (the rules are shared; the argument names are not). */
function renamePath<T>(parse: () => T, from: string, path: string): T {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof InputError) || error.inputPath !== from) throw error;
    throw new InputError(error.code, error.message.replace(new RegExp(`^${from.replace(/[[\]]/g, '\\$&')}`), path), path);
  }
}
