import { z } from 'zod';
import { ErrorCode, InputError } from '../errors.ts';
import { BATCH_ID_PATTERN, Limits } from '../model/limits.ts';
import { coded, nameRule, noDuplicates, parseInput, tagValueRule, timeRule } from '../model/rules.ts';
import { seriesId, seriesKey, sortTags, type Tag } from '../model/series.ts';

/** One reading as a client sends it (the GraphQL `ReadingInput`). */
export interface ReadingInput {
  /** Metric name, e.g. `flights`. */
  metric: string;
  /** Tags identifying the series within the metric, e.g. `[{key: "origin", value: "LAS"}]`. */
  tags?: readonly Tag[] | null;
  /** When the reading was taken; defaults to the time the request arrived. */
  time?: Date | null;
  /** One or more numeric fields, e.g. `[{name: "delay", value: 12}]`. */
  fields: readonly { name: string; value: number }[];
}

/** A validated, normalized reading, ready for the record path. */
export interface Reading {
  metric: string;
  /** Sorted by key. */
  tags: Tag[];
  /** Series key, e.g. `flights,destination=PHL,origin=LAS` (see `model/series.ts`). */
  seriesKey: string;
  /** Compact series id stored in series-day documents. */
  seriesId: string;
  /** Milliseconds since the Unix epoch, UTC. */
  time: number;
  /** True when the client sent no time and `time` is the time the server received the batch. */
  timeFromServer: boolean;
  fields: { name: string; value: number }[];
}

const tagRule = z.object({ key: nameRule('A tag key'), value: tagValueRule });

const fieldRule = z.object({
  name: nameRule('A field name'),
  value: z.custom<number>(
    (value) => typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= Limits.maxAbsValue,
    coded(
      ErrorCode.INVALID_FIELD_VALUE,
      `A field value must be a finite number of absolute value at most ${Limits.maxAbsValue} (its square must stay finite)`,
    ),
  ),
});

const readingRule = z.object({
  metric: nameRule('A metric name'),
  tags: z
    .array(tagRule)
    .nullish()
    .refine(
      (tags) => (tags?.length ?? 0) <= Limits.tagsPerSeries,
      coded(ErrorCode.TOO_MANY_NAMES, `A reading may carry at most ${Limits.tagsPerSeries} tags`),
    )
    .superRefine((tags, ctx) => noDuplicates(tags ?? [], (tag) => tag.key, ctx, 'Tag key')),
  time: timeRule.nullish(),
  fields: z
    .array(fieldRule)
    .refine((fields) => fields.length > 0, coded(ErrorCode.NO_FIELDS, 'A reading needs at least one field'))
    .refine(
      (fields) => fields.length <= Limits.fieldsPerReading,
      coded(ErrorCode.TOO_MANY_NAMES, `A reading may carry at most ${Limits.fieldsPerReading} fields`),
    )
    .superRefine((fields, ctx) => noDuplicates(fields, (field) => field.name, ctx, 'Field')),
});

const batchRule = z.array(readingRule);

/**
 * Validates a batch of readings completely and normalizes it (tags sorted, series key
 * and id computed, missing times set to `receivedAt`). Nothing is written by this
 * function; the record path calls it before any write, so a bad batch writes nothing.
 * @param inputs the readings, in the order the client sent them.
 * @param options.maxBatchSize the largest accepted batch (config `MAX_BATCH_SIZE`).
 * @param options.receivedAt the time given to readings without one (ms since epoch, UTC).
 * @throws InputError with code BATCH_TOO_LARGE, INVALID_NAME, INVALID_TAG_VALUE,
 * DUPLICATE_NAME, NO_FIELDS, TOO_MANY_NAMES, INVALID_FIELD_VALUE or INVALID_TIME; the
 * message names the first problem and how many more there are, `extensions.inputPath`
 * where it is (`readings[3].tags[0].key`).
 */
export function validateReadings(inputs: readonly ReadingInput[], options: { maxBatchSize: number; receivedAt: number }): Reading[] {
  if (inputs.length > options.maxBatchSize) {
    throw new InputError(
      ErrorCode.BATCH_TOO_LARGE,
      `A batch may hold at most ${options.maxBatchSize} readings; this one holds ${inputs.length}. Split it into smaller batches.`,
      'readings',
    );
  }
  return normalize(parseInput(batchRule, inputs, 'readings'), options.receivedAt);
}

/**
 * Validates and normalizes a single reading, as {@link validateReadings} does for a
 * batch; error paths start with `reading` (`reading.fields[0].value`).
 * @throws InputError as {@link validateReadings}, except BATCH_TOO_LARGE.
 */
export function validateReading(input: ReadingInput, options: { receivedAt: number }): Reading[] {
  return normalize([parseInput(readingRule, input, 'reading')], options.receivedAt);
}

function normalize(batch: readonly z.output<typeof readingRule>[], receivedAt: number): Reading[] {
  const ids = new Map<string, string>();
  return batch.map((input) => {
    const tags = sortTags(input.tags ?? []);
    const key = seriesKey({ metric: input.metric, tags });
    let id = ids.get(key);
    if (id === undefined) {
      id = seriesId(key);
      ids.set(key, id);
    }
    return {
      metric: input.metric,
      tags,
      seriesKey: key,
      seriesId: id,
      time: input.time?.getTime() ?? receivedAt,
      timeFromServer: input.time === null || input.time === undefined,
      fields: input.fields,
    };
  });
}

/**
 * Validates a client-chosen batch id (see `BATCH_ID_PATTERN`); `null`/`undefined` mean
 * the client sent none.
 * @returns the id, or undefined when none was sent.
 * @throws InputError INVALID_BATCH_ID (inputPath `batchId`).
 */
export function validateBatchId(batchId: string | null | undefined): string | undefined {
  if (batchId === null || batchId === undefined) return undefined;
  if (batchId.length === 0 || batchId.length > Limits.batchIdLength || !BATCH_ID_PATTERN.test(batchId)) {
    throw new InputError(
      ErrorCode.INVALID_BATCH_ID,
      `batchId must have 1 to ${Limits.batchIdLength} characters among letters, digits and _ - . : / + =`,
      'batchId',
    );
  }
  return batchId;
}

/** Gives the readings whose time the server chose (`timeFromServer`) the time `receivedAt` instead (ms since epoch). */
export function withServerTime(readings: readonly Reading[], receivedAt: number): Reading[] {
  return readings.map((reading) => (reading.timeFromServer ? { ...reading, time: receivedAt } : reading));
}
