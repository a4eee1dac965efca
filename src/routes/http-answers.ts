/**
 * What the plain HTTP routes (line-protocol and NDJSON writes, exports; see
 * `http-routes.ts`) share: the request's access from its token, checked by the same
 * authenticator as GraphQL requests; the refusal of writes from foreign web pages; and
 * errors as HTTP answers in the shape InfluxDB's v2 API gives them, carrying our stable
 * code as GraphQL errors do.
 */
import type { RecordOutcome } from '../engine/record-batch.ts';
import { GraphQLError } from 'graphql';
import { firstForbiddenMetric, forbiddenMessage, hasScope, OPEN_ACCESS, type Access } from '../auth/access.ts';
import type { Scope } from '../model/scopes.ts';
import { CodedError, ERROR_CODES, ErrorCode } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { isUnavailable, unavailable } from '../storage/failures.ts';
import { TOKEN_CACHE_MS } from '../auth/tokens.ts';
import { type AuthSettings, createAuthenticator } from '../auth/authenticate.ts';
import type { Store } from '../storage/store.ts';

/** InfluxDB's error `code` of an HTTP status (InfluxDB v2 API reference, error responses). */
const INFLUX_CODE_OF_STATUS: Record<number, string> = {
  400: 'invalid',
  401: 'unauthorized',
  403: 'forbidden',
  409: 'conflict',
  413: 'request too large',
  415: 'invalid',
  500: 'internal error',
  503: 'unavailable',
  504: 'unavailable',
};

/**
 * The HTTP status of an error meant for the client: the status the error sets itself,
 * else its code's (`ERROR_CODES` in `errors.ts`, the table the error-code reference is
 * generated from; e.g. 413 for BATCH_TOO_LARGE, which Telegraf answers by splitting its
 * batch in two).
 */
export function statusOf(error: CodedError): number {
  return error.httpStatus ?? ERROR_CODES[error.code].status;
}

/**
 * A client error as an HTTP answer: its status (see {@link statusOf}) and a JSON body
 * `{code, message, ...where, extensions: {code, inputPath?}}`: `code` and `message` as
 * InfluxDB v2 answers (`invalid`, `unauthorized`, ...; client libraries and Telegraf
 * show the message), `where` (e.g. `{line: 3, column: 17}`), and our stable code in
 * `extensions.code` as in GraphQL errors.
 */
export function errorAnswer(error: CodedError, where: Record<string, unknown> = {}): Response {
  const status = statusOf(error);
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (status === 401) headers['www-authenticate'] = 'Bearer realm="tsgraph"';
  const retryAfter = error.extensions.retryAfterSeconds;
  if (typeof retryAfter === 'number') headers['retry-after'] = String(retryAfter);
  const extensions = {
    code: error.code,
    ...(error.inputPath === undefined ? {} : { inputPath: error.inputPath }),
    ...(typeof retryAfter === 'number' ? { retryAfterSeconds: retryAfter } : {}),
  };
  const body = { code: INFLUX_CODE_OF_STATUS[status] ?? 'invalid', message: error.message, ...where, extensions };
  return new Response(JSON.stringify(body), { status, headers });
}

/**
 * An input error placed in the request body, for the plain HTTP writes: its message
 * starts with `line 3, column 17: ` (or `line 3: `), and the answer carries `line` and
 * `column` too.
 */
export class LocatedError extends CodedError {
  /** 1-based line, and column in characters when known. */
  readonly where: { line: number; column?: number };

  constructor(code: ErrorCode, where: { line: number; column?: number }, message: string) {
    super(code, `line ${where.line}${where.column === undefined ? '' : `, column ${where.column}`}: ${message}`);
    this.name = 'LocatedError';
    this.where = where;
  }
}

/** The CodedError behind `error`: itself, or the one a coded GraphQL error stands for. */
function codedErrorOf(error: unknown): CodedError | undefined {
  if (error instanceof CodedError) return error;
  if (error instanceof GraphQLError && typeof error.extensions.code === 'string') {
    const status = (error.extensions.http as { status?: number } | undefined)?.status;
    return new CodedError(error.extensions.code as ErrorCode, error.message, status === undefined ? {} : { httpStatus: status });
  }
  return undefined;
}

/** What the routes need besides the request. */
export interface RouteContext {
  store: Store;
  logger: Logger;
  /** Runs a write so a graceful shutdown can wait for it. */
  trackWrite: <T>(work: Promise<T>) => Promise<T>;
  /**
   * Told the readings of every acknowledged write that applied any (for live
   * subscriptions, see `events/live-events.ts`); called after `recordBatch` returned.
   */
  recorded?: (readings: readonly { metric: string; time: number }[]) => void;
  /** Told the outcome of every acknowledged write (for `/metrics`: readings recorded and already applied). */
  written?: (outcome: RecordOutcome) => void;
  /** Largest number of readings per request (`MAX_BATCH_SIZE`). */
  maxBatchSize: number;
  /** Largest body, as sent and once decompressed, in bytes (`MAX_BODY_BYTES`). */
  maxBodyBytes: number;
  /** Whether the database is known to be down (requests are then refused at once), and where to report that it is. */
  health?: { isDown(): boolean; reportFailure(reason: string): void };
  /**
   * The access of a request from its `Authorization` header (`Bearer <token>` or, as
   * InfluxDB clients send it, `Token <token>`).
   * @throws CodedError UNAUTHENTICATED (HTTP 401).
   */
  authenticate(request: Request): Promise<Access>;
}

/**
 * Builds the authentication of the routes from the app's settings: with `mode: 'off'`
 * every request has {@link OPEN_ACCESS}; otherwise the token is checked as for GraphQL
 * requests (`createAuthenticator`: same cache time, so a revocation applies as fast).
 */
export function routeAuthenticator(store: Store, settings: AuthSettings, logger: Logger): RouteContext['authenticate'] {
  if (settings.mode === 'off') return async () => OPEN_ACCESS;
  const authenticate = createAuthenticator(store, settings.cacheMs ?? TOKEN_CACHE_MS, logger);
  return async (request) => {
    const header = request.headers.get('authorization');
    try {
      return await authenticate(header?.replace(/^\s*Token +/i, 'Bearer ') ?? null);
    } catch (error) {
      throw codedErrorOf(error) ?? error;
    }
  };
}

/**
 * Refuses a request whose token lacks `scope`.
 * @throws CodedError FORBIDDEN naming the scope and the token's scopes.
 */
export function requireScope(access: Access, scope: Scope): void {
  if (!hasScope(access, scope)) {
    throw new CodedError(ErrorCode.FORBIDDEN, forbiddenMessage(access, [{ kind: 'scope', scope }]));
  }
}

/**
 * Refuses a request whose token may not touch one of `metrics`.
 * @throws CodedError FORBIDDEN naming the first such metric.
 */
export function requireMetrics(access: Access, metrics: readonly string[]): void {
  if (firstForbiddenMetric(access, metrics) !== undefined) {
    throw new CodedError(ErrorCode.FORBIDDEN, forbiddenMessage(access, [{ kind: 'metrics', metrics }]));
  }
}

/**
 * Refuses a write sent by a web page of another origin: browsers send `Origin` with
 * every cross-site POST, and a page may post a `text/plain` body (what InfluxDB
 * clients send) without a CORS preflight. Clients outside browsers send no `Origin`.
 * @param allowed the origins in `CORS_ORIGINS`.
 * @throws CodedError FORBIDDEN.
 */
export function refuseForeignPages(request: Request, allowed: readonly string[]): void {
  const origin = request.headers.get('origin');
  if (origin !== null && !allowed.includes(origin)) {
    throw new CodedError(
      ErrorCode.FORBIDDEN,
      `Writes from web pages of ${origin} are refused (only pages of the origins in CORS_ORIGINS may write from a browser)`,
    );
  }
}

/**
 * Any error of a route as the coded error its answer reports: a client error as it is
 * (see {@link codedErrorOf}); a driver error meaning the database is unreachable as
 * UNAVAILABLE (reported to the health tracker); anything else is logged and gives
 * undefined (the answer is then a masked INTERNAL_SERVER_ERROR, 500).
 */
export function clientErrorOf(error: unknown, context: Pick<RouteContext, 'logger' | 'health'>, where?: string): CodedError | undefined {
  const coded = codedErrorOf(error);
  if (coded) return coded;
  if (isUnavailable(error)) {
    context.health?.reportFailure(`a request to ${where ?? 'a route'} could not reach the database`);
    return unavailable('The request could not be completed');
  }
  context.logger.error({ err: error }, `Unexpected error in ${where ?? 'a route'}`);
  return undefined;
}

/**
 * Any error of a route as an HTTP answer: a client error as {@link errorAnswer} (with
 * the `line` and `column` of a {@link LocatedError}); a
 * driver error meaning the database is unreachable as UNAVAILABLE (503, reported to the
 * health tracker); anything else logged and masked as INTERNAL_SERVER_ERROR (500).
 */
export function answerToError(error: unknown, context: Pick<RouteContext, 'logger' | 'health'>, where?: string): Response {
  const coded = clientErrorOf(error, context, where);
  if (coded) return errorAnswer(coded, coded instanceof LocatedError ? coded.where : {});
  const body = { code: 'internal error', message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  return new Response(JSON.stringify(body), { status: 500, headers: { 'content-type': 'application/json; charset=utf-8' } });
}
