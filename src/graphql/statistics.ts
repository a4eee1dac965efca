import { ErrorCode, InputError } from '../errors.ts';
import { SKETCH_ACCURACY } from '../model/sketch.ts';
import { percentile, type Summary, type TimedValue } from '../model/stats.ts';
import { builder } from './builder.ts';

/** `TimedValue` type: one reading's value with its time. */
export const TimedValueRef = builder.objectRef<TimedValue>('TimedValue').implement({
  description: "One reading's value and its exact time.",
  fields: (t) => ({
    time: t.field({ type: 'DateTime', resolve: (pair) => new Date(pair.t), description: 'When the reading was taken (UTC).' }),
    value: t.float({ resolve: (pair) => pair.v, description: 'The value.' }),
  }),
});

/** The guarantee of every percentile, stated once for the schema's descriptions. */
export const PERCENTILE_GUARANTEE = `Within ${SKETCH_ACCURACY * 100}% (relative) of the exact value of the reading of rank floor(p/100 x (count - 1)) in value order (0-based), from mergeable DDSketch sketches; exact at p = 0 and 100 (min and max). Null when the readings are not all in sketches: the metric keeps no sketch of this field at a level the query reads (by default day totals, hours and quarter hours are sketched, minutes are not, so a range edge inside a quarter hour, or a bucket shorter than 15 minutes, gives null; edges of hour and coarser buckets fall on quarter hours in every zone), or data written before sketches existed.`;

/**
 * The `p` percentile (0 to 100) of a summary, for GraphQL.
 * @throws InputError INVALID_ARGUMENT when `p` is outside [0, 100].
 */
export function percentileOf(summary: Pick<Summary, 'sketch' | 'min' | 'max'>, p: number): number | null {
  if (!(p >= 0 && p <= 100)) throw new InputError(ErrorCode.INVALID_ARGUMENT, `A percentile must be from 0 to 100; got ${p}`, 'p');
  return percentile(summary, p);
}

/** What `increase` is, stated once for the schema's descriptions. */
export const INCREASE_DEFINITION =
  'Counters only (`setMetricKind(kind: COUNTER)`, else NOT_A_COUNTER): the reset-aware increase, per series the sum over its readings in this span of the reading minus the one before it (the last reading before the span counts when it lies in the query range; a drop is a reset and counts the new value), summed over the group\'s series; no extrapolation to the span\'s edges (docs/statistics.md, "Counters"). Null without readings, for readings folded before the metric was a counter, and where parts of a series written by different folds interleave in time (a late reading) until a compaction can separate them.';

const FIRST_LAST_NOTE =
  'Null without readings, and when some readings were stored before first and last values were kept (layout version 1).';

/**
 * `Statistics` interface: the statistics shared by `Bucket` and `Aggregate`, derived
 * from the stored count, sum, min, max and sum of squares (the `_stats` reducer of Cloudant's "Time-series Data Storage").
 */
export const StatisticsRef = builder.interfaceRef<Summary>('Statistics').implement({
  description:
    'Statistics of one field over a span of time. When `count` is 0 there were no readings and every other value is null (never 0).',
  fields: (t) => ({
    count: t.expose('count', { type: 'SafeInt', description: 'Number of readings.' }),
    sum: t.exposeFloat('sum', { nullable: true, description: 'Sum of the values.' }),
    min: t.exposeFloat('min', { nullable: true, description: 'Smallest value.' }),
    max: t.exposeFloat('max', { nullable: true, description: 'Largest value.' }),
    avg: t.exposeFloat('avg', { nullable: true, description: 'Arithmetic mean, `sum / count`.' }),
    variance: t.exposeFloat('variance', {
      nullable: true,
      description: 'Population variance, `sumOfSquares / count - avg^2`.',
    }),
    stddev: t.exposeFloat('stddev', {
      nullable: true,
      description: 'Population standard deviation (as MongoDB `$stdDevPop`).',
    }),
    sampleStddev: t.exposeFloat('sampleStddev', {
      nullable: true,
      description: 'Sample standard deviation, dividing by `count - 1` (as MongoDB `$stdDevSamp`); null when `count < 2`.',
    }),
    first: t.field({
      type: TimedValueRef,
      nullable: true,
      resolve: (summary) => summary.first,
      description: `The earliest reading (of several in the same millisecond, the smallest value). ${FIRST_LAST_NOTE}`,
    }),
    last: t.field({
      type: TimedValueRef,
      nullable: true,
      resolve: (summary) => summary.last,
      description: `The latest reading (of several in the same millisecond, the largest value): a "current value". ${FIRST_LAST_NOTE}`,
    }),
    percentile: t.float({
      nullable: true,
      args: { p: t.arg.float({ required: true, description: 'The percentile, 0 to 100 (50 is the median). Errors: INVALID_ARGUMENT.' }) },
      resolve: (summary, args) => percentileOf(summary, args.p),
      description: `The \`p\` percentile of the values. ${PERCENTILE_GUARANTEE}`,
    }),
    p50: t.float({ nullable: true, resolve: (summary) => percentile(summary, 50), description: 'The median: `percentile(p: 50)`.' }),
    p90: t.float({ nullable: true, resolve: (summary) => percentile(summary, 90), description: '`percentile(p: 90)`.' }),
    p95: t.float({ nullable: true, resolve: (summary) => percentile(summary, 95), description: '`percentile(p: 95)`.' }),
    p99: t.float({ nullable: true, resolve: (summary) => percentile(summary, 99), description: '`percentile(p: 99)`.' }),
    increase: t.exposeFloat('increase', { nullable: true, description: INCREASE_DEFINITION }),
    rate: t.exposeFloat('rate', {
      nullable: true,
      description:
        '`increase` per second: divided by the seconds of the span inside the query range (a bucket cut by `from` or `to` by the part it covers). Counters only, null with `increase`.',
    }),
  }),
});
