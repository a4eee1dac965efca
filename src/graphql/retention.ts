import { parseMetricName } from '../engine/query.ts';
import {
  detailFrom,
  horizonsOf,
  KEEP_FOREVER,
  MAX_RETENTION_DAYS,
  parseRetentionPolicy,
  type StoredRetention,
} from '../model/retention-policy.ts';
import { setRetention } from '../storage/expire.ts';
import { builder } from './builder.ts';
import { MetricRef } from './metric.ts';

const asDate = (ms: number | null) => (ms === null ? null : new Date(ms));

/** `MetricRetention` type: a metric's retention policy and how far it has been applied (see `model/retention-policy.ts`). */
const MetricRetentionRef = builder.objectRef<StoredRetention | undefined>('MetricRetention').implement({
  description:
    'How long a metric keeps each level of its data, in whole UTC days (null: forever), and where each level begins now that retention has removed older data (see docs/retention.md).',
  fields: (t) => ({
    minutes: t.int({
      nullable: true,
      resolve: (retention) => (retention?.policy ?? KEEP_FOREVER).minutes,
      description: 'Days the minute slots are kept (besides today); null: forever.',
    }),
    hours: t.int({
      nullable: true,
      resolve: (retention) => (retention?.policy ?? KEEP_FOREVER).hours,
      description: 'Days the hour slots are kept (besides today); null: forever.',
    }),
    days: t.int({
      nullable: true,
      resolve: (retention) => (retention?.policy ?? KEEP_FOREVER).days,
      description: 'Days the day documents (day totals, latest readings) and the rollup documents are kept (besides today); null: forever.',
    }),
    setAt: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (retention) => retention?.setAt ?? null,
      description: 'When an admin last set the policy; null: never (everything kept forever).',
    }),
    minuteDetailFrom: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (retention) => asDate(detailFrom(horizonsOf(retention?.horizons)).minute),
      description:
        'UTC midnight from which minute slots exist: a query that needs minute slots before it fails with DETAIL_EXPIRED. Null: none removed yet.',
    }),
    hourDetailFrom: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (retention) => asDate(detailFrom(horizonsOf(retention?.horizons)).hour),
      description:
        'UTC midnight from which hour slots exist: a query that needs hour slots before it fails with DETAIL_EXPIRED. Null: none removed yet.',
    }),
    dataFrom: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (retention) => asDate(horizonsOf(retention?.horizons).day),
      description:
        'UTC midnight from which day documents exist: days before it were deleted, and queries find no readings there. Null: none deleted yet.',
    }),
  }),
});

builder.objectField(MetricRef, 'retention', (t) =>
  t.field({
    type: MetricRetentionRef,
    description: 'How long the metric keeps minute, hour and day data, and where each begins (see `setRetention`).',
    resolve: (metric) => metric.retention,
  }),
);

const duration = (level: string) =>
  `Whole days (1 to ${MAX_RETENTION_DAYS}) the ${level} are kept besides today; omitted or null: forever.`;

builder.mutationField('setRetention', (t) =>
  t.field({
    type: MetricRef,
    description: `Sets how long a metric keeps its minute slots, hour slots and whole day documents, e.g. \`minutes: 30, hours: 365\` (days forever). The server's retention pass (every RETENTION_SECONDS) then removes, from the series-day documents older than each horizon, the minute slots, the hour slots, or the whole documents with the metric's rollup documents of those days. Queries that need removed minute or hour slots fail with DETAIL_EXPIRED; readings dated before the deleted days' horizon (\`Metric.retention.dataFrom\`) are refused with READING_EXPIRED. Lengthening a policy does not bring removed data back. Creates the metric if needed. Needs scope \`admin\` and a token that may touch \`metric\`. Errors: INVALID_NAME, INVALID_ARGUMENT (a duration outside 1 to ${MAX_RETENTION_DAYS}, or not minutes <= hours <= days with null as forever), FORBIDDEN.`,
    authScopes: (_root, args) => ({ admin: true, metric: args.metric }),
    args: {
      metric: t.arg.string({ required: true, description: 'Metric name, e.g. `cpu`.' }),
      minutes: t.arg.int({ description: duration('minute slots') }),
      hours: t.arg.int({ description: `${duration('hour slots')} At least \`minutes\`.` }),
      days: t.arg.int({ description: `${duration('day documents')} At least \`hours\`.` }),
    },
    resolve: (_root, args, ctx) => setRetention(ctx.store, parseMetricName(args.metric, 'metric'), parseRetentionPolicy(args)),
  }),
);
