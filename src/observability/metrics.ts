/**
 * What the server counts and times, for Prometheus: `GET /metrics` answers in the
 * Prometheus text format (prom-client), and GraphQL requests slower than SLOW_QUERY_MS
 * are logged (`slow-queries.ts`). The metric names, labels and the token rule are listed in
 * docs/operations.md, "Metrics". Nothing here changes an answer: the plugins only watch requests,
 * and the record mutations are wrapped to count what they return or throw.
 */
import {
  GraphQLError,
  GraphQLObjectType,
  GraphQLSchema,
  Kind,
  getOperationAST,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLFieldConfig,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { MongoClient, ServerDescriptionChangedEvent } from 'mongodb';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { hasScope, type Access } from '../auth/access.ts';
import { type AuthSettings, createAuthenticator } from '../auth/authenticate.ts';
import { hashToken, parseAuthorization, TOKEN_CACHE_MS } from '../auth/tokens.ts';
import type { PipelineRun } from '../engine/loader.ts';
import type { RecordOutcome } from '../engine/record-batch.ts';
import { CodedError, ErrorCode } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { isUnavailable } from '../storage/failures.ts';
import type { FoldOutcome } from '../storage/fold.ts';
import { measureBacklog, NO_BACKLOG, type Backlog } from '../storage/ingest-log.ts';
import { SlowQueryLog } from './slow-queries.ts';
import type { Store } from '../storage/store.ts';

/** Where the metrics are served. */
export const METRICS_PATH = '/metrics';

/**
 * Most distinct operation names the request metrics keep apart; later names are counted
 * as `other`, so a client inventing names cannot grow the scrape without bound.
 */
export const MAX_OPERATION_LABELS = 200;

/** Upper bounds of the latency histograms, in seconds: 5 ms to 30 s. */
const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

let processRegistry: Registry | undefined;

/**
 * The process metrics of prom-client's `collectDefaultMetrics` (CPU, memory, heap, event
 * loop lag, garbage collection, open handles), registered once per process however many
 * apps it runs.
 */
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * The metrics of one app (see docs/operations.md, "Metrics" for each name and label). One instance
 * per `createApp`; the process metrics are shared.
 */
export class ServerMetrics {
  readonly registry = new Registry();
  /** GraphQL requests by operation name and outcome code (`OK` or the first error's `extensions.code`). */
  readonly requests = new Counter({
    name: 'tsgraph_graphql_requests_total',
    help: 'GraphQL requests answered, by operation name and outcome code (OK, or the extensions.code of the first error)',
    labelNames: ['operation', 'code'] as const,
    registers: [this.registry],
  });
  /** Time from the request's arrival to its answer being ready, in seconds. */
  readonly requestSeconds = new Histogram({
    name: 'tsgraph_graphql_request_duration_seconds',
    help: 'Time from the arrival of a GraphQL request to its answer, in seconds, by operation name and outcome code',
    labelNames: ['operation', 'code'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  /** Requests of the plain HTTP routes (line protocol, NDJSON, export, dashboard), by route and outcome code. */
  readonly httpRequests = new Counter({
    name: 'tsgraph_http_requests_total',
    help: 'Requests of the HTTP routes beside /graphql (/api/v2/write, /api/readings, /v1/metrics, /api/v1/write, /export, /dashboard), by route and outcome code (OK or the error code)',
    labelNames: ['route', 'code'] as const,
    registers: [this.registry],
  });

  /** Readings the record mutations applied (stored by this call). */
  readonly readingsRecorded = new Counter({
    name: 'tsgraph_readings_recorded_total',
    help: 'Readings stored by recordReading, recordReadings, /api/v2/write, /api/readings, /v1/metrics and /api/v1/write (applied by the call that answered)',
    registers: [this.registry],
  });
  /** Readings of retried batches that an earlier call had already stored. */
  readonly readingsAlreadyApplied = new Counter({
    name: 'tsgraph_readings_already_applied_total',
    help: 'Readings of a retried batch (same batchId) that an earlier call had already stored, so were not stored again',
    registers: [this.registry],
  });
  /** Readings of batches a record mutation refused, by error code. */
  readonly readingsRefused = new Counter({
    name: 'tsgraph_readings_refused_total',
    help: 'Readings of batches that recordReading or recordReadings refused or could not store, by error code (refused ingest requests: tsgraph_http_requests_total)',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  /** Data points and samples the OTLP and remote-write receivers did not store, by receiver and reason. */
  readonly receiverDropped = new Counter({
    name: 'tsgraph_receiver_dropped_total',
    help: 'Data points (POST /v1/metrics, receiver otlp) and samples (POST /api/v1/write, receiver prometheus) of accepted requests that were not stored, by reason: rejected (counted in the answer as rejectedDataPoints), no_value (flagged NO_RECORDED_VALUE), stale (a staleness marker), nan (another NaN), out_of_range (an infinite value or one beyond 1e150), histogram (a native histogram sample)',
    labelNames: ['receiver', 'reason'] as const,
    registers: [this.registry],
  });
  /** Time of each bucket or sketch pipeline, in seconds. */
  readonly pipelineSeconds = new Histogram({
    name: 'tsgraph_pipeline_duration_seconds',
    help: 'Time of each aggregation pipeline, in seconds, by granularity (none: an aggregate), finest stored level read, kind (buckets, sketches or counters) and source (the series-day documents, a rollup, or day summaries for some days)',
    labelNames: ['granularity', 'level', 'kind', 'source'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  /** GraphQL requests that took at least SLOW_QUERY_MS, logged or not (the slow-query log collapses bursts). */
  readonly slowQueries = new Counter({
    name: 'tsgraph_slow_queries_total',
    help: 'GraphQL requests that took at least SLOW_QUERY_MS (write batches included), whether logged or collapsed into the next line of their operation',
    registers: [this.registry],
  });
  /** Database errors seen by the driver or by operations, by kind. */
  readonly databaseErrors = new Counter({
    name: 'tsgraph_database_errors_total',
    help: 'Database errors, by kind: heartbeat (a server monitor check failed), pool_cleared (the driver dropped its connections after an error), checkout (no connection could be had), operation (an operation failed because the database was unreachable)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  /** Times the driver reached a server again after losing it. */
  readonly databaseReconnects = new Counter({
    name: 'tsgraph_database_reconnects_total',
    help: 'Times the driver reached a database server again after having lost it',
    registers: [this.registry],
  });
  /** 1 while the database is reachable, 0 while it is known to be down; read at each scrape. */
  readonly databaseUp: Gauge = new Gauge({
    name: 'tsgraph_database_up',
    help: '1 while the database is reachable, 0 while requests are refused with UNAVAILABLE (see docs/operations.md)',
    registers: [this.registry],
    collect: (): void => this.databaseUp.set(this.isDown() ? 0 : 1),
  });
  /** Readings the folds of this process folded (see `storage/fold.ts`). */
  readonly foldedReadings = new Counter({
    name: 'tsgraph_folded_readings_total',
    help: 'Readings this instance folded from the ingest log into series-day documents',
    registers: [this.registry],
  });
  /** Duration of each fold of this process. */
  readonly foldSeconds = new Histogram({
    name: 'tsgraph_fold_duration_seconds',
    help: 'Duration of each fold this instance ran (one fold takes up to FOLD_MAX_READINGS readings)',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  /** Readings acknowledged and not yet folded (`measureBacklog`: the fold under way included), measured at each scrape. */
  readonly foldLagReadings: Gauge = new Gauge({
    name: 'tsgraph_fold_lag_readings',
    help: 'Readings acknowledged but not yet folded, the fold under way included (all instances; INGEST_MAX_TAIL_READINGS bounds it)',
    registers: [this.registry],
    collect: async (): Promise<void> => this.foldLagReadings.set((await this.backlog()).readings),
  });
  /** Age of the oldest reading not yet folded (the fold under way included), measured at each scrape. */
  readonly foldLagSeconds: Gauge = new Gauge({
    name: 'tsgraph_fold_lag_seconds',
    help: 'Age in seconds of the oldest log entry not yet folded, the fold under way included (0 when none; INGEST_MAX_TAIL_SECONDS bounds it)',
    registers: [this.registry],
    collect: async (): Promise<void> => {
      const { oldest } = await this.backlog();
      this.foldLagSeconds.set(oldest === null ? 0 : Math.max(0, (Date.now() - oldest) / 1000));
    },
  });
  private readonly operations = new Set<string>();
  private isDown: () => boolean = () => false;
  private backlogOf: (() => Promise<Backlog>) | undefined;
  private scraped: { at: number; backlog: Promise<Backlog> } | undefined;

  /** The backlog for the two lag gauges, measured once per scrape (the gauges collect one after the other). */
  private backlog(): Promise<Backlog> {
    const none = Promise.resolve(NO_BACKLOG);
    if (this.backlogOf === undefined) return none;
    if (this.scraped === undefined || Date.now() - this.scraped.at > 100) {
      this.scraped = { at: Date.now(), backlog: this.backlogOf().catch(() => NO_BACKLOG) };
    }
    return this.scraped.backlog;
  }

  /** Where the lag gauges measure the ingest log's backlog (`measureBacklog`). */
  observeBacklog(measure: () => Promise<Backlog>): void {
    this.backlogOf = measure;
  }

  /** Counts one fold of this process: its readings and its duration in seconds. */
  folded(outcome: Pick<FoldOutcome, 'readings'>, seconds: number): void {
    this.foldedReadings.inc(outcome.readings);
    this.foldSeconds.observe(seconds);
  }

  /** The `operation` label of a name: the name, or `other` once {@link MAX_OPERATION_LABELS} names are in use. */
  operationLabel(name: string): string {
    if (this.operations.has(name)) return name;
    if (this.operations.size >= MAX_OPERATION_LABELS) return 'other';
    this.operations.add(name);
    return name;
  }

  /** Counts what a record mutation stored. */
  recorded(outcome: RecordOutcome): void {
    this.readingsRecorded.inc(outcome.applied);
    this.readingsAlreadyApplied.inc(outcome.alreadyApplied);
  }

  /** Counts the `readings` of a batch a record mutation refused with `code`. */
  refused(readings: number, code: string): void {
    this.readingsRefused.inc({ code }, readings);
  }

  /** Times one pipeline (see `engine/loader.ts`); `ms` in milliseconds. */
  pipeline(run: PipelineRun, ms: number): void {
    this.pipelineSeconds.observe(
      { granularity: run.granularity ?? 'none', level: run.level, kind: run.kind, source: run.source },
      ms / 1000,
    );
  }

  /**
   * Listens to the driver's monitoring events on `client` (MongoDB driver manual,
   * "Monitoring": SDAM and connection pool events): failed heartbeats, cleared pools and
   * failed check-outs count as database errors; a server that turns known again after
   * being lost counts as a reconnect. `isDown` sets `tsgraph_database_up`.
   * @returns a function that stops listening.
   */
  observeDatabase(client: MongoClient, isDown: () => boolean): () => void {
    this.isDown = isDown;
    const lost = new Set<string>();
    const onHeartbeatFailed = () => this.databaseErrors.inc({ kind: 'heartbeat' });
    const onPoolCleared = () => this.databaseErrors.inc({ kind: 'pool_cleared' });
    const onCheckOutFailed = (event: { reason: string }) => {
      if (event.reason !== 'poolClosed') this.databaseErrors.inc({ kind: 'checkout' });
    };
    const onServerChanged = (event: ServerDescriptionChangedEvent) => {
      if (event.newDescription.type === 'Unknown') {
        if (event.previousDescription.type !== 'Unknown') lost.add(event.address);
      } else if (lost.delete(event.address)) {
        this.databaseReconnects.inc();
      }
    };
    client.on('serverHeartbeatFailed', onHeartbeatFailed);
    client.on('connectionPoolCleared', onPoolCleared);
    client.on('connectionCheckOutFailed', onCheckOutFailed);
    client.on('serverDescriptionChanged', onServerChanged);
    return () => {
      client.off('serverHeartbeatFailed', onHeartbeatFailed);
      client.off('connectionPoolCleared', onPoolCleared);
      client.off('connectionCheckOutFailed', onCheckOutFailed);
      client.off('serverDescriptionChanged', onServerChanged);
    };
  }

  /** The scrape: the process metrics, then this app's, in the Prometheus text format 0.0.4. */
  async scrape(): Promise<string> {
    return (await processMetrics().metrics()) + (await this.registry.metrics());
  }
}

/** The code of an error a resolver or route threw: its own code, UNAVAILABLE for an unreachable database, else INTERNAL_SERVER_ERROR. */
export function codeOfError(error: unknown): string {
  if (error instanceof CodedError) return error.code;
  if (error instanceof GraphQLError) {
    const code = error.extensions?.code;
    if (typeof code === 'string') return code;
    if (error.originalError) return codeOfError(error.originalError);
  }
  return isUnavailable(error) ? ErrorCode.UNAVAILABLE : 'INTERNAL_SERVER_ERROR';
}

/** Number of readings a record mutation was sent: one for `recordReading`, the list's length for `recordReadings`. */
const READINGS_OF: Record<string, (args: Record<string, unknown>) => number> = {
  recordReading: () => 1,
  recordReadings: (args) => (Array.isArray(args.readings) ? args.readings.length : 0),
};

/**
 * `schema` with its record mutations (`recordReading`, `recordReadings`) counted in
 * `metrics`: the readings a call stored or found already stored, or the readings of a
 * batch it refused, with the error's code. The resolvers themselves are unchanged and
 * called as before; a new Mutation type wraps them (the other types are shared with
 * `schema`, which is left as it is).
 */
export function withRecordMetrics(schema: GraphQLSchema, metrics: ServerMetrics): GraphQLSchema {
  const mutation = schema.getMutationType();
  if (!mutation) return schema;
  const config = mutation.toConfig();
  const fields: Record<string, GraphQLFieldConfig<unknown, unknown>> = {};
  for (const [name, field] of Object.entries(config.fields)) {
    const count = READINGS_OF[name];
    const resolve = field.resolve;
    if (count === undefined || resolve === undefined) {
      fields[name] = field;
      continue;
    }
    fields[name] = {
      ...field,
      resolve: async (source, args, context, info) => {
        try {
          const outcome = (await resolve(source, args, context, info)) as RecordOutcome;
          metrics.recorded(outcome);
          return outcome;
        } catch (error) {
          metrics.refused(count(args), codeOfError(error));
          throw error;
        }
      },
    };
  }
  const counted = new GraphQLObjectType({ ...config, fields });
  const schemaConfig = schema.toConfig();
  return new GraphQLSchema({
    ...schemaConfig,
    mutation: counted,
    types: schemaConfig.types.filter((type) => type !== mutation),
  });
}

/** What the request plugin remembers of one request until its answer. */
interface RequestState {
  started: number;
  /** The `operationName` the client sent, if any. */
  operationName?: string;
  /** The variables the client sent (for the readings of a write batch; never logged). */
  variables?: Record<string, unknown>;
  document?: DocumentNode;
  /** Set once the request produced a GraphQL result. */
  code?: string;
}

/** The outcome code of a result: `OK`, or the `extensions.code` of its first error (`UNCODED` when it has none). */
function outcomeCode(result: unknown): string | undefined {
  const single = Array.isArray(result) ? result[0] : result;
  if (single === null || typeof single !== 'object' || Symbol.asyncIterator in single) return undefined;
  const errors = (single as ExecutionResult).errors;
  if (!errors || errors.length === 0) return 'OK';
  const code = errors[0]!.extensions?.code;
  return typeof code === 'string' ? code : 'UNCODED';
}

/**
 * The request metrics and the slow-query log: every GraphQL request (not GraphiQL,
 * `/health`, `/ready` or `/metrics`) is counted and timed by operation name and outcome
 * code when its answer is ready, and one that took at least `slowQueryMs` milliseconds
 * is counted in `tsgraph_slow_queries_total` and handed to the slow-query log
 * ({@link SlowQueryLog}: queries as warnings with their normalized document, write
 * batches at debug level with their readings, at most one line per operation name every
 * `slowQueryIntervalMs`, default 10 s); never its variables or headers, so never a token.
 * The operation name is the executed operation's, `anonymous` for an operation without
 * one, `unknown` when the document did not parse.
 */
export function useRequestMetrics(
  metrics: ServerMetrics,
  options: { logger: Logger; slowQueryMs: number; slowQueryIntervalMs?: number },
): Plugin {
  const slowQueries = new SlowQueryLog({
    logger: options.logger,
    slowQueryMs: options.slowQueryMs,
    intervalMs: options.slowQueryIntervalMs,
  });
  const states = new WeakMap<Request, RequestState>();
  const stateOf = (request: Request | undefined) => (request === undefined ? undefined : states.get(request));
  return {
    onRequest({ request }) {
      states.set(request, { started: performance.now() });
    },
    onParams({ params, request }) {
      const state = states.get(request);
      if (state && typeof params.operationName === 'string') state.operationName = params.operationName;
      if (state && params.variables !== null && typeof params.variables === 'object') state.variables = params.variables;
    },
    onParse({ context }) {
      return ({ result }) => {
        const state = stateOf((context as { request?: Request }).request);
        if (state && result !== null && typeof result === 'object' && (result as DocumentNode).kind === Kind.DOCUMENT) {
          state.document = result as DocumentNode;
        }
      };
    },
    onResultProcess({ request, result }) {
      const state = states.get(request);
      if (state) state.code = outcomeCode(result) ?? state.code;
    },
    onResponse({ request }) {
      const state = states.get(request);
      if (state?.code === undefined) return;
      states.delete(request);
      const ms = performance.now() - state.started;
      const name = state.document ? (getOperationAST(state.document, state.operationName)?.name?.value ?? 'anonymous') : 'unknown';
      const labels = { operation: metrics.operationLabel(name), code: state.code };
      metrics.requests.inc(labels);
      metrics.requestSeconds.observe(labels, ms / 1000);
      const slow = slowQueries.answered({
        document: state.document,
        operationName: state.operationName,
        variables: state.variables,
        ms,
        code: state.code,
      });
      if (slow) metrics.slowQueries.inc();
    },
  };
}

/** A JSON error answer of `/metrics`, shaped like a GraphQL error so clients read it alike. */
function errorAnswer(status: number, code: ErrorCode, message: string, headers: Record<string, string> = {}): Answer {
  return {
    status,
    body: JSON.stringify({ errors: [{ message, extensions: { code } }] }),
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  };
}

/** An HTTP answer of `/metrics`, made a `Response` of the server's fetch API at the end. */
interface Answer {
  status: number;
  body: string | null;
  headers: Record<string, string>;
}

/** What {@link useMetricsEndpoint} needs. */
export interface MetricsEndpointOptions {
  metrics: ServerMetrics;
  store: Store;
  auth: AuthSettings;
  logger: Logger;
  /** True while the database is known to be down (see `database-health.ts`). */
  isDown: () => boolean;
}

/**
 * `GET /metrics`: the Prometheus text format. With `auth.mode` `tokens` it needs
 * `Authorization: Bearer <token>` of a token with scope `monitor` or `admin` (401
 * UNAUTHENTICATED without a valid token, 403 FORBIDDEN with another scope); with `off`
 * it is open. While the database is down, a token that was valid when last checked by
 * this endpoint is still accepted (at most 1,000 remembered), so a scraper sees the
 * outage; a token never seen gets 503 UNAVAILABLE then. Other methods get 405.
 */
export function useMetricsEndpoint(options: MetricsEndpointOptions): Plugin {
  const { metrics, auth } = options;
  const authenticate =
    auth.mode === 'tokens' ? createAuthenticator(options.store, auth.cacheMs ?? TOKEN_CACHE_MS, options.logger) : undefined;
  const lastValid = new LRUCache<string, Access>({ max: 1_000 });

  /** The access of a scrape, or the answer refusing it. */
  const accessOf = async (header: string | null): Promise<Access | Answer> => {
    if (authenticate === undefined) return { tokenId: null, tokenName: null, scopes: ['monitor'], prefixes: null };
    const credentials = parseAuthorization(header);
    const hash = credentials.kind === 'token' ? hashToken(credentials.token) : undefined;
    const remembered = hash === undefined ? undefined : lastValid.get(hash);
    if (remembered !== undefined && options.isDown()) return remembered;
    try {
      const access = await authenticate(header);
      if (hash !== undefined) lastValid.set(hash, access);
      return access;
    } catch (error) {
      if (error instanceof CodedError && error.code === ErrorCode.UNAUTHENTICATED) {
        return errorAnswer(401, ErrorCode.UNAUTHENTICATED, error.message, { 'WWW-Authenticate': 'Bearer realm="tsgraph"' });
      }
      if (remembered !== undefined) return remembered;
      options.logger.warn({ err: error }, 'GET /metrics: the token could not be checked');
      return errorAnswer(503, ErrorCode.UNAVAILABLE, 'The database could not be reached to check the API token; retry later');
    }
  };

  /** The answer to a `GET` or `HEAD` of `/metrics` carrying `header` as `Authorization`. */
  const answer = async (header: string | null, head: boolean): Promise<Answer> => {
    const access = await accessOf(header);
    if ('status' in access) return access;
    if (!hasScope(access, 'monitor')) {
      const held = access.scopes.length > 0 ? access.scopes.join(', ') : 'none';
      return errorAnswer(403, ErrorCode.FORBIDDEN, `GET /metrics needs the "monitor" or "admin" scope; the API token has: ${held}`);
    }
    const body = await metrics.scrape();
    return {
      status: 200,
      body: head ? null : body,
      headers: { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' },
    };
  };

  return {
    onRequest({ url, request, endResponse, fetchAPI }) {
      if (url.pathname !== METRICS_PATH) return;
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        endResponse(new fetchAPI.Response(null, { status: 405, headers: { allow: 'GET, HEAD' } }));
        return;
      }
      return answer(request.headers.get('authorization'), request.method === 'HEAD').then(({ status, body, headers }) =>
        endResponse(new fetchAPI.Response(body, { status, headers })),
      );
    },
  };
}

/** What {@link instrumentApp} needs. */
export interface InstrumentOptions {
  schema: GraphQLSchema;
  store: Store;
  auth: AuthSettings;
  logger: Logger;
  /** True while the database is known to be down (`DatabaseHealth.isDown`). */
  isDown: () => boolean;
  /** Requests at least this long are logged (config SLOW_QUERY_MS), in milliseconds. */
  slowQueryMs: number;
  /** Within this time one operation name is logged once as slow, in milliseconds (default 10,000; see `slow-queries.ts`). */
  slowQueryIntervalMs?: number;
  /** The metrics to fill (default: new ones for this app). */
  metrics?: ServerMetrics;
}

/** What `createApp` wires in to count and time an app. */
export interface AppInstruments {
  metrics: ServerMetrics;
  /** The schema with its record mutations counted ({@link withRecordMetrics}). */
  schema: GraphQLSchema;
  /** Yoga plugins: `/metrics`, the request metrics and slow-query log, and the end of the driver listeners on dispose. */
  plugins: Plugin[];
  /** For the query engine: times each pipeline. */
  observePipeline: (run: PipelineRun, ms: number) => void;
  /** For the error masking: an operation failed because the database was unreachable. */
  onUnavailable: () => void;
}

/** The metrics of one app and what feeds them (see docs/operations.md, "Metrics"). */
export function instrumentApp(options: InstrumentOptions): AppInstruments {
  const metrics = options.metrics ?? new ServerMetrics();
  const stopObserving = metrics.observeDatabase(options.store.client, options.isDown);
  metrics.observeBacklog(() => measureBacklog(options.store));
  return {
    metrics,
    schema: withRecordMetrics(options.schema, metrics),
    plugins: [
      useMetricsEndpoint({ metrics, store: options.store, auth: options.auth, logger: options.logger, isDown: options.isDown }),
      useRequestMetrics(metrics, {
        logger: options.logger,
        slowQueryMs: options.slowQueryMs,
        slowQueryIntervalMs: options.slowQueryIntervalMs,
      }),
      { onDispose: stopObserving },
    ],
    observePipeline: (run, ms) => metrics.pipeline(run, ms),
    onUnavailable: () => metrics.databaseErrors.inc({ kind: 'operation' }),
  };
}
