import { parseAggregateQuery } from '../engine/query.ts';
import type { AggregateResult } from '../query/shape.ts';
import { rangeArgs, selectionArgs } from './bucket.ts';
import { builder } from './builder.ts';
import { selectedWants } from './lookahead.ts';
import { rankingArgs } from './chart.ts';
import { StatisticsRef } from './statistics.ts';
import { TagRef } from './tag.ts';

/** `Aggregate` type: statistics of one group over a whole range. */
export const AggregateRef = builder.objectRef<AggregateResult>('Aggregate').implement({
  description: 'Statistics of one field over the whole range `[from, to)` for one group of series.',
  interfaces: [StatisticsRef],
  fields: (t) => ({
    tags: t.field({
      type: [TagRef],
      resolve: (aggregate) => aggregate.tags,
      description: "The group's tag values (the series' tags for `Series.aggregate`); empty when not grouped.",
    }),
    from: t.expose('from', { type: 'DateTime', description: 'Start of the range, rounded down to the minute.' }),
    to: t.expose('to', { type: 'DateTime', description: 'End of the range (exclusive), rounded down to the minute.' }),
  }),
});

builder.queryField('aggregate', (t) =>
  t.field({
    type: [AggregateRef],
    description:
      "count, sum, min, max, avg, variance and standard deviation of one field over `[from, to)`, filtered by tags and optionally grouped by tag keys (one result per group with readings, sorted by tag values). Whole days are read from day totals, the ragged edges of the range from hour and minute slots. Errors: INVALID_NAME, INVALID_TIME, INVALID_RANGE, DUPLICATE_NAME, TOO_MANY_NAMES, TOO_MANY_BUCKETS (each group counts as one bucket of the request's MAX_BUCKETS), TOO_MANY_FILTER_VALUES, QUERY_TIMEOUT, DETAIL_EXPIRED (a range edge inside an hour or day whose minute or hour slots the metric's retention removed). An unknown metric, field or tag value gives an empty list. Needs scope `read` and a token that may touch `metric` (else FORBIDDEN).",
    args: { ...selectionArgs(t.arg), ...rangeArgs(t.arg), ...rankingArgs(t.arg) },
    authScopes: (_root, args) => ({ read: true, metric: args.metric }),
    resolve: (_root, args, ctx, info) => ctx.engine.aggregate(parseAggregateQuery(args, selectedWants(info))),
  }),
);
