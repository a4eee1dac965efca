import { z } from 'zod';
import { ErrorCode } from '../errors.ts';
import { isWellFormed, Limits } from '../model/limits.ts';
import { coded, nameRule, noDuplicates, parseInput, rangeTimeRule } from '../model/rules.ts';
import { MINUTE_MS, floorTo } from '../model/time.ts';

/** A tag filter: the series' tag `key` must equal one of the values in `in`. */
export interface TagFilter {
  key: string;
  in: readonly string[];
}

/**
 * How a bucket list treats buckets without readings: `NULL` lists every bucket of the
 * range (empty ones with count 0 and null statistics, ready to chart), `NONE` only
 * buckets with readings.
 */
export type Fill = 'NULL' | 'NONE';

/** The time range arguments of a query as the API receives them. */
export interface RangeArgs {
  field: string;
  from: Date;
  to: Date;
}

/** The series selection arguments of a query as the API receives them. */
export interface SelectionArgs {
  metric: string;
  where?: readonly TagFilter[] | null;
  groupBy?: readonly string[] | null;
}

/** A validated range: `[from, to)` rounded down to whole minutes, ms since epoch, UTC. */
export interface RangeSpec {
  field: string;
  from: number;
  to: number;
}

/** A validated series selection. */
export interface SelectionSpec {
  metric: string;
  where: TagFilter[];
  groupBy: string[];
}

const rangeRule = z
  .object({ field: nameRule('The field name'), from: rangeTimeRule, to: rangeTimeRule })
  .refine((args) => args.from.getTime() < args.to.getTime(), {
    ...coded(ErrorCode.INVALID_RANGE, '`from` must be earlier than `to` (the range is [from, to))'),
    path: ['from'],
  });

/** A value in `where.in`: any string (unknown values match nothing), but well-formed, as stored tag values are. */
const filterValueRule = z
  .string()
  .refine(isWellFormed, coded(ErrorCode.INVALID_TAG_VALUE, 'A tag value in `where` must be well-formed Unicode (no unpaired surrogate)'));

const selectionRule = z.object({
  metric: nameRule('The metric name'),
  where: z
    .array(z.object({ key: nameRule('A tag key in `where`'), in: z.array(filterValueRule) }))
    .nullish()
    .superRefine((filters, ctx) => noDuplicates(filters ?? [], (filter) => filter.key, ctx, 'Tag key')),
  groupBy: z
    .array(nameRule('A tag key in `groupBy`'))
    .nullish()
    .refine(
      (keys) => (keys?.length ?? 0) <= Limits.groupByKeys,
      coded(ErrorCode.TOO_MANY_NAMES, `groupBy takes at most ${Limits.groupByKeys} tag keys`),
    )
    .superRefine((keys, ctx) => noDuplicates(keys ?? [], (key) => key, ctx, 'Tag key')),
});

/**
 * Validates and normalizes the field and time range of a query. Times are stored at
 * minute resolution, so `from` and `to` are rounded down to the whole minute: a reading
 * belongs to the range when its minute does, and adjacent ranges never count a reading
 * twice. The rounded range may be empty (`from == to`), which answers nothing.
 * @throws InputError INVALID_NAME, INVALID_TIME or INVALID_RANGE (`from >= to`).
 */
export function normalizeRange(args: RangeArgs): RangeSpec {
  const valid = parseInput(rangeRule, { field: args.field, from: args.from, to: args.to }, '');
  return {
    field: valid.field,
    from: floorTo(valid.from.getTime(), MINUTE_MS),
    to: floorTo(valid.to.getTime(), MINUTE_MS),
  };
}

/**
 * Validates and normalizes a series selection: metric, tag filters and group keys.
 * @throws InputError INVALID_NAME, DUPLICATE_NAME or TOO_MANY_NAMES.
 */
export function normalizeSelection(args: SelectionArgs): SelectionSpec {
  const valid = parseInput(selectionRule, { metric: args.metric, where: args.where, groupBy: args.groupBy }, '');
  return {
    metric: valid.metric,
    where: (valid.where ?? []).map((filter) => ({ key: filter.key, in: filter.in })),
    groupBy: valid.groupBy ?? [],
  };
}
