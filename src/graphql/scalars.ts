import { GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import { DateTimeResolver, SafeIntResolver } from 'graphql-scalars';
import { ErrorCode, InputError } from '../errors.ts';
import type { BoundInput } from '../engine/query.ts';
import { Limits } from '../model/limits.ts';
import { parseLocalTime, UTC } from '../query/zone.ts';

function checkedTime(parse: () => Date): Date {
  let time: Date;
  try {
    time = parse();
  } catch (error) {
    throw new InputError(
      ErrorCode.INVALID_TIME,
      `${(error as Error).message} Expected an RFC 3339 date-time such as 2001-01-05T14:30:00Z.`,
    );
  }
  const ms = time.getTime();
  if (!(ms >= Limits.minTimeMs && ms <= Limits.maxTimeMs)) {
    throw new InputError(ErrorCode.INVALID_TIME, `Time ${time.toISOString()} lies outside 1970-01-01T00:00:00Z .. 9999-01-01T00:00:00Z.`);
  }
  return time;
}

/**
 * `DateTime` (graphql-scalars, RFC 3339) whose input errors carry the code
 * INVALID_TIME: an unparseable string or a time before 1970 or after 9999-01-01T00:00:00Z
 * (readings must be earlier than that instant; a query range may end there).
 * Output is always UTC with milliseconds, e.g. `2001-01-05T14:30:00.000Z`.
 */
export const DateTimeScalar = new GraphQLScalarType<Date, Date>({
  ...DateTimeResolver.toConfig(),
  description:
    'A point in time as an RFC 3339 date-time string, e.g. `2001-01-05T14:30:00Z` (an offset such as `+02:00` is converted); always returned in UTC. Accepted range: 1970-01-01T00:00:00Z to 9999-01-01T00:00:00Z (a reading must be earlier than the end; a query range may end there).',
  parseValue: (value: unknown) => checkedTime(() => DateTimeResolver.parseValue(value) as Date),
  parseLiteral: (ast: ValueNode) => checkedTime(() => DateTimeResolver.parseLiteral(ast, undefined) as Date),
});

/** `SafeInt` (graphql-scalars): an integer up to 2^53 - 1, used for counts that may outgrow 32 bits. */
export const SafeIntScalar = SafeIntResolver;

/**
 * A query bound as the client wrote it: epoch milliseconds, or text that `parseLocalTime`
 * (`query/zone.ts`) reads (a local date or date-time, or RFC 3339 with an offset); the
 * engine reads it in the query's zone (`BoundInput` in `engine/query.ts`).
 */
export type TimeInput = BoundInput;

/**
 * Checks that `value` has a form a bound may have, by reading it with the one parser
 * the engine uses (in UTC: the form does not depend on the zone); the zone and the range
 * are applied later, by the engine.
 * @throws InputError INVALID_TIME.
 */
function parseTimeInput(value: unknown): TimeInput {
  if (typeof value !== 'number' && typeof value !== 'string') {
    throw new InputError(ErrorCode.INVALID_TIME, 'A time is a number of epoch milliseconds or a string.');
  }
  parseLocalTime(value, UTC);
  return value;
}

/**
 * `Time`: a query bound as epoch milliseconds (what Grafana's `$__from` gives), an RFC
 * 3339 date-time with offset, or a local date or date-time without offset, read in the
 * query's `timeZone` (`"2001-04-01"` is the New York day when `timeZone` is
 * `America/New_York`). Input only; errors carry INVALID_TIME.
 */
export const TimeScalar = new GraphQLScalarType<TimeInput, string>({
  name: 'Time',
  description:
    "A query bound: epoch milliseconds (e.g. `985996800000`, as Grafana's `$__from` gives), an RFC 3339 date-time with an offset or `Z` (e.g. `2001-04-01T00:00:00-05:00`), or a local date or date-time without offset (`2001-04-01`, `2001-04-01T06:30`), read in the query's `timeZone`. A local time that does not exist (skipped by a daylight-saving change) is moved forward by the gap; one that occurs twice is the earlier. Range: 1970-01-01T00:00:00Z to 9999-01-01T00:00:00Z.",
  serialize: () => {
    throw new Error('Time is an input type');
  },
  parseValue: parseTimeInput,
  parseLiteral: (ast: ValueNode) => {
    if (ast.kind === Kind.INT || ast.kind === Kind.FLOAT) return parseTimeInput(Number(ast.value));
    return parseTimeInput(ast.kind === Kind.STRING ? ast.value : undefined);
  },
});
