/**
 * Prometheus' HTTP query API (`/api/v1/...`), as Grafana's Prometheus data source and
 * Prometheus API clients call it: instant and range queries in a PromQL subset
 * (`promql/`), and the label, series and metadata look-ups of Grafana's metric browser
 * and variables. Every request needs a token with the `read` scope (see
 * `credentials.ts` for the ways to send it); reads go through a query engine of their
 * own with the request's budget, the token's metric prefixes and `QUERY_TIMEOUT_MS`, as
 * GraphQL queries do. Answers and errors have Prometheus' shape:
 * `{"status":"success","data":...}` and `{"status":"error","errorType","error"}`.
 */
import type { Access } from '../auth/access.ts';
import type { QueryEngine } from '../engine/engine.ts';
import { ErrorCode } from '../errors.ts';
import { PromQLError, parsePromQL, type Matcher } from '../promql/parse.ts';
import { instantData, MAX_POINTS, matrixData, runPromQL } from '../promql/query.ts';
import { promName, PromSource } from '../promql/source.ts';
import { parseDuration } from '../promql/parse.ts';
import { authorizationOf, withAuthorization } from './credentials.ts';
import { clientErrorOf, requireScope, statusOf, type RouteContext } from './http-answers.ts';
import { readBody } from './ingest.ts';

/** What the query routes need besides a write route's context: a query engine per request (its limits and time limit). */
export interface QueryRouteContext extends RouteContext {
  newEngine(request: Request): QueryEngine;
}

/** The version `status/buildinfo` reports: the Prometheus release whose query semantics (left-open ranges) the answers follow. */
export const PROMETHEUS_VERSION = '3.0.0';

/** A refusal in Prometheus' words: its `errorType` and HTTP status. */
class PromApiError extends Error {
  constructor(
    readonly errorType: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const badData = (message: string) => new PromApiError('bad_data', 400, message);

/** The parameters of a request: the query string and, for a form POST, the form (Prometheus reads both). */
async function parametersOf(request: Request, url: URL, maxBytes: number): Promise<URLSearchParams> {
  const parameters = new URLSearchParams(url.searchParams);
  if (request.method === 'POST') {
    const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== '' && type !== 'application/x-www-form-urlencoded') {
      throw new PromApiError('bad_data', 415, `POST bodies must be application/x-www-form-urlencoded, not ${type}`);
    }
    for (const [name, value] of new URLSearchParams(await readBody(request, maxBytes))) parameters.append(name, value);
  }
  return parameters;
}

/**
 * A time parameter as Prometheus reads it: Unix seconds (a float) or RFC 3339, in ms.
 * @throws PromApiError bad_data.
 */
export function parseTime(text: string, name: string): number {
  if (/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text.trim())) return Math.round(Number(text) * 1000);
  const ms = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(ms))
    throw badData(`invalid parameter "${name}": cannot parse "${text}" to a valid timestamp`);
  return ms;
}

/** The `match[]` selectors of a look-up, each parsed as PromQL: its matchers. */
function selectorsOf(parameters: URLSearchParams): Matcher[][] {
  return parameters.getAll('match[]').map((text) => {
    const expr = parsePromQL(text);
    if (expr.kind !== 'vector') throw badData(`invalid parameter "match[]": ${text} is not a series selector`);
    return expr.matchers;
  });
}

/** A success answer. */
function success(data: unknown): Response {
  return new Response(JSON.stringify({ status: 'success', data }), { status: 200, headers: { 'content-type': 'application/json' } });
}

/** An error answer in Prometheus' shape. */
function failure(errorType: string, status: number, message: string): Response {
  return new Response(JSON.stringify({ status: 'error', errorType, error: message }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/**
 * Any error of a query route as Prometheus answers it: PromQL that does not parse or is
 * not supported, and bad parameters, `bad_data` (400); a request over its budget of
 * buckets or series `execution` (422, Prometheus' answer to a query that would load too
 * many samples); the query time limit `timeout` (503); no token `unauthorized` (401), a
 * token without the scope or prefix `forbidden` (403); the database unreachable
 * `unavailable` (503). Anything else is logged and answered `internal` (500), masked.
 */
export function promErrorAnswer(error: unknown, context: Pick<RouteContext, 'logger' | 'health'>, where: string): Response {
  if (error instanceof PromApiError) return failure(error.errorType, error.status, error.message);
  if (error instanceof PromQLError) return failure('bad_data', 400, error.message);
  const coded = clientErrorOf(error, context, where);
  if (coded === undefined) return failure('internal', 500, 'Unexpected error.');
  const status = statusOf(coded);
  const message = `${coded.message} (${coded.code})`;
  switch (coded.code) {
    case ErrorCode.TOO_MANY_BUCKETS:
    case ErrorCode.TOO_MANY_SERIES:
    case ErrorCode.TOO_MANY_FILTER_VALUES:
      return failure('execution', 422, message);
    case ErrorCode.QUERY_TIMEOUT:
      return failure('timeout', 503, message);
    case ErrorCode.UNAUTHENTICATED:
      return failure('unauthorized', 401, message);
    case ErrorCode.FORBIDDEN:
      return failure('forbidden', 403, message);
    case ErrorCode.UNAVAILABLE:
      return failure('unavailable', 503, message);
    default:
      return failure(status >= 500 ? 'internal' : 'bad_data', status, message);
  }
}

/** The access of a query request: its token (see `credentials.ts`), which needs the `read` scope. */
async function readAccess(request: Request, url: URL, context: QueryRouteContext): Promise<Access> {
  const access = await context.authenticate(withAuthorization(authorizationOf(request, url)));
  requireScope(access, 'read');
  return access;
}

/** `GET|POST /api/v1/query`: `query`, `time` (default now). */
async function instantQuery(request: Request, url: URL, context: QueryRouteContext): Promise<Response> {
  const access = await readAccess(request, url, context);
  const parameters = await parametersOf(request, url, context.maxBodyBytes);
  const query = parameters.get('query');
  if (query === null || query === '') throw badData('invalid parameter "query": no query given');
  const timeText = parameters.get('time');
  const time = timeText === null || timeText === '' ? Date.now() : parseTime(timeText, 'time');
  const source = new PromSource(context.newEngine(request), access);
  const { value } = await runPromQL(source, query, { start: time, end: time, stepMs: 0 });
  return success(instantData(value, time));
}

/** `GET|POST /api/v1/query_range`: `query`, `start`, `end`, `step` (float seconds or a duration). */
async function rangeQuery(request: Request, url: URL, context: QueryRouteContext): Promise<Response> {
  const access = await readAccess(request, url, context);
  const parameters = await parametersOf(request, url, context.maxBodyBytes);
  const query = parameters.get('query');
  if (query === null || query === '') throw badData('invalid parameter "query": no query given');
  const required = (name: string) => {
    const text = parameters.get(name);
    if (text === null || text === '') throw badData(`invalid parameter "${name}": missing`);
    return text;
  };
  const start = parseTime(required('start'), 'start');
  const end = parseTime(required('end'), 'end');
  if (end < start) throw badData('invalid parameter "end": end timestamp must not be before start time');
  let stepMs: number;
  try {
    stepMs = parseDuration(required('step'));
  } catch {
    throw badData(`invalid parameter "step": cannot parse "${parameters.get('step')}" to a valid duration`);
  }
  if (!(stepMs > 0))
    throw badData('invalid parameter "step": zero or negative query resolution step widths are not accepted. Try a positive integer');
  if ((end - start) / stepMs > MAX_POINTS) {
    throw badData(
      `exceeded maximum resolution of ${MAX_POINTS.toLocaleString('en-US')} points per timeseries. Try decreasing the query resolution (?step=XX)`,
    );
  }
  const source = new PromSource(context.newEngine(request), access);
  const { value, times } = await runPromQL(source, query, { start, end, stepMs });
  return success(matrixData(value, times));
}

/** The series of a look-up's `match[]` (every series without one), with `start`/`end` keeping those with readings in that span. */
async function lookedUp(request: Request, url: URL, context: QueryRouteContext, requireMatch: boolean) {
  const access = await readAccess(request, url, context);
  const parameters = await parametersOf(request, url, context.maxBodyBytes);
  const selectors = selectorsOf(parameters);
  if (requireMatch && selectors.length === 0) throw badData('no match[] parameter provided');
  const source = new PromSource(context.newEngine(request), access);
  const startText = parameters.get('start');
  const endText = parameters.get('end');
  const start = startText ? parseTime(startText, 'start') : null;
  const end = endText ? parseTime(endText, 'end') : null;
  return { source, selectors, start, end, parameters };
}

/** Series of `selectors` with their labels, without repeats; those without readings in `[start, end]` left out when given. */
async function seriesOf(source: PromSource, selectors: Matcher[][], start: number | null, end: number | null) {
  const found = new Map<string, { id: string; labels: Record<string, string> }>();
  for (const matchers of selectors) {
    for (const entry of await source.select(matchers)) {
      const key = `${entry.series._id}\u0000${entry.field}`;
      if (!found.has(key)) found.set(key, { id: entry.series._id, labels: entry.labels });
    }
  }
  let list = [...found.values()];
  if ((start !== null || end !== null) && list.length > 0) {
    const ids = [...new Set(list.map((entry) => entry.id))];
    const [firsts, lasts] = await Promise.all([source.engine.readingTimes(ids, 'first'), source.engine.readingTimes(ids, 'last')]);
    const spans = new Map(ids.map((id, i) => [id, { first: firsts[i]?.getTime() ?? null, last: lasts[i]?.getTime() ?? null }]));
    list = list.filter((entry) => {
      const span = spans.get(entry.id)!;
      if (span.first === null || span.last === null) return false;
      return (end === null || span.first <= end) && (start === null || span.last >= start);
    });
  }
  return list;
}

const sortedUnique = (values: Iterable<string>) => [...new Set(values)].sort();

/** `GET|POST /api/v1/series`: `match[]` (required), `start`, `end`. */
async function seriesLookup(request: Request, url: URL, context: QueryRouteContext): Promise<Response> {
  const { source, selectors, start, end } = await lookedUp(request, url, context, true);
  const list = await seriesOf(source, selectors, start, end);
  return success(
    list.map((entry) =>
      Object.fromEntries(
        Object.keys(entry.labels)
          .sort()
          .map((name) => [name, entry.labels[name]]),
      ),
    ),
  );
}

/** `GET|POST /api/v1/labels`: every label name (of the series of `match[]` when given). */
async function labelNames(request: Request, url: URL, context: QueryRouteContext): Promise<Response> {
  const { source, selectors, start, end } = await lookedUp(request, url, context, false);
  if (selectors.length === 0) {
    const metrics = await source.metrics();
    return success(sortedUnique(['__name__', ...metrics.flatMap((metric) => metric.tagKeys)]));
  }
  const list = await seriesOf(source, selectors, start, end);
  return success(sortedUnique(list.flatMap((entry) => Object.keys(entry.labels))));
}

/** `GET /api/v1/label/<name>/values`: the values of one label (of the series of `match[]` when given); `__name__` lists the names. */
async function labelValues(request: Request, url: URL, context: QueryRouteContext): Promise<Response> {
  const encoded = /^\/api\/v1\/label\/([^/]+)\/values$/.exec(url.pathname)![1]!;
  let name = decodeURIComponent(encoded);
  // Prometheus 3: `U__` and Unicode escapes spell names that are not classic label names.
  if (name.startsWith('U__'))
    name = name.slice(3).replace(/_([0-9a-fA-F]+)_/g, (_all, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)));
  const { source, selectors, start, end } = await lookedUp(request, url, context, false);
  if (selectors.length === 0) {
    if (name === '__name__') return success(sortedUnique((await source.namedFields()).map((field) => field.name)));
    const metrics = (await source.metrics()).filter((metric) => metric.tagKeys.includes(name));
    const values = await Promise.all(metrics.map((metric) => source.engine.tagValues(metric._id, name, [])));
    return success(sortedUnique(values.flat()));
  }
  const list = await seriesOf(source, selectors, start, end);
  return success(sortedUnique(list.flatMap((entry) => (entry.labels[name] === undefined ? [] : [entry.labels[name]!]))));
}

/** `GET /api/v1/metadata`: each name's type (`counter` for a metric declared a counter, else `gauge`), optionally of one `metric`, at most `limit`. */
async function metadata(request: Request, url: URL, context: QueryRouteContext): Promise<Response> {
  const access = await readAccess(request, url, context);
  const source = new PromSource(context.newEngine(request), access);
  const only = url.searchParams.get('metric');
  const limitText = url.searchParams.get('limit');
  const limit = limitText === null || limitText === '' ? Infinity : Number(limitText);
  const data: Record<string, { type: string; help: string; unit: string }[]> = {};
  for (const { metric, field } of await source.namedFields()) {
    const name = promName(metric._id, field);
    if (only !== null && only !== '' && name !== only) continue;
    if (Object.keys(data).length >= limit && limit > 0) break;
    data[name] = [{ type: metric.kind === 'counter' ? 'counter' : 'gauge', help: '', unit: '' }];
  }
  return success(data);
}

/** `GET /api/v1/status/buildinfo`: what Grafana asks after its health query. */
async function buildInfo(request: Request, url: URL, context: QueryRouteContext): Promise<Response> {
  await readAccess(request, url, context);
  return success({ version: PROMETHEUS_VERSION, revision: '', branch: '', buildUser: 'tsgraph', buildDate: '', goVersion: '' });
}

/** `GET|POST /api/v1/query_exemplars`: none are kept; an empty list, so Grafana's exemplar queries do not fail. */
async function exemplars(request: Request, url: URL, context: QueryRouteContext): Promise<Response> {
  await readAccess(request, url, context);
  return success([]);
}

/** The handlers of the query API by path (the label-values path is matched by its pattern, see {@link prometheusPath}). */
export const PROMETHEUS_HANDLERS = {
  '/api/v1/query': instantQuery,
  '/api/v1/query_range': rangeQuery,
  '/api/v1/series': seriesLookup,
  '/api/v1/labels': labelNames,
  '/api/v1/label/{name}/values': labelValues,
  '/api/v1/metadata': metadata,
  '/api/v1/status/buildinfo': buildInfo,
  '/api/v1/query_exemplars': exemplars,
} as const satisfies Record<string, (request: Request, url: URL, context: QueryRouteContext) => Promise<Response>>;

/** The route path of a request's path: itself, or `/api/v1/label/{name}/values` for a label's values. */
export function prometheusPath(pathname: string): string {
  return /^\/api\/v1\/label\/[^/]+\/values$/.test(pathname) ? '/api/v1/label/{name}/values' : pathname;
}

/** Runs a query-API handler, answering its errors in Prometheus' shape. */
export async function servePrometheus(request: Request, url: URL, context: QueryRouteContext): Promise<Response> {
  const handler = PROMETHEUS_HANDLERS[prometheusPath(url.pathname) as keyof typeof PROMETHEUS_HANDLERS];
  try {
    return await handler(request, url, context);
  } catch (error) {
    return promErrorAnswer(error, context, `${request.method} ${url.pathname}`);
  }
}
