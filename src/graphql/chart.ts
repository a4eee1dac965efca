import { OFFSET_UNITS } from '../query/offset.ts';
import { RANK_STATISTICS } from '../query/ranking.ts';
import { STATISTICS } from '../query/transforms.ts';
import { builder, type ArgBuilder } from './builder.ts';

/** Descriptions of the statistics that say more than the bucket field's name. */
const STATISTIC_NOTES: Partial<Record<(typeof STATISTICS)[number], string>> = {
  increase:
    'The bucket\'s `increase`: a counter\'s reset-aware increase (counters only, else NOT_A_COUNTER; see docs/statistics.md, "Counters").',
  rate: "The bucket's `rate`: a counter's increase per second of the bucket inside the range, the same as `statistic: INCREASE, transform: RATE` (counters only, else NOT_A_COUNTER).",
};

/** `Statistic` enum: the statistic a bucket's `value` carries. */
export const StatisticRef = builder.enumType('Statistic', {
  description: 'A statistic of a bucket, for `value` and its transforms.',
  values: Object.fromEntries(
    STATISTICS.map((name) => [
      name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase(),
      { value: name, description: STATISTIC_NOTES[name] ?? `The bucket's \`${name}\`.` },
    ]),
  ) as Record<string, { value: (typeof STATISTICS)[number]; description: string }>,
});

/** `Transform` enum: what `value` computes from the chosen statistic. */
export const TransformRef = builder.enumType('Transform', {
  description:
    'What a bucket list computes from the chosen `statistic`, bucket by bucket, into `value` (after fill; computed by the engine, see docs/querying.md, "Transforms").',
  values: {
    NONE: { value: 'NONE', description: 'The statistic itself.' },
    RATE: {
      value: 'RATE',
      description:
        'Per second: the statistic divided by the seconds of the bucket inside the range (MMS "avg/sec"; with `statistic: SUM` or `COUNT` a throughput). No counter semantics: for a counter use `statistic: INCREASE` with it, or `statistic: RATE`.',
    },
    DIFFERENCE: {
      value: 'DIFFERENCE',
      description: "The statistic minus the previous bucket's; null at the first bucket, next to a null, or after a gap.",
    },
    CUMULATIVE_SUM: { value: 'CUMULATIVE_SUM', description: 'Running total from the start of the range; null values add nothing.' },
    MOVING_AVERAGE: {
      value: 'MOVING_AVERAGE',
      description: "Mean of the last `window` non-null values (fewer at the start); null where the bucket's own value is null.",
    },
  } as const,
});

/** `OffsetUnit` enum: calendar units of a comparison offset. */
export const OffsetUnitRef = builder.enumType('OffsetUnit', {
  description:
    'A unit of time for an offset; months, quarters and years are calendar units (March 31 minus a month is the last day of February).',
  values: Object.fromEntries(OFFSET_UNITS.map((unit) => [unit, { value: unit, description: `One ${unit.toLowerCase()}.` }])) as Record<
    string,
    { value: (typeof OFFSET_UNITS)[number]; description: string }
  >,
});

/** `OffsetInput`: how far back the period compared with lies. */
export const OffsetInputRef = builder.inputType('OffsetInput', {
  description: 'An offset back in time, e.g. `{amount: 1, unit: WEEK}` compares each bucket with the same bucket one week before.',
  fields: (t) => ({
    amount: t.int({ required: true, description: 'How many units, 1 to 1,000.' }),
    unit: t.field({ type: OffsetUnitRef, required: true, description: 'The unit.' }),
  }),
});

/** `RankStatistic` enum: the statistics groups can be ranked by. */
export const RankStatisticRef = builder.enumType('RankStatistic', {
  description: 'A statistic of one field over the whole range, to rank groups by.',
  values: Object.fromEntries(
    RANK_STATISTICS.map((name) => [name.toUpperCase(), { value: name, description: `The group's \`${name}\` over the range.` }]),
  ) as Record<string, { value: (typeof RANK_STATISTICS)[number]; description: string }>,
});

/** `SortDirection` enum. */
export const SortDirectionRef = builder.enumType('SortDirection', {
  description: 'Sort order.',
  values: {
    ASC: { value: 'ASC', description: 'Smallest first.' },
    DESC: { value: 'DESC', description: 'Largest first.' },
  } as const,
});

/** `OrderByInput`: how groups are ranked. */
export const OrderByInputRef = builder.inputType('OrderByInput', {
  description:
    'Ranks groups by a statistic of the field over the whole range, in the pipeline; ties by tag values (ascending); groups without readings are left out.',
  fields: (t) => ({
    statistic: t.field({ type: RankStatisticRef, required: true, description: 'The statistic, e.g. `AVG`.' }),
    direction: t.field({ type: SortDirectionRef, defaultValue: 'DESC', description: 'Largest first by default.' }),
  }),
});

/** Arguments that rank the groups of a grouped query. */
export const rankingArgs = (arg: ArgBuilder) => ({
  orderBy: arg({
    type: OrderByInputRef,
    description:
      'Rank the groups by a statistic over the whole range (computed in the pipeline: `$sort` and `$limit` before anything is sent).',
  }),
  limit: arg.int({ description: 'Keep the first `limit` groups of `orderBy` (1 to 10,000). Errors: INVALID_ARGUMENT.' }),
});

/** Arguments that turn a bucket list into a chart: statistic, transform, window, comparison. */
export const chartArgs = (arg: ArgBuilder) => ({
  statistic: arg({ type: StatisticRef, defaultValue: 'avg', description: "The statistic each bucket's `value` carries (default AVG)." }),
  transform: arg({ type: TransformRef, defaultValue: 'NONE', description: 'What `value` computes from `statistic`.' }),
  window: arg.int({ description: 'Buckets in a MOVING_AVERAGE (1 to 1,000; default 5). Errors: INVALID_ARGUMENT.' }),
  compareWith: arg({
    type: OffsetInputRef,
    description:
      'Compare each bucket with the bucket at the same position of the range this far back (e.g. this week against last week): fills `previous`, `change` and `relativeChange`.',
  }),
});
