/**
 * Writes over plain HTTP, for clients that do not speak GraphQL:
 * - `POST /api/v2/write` takes InfluxDB line protocol, as Telegraf's `influxdb_v2`
 *   output and the InfluxDB v2 client libraries send it (see `line-protocol.ts`);
 * - `POST /api/readings` takes NDJSON, one reading per line.
 * Both hold the same rules as `recordReadings`: the token needs the `write` scope and
 * may only touch its metric prefixes, the batch is validated whole by
 * `record/validate.ts` before anything is written, and `recordBatch` stores it
 * exactly once per `Idempotency-Key`. Their errors name the line (and column) at fault.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { uncompress } from 'snappyjs';
import { z } from 'zod';
import { recordBatch, type RecordOutcome } from '../engine/record-batch.ts';
import { CodedError, ErrorCode, InputError } from '../errors.ts';
import { UTC, parseLocalTime } from '../query/zone.ts';
import { validateBatchId, validateReadings, type Reading, type ReadingInput } from '../record/validate.ts';
import { LocatedError, requireMetrics, requireScope, type RouteContext } from './http-answers.ts';
import {
  isPrecision,
  LineProtocolError,
  parseLineProtocol,
  positionOf,
  timestampToMs,
  type LineEntry,
  type LineField,
} from './line-protocol.ts';

const gunzipAsync = promisify(gunzip);

/** The request header that carries a write's batch id (IETF draft "The Idempotency-Key HTTP Header Field"). */
export const BATCH_ID_HEADER = 'idempotency-key';

/** The query parameter that chooses what a line-protocol write does with string and boolean fields (`refuse` or `ignore`). */
export const NON_NUMERIC_PARAMETER = 'nonNumeric';
/** The header that chooses the same when the client cannot add query parameters (Telegraf's `http_headers`); the parameter wins. */
export const NON_NUMERIC_HEADER = 'tsgraph-non-numeric';

/** NDJSON body types accepted by `POST /api/readings`. */
const NDJSON_TYPES = ['application/x-ndjson', 'application/ndjson', 'application/jsonl'];

const malformed = (message: string) => new CodedError(ErrorCode.MALFORMED_BODY, message);

function tooLarge(maxBytes: number, what: string): CodedError {
  return new CodedError(ErrorCode.REQUEST_TOO_LARGE, `The request body${what} is larger than ${maxBytes.toLocaleString('en-US')} bytes.`);
}

/**
 * Reads a request body as bytes, as sent: at most `maxBytes` (a larger `Content-Length`
 * is refused before reading, a longer body while reading).
 * @param encodings the `Content-Encoding` values accepted besides none and `identity`
 * (lowercase); the body is not decoded.
 * @returns the bytes and the encoding (`''` for none or identity).
 * @throws CodedError REQUEST_TOO_LARGE (413); INVALID_ARGUMENT for a malformed
 * `Content-Length`; UNSUPPORTED_MEDIA_TYPE (415) for another encoding.
 */
export async function readRawBody(
  request: Request,
  maxBytes: number,
  encodings: readonly string[],
): Promise<{ bytes: Uint8Array; encoding: string }> {
  const length = request.headers.get('content-length');
  if (length !== null && !/^\d+$/.test(length))
    throw new CodedError(ErrorCode.INVALID_ARGUMENT, 'The Content-Length header is not a number.');
  if (length !== null && Number(length) > maxBytes) throw tooLarge(maxBytes, '');
  let encoding = (request.headers.get('content-encoding') ?? '').trim().toLowerCase();
  if (encoding === 'identity') encoding = '';
  if (encoding !== '' && !encodings.includes(encoding)) {
    const accepted = encodings.length === 0 ? 'no encoding' : `${encodings.join(' or ')} or no encoding`;
    throw new CodedError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, `Content-Encoding ${encoding} is not supported: send ${accepted}.`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body?.getReader();
  for (;;) {
    const chunk = reader ? await reader.read() : { done: true as const };
    if (chunk.done) break;
    size += chunk.value.byteLength;
    if (size > maxBytes) {
      await reader!.cancel().catch(() => {});
      throw tooLarge(maxBytes, '');
    }
    chunks.push(chunk.value);
  }
  return { bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), encoding };
}

/**
 * Decompresses a gzip body, stopping at `maxBytes` so a small body cannot unpack into a huge one.
 * @throws CodedError REQUEST_TOO_LARGE (413) past `maxBytes`; MALFORMED_BODY for bytes that are not gzip.
 */
export async function gunzipBody(bytes: Uint8Array, maxBytes: number): Promise<Uint8Array> {
  try {
    return await gunzipAsync(bytes, { maxOutputLength: maxBytes });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(maxBytes, ' once decompressed');
    throw malformed(`The body is not valid gzip (${(error as Error).message}).`);
  }
}

/**
 * Decompresses a snappy body (block format, as Prometheus remote write sends it),
 * stopping at `maxBytes` so a small body cannot unpack into a huge one.
 * @throws CodedError REQUEST_TOO_LARGE (413) past `maxBytes`; MALFORMED_BODY for bytes that are not snappy.
 */
export function unsnappyBody(bytes: Uint8Array, maxBytes: number): Uint8Array {
  try {
    return uncompress(bytes, maxBytes);
  } catch (error) {
    const message = (error as Error).message;
    // snappyjs checks the length the block announces against the limit before unpacking.
    if (/too big/.test(message)) throw tooLarge(maxBytes, ' once decompressed');
    throw malformed(`The body is not snappy-compressed (block format) data (${message}).`);
  }
}

/**
 * Reads a request body as bytes with {@link readRawBody}, decompressing it with
 * `Content-Encoding: gzip` (at most `maxBytes` once decompressed, see {@link gunzipBody}).
 * @throws CodedError as {@link readRawBody} and {@link gunzipBody}; UNSUPPORTED_MEDIA_TYPE
 * (415) for an encoding other than gzip or identity.
 */
export async function readBodyBytes(request: Request, maxBytes: number): Promise<Uint8Array> {
  const { bytes, encoding } = await readRawBody(request, maxBytes, ['gzip']);
  return encoding === 'gzip' ? gunzipBody(bytes, maxBytes) : bytes;
}

/**
 * Reads a request body as text: at most `maxBytes` as sent (a larger `Content-Length`
 * is refused before reading), and, with `Content-Encoding: gzip`, at most `maxBytes`
 * once decompressed (decompression stops there, so a small body cannot unpack into a
 * huge one).
 * @throws CodedError REQUEST_TOO_LARGE (413); INVALID_ARGUMENT for a malformed
 * `Content-Length`; UNSUPPORTED_MEDIA_TYPE (415) for an encoding other than gzip or
 * identity; MALFORMED_BODY for gzip that does not decompress or bytes that are not UTF-8.
 */
export async function readBody(request: Request, maxBytes: number): Promise<string> {
  const bytes = await readBodyBytes(request, maxBytes);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw malformed('The body is not valid UTF-8.');
  }
}

/** The media type of a request's `Content-Type`, lowercase, without parameters (`''` when there is none). */
export const mediaTypeOf = (request: Request): string => (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();

/** The message of a validation error without its `readings[3].tags[0].key: ` prefix. */
export const ownMessage = (error: InputError): string =>
  error.inputPath !== undefined && error.message.startsWith(`${error.inputPath}: `)
    ? error.message.slice(error.inputPath.length + 2)
    : error.message;

/** What `validateReadings` names in `inputPath`: `readings[3]`, `readings[3].tags[0].key`, `readings[3].fields`, ... */
const INPUT_PATH = /^readings\[(\d+)\](?:\.(metric|tags|fields|time)(?:\[(\d+)\](?:\.(key|value|name))?)?)?$/;

interface ParsedPath {
  reading: number;
  part?: 'metric' | 'tags' | 'fields' | 'time';
  index?: number;
  leaf?: 'key' | 'value' | 'name';
}

/** Where in a batch a validation error's `inputPath` points, or undefined for a path outside the readings (`readings`, `batchId`). */
export function parsePath(inputPath: string | undefined): ParsedPath | undefined {
  const match = inputPath === undefined ? null : INPUT_PATH.exec(inputPath);
  if (!match) return undefined;
  return {
    reading: Number(match[1]),
    part: match[2] as ParsedPath['part'],
    index: match[3] === undefined ? undefined : Number(match[3]),
    leaf: match[4] as ParsedPath['leaf'],
  };
}

/**
 * Validates readings with `record/validate.ts` (the rules of `recordReadings`); an
 * error about one reading is moved to its place in the body by `locate`.
 * @throws InputError BATCH_TOO_LARGE as validation throws it; LocatedError for the rest.
 */
function validate(
  readings: ReadingInput[],
  context: RouteContext,
  receivedAt: number,
  locate: (error: InputError, path: ParsedPath) => LocatedError,
): Reading[] {
  try {
    return validateReadings(readings, { maxBatchSize: context.maxBatchSize, receivedAt });
  } catch (error) {
    const path = error instanceof InputError ? parsePath(error.inputPath) : undefined;
    if (path === undefined) throw error;
    throw locate(error as InputError, path);
  }
}

/**
 * Records the validated readings of a route's request with `recordBatch` (exactly once
 * per `batchId`, none: a batch of its own), as a write a graceful shutdown waits for, then
 * tells the metrics its outcome and the live subscriptions its readings (when it applied any).
 * @param receivedAt when the request arrived (ms since the epoch, UTC).
 * @throws CodedError as `recordBatch`: BATCH_ID_REUSED, INGEST_BACKLOG, UNAVAILABLE, ...
 */
export async function recordRouteBatch(
  context: RouteContext,
  readings: Reading[],
  batchId: string | undefined,
  receivedAt: number,
): Promise<RecordOutcome> {
  const outcome = await context.trackWrite(recordBatch(context.store, readings, { batchId, receivedAt, logger: context.logger }));
  context.written?.(outcome);
  if (outcome.applied > 0) context.recorded?.(readings);
  return outcome;
}

/** What a line-protocol write does with string and boolean fields: refuse the request (default) or leave them out. */
type NonNumeric = 'refuse' | 'ignore';

function nonNumericOption(request: Request, url: URL): NonNumeric {
  const given = url.searchParams.get(NON_NUMERIC_PARAMETER) ?? request.headers.get(NON_NUMERIC_HEADER) ?? 'refuse';
  if (given !== 'refuse' && given !== 'ignore') {
    throw new CodedError(
      ErrorCode.INVALID_ARGUMENT,
      `${NON_NUMERIC_PARAMETER} must be "refuse" or "ignore", not ${JSON.stringify(given)}.`,
    );
  }
  return given;
}

const isNumeric = (field: LineField) => field.kind === 'float' || field.kind === 'integer' || field.kind === 'unsigned';

/**
 * `POST /api/v2/write?bucket=..&org=..&precision=ns|us|ms|s`: records the lines of a
 * line-protocol body as readings (measurement -> metric, tags -> tags, numeric fields ->
 * fields, timestamp in `precision`, default `ns`, none -> the time the request arrived).
 * `bucket` and `org` are accepted and not used. String and boolean fields refuse the
 * request unless `nonNumeric=ignore` (query parameter or `Tsgraph-Non-Numeric` header)
 * leaves them out; a line left without a field is then skipped.
 * @returns 204 without a body once every reading is stored, as InfluxDB answers.
 * @throws CodedError as the record path (nothing written): MALFORMED_BODY,
 * INVALID_* and the others of `recordReadings`, each with the line and column;
 * BATCH_TOO_LARGE (413), REQUEST_TOO_LARGE (413), UNAUTHENTICATED, FORBIDDEN, INVALID_ARGUMENT
 * for a bad `precision` or `nonNumeric`, INVALID_BATCH_ID, BATCH_ID_REUSED (409), UNAVAILABLE (503).
 */
export async function writeLineProtocol(request: Request, url: URL, context: RouteContext): Promise<Response> {
  const receivedAt = Date.now();
  const access = await context.authenticate(request);
  requireScope(access, 'write');
  const precision = url.searchParams.get('precision') || 'ns';
  if (!isPrecision(precision)) {
    throw new CodedError(ErrorCode.INVALID_ARGUMENT, `precision must be ns, us, ms or s, not ${JSON.stringify(precision)}.`);
  }
  const nonNumeric = nonNumericOption(request, url);
  const batchId = validateBatchId(request.headers.get(BATCH_ID_HEADER));
  const text = await readBody(request, context.maxBodyBytes);
  const at = (offset: number) => positionOf(text, offset);
  let entries: LineEntry[];
  try {
    entries = parseLineProtocol(text);
  } catch (error) {
    if (!(error instanceof LineProtocolError)) throw error;
    throw new LocatedError(error.code, at(error.offset), error.message);
  }
  if (entries.length === 0) throw malformed('The body holds no line of line protocol: a write needs at least one point.');
  const readings: ReadingInput[] = [];
  const sources: { entry: LineEntry; fields: LineField[] }[] = [];
  for (const entry of entries) {
    const fields = entry.fields.filter(isNumeric);
    if (fields.length < entry.fields.length && nonNumeric === 'refuse') {
      const field = entry.fields.find((candidate) => !isNumeric(candidate))!;
      throw new LocatedError(
        ErrorCode.INVALID_FIELD_VALUE,
        at(field.valueAt),
        `field ${JSON.stringify(field.key)} is a ${field.kind}; this server stores numeric fields only (send it as a tag, or write with ${NON_NUMERIC_PARAMETER}=ignore to leave string and boolean fields out)`,
      );
    }
    if (fields.length === 0) continue;
    readings.push({
      metric: entry.measurement,
      tags: entry.tags.map(({ key, value }) => ({ key, value })),
      time: entry.timestamp === null ? null : new Date(timestampToMs(entry.timestamp, precision)),
      fields: fields.map((field) => ({ name: field.key, value: field.value as number })),
    });
    sources.push({ entry, fields });
  }
  requireMetrics(access, [...new Set(readings.map((reading) => reading.metric))]);
  const valid = validate(readings, context, receivedAt, (error, path) => {
    const { entry, fields } = sources[path.reading]!;
    let offset = entry.at;
    if (path.part === 'tags' && path.index !== undefined) {
      const tag = entry.tags[path.index]!;
      offset = path.leaf === 'value' ? tag.valueAt : tag.at;
    } else if (path.part === 'tags') {
      offset = entry.tags[0]?.at ?? entry.at;
    } else if (path.part === 'fields') {
      const field = fields[path.index ?? 0]!;
      offset = path.leaf === 'value' ? field.valueAt : field.at;
    } else if (path.part === 'time') {
      offset = entry.timestampAt;
    }
    return new LocatedError(error.code, at(offset), ownMessage(error));
  });
  await recordRouteBatch(context, valid, batchId, receivedAt);
  return new Response(null, { status: 204 });
}

/** The shape of one NDJSON line; names, values and times are checked by the record path. */
const ndjsonReading = z
  .object({
    metric: z.unknown(),
    tags: z.record(z.string(), z.unknown()).nullish(),
    time: z.union([z.string(), z.number()]).nullish(),
    fields: z.record(z.string(), z.unknown()),
  })
  .strict();

/**
 * `POST /api/readings` with `Content-Type: application/x-ndjson`: one reading per line,
 * `{"metric": "cpu", "tags": {"host": "a"}, "time": "2024-01-01T10:00:00Z", "fields": {"usage": 1.5}}`;
 * `time` is epoch milliseconds or an RFC 3339 date-time (without an offset: UTC), and
 * may be left out (the time the request arrived); `tags` may be left out. Empty lines
 * are skipped.
 * @returns 200 with the `recordReadings` answer as JSON: `{batchId, recorded, applied, alreadyApplied, series, documents}`.
 * @throws CodedError as {@link writeLineProtocol}, with the line (and the tag or field)
 * at fault; BAD_USER_INPUT for a line that is not a reading object; UNSUPPORTED_MEDIA_TYPE
 * (415) for another content type.
 */
export async function writeNdjson(request: Request, context: RouteContext): Promise<Response> {
  const receivedAt = Date.now();
  const access = await context.authenticate(request);
  requireScope(access, 'write');
  const type = mediaTypeOf(request);
  if (!NDJSON_TYPES.includes(type)) {
    throw new CodedError(
      ErrorCode.UNSUPPORTED_MEDIA_TYPE,
      `POST /api/readings takes NDJSON (content-type: application/x-ndjson), not ${type === '' ? 'an untyped body' : type}`,
    );
  }
  const batchId = validateBatchId(request.headers.get(BATCH_ID_HEADER));
  const text = await readBody(request, context.maxBodyBytes);
  const readings: ReadingInput[] = [];
  const lines: number[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = index + 1;
    const source = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (source.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(source);
    } catch (error) {
      throw new LocatedError(ErrorCode.MALFORMED_BODY, { line }, `not valid JSON (${(error as Error).message})`);
    }
    const shape = ndjsonReading.safeParse(json);
    if (!shape.success) {
      const issue = shape.error.issues[0]!;
      const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      throw new LocatedError(
        ErrorCode.BAD_USER_INPUT,
        { line },
        `${where}${issue.message} (a reading is {"metric": "...", "tags": {...}, "time": ..., "fields": {...}})`,
      );
    }
    const { metric, tags, time, fields } = shape.data;
    let when: Date | null = null;
    if (time !== null && time !== undefined) {
      try {
        when = new Date(parseLocalTime(time, UTC));
      } catch (error) {
        if (error instanceof CodedError) throw new LocatedError(error.code, { line }, `time: ${error.message}`);
        throw error;
      }
    }
    readings.push({
      metric: metric as string,
      tags: Object.entries(tags ?? {}).map(([key, value]) => ({ key, value: value as string })),
      time: when,
      fields: Object.entries(fields).map(([name, value]) => ({ name, value: value as number })),
    });
    lines.push(line);
  });
  if (readings.length === 0) throw malformed('The body holds no reading: send one JSON object per line.');
  requireMetrics(access, [...new Set(readings.map((reading) => reading.metric).filter((metric) => typeof metric === 'string'))]);
  const valid = validate(readings, context, receivedAt, (error, path) => {
    const reading = readings[path.reading]!;
    let where = '';
    if (path.part === 'tags' && path.index !== undefined) where = `tag ${JSON.stringify(reading.tags![path.index]!.key)}: `;
    else if (path.part === 'fields' && path.index !== undefined) where = `field ${JSON.stringify(reading.fields[path.index]!.name)}: `;
    else if (path.part !== undefined) where = `${path.part}: `;
    return new LocatedError(error.code, { line: lines[path.reading]! }, `${where}${ownMessage(error)}`);
  });
  const outcome = await recordRouteBatch(context, valid, batchId, receivedAt);
  const { documents, ...rest } = outcome;
  return new Response(JSON.stringify({ ...rest, documents: documents }), {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
}
