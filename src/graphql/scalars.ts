import { GraphQLScalarType, type ValueNode } from 'graphql';
import { DateTimeResolver, SafeIntResolver } from 'graphql-scalars';
import { ErrorCode, InputError } from '../errors.ts';
import { Limits } from '../model/limits.ts';

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
