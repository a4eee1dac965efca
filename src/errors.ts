import { GraphQLError } from 'graphql';

/**
 * Stable error codes sent to clients in `extensions.code`. Clients may switch on
 * them; the human-readable message may change between versions, the code may not.
 */
export const ErrorCode = {
  /** A metric name, tag key or field name breaks the naming rule (see `model/names.ts`). */
  INVALID_NAME: 'INVALID_NAME',
  /** A tag value is empty or longer than the limit. */
  INVALID_TAG_VALUE: 'INVALID_TAG_VALUE',
  /** The same tag key or field name appears twice in one reading or one request. */
  DUPLICATE_NAME: 'DUPLICATE_NAME',
  /** A reading carries no field. */
  NO_FIELDS: 'NO_FIELDS',
  /** A reading or a metric has more tags or fields than allowed. */
  TOO_MANY_NAMES: 'TOO_MANY_NAMES',
  /** A field value is NaN or infinite. */
  INVALID_FIELD_VALUE: 'INVALID_FIELD_VALUE',
  /** A time cannot be parsed or lies outside the supported range. */
  INVALID_TIME: 'INVALID_TIME',
  /** A batch of readings is larger than `MAX_BATCH_SIZE`. */
  BATCH_TOO_LARGE: 'BATCH_TOO_LARGE',
  /** A query range is empty or reversed (`from >= to`). */
  INVALID_RANGE: 'INVALID_RANGE',
  /** A query would return more buckets than `MAX_BUCKETS`. */
  TOO_MANY_BUCKETS: 'TOO_MANY_BUCKETS',
  /** A metric's bucket layout cannot change once it has bucket documents. */
  LAYOUT_LOCKED: 'LAYOUT_LOCKED',
  /** A numeric argument (a limit, say) is outside its allowed range. */
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  /** A request variable does not match its GraphQL type (set by the server plugin). */
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  /** The query document does not parse (set by the server plugin). */
  GRAPHQL_PARSE_FAILED: 'GRAPHQL_PARSE_FAILED',
  /** The query document does not validate against the schema (set by the server plugin). */
  GRAPHQL_VALIDATION_FAILED: 'GRAPHQL_VALIDATION_FAILED',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * An error caused by the client's input. It is shown to the client as is (graphql-yoga
 * masks every other error), with `extensions.code` set to a stable {@link ErrorCode}
 * and, when known, `extensions.path` naming the offending input, e.g.
 * `readings[3].tags[0].key`.
 */
export class InputError extends GraphQLError {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, inputPath?: string) {
    super(message, {
      extensions: inputPath === undefined ? { code } : { code, inputPath },
    });
    this.code = code;
    this.name = 'InputError';
  }
}

/** True when `error` is a MongoDB duplicate-key error (server code 11000). */
export function isDuplicateKeyError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 11000;
}
