import { ERROR_CODES } from '../errors.ts';
import { createYoga, useReadinessCheck, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from '../logger.ts';
import type { Context } from '../graphql/context.ts';
import { schema } from '../graphql/schema.ts';
import type { Store } from '../storage/store.ts';
import { useErrorCodes } from './error-codes.ts';
import { loadConfig } from '../config.ts';
import { authSettings, type AuthSettings } from '../auth/authenticate.ts';
import { createAccessControl } from './access-control.ts';
import { DatabaseHealth } from '../observability/database-health.ts';
import { useDatabaseGate } from './database-gate.ts';
import { createMaskError } from './mask-error.ts';
import { useReadsExtension } from './reads-extension.ts';
import { QueryEngine } from '../engine/engine.ts';
import { useHttpRoutes } from '../routes/http-routes.ts';
import { DEFAULT_REQUEST_LIMITS, useBodyLimit, useDocumentLimits, useOneErrorPerRefusal, type RequestLimits } from './limits.ts';
import { createGraphiQLRenderer, graphiqlOptions } from '../routes/graphiql.ts';
import { instrumentApp, type ServerMetrics } from '../observability/metrics.ts';
import { LiveEvents } from '../events/live-events.ts';
import { useCacheHeaders } from './cache-headers.ts';
import type { OtlpMappingOptions } from '../receivers/otlp.ts';

/** What the GraphQL server needs. */
export interface AppOptions {
  store: Store;
  logger: Logger;
  limits: Context['limits'];
  /** Wraps writes so a graceful shutdown can wait for them (default: no tracking). */
  trackWrite?: Context['trackWrite'];
  /**
   * Authentication and CORS (see `access-control.ts`). Omitted: the secure defaults
   * (tokens required, no CORS origin).
   */
  auth?: AuthSettings;
  /**
   * Whether the database is down, for `/ready` and for refusing requests at once
   * (default: one on `store.client` without an embedded supervisor, closed with the app).
   */
  health?: DatabaseHealth;
  /** Per-request limits besides `limits` (default: the configuration's defaults, see `limits.ts`). */
  requestLimits?: Partial<RequestLimits>;
  /** GraphQL requests at least this long are logged, in milliseconds (default: SLOW_QUERY_MS's default, 1,000). */
  slowQueryMs?: number;
  /**
   * Within this time the slow-query log writes one line per operation name, in
   * milliseconds (default 10,000; see `observability/slow-queries.ts`).
   */
  slowQueryIntervalMs?: number;
  /** The metrics `/metrics` serves (default: new ones for this app; see `observability/metrics.ts`). */
  metrics?: ServerMetrics;
  /**
   * Live subscriptions (see `events/live-events.ts`): the feed of new readings (default: one of
   * this app's own writes, closed with the app) and the shortest time between two pushes
   * of a subscription in ms (default: LIVE_MIN_INTERVAL_MS's default, 1,000).
   */
  live?: { events?: LiveEvents; minIntervalMs?: number };
  /** How OTLP metrics become readings (default: `OTLP_RESOURCE_ATTRIBUTES`' default; see `receivers/otlp.ts`). */
  otlp?: OtlpMappingOptions;
}

/**
 * Builds the graphql-yoga instance: the schema, a context per request, GraphiQL at
 * `/graphql` (served whole by this server, see `routes/graphiql.ts`), `/health` (always
 * 200 while the process runs), `/ready` (503 at once while the database is known to be
 * down, or when it does not answer a ping in time) and `/metrics` (Prometheus, see
 * `observability/metrics.ts`; GraphQL requests slower than `slowQueryMs` are logged).
 * While the database is down, operations are answered with UNAVAILABLE without running
 * (see `observability/database-health.ts` and `database-gate.ts`). Driver errors meaning
 * the database is unreachable become UNAVAILABLE, other unexpected errors are masked and
 * logged (`mask-error.ts`); input errors carry a stable `extensions.code`. GraphQL
 * requests need an API token unless `auth.mode` is `off`; see `access-control.ts` for
 * CORS and the CSRF checks. Every request is held to its limits (see `limits.ts`): body
 * size, document depth, aliases, tokens and directives before execution; buckets, series
 * and tag-filter values by a budget of its own before any pipeline runs; a time limit on
 * every database read, which the request's abort signal also cancels when the client
 * goes away. Subscriptions (`subscription { buckets }`) are served over Server-Sent
 * Events and fed by `live.events` (see `events/live-events.ts`); GET query answers carry
 * an ETag and are revalidated, other answers are `no-store` (see `cache-headers.ts`).
 */
export function createApp(options: AppOptions): YogaServerInstance<Record<string, unknown>, Context> {
  const trackWrite = options.trackWrite ?? ((work) => work);
  const ownHealth = options.health ? undefined : new DatabaseHealth({ client: options.store.client, logger: options.logger });
  const health = options.health ?? ownHealth!;
  const auth = options.auth ?? authSettings(loadConfig({}));
  const access = createAccessControl(options.store, auth, options.logger);
  const instruments = instrumentApp({
    schema,
    store: options.store,
    auth,
    logger: options.logger,
    isDown: () => health.isDown(),
    slowQueryMs: options.slowQueryMs ?? loadConfig({}).SLOW_QUERY_MS,
    slowQueryIntervalMs: options.slowQueryIntervalMs,
    metrics: options.metrics,
  });
  const requestLimits: RequestLimits = { ...DEFAULT_REQUEST_LIMITS, ...options.requestLimits };
  const queryLimits = {
    maxBuckets: options.limits.maxBuckets,
    maxSeries: requestLimits.maxSeries,
    maxFilterValues: requestLimits.maxFilterValues,
  };
  const ownLive = options.live?.events ? undefined : new LiveEvents(options.logger);
  const liveEvents = options.live?.events ?? ownLive!;
  const live = { events: liveEvents, minIntervalMs: options.live?.minIntervalMs ?? loadConfig({}).LIVE_MIN_INTERVAL_MS };
  const newEngine = (request: Request) =>
    new QueryEngine(
      options.store,
      queryLimits,
      { maxTimeMS: requestLimits.queryTimeoutMs, signal: request.signal },
      instruments.observePipeline,
    );
  return createYoga<Record<string, unknown>, Context>({
    schema: instruments.schema,
    context: ({ request }): Context => ({
      store: options.store,
      logger: options.logger,
      limits: options.limits,
      trackWrite,
      access: access.accessOf(request),
      engine: newEngine(request),
      live: { ...live, newEngine: () => newEngine(request) },
    }),
    // Replaced by useBodyLimit, which answers REQUEST_TOO_LARGE.
    maxRequestBodySize: false,
    graphiql: graphiqlOptions(access.graphiqlHeaders),
    renderGraphiQL: createGraphiQLRenderer(),
    landingPage: false,
    cors: access.cors,
    // File uploads are not used; multipart bodies are refused (see access-control.ts).
    multipart: false,
    maskedErrors: {
      maskError: createMaskError({
        onUnavailable: () => {
          instruments.onUnavailable();
          health.reportFailure('an operation could not reach the database');
        },
      }),
    },
    logging: {
      debug: (...args) => options.logger.debug(args.map(String).join(' ')),
      info: (...args) => options.logger.info(args.map(String).join(' ')),
      warn: (...args) => options.logger.warn(args.map(String).join(' ')),
      error: (...args) => {
        const err = args.find((arg) => arg instanceof Error) as (Error & { extensions?: { code?: unknown } }) | undefined;
        // yoga logs every error that sets an HTTP status of 500 or more. One of ours with a
        // stable code (INGEST_BACKLOG's 503) was meant for the client and says what to do:
        // not a server fault. Unexpected errors are masked and logged as before.
        const code = err?.extensions?.code;
        if (typeof code === 'string' && code in ERROR_CODES) options.logger.debug({ err }, err!.message);
        else options.logger.error({ err }, args.map(String).join(' '));
      },
    },
    plugins: [
      ...instruments.plugins,
      // POST /api/v2/write (line protocol), POST /api/readings (NDJSON), POST /v1/metrics (OTLP),
      // POST /api/v1/write (Prometheus remote write), GET /export (CSV, NDJSON), the InfluxDB 1.x
      // API (/query, /write, /ping) and Prometheus' query API (/api/v1/query, ...).
      useHttpRoutes({
        store: options.store,
        logger: options.logger,
        auth,
        trackWrite,
        health,
        recorded: (readings) => liveEvents.recorded(readings),
        metrics: instruments.metrics,
        otlp: options.otlp ?? { resourceAttributes: loadConfig({}).OTLP_RESOURCE_ATTRIBUTES },
        ...options.limits,
        ...requestLimits,
        observePipeline: instruments.observePipeline,
      }),
      ...access.plugins,
      useBodyLimit(requestLimits.maxBodyBytes),
      ...useDocumentLimits(requestLimits),
      useOneErrorPerRefusal(),
      useErrorCodes(),
      useReadsExtension(),
      useDatabaseGate(health),
      useReadinessCheck({ endpoint: '/ready', check: () => health.ready() }),
      useCacheHeaders(),
      { onDispose: () => ownHealth?.close() },
      { onDispose: () => ownLive?.close() },
    ],
  });
}
