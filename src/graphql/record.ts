import { recordBatch, type RecordOutcome } from '../engine/record-batch.ts';
import { validateBatchId, validateReading, validateReadings, type Reading } from '../record/validate.ts';
import { builder } from './builder.ts';
import type { Context } from './context.ts';
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

/**
 * Records a validated batch (`recordBatch`, tracked for a graceful shutdown) and, once it
 * is acknowledged and applied anything, tells live subscriptions of its readings.
 */
async function record(
  ctx: Context,
  readings: readonly Reading[],
  options: { batchId?: string; receivedAt: number; inputPath?: (index: number) => string },
): Promise<RecordOutcome> {
  const outcome = await ctx.trackWrite(recordBatch(ctx.store, readings, { ...options, logger: ctx.logger }));
  if (outcome.applied > 0) ctx.live.events.recorded(readings);
  return outcome;
}

const RecordResultRef = builder.objectRef<RecordOutcome>('RecordResult').implement({
  description:
    'What a record mutation stored. An answer without errors means every reading of the batch is stored, with the configured write concern (default: majority, journaled).',
  fields: (t) => ({
    batchId: t.exposeString('batchId', { nullable: true, description: 'The batch id sent with the readings; null when none was sent.' }),
    recorded: t.expose('recorded', { type: 'SafeInt', description: 'Number of readings of the batch, all of them stored now.' }),
    applied: t.expose('applied', {
      type: 'SafeInt',
      description: 'Readings this call applied (equal to `recorded` on the first complete attempt).',
    }),
    alreadyApplied: t.expose('alreadyApplied', {
      type: 'SafeInt',
      description: 'Readings an earlier call with the same `batchId` had already applied, and this call did not apply again.',
    }),
    series: t.exposeInt('series', { description: 'Number of distinct series of the batch.' }),
    documents: t.int({
      description:
        "Number of series-day documents the batch's readings fall into (a fold writes one part of each, see docs/ingest-design.md).",
      resolve: (outcome) => outcome.documents,
    }),
    buckets: t.int({
      resolve: (outcome) => outcome.documents,
      description: 'The same as `documents` (its former name).',
      deprecationReason: 'Use `documents`: "bucket" names the time buckets of query answers.',
    }),
  }),
});

const BATCH_ID_DESCRIPTION =
  'A client-chosen id that makes the call safe to retry: sent again with the same readings (after a time-out, an UNAVAILABLE error or a crash), the batch is applied exactly once; what an earlier attempt applied is not applied again, and what it did not is completed. 1 to 128 characters among letters, digits and `_ - . : / + =`, e.g. a UUID. Reusing an id for other readings is refused (BATCH_ID_REUSED). Ids are remembered for BATCH_RETENTION_HOURS (default 24 h). Without an id a retried call is recorded twice.';

const recordErrors =
  'Errors (nothing is written when any reading is refused): INVALID_NAME, INVALID_TAG_VALUE, DUPLICATE_NAME, NO_FIELDS, TOO_MANY_NAMES (tags or fields per reading, fields or tag keys per metric), INVALID_FIELD_VALUE, INVALID_TIME, READING_EXPIRED (a reading dated before the days deleted by the retention policy of its metric, see `setRetention`), INVALID_BATCH_ID, BATCH_ID_REUSED. UNAVAILABLE: the database could not be reached or did not confirm the write; the batch is then stored whole or not at all, so retry with the same batchId (it is stored once)';

builder.mutationFields((t) => ({
  recordReading: t.field({
    type: RecordResultRef,
    description: `Records one reading. Needs scope \`write\` and a token that may touch its metric (FORBIDDEN otherwise). ${recordErrors}.`,
    args: {
      reading: t.arg({ type: ReadingInputRef, required: true, description: 'The reading.' }),
      batchId: t.arg.string({ description: BATCH_ID_DESCRIPTION }),
    },
    authScopes: (_root, args) => ({ write: true, metric: args.reading.metric }),
    resolve: (_root, args, ctx) => {
      const receivedAt = Date.now();
      const batchId = validateBatchId(args.batchId);
      const readings = validateReading(args.reading, { receivedAt });
      return record(ctx, readings, { batchId, receivedAt, inputPath: () => 'reading.time' });
    },
  }),
  recordReadings: t.field({
    type: RecordResultRef,
    description: `Records a batch of readings: the whole batch is validated first, then stored as one entry of the ingest log with one insert, confirmed with the configured write concern before the answer (all or nothing; with a batchId, exactly once however often it is sent); the folder later adds it to the series-day documents exactly once, and queries read it meanwhile from the log. Readings may be late or out of order. Needs scope \`write\` and a token that may touch the metric of every reading; otherwise FORBIDDEN and nothing is written. ${recordErrors}, BATCH_TOO_LARGE (more than MAX_BATCH_SIZE readings).`,
    authScopes: (_root, args) => ({ write: true, metrics: args.readings.map((reading) => reading.metric) }),
    args: {
      readings: t.arg({
        type: [ReadingInputRef],
        required: true,
        description: 'The readings, in any order, at most MAX_BATCH_SIZE (default 10,000).',
      }),
      batchId: t.arg.string({ description: BATCH_ID_DESCRIPTION }),
    },
    resolve: (_root, args, ctx) => {
      const receivedAt = Date.now();
      const batchId = validateBatchId(args.batchId);
      const readings = validateReadings(args.readings, { maxBatchSize: ctx.limits.maxBatchSize, receivedAt });
      return record(ctx, readings, { batchId, receivedAt });
    },
  }),
}));
