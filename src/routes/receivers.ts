/**
 * Receivers of other systems' metric writes, beside the line-protocol and NDJSON routes
 * (see `http-routes.ts`):
 * - `POST /v1/metrics`: OTLP/HTTP, an OpenTelemetry `ExportMetricsServiceRequest` as
 *   protobuf or JSON (OpenTelemetry Protocol specification, "OTLP/HTTP"); mapped by
 *   `receivers/otlp.ts`, see docs/opentelemetry.md;
 * - `POST /api/v1/write`: Prometheus remote write 1.0, a snappy-compressed protobuf
 *   `WriteRequest`; mapped by `receivers/remote-write.ts`, see docs/prometheus-remote-write.md.
 * Both hold the rules of the other writes: the token needs the `write` scope and may
 * only touch its metric prefixes, readings are validated by `record/validate.ts` before
 * anything is written, at most `MAX_BATCH_SIZE` readings and `MAX_BODY_BYTES` bytes
 * (as sent and once decompressed) per request, and `recordBatch` stores a request
 * exactly once: its batch id is a hash of its body (`otlp:` or `prw:` and the SHA-256
 * of the decompressed bytes, in hex), so a client retrying the same bytes is answered
 * as stored without storing them again.
 * Once a request is acknowledged, the metrics it marks as counters (an OTLP monotonic
 * cumulative sum, a Prometheus `_total` series) are declared counters when they have no
 * kind yet (see {@link CounterDeclarations}).
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Reader, Type } from 'protobufjs';
import { CodedError, ErrorCode, InputError } from '../errors.ts';
import { type OtlpMappingOptions, mapExportRequest, type ExportRequest, type Rejection } from '../receivers/otlp.ts';
import { receiverTypes } from '../receivers/proto.ts';
import { mapWriteRequest, seriesText, type WriteRequest } from '../receivers/remote-write.ts';
import { validateReading, validateReadings, type Reading, type ReadingInput } from '../record/validate.ts';
import { clientErrorOf, requireMetrics, requireScope, statusOf, type RouteContext } from './http-answers.ts';
import { mediaTypeOf, ownMessage, parsePath, readBodyBytes, readRawBody, recordRouteBatch, unsnappyBody } from './ingest.ts';
import { declareCounters } from '../storage/registry.ts';

/** Why a receiver left a data point or sample of an accepted request out (label `reason` of `tsgraph_receiver_dropped_total`). */
export type DropReason = 'rejected' | 'no_value' | 'stale' | 'nan' | 'out_of_range' | 'histogram';

/** What the receivers need besides a route's context. */
export interface ReceiverContext extends RouteContext {
  /** How OTLP metrics become readings (`OTLP_RESOURCE_ATTRIBUTES`). */
  otlp: OtlpMappingOptions;
  /** Told what a receiver left out of an accepted request, for `/metrics`. */
  dropped?: (receiver: 'otlp' | 'prometheus', reason: DropReason, count: number) => void;
  /** The counters this process declared (made by {@link counterDeclarations}, one per app). */
  counters: CounterDeclarations;
}

/**
 * The metrics a process's receivers declared counters (`declareCounters`), so that a
 * steady stream of the same counters costs no write beyond its batches: at most
 * {@link DECLARED_MAX} names, each remembered for {@link DECLARED_TTL_MS} (then declared
 * once more, a no-op write unless the metric was deleted and written again since).
 */
export type CounterDeclarations = LRUCache<string, true>;

/** At most this many declared metrics are remembered per process (the least recently seen are forgotten first). */
export const DECLARED_MAX = 10_000;
/** How long a declared metric is remembered, in ms (10 minutes). */
export const DECLARED_TTL_MS = 600_000;

/** An empty {@link CounterDeclarations}. */
export function counterDeclarations(): CounterDeclarations {
  return new LRUCache<string, true>({ max: DECLARED_MAX, ttl: DECLARED_TTL_MS });
}

/**
 * Declares counters the metrics of `kinds` that are `counter` and have readings among
 * `stored`, the readings of an acknowledged batch, unless this process declared them
 * already: one `declareCounters` write for those not remembered, which sets the kind
 * only where the registry entry has none (an explicit gauge stays a gauge; docs/
 * opentelemetry.md, "Counters"). The batch is stored already, so a failure of this write
 * is logged and not answered: the metrics are not remembered, and the next batch of them
 * declares them again.
 */
async function declareStoredCounters(
  context: ReceiverContext,
  kinds: ReadonlyMap<string, string>,
  stored: readonly Reading[],
): Promise<void> {
  const unknown = [...kinds].filter(([name, kind]) => kind === 'counter' && !context.counters.has(name)).map(([name]) => name);
  if (unknown.length === 0) return;
  const metrics = new Set(stored.map((reading) => reading.metric));
  const names = unknown.filter((name) => metrics.has(name));
  if (names.length === 0) return;
  try {
    const declared = await declareCounters(context.store, names);
    for (const name of names) context.counters.set(name, true);
    if (declared > 0) context.logger.info({ metrics: names, declared }, 'Receiver declared counters');
  } catch (error) {
    context.logger.warn({ err: error, metrics: names }, 'Declaring counters failed; the next batch of them tries again');
  }
}

/** The two encodings of OTLP/HTTP, chosen by `Content-Type`. */
export type OtlpEncoding = 'protobuf' | 'json';

const CONTENT_TYPE: Record<OtlpEncoding, string> = { protobuf: 'application/x-protobuf', json: 'application/json' };

/** The OTLP encoding of a request's `Content-Type`, or undefined for another type. */
export function otlpEncodingOf(request: Request): OtlpEncoding | undefined {
  const type = mediaTypeOf(request);
  if (type === CONTENT_TYPE.protobuf) return 'protobuf';
  if (type === CONTENT_TYPE.json) return 'json';
  return undefined;
}

const malformed = (message: string) => new CodedError(ErrorCode.MALFORMED_BODY, message);

/** The batch id of a receiver's request: `prefix` and the SHA-256 of its (decompressed) body in hex. */
export function contentBatchId(prefix: 'otlp' | 'prw', body: Uint8Array): string {
  return `${prefix}:${createHash('sha256').update(body).digest('hex')}`;
}

/** The index of the reading a validation error is about (its `inputPath` starts with `readings[i]`), or undefined for another error. */
function readingIndexOf(error: unknown): number | undefined {
  return error instanceof InputError ? parsePath(error.inputPath)?.reading : undefined;
}

/**
 * Validates the readings of a receiver with `record/validate.ts`; readings that break a
 * rule are left out and returned with why (the others are kept), as OTLP's partial
 * success asks. The batch is validated whole first; only when that fails is each reading
 * validated on its own.
 * @throws InputError BATCH_TOO_LARGE (413) past `MAX_BATCH_SIZE`.
 */
function validateEach(
  readings: readonly ReadingInput[],
  context: RouteContext,
  receivedAt: number,
): { valid: Reading[]; rejected: Rejection[] } {
  try {
    return { valid: validateReadings(readings, { maxBatchSize: context.maxBatchSize, receivedAt }), rejected: [] };
  } catch (error) {
    if (readingIndexOf(error) === undefined) throw error;
  }
  const valid: Reading[] = [];
  const rejected: Rejection[] = [];
  for (const reading of readings) {
    try {
      valid.push(...validateReading(reading, { receivedAt }));
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      rejected.push({ metric: reading.metric, reason: ownMessage(error) });
    }
  }
  return { valid, rejected };
}

/** At most this many rejections are named in a partial success's `errorMessage`. */
const NAMED_REJECTIONS = 3;

/** The `errorMessage` of a partial success: how many points were rejected, and why the first few were. */
export function rejectionMessage(rejected: readonly Rejection[]): string {
  const named = rejected.slice(0, NAMED_REJECTIONS).map((rejection) => `metric ${JSON.stringify(rejection.metric)}: ${rejection.reason}`);
  const more = rejected.length > NAMED_REJECTIONS ? `; and ${rejected.length - NAMED_REJECTIONS} more` : '';
  return `${rejected.length} data point${rejected.length === 1 ? '' : 's'} rejected: ${named.join('; ')}${more}`;
}

/**
 * Decodes an OTLP request body.
 * @throws CodedError MALFORMED_BODY for bytes that are not the message in `encoding`.
 */
function decodeExportRequest(body: Uint8Array, encoding: OtlpEncoding): ExportRequest {
  const type = receiverTypes().exportRequest;
  if (encoding === 'protobuf') {
    try {
      return type.decode(body as Uint8Array | Reader) as unknown as ExportRequest;
    } catch (error) {
      throw malformed(`The body is not a protobuf ExportMetricsServiceRequest (${(error as Error).message}).`);
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch (error) {
    throw malformed(`The body is not JSON in UTF-8 (${(error as Error).message}).`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw malformed('The body is not a JSON ExportMetricsServiceRequest: it must be an object ({"resourceMetrics": [...]}).');
  }
  try {
    return type.fromObject(json) as unknown as ExportRequest;
  } catch (error) {
    throw malformed(`The body is not a JSON ExportMetricsServiceRequest (${(error as Error).message}).`);
  }
}

/**
 * `POST /v1/metrics` (OTLP/HTTP): an `ExportMetricsServiceRequest` as protobuf
 * (`Content-Type: application/x-protobuf`) or JSON (`application/json`), with or without
 * `Content-Encoding: gzip`. Its data points become readings (`receivers/otlp.ts`) and are
 * stored at once, exactly once under the body's batch id (`otlp:<sha256>`).
 * @returns 200 with an `ExportMetricsServiceResponse` in the request's encoding: empty
 * when every data point was stored (or found already stored), else with `partialSuccess`
 * `{rejectedDataPoints, errorMessage}` for the points the mapping or validation refused
 * (the others are stored).
 * @throws CodedError answered by {@link otlpErrorAnswer} (nothing written):
 * UNSUPPORTED_MEDIA_TYPE (415) for another content type or encoding; MALFORMED_BODY (400)
 * for a body that does not decode; UNAUTHENTICATED (401); FORBIDDEN (403) without the
 * `write` scope or for a metric outside the token's prefixes; BATCH_TOO_LARGE,
 * REQUEST_TOO_LARGE (413); TOO_MANY_NAMES, READING_EXPIRED, BATCH_ID_REUSED (400/409) from
 * the record path; INGEST_BACKLOG (503 with `Retry-After`), UNAVAILABLE (503).
 */
export async function writeOtlp(request: Request, context: ReceiverContext): Promise<Response> {
  const receivedAt = Date.now();
  const encoding = otlpEncodingOf(request);
  if (encoding === undefined) {
    const type = mediaTypeOf(request);
    throw new CodedError(
      ErrorCode.UNSUPPORTED_MEDIA_TYPE,
      `POST /v1/metrics takes application/x-protobuf or application/json (OTLP/HTTP), not ${type === '' ? 'an untyped body' : type}`,
    );
  }
  const access = await context.authenticate(request);
  requireScope(access, 'write');
  const body = await readBodyBytes(request, context.maxBodyBytes);
  const mapped = mapExportRequest(decodeExportRequest(body, encoding), context.otlp);
  requireMetrics(access, [...mapped.kinds.keys()]);
  const { valid, rejected } = validateEach(mapped.readings, context, receivedAt);
  await recordRouteBatch(context, valid, contentBatchId('otlp', body), receivedAt);
  await declareStoredCounters(context, mapped.kinds, valid);
  const allRejected = [...mapped.rejected, ...rejected];
  if (mapped.noValue > 0) context.dropped?.('otlp', 'no_value', mapped.noValue);
  if (allRejected.length > 0) {
    context.dropped?.('otlp', 'rejected', allRejected.length);
    context.logger.debug({ rejected: allRejected.length, first: allRejected[0] }, 'OTLP data points rejected');
  }
  const response =
    allRejected.length === 0
      ? {}
      : { partialSuccess: { rejectedDataPoints: allRejected.length, errorMessage: rejectionMessage(allRejected) } };
  return otlpAnswer(200, encoding, response, receiverTypes().exportResponse);
}

/** An OTLP answer: `message` (a plain object of `type`) in `encoding`. */
function otlpAnswer(
  status: number,
  encoding: OtlpEncoding,
  message: Record<string, unknown>,
  type: Type,
  headers: Record<string, string> = {},
): Response {
  const content = { 'content-type': CONTENT_TYPE[encoding], ...headers };
  const typed = type.fromObject(message);
  const body = encoding === 'json' ? JSON.stringify(type.toObject(typed, { longs: String })) : Buffer.from(type.encode(typed).finish());
  return new Response(body, { status, headers: content });
}

/** The gRPC status code (google.rpc.Code) a `google.rpc.Status` carries for an HTTP status. */
const GRPC_CODE_OF_STATUS: Record<number, number> = {
  400: 3, // INVALID_ARGUMENT
  401: 16, // UNAUTHENTICATED
  403: 7, // PERMISSION_DENIED
  404: 5, // NOT_FOUND
  409: 6, // ALREADY_EXISTS
  413: 3, // INVALID_ARGUMENT
  415: 3, // INVALID_ARGUMENT
  429: 8, // RESOURCE_EXHAUSTED
  500: 13, // INTERNAL
  503: 14, // UNAVAILABLE
  504: 4, // DEADLINE_EXCEEDED
};

/**
 * An error of `POST /v1/metrics` as OTLP/HTTP answers it: the status of its code (400
 * and the other 4xx: not to be retried; 503 with `Retry-After`: retry later; 401, 403),
 * and a `google.rpc.Status` body `{code, message}` in the request's encoding (protobuf
 * when the content type was not one of OTLP's), whose message starts with our stable
 * code (`MALFORMED_BODY: ...`). Unexpected errors are logged and answered 500
 * `INTERNAL_SERVER_ERROR: Unexpected error.`
 */
export function otlpErrorAnswer(error: unknown, request: Request, context: Pick<RouteContext, 'logger' | 'health'>): Response {
  const encoding = otlpEncodingOf(request) ?? 'protobuf';
  const coded = clientErrorOf(error, context, 'POST /v1/metrics');
  const status = coded ? statusOf(coded) : 500;
  const headers: Record<string, string> = {};
  const retryAfter = coded?.extensions.retryAfterSeconds;
  if (typeof retryAfter === 'number') headers['retry-after'] = String(retryAfter);
  if (status === 401) headers['www-authenticate'] = 'Bearer realm="tsgraph"';
  const message = coded ? `${coded.code}: ${coded.message}` : 'INTERNAL_SERVER_ERROR: Unexpected error.';
  return otlpAnswer(status, encoding, { code: GRPC_CODE_OF_STATUS[status] ?? 2, message }, receiverTypes().status, headers);
}

/** The `proto` parameter of a remote-write content type that remote write 1.0 sends (or none). */
const WRITE_REQUEST_V1 = 'prometheus.writerequest';

/**
 * `POST /api/v1/write` (Prometheus remote write 1.0): a snappy-compressed (block format)
 * protobuf `WriteRequest`, `Content-Type: application/x-protobuf`, `Content-Encoding:
 * snappy` (a body without the header is read as snappy too, as some clients send it).
 * Samples become readings (`receivers/remote-write.ts`) stored at once, exactly once
 * under the body's batch id (`prw:<sha256>`); NaN samples (stale markers included),
 * infinite ones or beyond +-1e150, and native histograms are skipped and counted in
 * `tsgraph_receiver_dropped_total`.
 * @returns 204 without a body once every sample kept is stored (or found already stored).
 * @throws CodedError answered as the other plain HTTP routes (`errorAnswer`, JSON with
 * `extensions.code`), nothing written: UNSUPPORTED_MEDIA_TYPE (415) for another content
 * type, encoding or a remote write 2.0 message; MALFORMED_BODY (400) for a body that is
 * not snappy or not a WriteRequest; INVALID_NAME and the other validation codes (400),
 * naming the series; UNAUTHENTICATED (401); FORBIDDEN (403); BATCH_TOO_LARGE,
 * REQUEST_TOO_LARGE (413); INGEST_BACKLOG (503 with `Retry-After`, which Prometheus
 * retries), UNAVAILABLE (503).
 */
export async function writeRemote(request: Request, context: ReceiverContext): Promise<Response> {
  const receivedAt = Date.now();
  const header = request.headers.get('content-type') ?? '';
  const type = mediaTypeOf(request);
  if (type !== CONTENT_TYPE.protobuf) {
    throw new CodedError(
      ErrorCode.UNSUPPORTED_MEDIA_TYPE,
      `POST /api/v1/write takes a snappy-compressed protobuf WriteRequest (content-type: application/x-protobuf), not ${type === '' ? 'an untyped body' : type}`,
    );
  }
  const proto = /;\s*proto\s*=\s*"?([^";\s]+)/i.exec(header)?.[1]?.toLowerCase();
  if (proto !== undefined && proto !== WRITE_REQUEST_V1) {
    throw new CodedError(
      ErrorCode.UNSUPPORTED_MEDIA_TYPE,
      `POST /api/v1/write takes remote write 1.0 (prometheus.WriteRequest), not ${proto}: set protobuf_message: prometheus.WriteRequest in remote_write`,
    );
  }
  const access = await context.authenticate(request);
  requireScope(access, 'write');
  const body = unsnappyBody((await readRawBody(request, context.maxBodyBytes, ['snappy'])).bytes, context.maxBodyBytes);
  let decoded: WriteRequest;
  try {
    decoded = receiverTypes().writeRequest.decode(body) as unknown as WriteRequest;
  } catch (error) {
    throw malformed(`The body is not a protobuf WriteRequest (${(error as Error).message}).`);
  }
  const mapped = mapWriteRequest(decoded);
  requireMetrics(access, [...mapped.kinds.keys()]);
  let valid: Reading[];
  try {
    valid = validateReadings(mapped.readings, { maxBatchSize: context.maxBatchSize, receivedAt });
  } catch (error) {
    const index = readingIndexOf(error);
    if (index === undefined) throw error;
    const series = decoded.timeseries![mapped.seriesOf[index]!]!;
    throw new InputError((error as InputError).code, `series ${seriesText(series.labels)}: ${ownMessage(error as InputError)}`);
  }
  await recordRouteBatch(context, valid, contentBatchId('prw', body), receivedAt);
  await declareStoredCounters(context, mapped.kinds, valid);
  const skipped = {
    stale: mapped.skipped.stale,
    nan: mapped.skipped.nan,
    out_of_range: mapped.skipped.outOfRange,
    histogram: mapped.skipped.histograms,
  };
  for (const [reason, count] of Object.entries(skipped)) {
    if (count > 0) context.dropped?.('prometheus', reason as DropReason, count);
  }
  return new Response(null, { status: 204 });
}
