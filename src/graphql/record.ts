import { validateReading, validateReadings } from '../record/validate.ts';
import { recordReadings, type RecordSummary } from '../storage/record.ts';
import { builder } from './builder.ts';
import { TagInputRef } from './tag.ts';

const FieldInputRef = builder.inputType('FieldInput', {
  description: 'A numeric field of a reading, e.g. `{name: "delay", value: 12}`.',
  fields: (t) => ({
    name: t.string({
      required: true,
      description: 'Field name: a letter or `_`, then letters, digits, `_` or `-`; at most 64 characters.',
    }),
    value: t.float({ required: true, description: 'The value; finite (NaN and infinities are refused).' }),
  }),
});

const ReadingInputRef = builder.inputType('ReadingInput', {
  description: 'One reading: a metric, the tags of its series, a time and one or more numeric fields.',
  fields: (t) => ({
    metric: t.string({ required: true, description: 'Metric name, e.g. `flights` (naming rule as field names).' }),
    tags: t.field({ type: [TagInputRef], description: 'Tags of the series, at most 32; keys unique. Omitted: no tags.' }),
    time: t.field({
      type: 'DateTime',
      description: 'When the reading was taken; stored at minute resolution. Omitted: the time the server received the request.',
    }),
    fields: t.field({ type: [FieldInputRef], required: true, description: 'One to 32 fields; names unique.' }),
  }),
});

const RecordResultRef = builder.objectRef<RecordSummary>('RecordResult').implement({
  description: 'What a record mutation wrote.',
  fields: (t) => ({
    recorded: t.expose('recorded', { type: 'SafeInt', description: 'Number of readings recorded.' }),
    series: t.exposeInt('series', { description: 'Number of distinct series written to.' }),
    buckets: t.exposeInt('buckets', { description: 'Number of bucket documents updated (one atomic write each).' }),
  }),
});

const recordErrors =
  'Errors (nothing is written when any reading is refused): INVALID_NAME, INVALID_TAG_VALUE, DUPLICATE_NAME, NO_FIELDS, TOO_MANY_NAMES (tags or fields per reading, fields per metric), INVALID_FIELD_VALUE, INVALID_TIME';

builder.mutationFields((t) => ({
  recordReading: t.field({
    type: RecordResultRef,
    description: `Records one reading. Needs scope \`write\` and a token that may touch its metric (FORBIDDEN otherwise). ${recordErrors}.`,
    args: { reading: t.arg({ type: ReadingInputRef, required: true, description: 'The reading.' }) },
    authScopes: (_root, args) => ({ write: true, metric: args.reading.metric }),
    resolve: (_root, args, ctx) => {
      const readings = validateReading(args.reading, { receivedAt: Date.now() });
      return ctx.trackWrite(recordReadings(ctx.store, readings));
    },
  }),
  recordReadings: t.field({
    type: RecordResultRef,
    description: `Records a batch of readings: the whole batch is validated first, then grouped by bucket document and written with one atomic update per document. Readings may be late or out of order. Needs scope \`write\` and a token that may touch the metric of every reading; otherwise FORBIDDEN and nothing is written. ${recordErrors}, BATCH_TOO_LARGE (more than MAX_BATCH_SIZE readings).`,
    authScopes: (_root, args) => ({ write: true, metrics: args.readings.map((reading) => reading.metric) }),
    args: {
      readings: t.arg({
        type: [ReadingInputRef],
        required: true,
        description: 'The readings, in any order, at most MAX_BATCH_SIZE (default 10,000).',
      }),
    },
    resolve: (_root, args, ctx) => {
      const readings = validateReadings(args.readings, { maxBatchSize: ctx.limits.maxBatchSize, receivedAt: Date.now() });
      return ctx.trackWrite(recordReadings(ctx.store, readings));
    },
  }),
}));
