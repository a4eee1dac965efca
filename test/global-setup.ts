import type { TestProject } from 'vitest/node';
import { loadConfig } from '../src/config.ts';
import { ensureSecantusInstalled, startSecantus, type EmbeddedServer } from '../src/embedded/secantus.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Connection strings of the database servers the tests use, one per test worker (see `testMongoUri`). */
    mongoUris: string[];
  }
}

/**
 * How many embedded database servers a run starts: one per test worker (`maxWorkers` in
 * vitest.config.ts). The Python server runs one operation at a time, so with a single
 * server the workers' database work would queue behind each other.
 */
const SERVERS = 2;

let servers: EmbeddedServer[] = [];

/**
 * Starts throw-away embedded databases on free ports for the whole run (or uses
 * `MONGODB_URI` when set) and hands their addresses to the tests as
 * `inject('mongoUris')` (see `testMongoUri` in `helpers/db.ts`): the Python server in
 * memory, or with `EMBEDDED_SERVER=rust` the Rust server on a temporary directory removed
 * when it stops (built beforehand by `npm run db:install -- --server rust`).
 */
export async function setup(project: TestProject): Promise<void> {
  const config = loadConfig();
  if (config.MONGODB_URI) {
    project.provide('mongoUris', [config.MONGODB_URI]);
    return;
  }
  const say = (message: string) => console.log(`[test database] ${message}`);
  const binary = await ensureSecantusInstalled(config.EMBEDDED_VENV_DIR, config.PYTHON, say, config.EMBEDDED_SERVER);
  servers = await Promise.all(Array.from({ length: SERVERS }, () => startSecantus({ binary, dataDir: ':memory:', say })));
  project.provide(
    'mongoUris',
    servers.map((server) => server.uri),
  );
}

export async function teardown(): Promise<void> {
  await Promise.all(servers.map((server) => server.stop()));
}
