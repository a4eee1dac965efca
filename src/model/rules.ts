import { z } from 'zod';
import { ErrorCode, InputError } from '../errors.ts';
import { isValidName, isWellFormed, Limits } from './limits.ts';

/**
 * Shared zod rules for client input. Each failing rule carries its stable error code
 * in the issue's `params.code`; {@link parseInput} turns the first issue into an
 * {@link InputError}.
 */
export const coded = (code: ErrorCode, message: string) => ({ message, params: { code } });

/** A metric name, tag key or field name (see `NAME_PATTERN`). */
export const nameRule = (what: string) =>
  z
    .string()
    .refine(
      isValidName,
      coded(
        ErrorCode.INVALID_NAME,
        `${what} must start with a letter or "_", continue with letters, digits, "_" or "-", not start with "__", and have at most ${Limits.nameLength} characters`,
      ),
    );

const isoLimit = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** The time of a reading: within [1970-01-01T00:00:00Z, 9999-01-01T00:00:00Z), see `Limits.maxTimeMs`. */
export const timeRule = z
  .date()
  .refine(
    (time) => !Number.isNaN(time.getTime()) && time.getTime() >= Limits.minTimeMs && time.getTime() < Limits.maxTimeMs,
    coded(
      ErrorCode.INVALID_TIME,
      `time must lie in [${isoLimit(Limits.minTimeMs)}, ${isoLimit(Limits.maxTimeMs)}) (the latest time a query can reach)`,
    ),
  );

/**
 * A bound of a query range: within [1970-01-01T00:00:00Z, 9999-01-01T00:00:00Z], the end
 * included so that a range ending there covers every reading that can be recorded.
 */
export const rangeTimeRule = z
  .date()
  .refine(
    (time) => !Number.isNaN(time.getTime()) && time.getTime() >= Limits.minTimeMs && time.getTime() <= Limits.maxTimeMs,
    coded(ErrorCode.INVALID_TIME, `a range bound must lie in [${isoLimit(Limits.minTimeMs)}, ${isoLimit(Limits.maxTimeMs)}]`),
  );

/** A tag value: a non-empty, well-formed string of at most `Limits.tagValueLength` characters. */
export const tagValueRule = z
  .string()
  .refine(
    (value) => value.length > 0 && value.length <= Limits.tagValueLength && isWellFormed(value),
    coded(
      ErrorCode.INVALID_TAG_VALUE,
      `A tag value must be a non-empty, well-formed Unicode string (no unpaired surrogate) of at most ${Limits.tagValueLength} characters`,
    ),
  );

/** Adds a DUPLICATE_NAME issue for every item whose name was seen before in `items`. */
export function noDuplicates<T>(items: readonly T[], nameOf: (item: T) => string, ctx: z.RefinementCtx, what: string): void {
  const seen = new Set<string>();
  items.forEach((item, index) => {
    const name = nameOf(item);
    if (seen.has(name)) {
      ctx.addIssue({
        code: 'custom',
        path: [index],
        message: `${what} "${name}" appears more than once`,
        params: { code: ErrorCode.DUPLICATE_NAME },
      });
    }
    seen.add(name);
  });
}

/** Formats a zod issue path as `readings[3].tags[0].key`. */
function formatPath(root: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, part) => (typeof part === 'number' ? `${text}[${part}]` : `${text}.${String(part)}`), root);
}

/**
 * Parses `input` with `schema`.
 * @param root the name of the input in error paths (`readings`, or '' for arguments).
 * @throws InputError with the first issue's code (BAD_USER_INPUT when the rule has
 * none), its message prefixed with where it is, and how many more problems there are.
 */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown, root: string): z.output<T> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const [first, ...rest] = parsed.error.issues;
  const code = ((first?.code === 'custom' && first.params?.code) as ErrorCode | undefined) || ErrorCode.BAD_USER_INPUT;
  const path = formatPath(root, first?.path ?? []).replace(/^\./, '');
  const more = rest.length > 0 ? ` (and ${rest.length} more problem${rest.length > 1 ? 's' : ''})` : '';
  throw new InputError(code, `${path ? `${path}: ` : ''}${first?.message ?? 'invalid input'}${more}`, path || undefined);
}
