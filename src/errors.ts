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
  /** A metric's bucket layout cannot change once it has series-day documents. */
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
  /** A POST body that is not JSON or a GraphQL document: forms, multipart and plain text are refused (HTTP 415). */
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  /** A request a web page could send cross-site without a CORS preflight: a GET without `Authorization` or `x-graphql-yoga-csrf` (HTTP 403). */
  CSRF_HEADER_REQUIRED: 'CSRF_HEADER_REQUIRED',
  /**
   * A write body that does not parse (HTTP 400): a line of line protocol, an NDJSON line
   * that is not JSON, a gzip body that does not decompress, bytes that are not UTF-8, or
   * a body without any reading.
   */
  MALFORMED_BODY: 'MALFORMED_BODY',
  /**
   * A query needs minute or hour slots the metric's retention policy has removed
   * (`setRetention`); `extensions.level` names the level, `extensions.availableFrom` the
   * earliest time it exists (UTC). Ask from then on, or at a coarser granularity.
   */
  DETAIL_EXPIRED: 'DETAIL_EXPIRED',
  /** A reading dated before the days its metric's retention policy deleted (`Metric.retention.dataFrom`, see `setRetention`). */
  READING_EXPIRED: 'READING_EXPIRED',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * An error meant for the client, with a stable {@link ErrorCode}. It does not depend on
 * GraphQL: the API layer (`server/graphql-errors.ts`) turns it into a GraphQL error
 * whose `extensions` are {@link CodedError.extensions}: `code`, `inputPath` when known,
 * and `http: {status}` when the error sets the response's status (graphql-yoga reads
 * it and does not send it). Every other error is masked as INTERNAL_SERVER_ERROR.
 */
export class CodedError extends Error {
  readonly code: ErrorCode;
  /** Where in the input the problem is, e.g. `readings[3].tags[0].key`. */
  readonly inputPath?: string;
  /** HTTP status of the response, when the error decides it (401, 413, ...). */
  readonly httpStatus?: number;
  /**
   * The GraphQL error extensions of this error. graphql-js copies an original error's
   * `extensions` to the GraphQL error it wraps it in, so they also survive a resolver.
   */
  readonly extensions: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: { inputPath?: string; httpStatus?: number } = {}) {
    super(message);
    this.name = 'CodedError';
    this.code = code;
    this.extensions = { code };
    if (options.inputPath !== undefined) {
      this.inputPath = options.inputPath;
      this.extensions.inputPath = options.inputPath;
    }
    if (options.httpStatus !== undefined) {
      this.httpStatus = options.httpStatus;
      this.extensions.http = { status: options.httpStatus };
    }
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
