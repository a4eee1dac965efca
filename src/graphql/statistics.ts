import type { Summary } from '../model/stats.ts';
import { builder } from './builder.ts';

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
  }),
});
