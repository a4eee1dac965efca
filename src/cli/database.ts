/**
 * How command-line tools reach the database: `MONGODB_URI` when set; otherwise the
 * embedded database of a server running on `EMBEDDED_DATA_DIR` (found through its
 * state file); otherwise the embedded database started on that directory for the
 * tool's run and stopped afterwards.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, configuredStatistics, type Config } from '../config.ts';
import { ensureSecantusInstalled, startSecantus, type Say } from '../embedded/secantus.ts';
import { openStore, redact, type Store } from '../storage/store.ts';

/** Name of the state file a server running the embedded database keeps in its data directory. */
export const EMBEDDED_STATE_FILE = 'tsgraph-embedded.json';

/** Contents of the state file: the server process, the database's port on 127.0.0.1 and its start time (ISO 8601). */
export interface EmbeddedState {
  pid: number;
  port: number;
  startedAt: string;
}

/** Parses a state file; null when it is not `{"pid": number, "port": number, "startedAt": string}`. */
export function parseEmbeddedState(text: string): EmbeddedState | null {
  try {
    const value = JSON.parse(text) as Partial<EmbeddedState> | null;
    const ok =
      typeof value === 'object' &&
      value !== null &&
      Number.isInteger(value.pid) &&
      value.pid! > 0 &&
      Number.isInteger(value.port) &&
      value.port! > 0 &&
      value.port! < 65536 &&
      typeof value.startedAt === 'string';
    return ok ? { pid: value.pid!, port: value.port!, startedAt: value.startedAt! } : null;
  } catch {
    return null;
  }
}

/** True when a process with this id exists (signal 0 checks without signalling; EPERM means it exists under another user). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The state of a server running the embedded database on `dataDir`, or null when there is none (no file, bad file, process gone). */
export async function runningEmbedded(dataDir: string): Promise<EmbeddedState | null> {
  const text = await readFile(join(dataDir, EMBEDDED_STATE_FILE), 'utf8').catch(() => null);
  const state = text === null ? null : parseEmbeddedState(text);
  return state && isProcessAlive(state.pid) ? state : null;
}

/** A store opened for a tool, and how to let go of it. */
export interface ToolStore {
  store: Store;
  /** Where the data is, for messages: the redacted URI and database name. */
  where: string;
  /** Closes the connection, and stops the embedded database when the tool started it. */
  close(): Promise<void>;
}

/**
 * Opens the store a tool works on (see the module comment for the order of choices),
 * with the server's settings of `config`: layout and optional statistics of new
 * metrics, write concern, retention of batch claims.
 * @throws Error when the database cannot be reached, or the embedded one cannot start
 * (for example because a server without a state file holds its data directory).
 */
export async function openToolStore(config: Config, say: Say): Promise<ToolStore> {
  const open = async (uri: string, stop?: () => Promise<void>): Promise<ToolStore> => {
    const store = await openStore(uri, config.MONGODB_DB, {
      defaultStatistics: configuredStatistics(config),
      writeConcern: { w: config.WRITE_CONCERN, journal: config.WRITE_JOURNAL },
      // openStore sets the TTL of batch claims: the tool must keep the server's.
      batchRetentionSeconds: config.BATCH_RETENTION_HOURS * 3600,
      rollupGraceMs: config.ROLLUP_REBUILD_GRACE_MS,
      foldLeaseMs: config.FOLD_LEASE_MS,
      rawReadings: config.RAW_READINGS,
      packedMinutes: config.PACKED_MINUTES,
      maxSeriesPerMetric: config.MAX_SERIES_PER_METRIC,
    }).catch(async (error: unknown) => {
      await stop?.();
      throw error;
    });
    return {
      store,
      where: `${redact(uri)}, database "${config.MONGODB_DB}"`,
      async close() {
        await store.client.close();
        await stop?.();
      },
    };
  };
  if (config.MONGODB_URI) return open(config.MONGODB_URI);

  const running = await runningEmbedded(config.EMBEDDED_DATA_DIR);
  if (running) return open(`mongodb://127.0.0.1:${running.port}/?directConnection=true`);

  const binary = await ensureSecantusInstalled(config.EMBEDDED_VENV_DIR, config.PYTHON, say);
  const server = await startSecantus({ binary, dataDir: config.EMBEDDED_DATA_DIR, say }).catch((error: unknown) => {
    throw new Error(
      `Could not start the embedded database on ${config.EMBEDDED_DATA_DIR}; if a server is using that directory, stop it or run this with MONGODB_URI. ${(error as Error).message}`,
    );
  });
  return open(server.uri, () => server.stop());
}

/**
 * Runs one command of tool `name` on the store of {@link openToolStore}: opens it, runs
 * `work`, closes it. An error is printed to stderr as `<name>: <message>` and sets the
 * exit code (2 for a configuration error, 1 otherwise) instead of being thrown.
 */
export async function withToolStore(name: string, config: Config, say: Say, work: (tool: ToolStore) => Promise<void>): Promise<void> {
  let tool: ToolStore | undefined;
  try {
    tool = await openToolStore(config, say);
    await work(tool);
  } catch (error) {
    console.error(`${name}: ${(error as Error).message}`);
    process.exitCode = error instanceof ConfigError ? 2 : 1;
  } finally {
    await tool?.close();
  }
}
