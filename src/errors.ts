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
  /**
   * The folder is behind: the readings acknowledged but not yet folded passed
   * `INGEST_MAX_TAIL_READINGS` or are older than `INGEST_MAX_TAIL_SECONDS`. Nothing was
   * written; retry after `extensions.retryAfterSeconds` (HTTP 503 with `Retry-After`).
   */
  INGEST_BACKLOG: 'INGEST_BACKLOG',
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
  /**
   * A query asks for `increase` or `rate` (or `statistic: INCREASE`/`RATE`) of a metric
   * that is not declared a counter (`setMetricKind`); `extensions.metric` names it.
   */
  NOT_A_COUNTER: 'NOT_A_COUNTER',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** What the documentation says about one {@link ErrorCode}. */
export interface ErrorCodeInfo {
  /**
   * HTTP status of an answer carrying this code on the plain HTTP routes (line protocol,
   * NDJSON, export). Over `/graphql` an error is an entry of the response's `errors`;
   * only the codes whose meaning gives an HTTP status without limiting it to the plain
   * HTTP routes also set the status there.
   */
  status: number;
  /** When the code is raised, in one or two sentences (Markdown). */
  meaning: string;
}

/**
 * Every {@link ErrorCode} with its HTTP status and when it is raised: the source of the
 * error-code reference page (`npm run docs:reference`) and of the HTTP statuses the
 * plain HTTP routes answer with.
 */
export const ERROR_CODES: Record<ErrorCode, ErrorCodeInfo> = {
  INVALID_NAME: {
    status: 400,
    meaning:
      'a metric, tag key or field name (also `latestValue(field:)` and `sketchFields`) that is empty, longer than 64, contains anything but letters, digits, `_` and `-` (so no `$` or `.`: it could act as a MongoDB operator or path), or starts with `__`',
  },
  INVALID_TAG_VALUE: {
    status: 400,
    meaning:
      'an empty tag value, one over 256 characters, or a tag or filter value that is not well-formed Unicode (an unpaired surrogate)',
  },
  DUPLICATE_NAME: {
    status: 400,
    meaning:
      "the same tag key or field twice in one reading, twice in `groupBy`/`where`, or twice in `setMetricStatistics`' `sketchFields`",
  },
  NO_FIELDS: { status: 400, meaning: 'a reading without fields' },
  TOO_MANY_NAMES: {
    status: 400,
    meaning: 'more than 32 tags or fields in a reading, a metric growing past 32 fields or 64 tag keys, more than 8 `groupBy` keys',
  },
  INVALID_FIELD_VALUE: {
    status: 400,
    meaning:
      'NaN, an infinite value (e.g. the literal `1e400`), or an absolute value above 1e150 (its square must stay finite); a string or boolean field in line protocol or NDJSON; a line-protocol integer outside 64 bits',
  },
  INVALID_TIME: {
    status: 400,
    meaning:
      'a time that does not parse (RFC 3339, epoch ms or a local date/time for query bounds), a reading outside [1970-01-01, 9999-01-01), a query bound outside [1970-01-01, 9999-01-01]',
  },
  INVALID_TIME_ZONE: { status: 400, meaning: 'a `timeZone` that is not an IANA zone name the server knows (e.g. `Mars/Olympus`)' },
  BATCH_TOO_LARGE: {
    status: 413,
    meaning:
      'more readings in one `recordReadings`, line-protocol, NDJSON, OTLP (data points) or remote-write (samples) write than `MAX_BATCH_SIZE` (HTTP 413 on the plain HTTP routes)',
  },
  INVALID_RANGE: { status: 400, meaning: '`from >= to`' },
  TOO_MANY_BUCKETS: {
    status: 400,
    meaning: 'a request that could return more than `MAX_BUCKETS` buckets, all its fields together (see docs/access-and-limits.md#limits)',
  },
  INVALID_ARGUMENT: {
    status: 400,
    meaning:
      'a bad `precision` or `nonNumeric` of a line-protocol write; an export without a query, with another `format`, bad `variables`, a mutation, two root fields or a selection that makes no table; a `limit` below 1; a `percentile(p:)` outside 0 to 100; a `latest(n:)` outside 1 to 50; a `setMetricStatistics` `latestReadings` outside 0 to 50; a `setRetention` duration outside 1 to 36,525 days, or durations that break minutes <= hours <= days (null counting as forever); a `Content-Length` header that is not a number (HTTP 400)',
  },
  BAD_USER_INPUT: {
    status: 400,
    meaning:
      'a variable that does not fit its GraphQL type (a number as a tag value, `1e400` in JSON variables, an unknown enum value); an NDJSON reading with a key other than `metric`, `tags`, `time` and `fields`',
  },
  GRAPHQL_PARSE_FAILED: { status: 400, meaning: 'a document that does not parse' },
  GRAPHQL_VALIDATION_FAILED: { status: 400, meaning: 'a document that does not validate against the schema' },
  UNAVAILABLE: {
    status: 503,
    meaning:
      'the database is unreachable or did not confirm a write; a write may or may not have been applied: retry it with the same `batchId` (HTTP 503 on the plain HTTP routes)',
  },
  INGEST_BACKLOG: {
    status: 503,
    meaning:
      'the readings acknowledged but not yet folded passed `INGEST_MAX_TAIL_READINGS` or are older than `INGEST_MAX_TAIL_SECONDS` (the folder is behind or not running); nothing is written: retry after `extensions.retryAfterSeconds` (HTTP 503 with `Retry-After`)',
  },
  BATCH_ID_REUSED: {
    status: 409,
    meaning: 'a `batchId` (or `Idempotency-Key`) sent before with other readings (nothing is written; HTTP 409 on the plain HTTP routes)',
  },
  INVALID_BATCH_ID: {
    status: 400,
    meaning:
      'a `batchId` (or `Idempotency-Key` header) that is empty, longer than 128 characters or holds other characters than letters, digits and `_ - . : / + =`',
  },
  UNAUTHENTICATED: {
    status: 401,
    meaning: 'no API token, or a malformed, unknown or revoked one (HTTP 401; see docs/access-and-limits.md#access)',
  },
  FORBIDDEN: {
    status: 403,
    meaning:
      'the token lacks the scope the operation needs, or may not touch a metric it names; a plain HTTP write sent by a web page of an origin not in `CORS_ORIGINS`; nothing is written (HTTP 403 on the plain HTTP routes)',
  },
  QUERY_TIMEOUT: {
    status: 504,
    meaning:
      'a database read that ran longer than `QUERY_TIMEOUT_MS` and was stopped (the same request may succeed later; HTTP 504 on the plain HTTP routes)',
  },
  TOO_MANY_SERIES: {
    status: 400,
    meaning:
      'a series list with a `limit` above `MAX_SERIES`, or series lists of one request listing more than `MAX_SERIES` series together; a write that would give a metric more than `MAX_SERIES_PER_METRIC` series (nothing is written; HTTP 400 on the plain HTTP routes)',
  },
  TOO_MANY_FILTER_VALUES: {
    status: 400,
    meaning: 'more than `MAX_FILTER_VALUES` values in all `where: [{in: [...]}]` lists of a request',
  },
  QUERY_TOO_COMPLEX: {
    status: 400,
    meaning:
      'a document deeper than `MAX_DEPTH`, or with more aliases, tokens or directives than `MAX_ALIASES`, `MAX_TOKENS`, `MAX_DIRECTIVES` (HTTP 400)',
  },
  REQUEST_TOO_LARGE: { status: 413, meaning: 'a request body over `MAX_BODY_BYTES`, as sent or once decompressed (HTTP 413)' },
  NOT_FOUND: {
    status: 400,
    meaning:
      '`deleteMetric` or `deleteSeries` of something that does not exist; `defineRollup` on a metric or `dropRollup` of a rollup that does not exist',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    meaning:
      'a POST body that is neither JSON nor a GraphQL document: forms, multipart, `text/plain`; an NDJSON write that is not `application/x-ndjson`; an OTLP write that is neither `application/x-protobuf` nor `application/json`; a remote write that is not `application/x-protobuf` or asks for remote write 2.0; a `Content-Encoding` other than gzip (snappy for remote write) (HTTP 415)',
  },
  CSRF_HEADER_REQUIRED: { status: 403, meaning: 'a GET without an `Authorization` or `x-graphql-yoga-csrf` header (HTTP 403)' },
  MALFORMED_BODY: {
    status: 400,
    meaning:
      'a line-protocol line that does not parse, an NDJSON line that is not JSON, a gzip or snappy body that does not decompress, bytes that are not UTF-8, an OTLP body that is not an `ExportMetricsServiceRequest` in protobuf or JSON, a remote-write body that is not a `WriteRequest`, a line-protocol or NDJSON write without any reading (HTTP 400, with `line` and `column` for line protocol and NDJSON; see docs/recording.md#line-protocol)',
  },
  DETAIL_EXPIRED: {
    status: 400,
    meaning:
      "a query that needs minute or hour slots the metric's retention policy removed; `extensions.level` (`MINUTE` or `HOUR`) and `extensions.availableFrom` (the UTC midnight from which that level exists) say what to ask instead (see docs/retention.md)",
  },
  READING_EXPIRED: {
    status: 400,
    meaning:
      "a reading dated before the days its metric's retention policy deleted (`Metric.retention.dataFrom`); nothing of the batch is written",
  },
  NOT_A_COUNTER: {
    status: 400,
    meaning:
      '`increase` or `rate` (also `statistic: INCREASE` or `RATE`) of a metric not declared a counter with `setMetricKind(kind: COUNTER)`; `extensions.metric` names it, and nothing runs',
  },
};

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

/**
 * INGEST_BACKLOG: a write refused because the folder is behind. It answers HTTP 503
 * with `Retry-After: <seconds>` (RFC 9110, section 10.2.3), and the same seconds in
 * `extensions.retryAfterSeconds`.
 */
export class BacklogError extends ServiceError {
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number) {
    super(ErrorCode.INGEST_BACKLOG, message);
    this.name = 'BacklogError';
    this.retryAfterSeconds = retryAfterSeconds;
    this.extensions.retryAfterSeconds = retryAfterSeconds;
    this.extensions.http = { status: 503, headers: { 'Retry-After': String(retryAfterSeconds) } };
  }
}

/** True when `error` is a MongoDB duplicate-key error (server code 11000). */
export function isDuplicateKeyError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 11000;
}
