/**
 * The server process: reads the configuration, starts the embedded database unless
 * MONGODB_URI is set, serves GraphQL over HTTP and shuts down gracefully on SIGINT or
 * SIGTERM. With `--demo` it also loads flights-20k on first start.
 *
 *   npm start            # the server
 *   npm run demo         # the server with real data loaded
 */
import { createServer } from 'node:http';
import { Command } from 'commander';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { ensureSecantusInstalled, startSecantus, type EmbeddedServer } from '../embedded/secantus.ts';
import { importFlights } from '../importer/import.ts';
import { createLogger, type Logger } from '../logger.ts';
import { bucketsPipeline, rowStats } from '../query/buckets-pipeline.ts';
import { aggregateBuckets, findMetric } from '../storage/read.ts';
import { openStore, redact, type Store } from '../storage/store.ts';
import { requestLimitsFromConfig } from './limits.ts';
import { createApp } from './yoga.ts';

const DEMO_FLIGHTS = 20_000;

/** Counts the flights already recorded in the store (all time). */
async function recordedFlights(store: Store): Promise<number> {
  if (!(await findMetric(store, 'flights'))) return 0;
  const rows = await aggregateBuckets(
    store,
    bucketsPipeline(
      {
        scope: { metric: 'flights' },
        fields: ['delay'],
        from: Date.UTC(1970, 0, 1),
        to: Date.UTC(9999, 0, 1),
        granularity: null,
        grouping: { by: 'none' },
      }),
  );
  return rows[0] ? rowStats(rows[0], 0).n : 0;
}

/** Loads flights-20k through the server's own GraphQL endpoint unless it is loaded already. */
async function loadDemoData(store: Store, url: string, logger: Logger): Promise<void> {
  const already = await recordedFlights(store);
  if (already === DEMO_FLIGHTS) {
    logger.info(`Demo data already loaded: ${already} flights`);
    return;
  }
  if (already > 0) {
    logger.warn(
      `The database holds ${already} flights, not ${DEMO_FLIGHTS}; left as is. Stop the server and delete the embedded data directory to load the demo afresh.`,
    );
    return;
  }
  logger.info(`Loading ${DEMO_FLIGHTS} real US flights (vega-datasets flights-20k, Jan-Mar 2001) through ${url}`);
  let reported = 0;
  const result = await importFlights(url, {
    file: 'flights-20k',
    batchSize: 1000,
    concurrency: 2,
    onProgress: (recorded) => {
      if (recorded - reported >= 5000 || recorded === DEMO_FLIGHTS) {
        reported = recorded;
        logger.info(`  ${recorded}/${DEMO_FLIGHTS} flights recorded`);
      }
    },
  });
  logger.info(
    `Loaded ${result.recorded} flights in ${result.seconds.toFixed(1)} s (${Math.round(result.recorded / result.seconds)} readings/s)`,
  );
}

async function main(): Promise<void> {
  const cli = new Command()
    .name('tsgraph')
    .option('--demo', 'load flights-20k on first start and log in human-readable form')
    .parse();
  const demo = Boolean(cli.opts<{ demo?: boolean }>().demo);

  let config: Config;
  try {
    config = loadConfig(demo ? { LOG_FORMAT: 'pretty', ...process.env } : process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(2);
  }
  const logger = createLogger(config);

  let embedded: EmbeddedServer | undefined;
  let uri = config.MONGODB_URI;
  if (!uri) {
    const say = (message: string) => logger.info(message);
    const binary = await ensureSecantusInstalled(config.EMBEDDED_VENV_DIR, config.PYTHON, say);
    embedded = await startSecantus({ binary, dataDir: config.EMBEDDED_DATA_DIR, say });
    uri = embedded.uri;
  }
  let store: Store;
  try {
    store = await openStore(uri, config.MONGODB_DB, { defaultLayout: config.DEFAULT_LAYOUT });
  } catch (error) {
    logger.fatal((error as Error).message);
    await embedded?.stop();
    process.exit(1);
  }
  logger.info(`Connected to ${redact(uri)}, database "${config.MONGODB_DB}"`);

  const inFlight = new Set<Promise<unknown>>();
  const trackWrite = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    const done = () => inFlight.delete(work);
    work.then(done, done);
    return work;
  };
  const yoga = createApp({
    store,
    logger,
    limits: { maxBatchSize: config.MAX_BATCH_SIZE, maxBuckets: config.MAX_BUCKETS },
    trackWrite,
    requestLimits: requestLimitsFromConfig(config),
  });
  const server = createServer(yoga);
  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(config.PORT, config.HOST, listening);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}${yoga.graphqlEndpoint}`;

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: no longer accepting connections; finishing ${inFlight.size} in-flight writes`);
    const closed = new Promise<void>((done) => server.close(() => done()));
    server.closeIdleConnections();
    const timeout = setTimeout(() => {
      logger.warn(`Requests still open after ${config.SHUTDOWN_TIMEOUT_MS} ms; closing their connections`);
      server.closeAllConnections();
    }, config.SHUTDOWN_TIMEOUT_MS);
    await Promise.allSettled([...inFlight]);
    await closed;
    clearTimeout(timeout);
    await yoga.dispose();
    await store.client.close();
    await embedded?.stop();
    logger.info('Stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  logger.info(`GraphQL endpoint and GraphiQL: ${url}  (health: /health, readiness: /ready)`);
  if (demo) {
    await loadDemoData(store, url, logger);
    logger.info(`Ready. Open ${url} in a browser to explore the flights; example queries are in schema/examples/`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
