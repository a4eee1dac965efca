/**
 * The plain HTTP routes beside `/graphql`, as one graphql-yoga plugin (its `onRequest`
 * answers them before yoga looks for a GraphQL request; CORS and the shutdown refusal
 * apply as to every request):
 * - `POST /api/v2/write`: InfluxDB line protocol (`ingest.ts`);
 * - `POST /api/readings`: NDJSON readings (`ingest.ts`);
 * - `POST /v1/metrics`: OpenTelemetry metrics over OTLP/HTTP (`receivers.ts`);
 * - `POST /api/v1/write`: Prometheus remote write 1.0 (`receivers.ts`);
 * - `GET /export`: a query's answer as CSV or NDJSON (`export.ts`);
 * - `GET|POST /query`, `POST /write`, `GET /ping`: the InfluxDB 1.x API, InfluxQL queries
 *   and v1 line-protocol writes (`influxdb.ts`);
 * - `GET|POST /api/v1/query`, `/api/v1/query_range` and the look-ups of Prometheus' HTTP
 *   query API (`prometheus.ts`);
 * - `GET /dashboard` and its script and style sheet (`dashboard.ts`).
 * Writes are refused at once while the database is known to be down, and from web
 * pages of foreign origins.
 */
import type { Plugin, YogaServer } from 'graphql-yoga';
import { unavailable } from '../storage/failures.ts';
import type { Logger } from '../logger.ts';
import type { Store } from '../storage/store.ts';
import type { AuthSettings } from '../auth/authenticate.ts';
import { DASHBOARD_PATHS, serveDashboard } from './dashboard.ts';
import { exportTable } from './export.ts';
import { answerToError, refuseForeignPages, routeAuthenticator, type RouteContext } from './http-answers.ts';
import { writeLineProtocol, writeNdjson } from './ingest.ts';
import { counterDeclarations, otlpErrorAnswer, writeOtlp, writeRemote, type ReceiverContext } from './receivers.ts';
import type { OtlpMappingOptions } from '../receivers/otlp.ts';
import { codeOfError, type ServerMetrics } from '../observability/metrics.ts';
import { QueryEngine } from '../engine/engine.ts';
import type { PipelineObserver } from '../engine/loader.ts';
import { influxErrorAnswer, INFLUXDB_HANDLERS } from './influxdb.ts';
import { PROMETHEUS_HANDLERS, prometheusPath, servePrometheus, type QueryRouteContext } from './prometheus.ts';

/** One plain HTTP route as the reference page lists it (docs/reference/http-routes.md). */
export interface HttpRouteInfo {
  method: 'GET' | 'POST' | 'GET, POST';
  path: string;
  /** The token scope the route needs (see `model/scopes.ts`), or how it is reached without one. */
  access: string;
  /** What the request carries. */
  takes: string;
  /** What a success answers. */
  answers: string;
  /** The page that describes it, as `docs/<page>.md#<anchor>`. */
  page: string;
}

/**
 * Every plain HTTP route {@link useHttpRoutes} serves, with what the reference page says
 * of it; the handlers are keyed by these paths, so a route cannot be served without
 * being listed (the dashboard's script and style sheet are served under its path).
 */
export const HTTP_ROUTES = [
  {
    method: 'POST',
    path: '/api/v2/write',
    access: '`write`',
    takes: 'InfluxDB line protocol (`?precision=ns|us|ms|s`), gzip or not; `Idempotency-Key`',
    answers: '204',
    page: 'docs/recording.md#line-protocol',
  },
  {
    method: 'POST',
    path: '/api/readings',
    access: '`write`',
    takes: 'NDJSON readings (`application/x-ndjson`), gzip or not; `Idempotency-Key`',
    answers: '200, JSON `{batchId, recorded, applied, alreadyApplied, series, documents}`',
    page: 'docs/recording.md#ndjson-ingest',
  },
  {
    method: 'POST',
    path: '/v1/metrics',
    access: '`write`',
    takes: 'an OTLP `ExportMetricsServiceRequest`, protobuf or JSON, gzip or not',
    answers: "200, an `ExportMetricsServiceResponse` (partial success) in the request's encoding",
    page: 'docs/opentelemetry.md#answers-and-what-is-refused',
  },
  {
    method: 'POST',
    path: '/api/v1/write',
    access: '`write`',
    takes: 'a Prometheus remote write 1.0 `WriteRequest`, snappy-compressed protobuf',
    answers: '204',
    page: 'docs/prometheus-remote-write.md#answers-and-what-is-refused',
  },
  {
    method: 'GET',
    path: '/export',
    access: 'what the exported query needs (`read`)',
    takes: '`?query=..&variables=..&format=csv|ndjson`',
    answers: '200, CSV or NDJSON',
    page: 'docs/export.md',
  },
  {
    method: 'GET, POST',
    path: '/query',
    access: '`read` (`write` for `CREATE DATABASE`)',
    takes: 'InfluxQL: `?q=..&db=..&epoch=ms` (or a form body), user and password or a token',
    answers: '200, JSON `{results: [{statement_id, series | error}]}`',
    page: 'docs/grafana-influxdb.md#what-is-supported',
  },
  {
    method: 'POST',
    path: '/write',
    access: '`write`',
    takes: 'InfluxDB line protocol (`?db=..&precision=ns|u|ms|s|m|h`), gzip or not; user and password or a token',
    answers: '204',
    page: 'docs/grafana-influxdb.md#writing-v1-line-protocol',
  },
  {
    method: 'GET',
    path: '/ping',
    access: 'none',
    takes: '',
    answers: '204 with `X-Influxdb-Version`',
    page: 'docs/grafana-influxdb.md#what-is-supported',
  },
  ...(
    [
      ['/api/v1/query', 'GET, POST', '`?query=..&time=..` (or a form body)', '200, `{status, data: {resultType: vector|scalar, result}}`'],
      [
        '/api/v1/query_range',
        'GET, POST',
        '`?query=..&start=..&end=..&step=..` (or a form body)',
        '200, `{status, data: {resultType: matrix, result}}`',
      ],
      ['/api/v1/series', 'GET, POST', '`match[]`, `start`, `end`', '200, `{status, data: [labels]}`'],
      ['/api/v1/labels', 'GET, POST', '`match[]`, `start`, `end` (optional)', '200, `{status, data: [names]}`'],
      ['/api/v1/label/{name}/values', 'GET', '`match[]`, `start`, `end` (optional)', '200, `{status, data: [values]}`'],
      ['/api/v1/metadata', 'GET', '`metric`, `limit` (optional)', '200, `{status, data: {name: [{type}]}}`'],
      ['/api/v1/status/buildinfo', 'GET', '', '200, `{status, data: {version}}`'],
      ['/api/v1/query_exemplars', 'GET, POST', '`query`, `start`, `end`', '200, `{status, data: []}` (no exemplars are kept)'],
    ] as const
  ).map(([path, method, takes, answers]) => ({
    method,
    path,
    access: '`read`',
    takes,
    answers,
    page: 'docs/grafana-prometheus.md#what-is-supported',
  })),
  {
    method: 'GET',
    path: DASHBOARD_PATHS.page,
    access: 'none for the page; its queries send a token',
    takes: '',
    answers: '200, the dashboard page (and its script and style sheet below it)',
    page: 'docs/dashboard-and-graphiql.md#dashboard',
  },
] as const satisfies readonly HttpRouteInfo[];

/** What the routes need from the app (see `createApp` in `server/yoga.ts`). */
export interface HttpRouteOptions {
  store: Store;
  logger: Logger;
  auth: AuthSettings;
  trackWrite: RouteContext['trackWrite'];
  health?: RouteContext['health'];
  /** Told the readings of every acknowledged write (live subscriptions). */
  recorded?: RouteContext['recorded'];
  /** Counts the routes' requests and the readings they store (`/metrics`); optional. */
  metrics?: ServerMetrics;
  /** `MAX_BATCH_SIZE`, `MAX_BODY_BYTES`, `MAX_TOKENS`. */
  maxBatchSize: number;
  maxBodyBytes: number;
  maxTokens: number;
  /** How OTLP metrics become readings (`OTLP_RESOURCE_ATTRIBUTES`). */
  otlp: OtlpMappingOptions;
  /** The query routes' per-request budget and time limit: `MAX_BUCKETS`, `MAX_SERIES`, `MAX_FILTER_VALUES`, `QUERY_TIMEOUT_MS`. */
  maxBuckets: number;
  maxSeries: number;
  maxFilterValues: number;
  queryTimeoutMs: number;
  /** Told the time of every pipeline of the query routes (the server's metrics); optional. */
  observePipeline?: PipelineObserver;
}

/**
 * The plugin serving the write and export routes. Each answers errors as JSON
 * `{code, message, extensions: {code}}` (see `http-answers.ts`); other paths and
 * methods pass on to graphql-yoga.
 */
export function useHttpRoutes(options: HttpRouteOptions): Plugin {
  const context: ReceiverContext = {
    store: options.store,
    logger: options.logger,
    trackWrite: options.trackWrite,
    health: options.health,
    recorded: options.recorded,
    written: options.metrics === undefined ? undefined : (outcome) => options.metrics!.recorded(outcome),
    maxBatchSize: options.maxBatchSize,
    maxBodyBytes: options.maxBodyBytes,
    authenticate: routeAuthenticator(options.store, options.auth, options.logger),
    otlp: options.otlp,
    counters: counterDeclarations(),
    dropped:
      options.metrics === undefined
        ? undefined
        : (receiver, reason, count) => options.metrics!.receiverDropped.inc({ receiver, reason }, count),
  };
  type Yoga = YogaServer<Record<string, unknown>, Record<string, unknown>>;
  let graphql: Yoga | undefined;
  const queries: QueryRouteContext = {
    ...context,
    newEngine: (request) =>
      new QueryEngine(
        options.store,
        { maxBuckets: options.maxBuckets, maxSeries: options.maxSeries, maxFilterValues: options.maxFilterValues },
        { maxTimeMS: options.queryTimeoutMs, signal: request.signal },
        options.observePipeline,
      ),
  };

  const write = async (request: Request, handle: () => Promise<Response>): Promise<Response> => {
    refuseForeignPages(request, options.auth.corsOrigins);
    if (options.health?.isDown()) throw unavailable('The readings were not stored');
    return handle();
  };
  type Handler = (request: Request, url: URL, serverContext: Parameters<Yoga['handle']>[1]) => Promise<Response>;
  /** A route's handler, and how its errors are answered (default: `answerToError`, JSON). */
  type Route = { handle: Handler; answerError?: (error: unknown, request: Request) => Response };
  const handlers: Record<(typeof HTTP_ROUTES)[number]['path'], Route> = {
    '/api/v2/write': { handle: (request, url) => write(request, () => writeLineProtocol(request, url, context)) },
    '/api/readings': { handle: (request) => write(request, () => writeNdjson(request, context)) },
    '/v1/metrics': {
      handle: (request) => write(request, () => writeOtlp(request, context)),
      answerError: (error, request) => otlpErrorAnswer(error, request, context),
    },
    '/api/v1/write': { handle: (request) => write(request, () => writeRemote(request, context)) },
    '/export': {
      handle: (request, url, serverContext) =>
        exportTable(request, url, context, {
          runGraphQL: async (inner) => graphql!.handle(inner, serverContext),
          maxTokens: options.maxTokens,
        }),
    },
    '/query': {
      handle: (request, url) => INFLUXDB_HANDLERS['/query'](request, url, queries),
      answerError: (error, request) => influxErrorAnswer(error, queries, `${request.method} /query`),
    },
    '/write': {
      handle: (request, url) => write(request, () => INFLUXDB_HANDLERS['/write'](request, url, queries)),
      answerError: (error, request) => influxErrorAnswer(error, queries, `${request.method} /write`),
    },
    '/ping': { handle: (request, url) => INFLUXDB_HANDLERS['/ping'](request, url, queries) },
    ...(Object.fromEntries(
      Object.keys(PROMETHEUS_HANDLERS).map((path): [string, Route] => [
        path,
        { handle: (request, url) => servePrometheus(request, url, queries) },
      ]),
    ) as Record<keyof typeof PROMETHEUS_HANDLERS, Route>),
    [DASHBOARD_PATHS.page]: { handle: async (_request, url) => (await serveDashboard(url.pathname))! },
  };
  const routes: Record<string, Route & { method: string }> = {};
  for (const info of HTTP_ROUTES) routes[info.path] = { method: info.method, ...handlers[info.path] };
  for (const path of [DASHBOARD_PATHS.script, DASHBOARD_PATHS.style, `${DASHBOARD_PATHS.page}/`]) {
    routes[path] = routes[DASHBOARD_PATHS.page]!;
  }

  return {
    onYogaInit({ yoga }) {
      graphql = yoga;
    },
    async onRequest({ request, url, endResponse, serverContext }) {
      const path = prometheusPath(url.pathname);
      const route = routes[path];
      if (!route?.method.split(', ').includes(request.method)) return;
      const routeLabel = url.pathname.startsWith(DASHBOARD_PATHS.page) ? DASHBOARD_PATHS.page : path;
      try {
        endResponse(await route.handle(request, url, serverContext));
        options.metrics?.httpRequests.inc({ route: routeLabel, code: 'OK' });
      } catch (error) {
        options.metrics?.httpRequests.inc({ route: routeLabel, code: codeOfError(error) });
        endResponse(route.answerError?.(error, request) ?? answerToError(error, context, `${request.method} ${url.pathname}`));
      }
    },
  };
}
