/**
 * InfluxDB 1.x's HTTP API, as Grafana's InfluxDB data source (InfluxQL), the InfluxDB 1.x
 * client libraries and Telegraf's `outputs.influxdb` call it:
 * - `GET|POST /query?db=..&q=..&epoch=ms[&rp=..]`: InfluxQL statements (`influxql/`),
 *   one result each, in InfluxDB's shape; needs the `read` scope (`CREATE DATABASE`,
 *   accepted and doing nothing, the `write` scope);
 * - `POST /write?db=..&precision=..`: v1 line protocol, written by the same path as
 *   `POST /api/v2/write` (`ingest.ts`: the same validation, batch ids, limits and token
 *   rules);
 * - `GET /ping`: 204 with `X-Influxdb-Version`, what clients check a server with.
 * The token comes as InfluxDB 1.x clients send a password (`p`, Basic authentication),
 * or as `Authorization: Token` (see `credentials.ts`). `db` and `rp` may name anything:
 * every metric is in the one database, under the one retention policy `autogen`.
 */
import { hasScope } from '../auth/access.ts';
import { CodedError, ErrorCode } from '../errors.ts';
import { executeStatement } from '../influxql/execute.ts';
import { InfluxQLError, parseInfluxQL } from '../influxql/parse.ts';
import { authorizationOf, withAuthorization } from './credentials.ts';
import { clientErrorOf, requireScope, statusOf, type RouteContext } from './http-answers.ts';
import { readBody, writeLineProtocol } from './ingest.ts';
import type { QueryRouteContext } from './prometheus.ts';
import { StatementError, type StatementResult } from '../influxql/context.ts';

/** The InfluxDB version the API answers as: the last 1.x release's API, which Grafana and the clients speak. */
export const INFLUXDB_VERSION = '1.8.10';

/** The database name `SHOW DATABASES` lists when the request names none. */
export const DEFAULT_DATABASE = 'tsgraph';

/** Headers InfluxDB 1.x sends with every answer. */
const VERSION_HEADERS = { 'x-influxdb-version': INFLUXDB_VERSION, 'x-influxdb-build': 'OSS' };

/** A JSON answer with InfluxDB's headers. */
function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...VERSION_HEADERS, ...headers },
  });
}

/**
 * Any error of `/query` or `/write` as InfluxDB 1.x answers it: `{"error": "..."}` with
 * the status of its code (401 for a missing or unknown token, 403 for a missing scope or
 * prefix, 400 for bad input, 413, 503), our stable code in `code`; anything unexpected
 * logged and masked (500).
 */
export function influxErrorAnswer(error: unknown, context: Pick<RouteContext, 'logger' | 'health'>, where: string): Response {
  if (error instanceof InfluxQLError) return json({ error: `error parsing query: ${error.message}` }, 400);
  const coded = clientErrorOf(error, context, where);
  if (coded === undefined) return json({ error: 'Unexpected error.', code: 'INTERNAL_SERVER_ERROR' }, 500);
  const status = statusOf(coded);
  const retryAfter = coded.extensions.retryAfterSeconds;
  return json(
    { error: coded.message, code: coded.code },
    status,
    typeof retryAfter === 'number'
      ? { 'retry-after': String(retryAfter) }
      : status === 401
        ? { 'www-authenticate': 'Basic realm="tsgraph"' }
        : {},
  );
}

/** The parameters of a `/query` request: the query string and, for a form POST, the form. */
async function queryParameters(request: Request, url: URL, maxBytes: number): Promise<URLSearchParams> {
  const parameters = new URLSearchParams(url.searchParams);
  if (request.method === 'POST') {
    const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type === 'application/x-www-form-urlencoded' || type === '') {
      for (const [name, value] of new URLSearchParams(await readBody(request, maxBytes))) parameters.set(name, value);
    } else if (type === 'application/vnd.influxql' || type === 'text/plain') {
      parameters.set('q', await readBody(request, maxBytes));
    } else {
      throw new CodedError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, `POST /query takes a form (application/x-www-form-urlencoded), not ${type}`);
    }
  }
  return parameters;
}

/** The message of a statement's failure as its result's `error`, or undefined for an unexpected error (answered 500). */
function statementMessage(error: unknown, context: Pick<RouteContext, 'logger' | 'health'>): string | undefined {
  if (error instanceof StatementError) return error.message;
  const coded = clientErrorOf(error, context, 'an InfluxQL statement');
  if (coded === undefined || coded.code === ErrorCode.UNAVAILABLE || coded.code === ErrorCode.UNAUTHENTICATED) return undefined;
  return `${coded.message} (${coded.code})`;
}

/**
 * `GET|POST /query`: runs each statement of `q` in turn with one query engine (the
 * request's budget and time limit shared, as for one GraphQL request); a statement that
 * fails has `error` in its result and the others still run. A `q` that does not parse is
 * answered 400 as InfluxDB does, without running anything.
 */
async function query(request: Request, url: URL, context: QueryRouteContext): Promise<Response> {
  const parameters = await queryParameters(request, url, context.maxBodyBytes);
  const credentials = new URL(url);
  for (const name of ['u', 'p']) if (parameters.has(name)) credentials.searchParams.set(name, parameters.get(name)!);
  const access = await context.authenticate(withAuthorization(authorizationOf(request, credentials)));
  const text = parameters.get('q');
  if (text === null || text.trim() === '') return json({ error: 'missing required parameter "q"' }, 400);
  const statements = parseInfluxQL(text);
  if (statements.some((statement) => statement.kind !== 'createDatabase')) requireScope(access, 'read');
  const epoch = parameters.get('epoch');
  if (epoch !== null && epoch !== '' && !['ns', 'n', 'u', 'µ', 'ms', 's', 'm', 'h'].includes(epoch)) {
    return json({ error: `invalid epoch ${JSON.stringify(epoch)}: use ns, u, ms, s, m or h` }, 400);
  }
  const engine = context.newEngine(request);
  const execution = {
    engine,
    access,
    now: Date.now(),
    epoch: epoch === null || epoch === '' ? null : epoch === 'n' ? 'ns' : epoch,
    database: parameters.get('db') || DEFAULT_DATABASE,
    mayWrite: hasScope(access, 'write'),
  };
  const results: StatementResult[] = [];
  for (const [i, statement] of statements.entries()) {
    try {
      const series = await executeStatement(statement, execution);
      results.push(series.length === 0 ? { statement_id: i } : { statement_id: i, series });
    } catch (error) {
      const message = statementMessage(error, context);
      if (message === undefined) throw error;
      results.push({ statement_id: i, error: message });
    }
  }
  return json({ results });
}

/** v1 precisions as the v2 write path names them. */
const PRECISIONS: Record<string, string> = { n: 'ns', ns: 'ns', u: 'us', µ: 'us', us: 'us', ms: 'ms', s: 's' };

/**
 * `POST /write?db=..&rp=..&precision=n|ns|u|ms|s`: v1 line protocol, recorded exactly as
 * `POST /api/v2/write` records it (see `writeLineProtocol`), with the token from the v1
 * credentials.
 * @returns 204 once stored.
 * @throws CodedError as `writeLineProtocol`; INVALID_ARGUMENT for the precisions `m` and `h`.
 */
async function write(request: Request, url: URL, context: QueryRouteContext): Promise<Response> {
  const precision = url.searchParams.get('precision') || 'ns';
  const mapped = PRECISIONS[precision];
  if (mapped === undefined) {
    throw new CodedError(ErrorCode.INVALID_ARGUMENT, `precision must be n, ns, u, ms or s, not ${JSON.stringify(precision)}.`);
  }
  const target = new URL('/api/v2/write', url);
  target.searchParams.set('precision', mapped);
  for (const name of ['nonNumeric']) if (url.searchParams.has(name)) target.searchParams.set(name, url.searchParams.get(name)!);
  const headers = new Headers(request.headers);
  const authorization = authorizationOf(request, url);
  if (authorization === null) headers.delete('authorization');
  else headers.set('authorization', authorization);
  const inner = new Request(target, {
    method: 'POST',
    headers,
    body: request.body,
    signal: request.signal,
    // @ts-expect-error `duplex` is required by fetch for a streamed body but missing from the DOM types
    duplex: 'half',
  });
  const answer = await writeLineProtocol(inner, target, context);
  return new Response(null, { status: answer.status, headers: VERSION_HEADERS });
}

/** `GET /ping`: 204 with the version headers (`?verbose=true`: 200 with `{"version"}`). */
async function ping(_request: Request, url: URL, _context: QueryRouteContext): Promise<Response> {
  if (url.searchParams.get('verbose') === 'true') return json({ version: INFLUXDB_VERSION });
  return new Response(null, { status: 204, headers: VERSION_HEADERS });
}

/** The handlers of the InfluxDB 1.x routes by path. */
export const INFLUXDB_HANDLERS = {
  '/query': query,
  '/write': write,
  '/ping': ping,
} as const satisfies Record<string, (request: Request, url: URL, context: QueryRouteContext) => Promise<Response>>;
