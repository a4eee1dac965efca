/**
 * The server process: reads the configuration, starts the embedded database under
 * supervision unless MONGODB_URI is set (restarted when it dies, never outliving this
 * process: `embedded/supervisor.ts`), serves GraphQL over HTTP and shuts down
 * gracefully on SIGINT or SIGTERM (http-terminator: idle keep-alive connections are
 * closed at once, requests in flight get up to SHUTDOWN_TIMEOUT_MS, new requests are
 * refused with UNAVAILABLE; then the background jobs (rollup rebuilds, retention:
 * `jobs/`) are stopped, and the store and the database closed, exit code 0).
 * With `--demo` it also loads flights-20k on first start.
 *
 *   npm start            # the server
 *   npm run demo         # the server with real data loaded
 */
import { createServer, type ServerResponse } from 'node:http';
import { Command } from 'commander';
import { createHttpTerminator } from 'http-terminator';
import { ConfigError, configuredStatistics, loadConfig, type Config } from '../config.ts';
import { ensureSecantusInstalled } from '../embedded/secantus.ts';
import { foldJob, foldJobSettings } from '../jobs/fold-job.ts';
import { setUpFaultPoints } from '../storage/fault-points.ts';
import { ServerMetrics } from '../observability/metrics.ts';
import { retentionJob } from '../jobs/retention-job.ts';
import { rollupRebuildJob } from '../jobs/rollup-job.ts';
import { JobScheduler } from '../jobs/scheduler.ts';
import { superviseSecantus, type EmbeddedSupervisor } from '../embedded/supervisor.ts';
import { ErrorCode, ServiceError } from '../errors.ts';
import { loadDemoData } from '../importer/demo.ts';
import { createLogger, type Logger } from '../logger.ts';
import { claimsLeft } from '../storage/migrate-claims.ts';
import { ensureIndexes, openStore, redact, type Store } from '../storage/store.ts';
import { authSettings } from '../auth/authenticate.ts';
import { DatabaseHealth } from '../observability/database-health.ts';
import { requestLimitsFromConfig } from './limits.ts';
import { createApp } from './yoga.ts';
import { LiveEvents } from '../events/live-events.ts';
import { releaseLease } from '../storage/lease.ts';
import { rollupPolicy } from '../config.ts';

async function main(): Promise<void> {
  const cli = new Command().name('tsgraph').option('--demo', 'load flights-20k on first start and log in human-readable form').parse();
  const demo = Boolean(cli.opts<{ demo?: boolean }>().demo);

  let config: Config;
  try {
    config = loadConfig(demo ? { LOG_FORMAT: 'pretty', AUTH: 'off', ...process.env } : process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(2);
  }
  const logger = createLogger(config);
  // For fault tests only: nothing is armed unless TEST_FAULT_POINTS lists steps.
  setUpFaultPoints(config.TEST_FAULT_POINTS, (message) => logger.warn(message));

  let embedded: EmbeddedSupervisor | undefined;
  let uri = config.MONGODB_URI;
  if (!uri) {
    const say = (message: string) => logger.info(message);
    const binary = await ensureSecantusInstalled(config.EMBEDDED_VENV_DIR, config.PYTHON, say);
    embedded = await superviseSecantus({
      binary,
      dataDir: config.EMBEDDED_DATA_DIR,
      logger,
      restartDelayMs: config.EMBEDDED_RESTART_DELAY_MS,
      restartMaxDelayMs: config.EMBEDDED_RESTART_MAX_DELAY_MS,
    });
    uri = embedded.uri;
  }
  let store: Store;
  try {
    store = await openStore(uri, config.MONGODB_DB, {
      defaultStatistics: configuredStatistics(config),
      writeConcern: { w: config.WRITE_CONCERN, journal: config.WRITE_JOURNAL },
      batchRetentionSeconds: config.BATCH_RETENTION_HOURS * 3600,
      registryCacheTtlMs: config.REGISTRY_CACHE_TTL_MS,
      rollupGraceMs: config.ROLLUP_REBUILD_GRACE_MS,
      ingest: { maxTailReadings: config.INGEST_MAX_TAIL_READINGS, maxTailSeconds: config.INGEST_MAX_TAIL_SECONDS },
      foldLeaseMs: config.FOLD_LEASE_MS,
      rawReadings: config.RAW_READINGS,
      packedMinutes: config.PACKED_MINUTES,
      maxSeriesPerMetric: config.MAX_SERIES_PER_METRIC,
      mergeHereDocuments: config.MERGE_HERE_DOCUMENTS,
      client: { serverSelectionTimeoutMS: config.MONGODB_SERVER_SELECTION_TIMEOUT_MS },
    });
  } catch (error) {
    logger.fatal((error as Error).message);
    await embedded?.stop();
    process.exit(1);
  }
  logger.info(`Connected to ${redact(uri)}, database "${config.MONGODB_DB}"`);
  const claims = await claimsLeft(store).catch(() => 0);
  if (claims > 0) {
    logger.warn(
      `The database holds ${claims} batch claims of the write path before the ingest log: run \`npm run migrate\` so that resends of those batches are recognised (docs/operations.md, "Upgrading")`,
    );
  }
  const health = new DatabaseHealth({ client: store.client, embedded, pingTimeoutMs: config.READY_TIMEOUT_MS, logger });
  embedded?.onStatus((status) => {
    if (status === 'up') void afterDatabaseRestart(store, logger, config.BATCH_RETENTION_HOURS * 3600);
  });

  const inFlight = new Set<Promise<unknown>>();
  const trackWrite = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    const done = () => inFlight.delete(work);
    work.then(done, done);
    return work;
  };
  const live = new LiveEvents(logger);
  if (config.LIVE_CHANGE_STREAMS === 'auto') {
    const watched = await live.watchChangeStreams(store);
    if (watched.used) logger.info('Live subscriptions: a change stream reports the writes of every instance');
    else logger.info(`Live subscriptions: this instance's own writes only (no change streams: ${watched.reason})`);
  }
  const metrics = new ServerMetrics();
  const yoga = createApp({
    store,
    metrics,
    logger,
    limits: { maxBatchSize: config.MAX_BATCH_SIZE, maxBuckets: config.MAX_BUCKETS },
    trackWrite,
    auth: authSettings(config),
    health,
    requestLimits: requestLimitsFromConfig(config),
    slowQueryMs: config.SLOW_QUERY_MS,
    live: { events: live, minIntervalMs: config.LIVE_MIN_INTERVAL_MS },
    otlp: { resourceAttributes: config.OTLP_RESOURCE_ATTRIBUTES },
  });
  // Background jobs (jobs/): each repeats on its own interval; 0 turns one off.
  const jobs = new JobScheduler(logger);
  jobs.start(foldJob(store, { ...foldJobSettings(config), onFold: (outcome, seconds) => metrics.folded(outcome, seconds) }));
  jobs.start(
    rollupRebuildJob(store, {
      everySeconds: config.ROLLUP_REBUILD_SECONDS,
      graceMs: config.ROLLUP_REBUILD_GRACE_MS,
      policy: rollupPolicy(config),
    }),
  );
  jobs.start(retentionJob(store, { everySeconds: config.RETENTION_SECONDS }));
  let stopping = false;
  const server = createServer((request, response) => {
    if (stopping) {
      refuseDuringShutdown(response);
      return;
    }
    void yoga(request, response);
  });
  const terminator = createHttpTerminator({ server, gracefulTerminationTimeout: config.SHUTDOWN_TIMEOUT_MS });
  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(config.PORT, config.HOST, listening);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}${yoga.graphqlEndpoint}`;

  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(
      `${signal}: no longer accepting requests; waiting up to ${config.SHUTDOWN_TIMEOUT_MS} ms for those in flight (${inFlight.size} writes)`,
    );
    let code = 0;
    try {
      // Closes idle keep-alive connections at once, answers the requests in flight with
      // "Connection: close", and destroys what is still open after the time-out.
      const deadline = Date.now() + config.SHUTDOWN_TIMEOUT_MS;
      // No background pass starts from now on; the one running ends at its next day or metric.
      const jobsStopped = jobs.stop();
      // Live subscriptions never end on their own: end them, so their streams close now.
      await live.close();
      await terminator.terminate();
      // Writes whose request was cut off at the time-out may still be running: they get
      // what is left of SHUTDOWN_TIMEOUT_MS (their clients were not answered, so they retry).
      let timer: NodeJS.Timeout | undefined;
      const late = await Promise.race([
        Promise.allSettled([...inFlight]).then(() => false),
        new Promise<boolean>((done) => (timer = setTimeout(() => done(true), Math.max(0, deadline - Date.now())))),
      ]);
      clearTimeout(timer);
      if (late)
        logger.warn(`${inFlight.size} writes still running after ${config.SHUTDOWN_TIMEOUT_MS} ms; closing the database connection`);
      await jobsStopped;
      // Another instance may fold at once instead of after the lease expires.
      await releaseLease(store, store.holder).catch(() => undefined);
      await yoga.dispose();
      health.close();
      await store.client.close();
      await embedded?.stop();
      logger.info('Stopped');
    } catch (error) {
      logger.error({ err: error }, 'Shutdown failed');
      code = 1;
    }
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  logger.info(`GraphQL endpoint and GraphiQL: ${url}  (health: /health, readiness: /ready, metrics: /metrics)`);
  if (demo) {
    await loadDemoData(url, logger);
    logger.info(`Ready. Open ${url} in a browser to explore the flights; example queries are in schema/examples/`);
  }
}

/**
 * After the embedded database restarted: forgets what this process cached of the
 * registries (the database may have lost its last writes, or everything when in
 * memory) and re-creates the indexes (idempotent). Failures are logged only.
 */
async function afterDatabaseRestart(store: Store, logger: Logger, batchRetentionSeconds: number): Promise<void> {
  store.seriesCache.clear();
  await ensureIndexes(store.db, batchRetentionSeconds).catch((error: unknown) =>
    logger.error({ err: error }, 'Could not re-create the indexes after the database restarted'),
  );
}

/** Answers a request that arrives during shutdown: HTTP 503 with a GraphQL error UNAVAILABLE. */
function refuseDuringShutdown(response: ServerResponse): void {
  const error = new ServiceError(ErrorCode.UNAVAILABLE, 'The server is shutting down; retry on another instance or later.');
  response.writeHead(503, { 'content-type': 'application/json; charset=utf-8', connection: 'close' });
  response.end(JSON.stringify({ errors: [{ message: error.message, extensions: error.extensions }] }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
