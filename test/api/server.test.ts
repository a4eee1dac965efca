/**
 * The HTTP surface around GraphQL: health and readiness endpoints, masking of
 * unexpected errors, and start-up configuration.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { ensureSecantusInstalled, startSecantus, type EmbeddedServer } from '../../src/embedded/secantus.ts';
import { createApp } from '../../src/server/yoga.ts';
import { openStore, type Store } from '../../src/storage/store.ts';

describe('health, readiness and error masking', () => {
  let server: EmbeddedServer;
  let store: Store;
  let app: ReturnType<typeof createApp>;

  beforeAll(async () => {
    // A database server of this test's own, so it can be stopped.
    const config = loadConfig();
    const binary = await ensureSecantusInstalled(config.EMBEDDED_VENV_DIR, config.PYTHON, () => {});
    server = await startSecantus({ binary, dataDir: ':memory:', say: () => {} });
    store = await openStore(server.uri, 'readiness', { client: { serverSelectionTimeoutMS: 1000 } });
    app = createApp({
      store,
      logger: pino({ level: 'silent' }),
      limits: { maxBatchSize: 10, maxBuckets: 100 },
      auth: { mode: 'off', corsOrigins: [] },
    });
  });
  afterAll(async () => {
    await app.dispose();
    await store.client.close();
    await server.stop();
  });

  it('answers /health and /ready while the database is up', async () => {
    expect((await app.fetch('http://yoga/health')).status).toBe(200);
    expect((await app.fetch('http://yoga/ready')).status).toBe(200);
  });

  it('serves GraphiQL to browsers', async () => {
    const response = await app.fetch('http://yoga/graphql', { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('GraphiQL');
  });

  it('reports not ready and answers UNAVAILABLE, without driver details, once the database is gone', async () => {
    await server.stop();
    expect((await app.fetch('http://yoga/health')).status).toBe(200);
    const begin = performance.now();
    expect((await app.fetch('http://yoga/ready')).status).toBe(503);
    expect(performance.now() - begin).toBeLessThan(1500);
    const response = await app.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ metrics { name } }' }),
    });
    const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors.map((error) => error.extensions.code)).toEqual(['UNAVAILABLE']);
    expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|Mongo|ECONNREFUSED|selection/i);
  });
});

describe('configuration', () => {
  it('has working defaults for every setting', () => {
    expect(loadConfig({})).toMatchObject({
      HOST: '127.0.0.1',
      PORT: 4000,
      MONGODB_DB: 'tsgraph',
      MAX_BATCH_SIZE: 10_000,
      MAX_BUCKETS: 100_000,
      MONGODB_SERVER_SELECTION_TIMEOUT_MS: 5000,
      WRITE_CONCERN: 'majority',
      WRITE_JOURNAL: true,
      BATCH_RETENTION_HOURS: 24,
      REGISTRY_CACHE_TTL_MS: 10_000,
      READY_TIMEOUT_MS: 1000,
      EMBEDDED_RESTART_DELAY_MS: 500,
      EMBEDDED_RESTART_MAX_DELAY_MS: 10_000,
    });
    expect(loadConfig({}).MONGODB_URI).toBeUndefined();
    expect(loadConfig({ WRITE_JOURNAL: 'false', WRITE_CONCERN: '2' })).toMatchObject({ WRITE_JOURNAL: false, WRITE_CONCERN: 2 });
  });

  it('reads numbers and choices from strings and treats empty strings as unset', () => {
    const config = loadConfig({ PORT: '8080', MAX_BUCKETS: '500', WRITE_JOURNAL: 'false', EMBEDDED_SERVER: 'rust', MONGODB_URI: '' });
    expect([config.PORT, config.MAX_BUCKETS, config.WRITE_JOURNAL, config.EMBEDDED_SERVER, config.MONGODB_URI]).toEqual([
      8080,
      500,
      false,
      'rust',
      undefined,
    ]);
  });

  it('refuses bad values with one line per variable', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: '70000', MONGODB_URI: 'postgres://x', EMBEDDED_SERVER: 'dense', MAX_BATCH_SIZE: 'many' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const lines = (error as Error).message.split('\n').slice(1);
    expect(lines.map((line) => line.trim().split(':')[0]).sort()).toEqual(['EMBEDDED_SERVER', 'MAX_BATCH_SIZE', 'MONGODB_URI', 'PORT']);
  });

  it('arms no fault point unless TEST_FAULT_POINTS lists known ones, and keeps the fold lease at 30 s by default', () => {
    expect(loadConfig({})).toMatchObject({ TEST_FAULT_POINTS: [], FOLD_LEASE_MS: 30_000 });
    expect(loadConfig({ TEST_FAULT_POINTS: ' fold:mid-parts, compact:mid-merge ' }).TEST_FAULT_POINTS).toEqual([
      'fold:mid-parts',
      'compact:mid-merge',
    ]);
    expect(() => loadConfig({ TEST_FAULT_POINTS: 'fold:mid-parts,fold:somewhere' })).toThrow(
      /TEST_FAULT_POINTS: unknown fault point fold:somewhere; use record:after-log, fold:mid-parts/,
    );
    expect(() => loadConfig({ FOLD_LEASE_MS: '500' })).toThrow(ConfigError);
  });
});
