/** The database a benchmark script measures: `MONGODB_URI` when set, else a throw-away embedded one. */
import { loadConfig } from '../../src/config.ts';
import { ensureSecantusInstalled, startSecantus } from '../../src/embedded/secantus.ts';

/**
 * Connection string of the database to measure: `MONGODB_URI` when set, otherwise a
 * new embedded SecantusDB in memory (installed on first use), and how to stop it (a
 * no-op for `MONGODB_URI`).
 */
export async function benchDatabase(): Promise<{ uri: string; stop: () => Promise<void> }> {
  const config = loadConfig();
  if (config.MONGODB_URI) return { uri: config.MONGODB_URI, stop: async () => {} };
  const binary = await ensureSecantusInstalled(config.EMBEDDED_VENV_DIR, config.PYTHON, () => {});
  const embedded = await startSecantus({ binary, dataDir: ':memory:', say: () => {} });
  return { uri: embedded.uri, stop: () => embedded.stop() };
}
