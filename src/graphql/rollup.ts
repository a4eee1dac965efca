import { parseMetricName, parseRollupDefinition } from '../engine/query.ts';
import { dayOfKey, type RollupDefinition } from '../model/rollup.ts';
import { createRollup, dropRollup, findRollups, ROLLUPS_PER_METRIC } from '../storage/rollups.ts';
import { builder } from './builder.ts';
import { MetricRef } from './metric.ts';

/** `RollupState` enum (see `RollupDefinition.state`). */
const RollupStateRef = builder.enumType('RollupState', {
  description: 'Whether queries can use a rollup yet.',
  values: {
    BUILDING: { value: 'building', description: 'Defined; not yet built from the stored data, so no query uses it.' },
    READY: { value: 'ready', description: 'Built: queries use it for every range without dirty days.' },
  } as const,
});

/** `Rollup` type: a rollup definition and its state (see `model/rollup.ts`). */
const RollupRef = builder.objectRef<RollupDefinition>('Rollup').implement({
  description:
    "A metric's readings merged over every series that shares the values of some tag keys, kept per UTC day at the day, hour and quarter-hour levels (see docs/rollups.md). Queries that filter and group only by those keys, and read no minute slots, read it instead of the series. The server defines some itself (`automatic`, config AUTO_ROLLUPS).",
  fields: (t) => ({
    name: t.exposeString('name', { description: 'Name, unique per metric.' }),
    tagKeys: t.exposeStringList('tagKeys', {
      description: 'The tag keys it keeps, sorted; empty: the whole metric in one document a day.',
    }),
    state: t.field({ type: RollupStateRef, resolve: (rollup) => rollup.state, description: 'BUILDING until backfilled, then READY.' }),
    createdAt: t.field({ type: 'DateTime', resolve: (rollup) => rollup.createdAt, description: 'When it was defined (UTC).' }),
    automatic: t.boolean({
      resolve: (rollup) => rollup.automatic === true,
      description:
        'Defined by the server itself from the shape of the series (config AUTO_ROLLUPS; docs/rollups.md, "Automatic rollups"); dropping it keeps the server from defining it again.',
    }),
    quarterHours: t.boolean({
      resolve: (rollup) => rollup.quarters === true,
      description:
        'Whether its documents keep quarter-hour statistics (every rollup defined since they exist), so that zoned days cut at quarter hours (+05:30, +05:45) read it.',
    }),
    dirtyDays: t.field({
      type: ['DateTime'],
      description:
        'UTC midnights of the days whose rollup documents are being rebuilt from the series (after a retried batch, or written while building): queries over them read the series instead.',
      resolve: (rollup) =>
        Object.keys(rollup.dirty ?? {})
          .sort()
          .map((key) => new Date(dayOfKey(key))),
    }),
  }),
});

builder.objectField(MetricRef, 'rollups', (t) =>
  t.field({
    type: [RollupRef],
    description: 'The rollups of the metric, sorted by name.',
    resolve: (metric, _args, ctx) => findRollups(ctx.store, [metric._id]),
  }),
);

builder.mutationFields((t) => ({
  defineRollup: t.field({
    type: RollupRef,
    description: `Defines a rollup of a metric over some of its tag keys (at most ${ROLLUPS_PER_METRIC} per metric): from then on every batch of the metric also updates the rollup's documents, and the server builds it for the data already stored (\`npm run rollups -- backfill\` does it at once, with a progress bar). It is BUILDING until then. Each rollup costs one more update per rollup group and day of every batch. Needs scope \`admin\` and a token that may touch \`metric\`. Errors: INVALID_NAME, DUPLICATE_NAME, NOT_FOUND (no such metric), INVALID_ARGUMENT (unknown tag key, a rollup with that name or those keys exists, too many rollups), FORBIDDEN.`,
    authScopes: (_root, args) => ({ admin: true, metric: args.metric }),
    args: {
      metric: t.arg.string({ required: true, description: 'Metric name, e.g. `flights`.' }),
      name: t.arg.string({ required: true, description: 'Rollup name, unique per metric, e.g. `by_origin`.' }),
      tagKeys: t.arg.stringList({ required: true, description: 'Tag keys to keep, e.g. `["origin"]`; empty: the whole metric.' }),
    },
    resolve: (_root, args, ctx) => createRollup(ctx.store, parseRollupDefinition(args)),
  }),
  dropRollup: t.boolean({
    description:
      'Removes a rollup and its documents; queries read the series again. Returns false when the metric has no such rollup. Needs scope `admin` and a token that may touch `metric`. Errors: INVALID_NAME, FORBIDDEN.',
    authScopes: (_root, args) => ({ admin: true, metric: args.metric }),
    args: {
      metric: t.arg.string({ required: true, description: 'Metric name.' }),
      name: t.arg.string({ required: true, description: 'Rollup name.' }),
    },
    resolve: (_root, args, ctx) =>
      dropRollup(ctx.store, parseMetricName(args.metric, 'metric'), parseRollupDefinition({ ...args, tagKeys: [] }).name),
  }),
}));
