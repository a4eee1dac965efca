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
  /** A time zone name that is not in the IANA time zone database the server knows (e.g. `Mars/Olympus`). */
  INVALID_TIME_ZONE: 'INVALID_TIME_ZONE',
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
  /**
   * The database could not be reached or did not confirm a write. Nothing the client
   * was not told about was acknowledged; a write may or may not have been applied, so
   * the client retries it with the same `batchId`.
   */
  UNAVAILABLE: 'UNAVAILABLE',
  /** A `batchId` was used before for different readings. */
  BATCH_ID_REUSED: 'BATCH_ID_REUSED',
  /** A `batchId` breaks its format rule. */
  INVALID_BATCH_ID: 'INVALID_BATCH_ID',
  /** No API token, or an unknown or revoked one (HTTP 401). */
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  /** The token lacks the scope or the metric prefix the operation needs. */
  FORBIDDEN: 'FORBIDDEN',
  /** A query ran longer than `QUERY_TIMEOUT_MS` and was stopped. */
  QUERY_TIMEOUT: 'QUERY_TIMEOUT',
  /** A request would list more series than allowed. */
  TOO_MANY_SERIES: 'TOO_MANY_SERIES',
  /** A request carries more tag-filter values (`where.in`) than allowed. */
  TOO_MANY_FILTER_VALUES: 'TOO_MANY_FILTER_VALUES',
  /** A document is too deep, has too many aliases, tokens or directives. */
  QUERY_TOO_COMPLEX: 'QUERY_TOO_COMPLEX',
  /** A request body is larger than `MAX_BODY_BYTES` (HTTP 413). */
  REQUEST_TOO_LARGE: 'REQUEST_TOO_LARGE',
  /** The thing to change or delete does not exist. */
  NOT_FOUND: 'NOT_FOUND',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * An error meant for the client, with a stable {@link ErrorCode} in `extensions.code`.
 * graphql-yoga shows it as is and masks every other error. `httpStatus`, when given,
 * becomes the response's status (yoga reads `extensions.http.status` and does not send it).
 */
export class CodedError extends GraphQLError {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options: { inputPath?: string; httpStatus?: number } = {}) {
    const extensions: Record<string, unknown> = { code };
    if (options.inputPath !== undefined) extensions.inputPath = options.inputPath;
    if (options.httpStatus !== undefined) extensions.http = { status: options.httpStatus };
    super(message, { extensions });
    this.code = code;
    this.name = 'CodedError';
  }
}

/**
 * An error caused by the client's input, with `extensions.inputPath` naming the
 * offending input when known, e.g. `readings[3].tags[0].key`.
 */
export class InputError extends CodedError {
  constructor(code: ErrorCode, message: string, inputPath?: string) {
    super(code, message, inputPath === undefined ? {} : { inputPath });
    this.name = 'InputError';
  }
}

/**
 * An error of the service rather than of the input (UNAVAILABLE, QUERY_TIMEOUT): the
 * same request may succeed later. Its message never carries driver details.
 */
export class ServiceError extends CodedError {
  constructor(code: ErrorCode, message: string) {
    super(code, message);
    this.name = 'ServiceError';
  }
}

/** True when `error` is a MongoDB duplicate-key error (server code 11000). */
export function isDuplicateKeyError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 11000;
}
