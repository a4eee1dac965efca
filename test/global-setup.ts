import type { TestProject } from 'vitest/node';
import { loadConfig } from '../src/config.ts';
import { ensureSecantusInstalled, startSecantus, type EmbeddedServer } from '../src/embedded/secantus.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Connection string of the database server the tests use. */
    mongoUri: string;
  }
}

let server: EmbeddedServer | undefined;

/**
 * Starts a throw-away embedded database on a free port for the whole run (or uses
 * `MONGODB_URI` when set) and hands its address to the tests as `inject('mongoUri')`:
 * the Python server in memory, or with `EMBEDDED_SERVER=rust` the Rust server on a
 * temporary directory removed when it stops (built beforehand by
 * `npm run db:install -- --server rust`).
 */
export async function setup(project: TestProject): Promise<void> {
  const config = loadConfig();
  if (config.MONGODB_URI) {
    project.provide('mongoUri', config.MONGODB_URI);
    return;
  }
  const say = (message: string) => console.log(`[test database] ${message}`);
  const binary = await ensureSecantusInstalled(config.EMBEDDED_VENV_DIR, config.PYTHON, say, config.EMBEDDED_SERVER);
  server = await startSecantus({ binary, dataDir: ':memory:', say });
  project.provide('mongoUri', server.uri);
}

export async function teardown(): Promise<void> {
  await server?.stop();
}
