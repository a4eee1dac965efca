/**
 * The database a benchmark measures, and how a report describes it and the machine:
 * `MONGODB_URI` when set, else a throw-away embedded SecantusDB, in memory or, for a
 * benchmark whose figures depend on the disk (journaled writes), on a temporary data
 * directory.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { type Db, type Document, MongoClient, type MongoClientOptions } from 'mongodb';
import { loadConfig } from '../../../src/config.ts';
import { ensureSecantusInstalled, SECANTUS_VERSION, startSecantus } from '../../../src/embedded/secantus.ts';
import { openStore, type Store } from '../../../src/storage/store.ts';

/** A database server to measure: its connection string, whether it is the embedded one, and how to stop it. */
export interface BenchDatabase {
  uri: string;
  /** True for the embedded SecantusDB started here, false for `MONGODB_URI`. */
  embedded: boolean;
  /** True when the embedded server keeps its data in a directory on disk (see {@link BenchDatabaseOptions}). */
  onDisk: boolean;
  /** Stops the embedded server and removes its temporary data directory, not a kept one (a no-op for `MONGODB_URI`). */
  stop: () => Promise<void>;
}

/** How {@link benchDatabase} starts the embedded server. */
export interface BenchDatabaseOptions {
  /**
   * Keep the data in a new temporary directory on disk (removed when the server stops)
   * instead of in memory, so that journaled writes reach the disk. Default false.
   * Ignored for `MONGODB_URI`.
   */
  onDisk?: boolean;
  /**
   * Keep the data in this directory (created when missing) and leave it there when the
   * server stops, so a later run with the same directory finds the data again (a
   * benchmark's `--keep DIR`). Implies on disk; ignored for `MONGODB_URI`.
   */
  dataDir?: string;
}

/**
 * Connection string of the database to measure: `MONGODB_URI` when set, otherwise a
 * new embedded SecantusDB (installed on first use), in memory unless `options.onDisk`
 * (a temporary directory) or `options.dataDir` (a kept one).
 * @param say where the installer and the server's start report their progress (default: nowhere).
 * @throws Error when the embedded server cannot be installed or started.
 */
export async function benchDatabase(say: (message: string) => void = () => {}, options: BenchDatabaseOptions = {}): Promise<BenchDatabase> {
  const config = loadConfig();
  if (config.MONGODB_URI) return { uri: config.MONGODB_URI, embedded: false, onDisk: false, stop: async () => {} };
  const binary = await ensureSecantusInstalled(config.EMBEDDED_VENV_DIR, config.PYTHON, say);
  const kept = options.dataDir !== undefined;
  if (kept) await mkdir(options.dataDir!, { recursive: true });
  const temporary = !kept && options.onDisk === true;
  const dataDir = kept ? resolve(options.dataDir!) : temporary ? await mkdtemp(join(tmpdir(), 'tsgraph-bench-')) : ':memory:';
  const removeDataDir = () => (temporary ? rm(dataDir, { recursive: true, force: true }) : Promise.resolve());
  // A kept directory holding a large database takes the server minutes to open.
  const server = await startSecantus({ binary, dataDir, say, ...(kept ? { readyTimeoutMs: 900_000 } : {}) }).catch(
    async (error: unknown) => {
      await removeDataDir();
      throw error;
    },
  );
  const stop = async () => {
    try {
      await server.stop();
    } finally {
      await removeDataDir();
    }
  };
  return { uri: server.uri, embedded: true, onDisk: kept || temporary, stop };
}

/** A connected driver client of `uri`; throws the driver's Error when the server cannot be reached. */
async function connect(uri: string, options?: MongoClientOptions): Promise<MongoClient> {
  const client = new MongoClient(uri, options);
  await client.connect();
  return client;
}

/**
 * Runs `work` on a connected client of the benchmark's database (see {@link benchDatabase},
 * which `options` are passed to; `options.client` are the client's options, a write
 * concern say), then closes the client and stops the database, whether `work` succeeded
 * or not.
 * @returns what `work` returned.
 */
export async function withBenchDatabase<T>(
  work: (database: BenchDatabase, client: MongoClient) => Promise<T>,
  say?: (message: string) => void,
  options: BenchDatabaseOptions & { client?: MongoClientOptions } = {},
): Promise<T> {
  const database = await benchDatabase(say, options);
  try {
    const client = await connect(database.uri, options.client);
    try {
      return await work(database, client);
    } finally {
      await client.close();
    }
  } finally {
    await database.stop();
  }
}

/**
 * Runs `work` on a store over a new database `bench_<name>_<ms since epoch>` of the
 * benchmark's database (see {@link benchDatabase}), opened with `options` of `openStore`;
 * afterwards drops that database, closes the store and stops the database, whether
 * `work` succeeded or not.
 * @returns what `work` returned.
 */
export async function withScratchStore<T>(
  name: string,
  options: Parameters<typeof openStore>[2],
  work: (store: Store, database: BenchDatabase) => Promise<T>,
  say?: (message: string) => void,
): Promise<T> {
  const database = await benchDatabase(say);
  try {
    const store = await openStore(database.uri, `bench_${name}_${Date.now()}`, options);
    try {
      return await work(store, database);
    } finally {
      await store.db.dropDatabase().catch(() => undefined);
      await store.client.close();
    }
  } finally {
    await database.stop();
  }
}

/**
 * The server a report names: the embedded SecantusDB and its version, or the version
 * `buildInfo` gives for `MONGODB_URI`.
 */
export async function describeServer(client: MongoClient, embedded: boolean): Promise<string> {
  const build = (await client.db('admin').command({ buildInfo: 1 })) as { version?: string };
  return embedded
    ? `SecantusDB ${SECANTUS_VERSION} (embedded, Python server on WiredTiger; not mongod)`
    : `MongoDB-compatible server ${build.version ?? ''} at MONGODB_URI`;
}

/** The machine a report names: cores and their model, memory in GiB, Node's version. */
export function describeMachine(): string {
  return `${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/**
 * `storageSize` and `totalIndexSize` (bytes) and the documents of one collection, from
 * the `collStats` command (deprecated but answered by MongoDB 7/8), else from the
 * `$collStats` stage; `via` says which answered. SecantusDB reports the uncompressed
 * BSON size as `storageSize`.
 */
export async function collectionSizes(
  db: Db,
  name: string,
): Promise<{ storage: number; index: number; count: number; via: 'collStats' | '$collStats' }> {
  try {
    const s = await db.command({ collStats: name });
    return { storage: Number(s.storageSize ?? 0), index: Number(s.totalIndexSize ?? 0), count: Number(s.count ?? 0), via: 'collStats' };
  } catch {
    const [stats] = await db
      .collection(name)
      .aggregate<{ storageStats: Document }>([{ $collStats: { storageStats: {} } }])
      .toArray();
    const s = stats?.storageStats ?? {};
    return { storage: Number(s.storageSize ?? 0), index: Number(s.totalIndexSize ?? 0), count: Number(s.count ?? 0), via: '$collStats' };
  }
}
