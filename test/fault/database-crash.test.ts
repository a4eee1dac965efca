/**
 * The embedded database dies under a running server: the server notices at once,
 * refuses requests quickly with UNAVAILABLE, restarts the database on the same port and
 * data, and serves again with the data written before.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEmbeddedState } from '../../src/embedded/state.ts';
import { isAlive, recordReadings, startServer, stopAllServers, totals, waitUntil, type ServerProcess } from '../helpers/server-process.ts';

const DAY = { from: '2024-05-01T00:00:00Z', to: '2024-05-02T00:00:00Z' };
const reading = (minute: number, value: number) => ({
  metric: 'crash',
  tags: [{ key: 'host', value: `h${minute % 3}` }],
  time: new Date(Date.UTC(2024, 4, 1, 10, minute)).toISOString(),
  fields: [{ name: 'v', value }],
});

// Real server processes: each start takes seconds (tsx compiles the server every time).
describe('the embedded database crashes', { timeout: 300_000 }, () => {
  let root: string;
  let server: ServerProcess;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tsgraph-db-crash-'));
    // A first restart delay long enough that the test sees the database down.
    server = await startServer({ dataDir: join(root, 'data'), env: { EMBEDDED_RESTART_DELAY_MS: '2000' } });
  });
  afterAll(async () => {
    await stopAllServers();
    await rm(root, { recursive: true, force: true });
  });

  it('is logged, reported by /ready, refused with UNAVAILABLE, restarted, and keeps the data', async () => {
    expect((await server.ready()).status).toBe(200);
    const before = (await readEmbeddedState(server.dataDir))!;
    expect(before.pid).toBe(await server.dbPid());

    // 10 readings, values 1..10: count 10, sum 55, killed the moment they are
    // acknowledged: an acknowledged write must survive (MONGODB_JOURNAL, on by default).
    const first = await recordReadings(
      server,
      Array.from({ length: 10 }, (_, i) => reading(i, i + 1)),
    );
    process.kill(before.pid, 'SIGKILL');
    const killedAt = performance.now();
    expect(first.body).toEqual({ data: { recordReadings: { recorded: 10 } } });

    // /ready says 503 within 2 s of the kill, and each answer is quick.
    await waitUntil(async () => (await server.ready()).status === 503, 2000, '/ready did not turn 503');
    expect(performance.now() - killedAt).toBeLessThan(2000);
    const notReady = await server.ready();
    expect(notReady.status).toBe(503);
    expect(notReady.ms).toBeLessThan(1000);

    const crash = await server.waitForLog((line) => line.msg.includes('exited unexpectedly'), 5000);
    expect(crash).toMatchObject({ level: 50, dbPid: before.pid, signal: 'SIGKILL', exitCode: null });

    // Reads and writes fail fast while the database is down.
    const query = await server.graphql('{ metrics { name } }');
    expect(query.body.errors?.map((error) => error.extensions?.code)).toEqual(['UNAVAILABLE']);
    expect(query.ms).toBeLessThan(1000);
    const write = await recordReadings(server, [reading(59, 1000)]);
    expect(write.body.errors?.map((error) => error.extensions?.code)).toEqual(['UNAVAILABLE']);
    expect(write.body.data ?? null).toBeNull();
    expect(write.ms).toBeLessThan(1000);
    expect(JSON.stringify([query.body, write.body])).not.toMatch(/127\.0\.0\.1|Mongo|ECONNREFUSED|selection/i);
    // Introspection needs no database.
    expect((await server.graphql('{ __typename }')).body).toEqual({ data: { __typename: 'Query' } });

    // Restarted on the same port; ready again; the data written before is all there.
    await server.waitForLog((line) => line.msg.startsWith('Restarting the embedded database (attempt 1)'), 10_000);
    await server.waitForLog((line) => line.msg.startsWith('The embedded database is back'), 30_000);
    await waitUntil(async () => (await server.ready()).status === 200, 10_000, '/ready did not turn 200 again');
    const after = (await readEmbeddedState(server.dataDir))!;
    expect(after.port).toBe(before.port);
    expect(after.pid).not.toBe(before.pid);
    expect(isAlive(after.pid)).toBe(true);
    expect(await totals(server, 'crash', 'v', DAY.from, DAY.to)).toEqual({ count: 10, sum: 55 });

    // And it takes writes again.
    expect((await recordReadings(server, [reading(30, 100)])).body).toEqual({ data: { recordReadings: { recorded: 1 } } });
    expect(await totals(server, 'crash', 'v', DAY.from, DAY.to)).toEqual({ count: 11, sum: 155 });
    expect(server.logs.filter((line) => line.level >= 50).map((line) => line.msg)).toEqual([crash.msg]);
  });
});
