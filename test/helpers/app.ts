import type { CommandStartedEvent } from 'mongodb';
import { pino } from 'pino';
import { randomBytes } from 'node:crypto';
import { foldAll } from '../../src/storage/fold.ts';
import { openStore, type Store } from '../../src/storage/store.ts';
import { createApp, type AppOptions } from '../../src/server/yoga.ts';
import { testMongoUri } from './db.ts';

/** A store on a fresh database of the test server, the GraphQL app on it, and a log of database commands. */
export interface TestApp {
  store: Store;
  app: ReturnType<typeof createApp>;
  /** Names of the database commands run since the last {@link TestApp.resetCommands}, e.g. `aggregate` (those of {@link TestApp.targets}). */
  commands: string[];
  /**
   * The same commands with the collection each ran on, e.g. `aggregate series_days` (a
   * pipeline on the series-day documents) or `aggregate ingest_log` (a read of the tail).
   */
  targets: string[];
  resetCommands(): void;
  /**
   * Folds every acknowledged reading into series-day documents now (`foldAll`), as the
   * server's folder does in the background: what a test that reads the stored
   * documents themselves calls first. Queries need no fold: they read the log's tail.
   * @returns the readings folded.
   */
  settle(): Promise<number>;
  /**
   * Sends a GraphQL request through `yoga.fetch` (no socket) and returns the parsed JSON
   * body. `request.token` sends `Authorization: Bearer <token>` (default: the app's
   * `token` option; null: no header).
   */
  graphql<T = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    request?: { token?: string | null },
  ): Promise<GraphQLResponse<T>>;
  close(): Promise<void>;
}

export interface GraphQLResponse<T> {
  data?: T | null;
  errors?: { message: string; path?: string[]; extensions?: { code?: string; inputPath?: string } }[];
}

/**
 * Opens a {@link TestApp}; `limits` default to a batch of 10,000 and 100,000 buckets.
 * Authentication is off unless `auth` is `tokens`; `token` is then sent with every
 * request unless a request says otherwise.
 */
export async function openTestApp(
  label: string,
  options: {
    maxBatchSize?: number;
    maxBuckets?: number;
    auth?: 'off' | 'tokens';
    token?: string;
    /** How long verified tokens are cached (default: the server's). */
    tokenCacheMs?: number;
    corsOrigins?: string[];
    registryCacheTtlMs?: number;
    /**
     * Whether writes wait for the journal (default true, as the server). Tests of query
     * answers over large data sets turn it off to load faster: durability is what the
     * fault tests check, with the server's defaults.
     */
    journal?: boolean;
    /** Live subscriptions: the feed of new readings and the shortest time between pushes (default: the app's own, 1,000 ms). */
    live?: AppOptions['live'];
    /** The database server (default: this worker's test server, `testMongoUri`). */
    uri?: string;
    /** The database name (default: a fresh one from `label`), for two apps on one database. */
    database?: string;
    /** Bounds of the unfolded log (default: none, as no folder runs; see `Store.ingest`). */
    ingest?: { maxTailReadings?: number; maxTailSeconds?: number };
    /** Most readings of a document written in the raw form (default: the server's, see `Store.rawReadings`). */
    rawReadings?: number;
    /** Fewest minutes of an hour written packed (default: the server's, see `Store.packedMinutes`). */
    packedMinutes?: number;
    /** Most series of one metric (default: the server's, see `Store.maxSeriesPerMetric`). */
    maxSeriesPerMetric?: number;
    /** Most documents a read merges in the server (default: the server's; 0: never, see `Store.mergeHereDocuments`). */
    mergeHereDocuments?: number;
  } = {},
): Promise<TestApp> {
  const dbName = options.database ?? `test_${label}_${randomBytes(4).toString('hex')}`;
  const store = await openStore(options.uri ?? testMongoUri(), dbName, {
    client: { monitorCommands: true },
    registryCacheTtlMs: options.registryCacheTtlMs,
    writeConcern: { w: 'majority', journal: options.journal ?? true },
    // No folder runs in the background here: tests fold with settle(), so no backlog bound.
    ingest: options.ingest ?? { maxTailReadings: 0, maxTailSeconds: 0 },
    rawReadings: options.rawReadings,
    packedMinutes: options.packedMinutes,
    maxSeriesPerMetric: options.maxSeriesPerMetric,
    mergeHereDocuments: options.mergeHereDocuments,
  });
  const targets: string[] = [];
  store.client.on('commandStarted', (event: CommandStartedEvent) => {
    if (event.databaseName === dbName) targets.push(`${event.commandName} ${String(event.command[event.commandName])}`);
  });
  const app = createApp({
    store,
    logger: pino({ level: 'silent' }),
    limits: { maxBatchSize: options.maxBatchSize ?? 10_000, maxBuckets: options.maxBuckets ?? 100_000 },
    auth: {
      mode: options.auth ?? 'off',
      corsOrigins: options.corsOrigins ?? [],
      ...(options.tokenCacheMs === undefined ? {} : { cacheMs: options.tokenCacheMs }),
    },
    live: options.live,
  });
  return {
    store,
    app,
    get commands() {
      return targets.map((target) => target.slice(0, target.indexOf(' ')));
    },
    targets,
    resetCommands: () => {
      targets.splice(0, targets.length);
    },
    settle: () => foldAll(store, store.holder),
    async graphql<T>(query: string, variables?: Record<string, unknown>, request: { token?: string | null } = {}) {
      const token = request.token === undefined ? options.token : request.token;
      const response = await app.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as GraphQLResponse<T>;
    },
    async close() {
      await store.db.dropDatabase();
      await store.client.close();
    },
  };
}
