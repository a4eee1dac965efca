import { metricOfSeriesKey } from '../auth/access.ts';
import { CodedError, ErrorCode } from '../errors.ts';
import { seriesId } from '../model/series.ts';
import { normalizeSelection } from '../query/spec.ts';
import { deleteMetric, deleteSeries, type DeleteSummary } from '../storage/delete.ts';
import { builder } from './builder.ts';

const DeleteResultRef = builder.objectRef<DeleteSummary>('DeleteResult').implement({
  description: 'What a deletion removed.',
  fields: (t) => ({
    documents: t.field({
      type: 'SafeInt',
      description: 'Series-day documents deleted (one per series and day).',
      resolve: (summary) => summary.documents,
    }),
    buckets: t.field({
      type: 'SafeInt',
      resolve: (summary) => summary.documents,
      description: 'The same as `documents` (its former name).',
      deprecationReason: 'Use `documents`: "bucket" names the time buckets of query answers.',
    }),
    series: t.exposeInt('series', { description: 'Series registry entries deleted.' }),
    metrics: t.exposeInt('metrics', { description: 'Metric registry entries deleted (0 or 1).' }),
  }),
});

/** NOT_FOUND unless the deletion removed something. */
function found(summary: DeleteSummary, what: string): DeleteSummary {
  if (summary.documents + summary.series + summary.metrics === 0) throw new CodedError(ErrorCode.NOT_FOUND, `${what} does not exist`);
  return summary;
}

builder.mutationFields((t) => ({
  deleteMetric: t.field({
    type: DeleteResultRef,
    description:
      'Deletes a metric and all its data: its series-day documents, series and registry entry (its name, layout and fields are free again). Cannot be undone. Stop writers of the metric first: readings recorded while it runs may survive. Needs scope `admin` and a token that may touch `metric`. Errors: INVALID_NAME, NOT_FOUND, FORBIDDEN.',
    args: { metric: t.arg.string({ required: true, description: 'Metric name, e.g. `cpu`.' }) },
    authScopes: (_root, args) => ({ admin: true, metric: args.metric }),
    resolve: async (_root, args, ctx) => {
      const metric = normalizeSelection({ metric: args.metric }).metric;
      return found(await ctx.trackWrite(deleteMetric(ctx.store, metric)), `Metric "${metric}"`);
    },
  }),
  deleteSeries: t.field({
    type: DeleteResultRef,
    description:
      'Deletes one series and all its readings (its series-day documents and registry entry); the metric keeps its fields and tag keys. Cannot be undone. Needs scope `admin` and a token that may touch the metric the key starts with. Errors: NOT_FOUND, FORBIDDEN.',
    args: { id: t.arg.id({ required: true, description: 'Series key, e.g. `cpu,host=web-1` (`Series.id`).' }) },
    authScopes: (_root, args) => ({ admin: true, metric: metricOfSeriesKey(String(args.id)) }),
    resolve: async (_root, args, ctx) =>
      found(await ctx.trackWrite(deleteSeries(ctx.store, seriesId(String(args.id)))), `Series "${String(args.id)}"`),
  }),
}));
