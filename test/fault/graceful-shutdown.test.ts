/**
 * SIGTERM: idle keep-alive connections do not hold the exit, a request in flight is
 * finished, new ones are refused, the database is stopped and the state file removed.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateFilePath } from '../../src/embedded/state.ts';
import { isAlive, startServer, stopAllServers, totals } from '../helpers/server-process.ts';

/** A request on `agent` (keep-alive); resolves with the status, `Connection` header and body. */
function request(
  agent: http.Agent,
  url: string,
  body?: unknown,
): Promise<{ status: number; connection: string | undefined; body: string }> {
  return new Promise((done, failed) => {
    const outgoing = http.request(
      url,
      {
        agent,
        method: body === undefined ? 'GET' : 'POST',
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => done({ status: response.statusCode!, connection: response.headers.connection, body: text }));
      },
    );
    outgoing.on('error', failed);
    outgoing.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const RECORD = 'mutation Record($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded } }';
const DAY = { from: '2024-05-01T00:00:00Z', to: '2024-05-02T00:00:00Z' };
/**
 * 5,000 readings of 5,000 new series: a batch that takes a while to acknowledge (its
 * series are registered before its log entry is written: seconds here).
 */
const bigBatch = Array.from({ length: 5_000 }, (_, i) => ({
  metric: 'shutdown',
  tags: [{ key: 'sensor', value: `s${i}` }],
  time: new Date(Date.UTC(2024, 4, 1, 0, i % 1440)).toISOString(),
  fields: [{ name: 'v', value: 1 }],
}));

// Real server processes: each start takes seconds (tsx compiles the server every time).
describe('graceful shutdown', { timeout: 300_000 }, () => {
  let root: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tsgraph-shutdown-'));
  });
  afterAll(async () => {
    await stopAllServers();
    await rm(root, { recursive: true, force: true });
  });

  it('an idle keep-alive connection does not hold the exit', async () => {
    const dataDir = join(root, 'idle');
    const server = await startServer({ dataDir, env: { SHUTDOWN_TIMEOUT_MS: '30000' } });
    const dbPid = (await server.dbPid())!;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const health = await request(agent, `${server.origin}/health`);
      expect([health.status, health.connection]).toEqual([200, 'keep-alive']);
      const begin = performance.now();
      // Well under SHUTDOWN_TIMEOUT_MS: nothing waited for the idle connection.
      expect(await server.stop()).toEqual({ code: 0, signal: null });
      expect(performance.now() - begin).toBeLessThan(15_000);
    } finally {
      agent.destroy();
    }
    expect(existsSync(stateFilePath(dataDir))).toBe(false);
    expect(isAlive(dbPid)).toBe(false);
    expect(server.logs.at(-1)?.msg).toBe('Stopped');
  });

  it('finishes a request in flight, refuses new ones, and the finished write is kept', async () => {
    const dataDir = join(root, 'in-flight');
    const server = await startServer({ dataDir, env: { SHUTDOWN_TIMEOUT_MS: '60000' } });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const other = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // A connection opened before the shutdown, kept idle.
      expect((await request(other, `${server.origin}/health`)).status).toBe(200);
      let answered = false;
      const inFlight = request(agent, server.url, { query: RECORD, variables: { readings: bigBatch } });
      void inFlight.finally(() => (answered = true));
      // Let the server read the request before the signal.
      await new Promise((done) => setTimeout(done, 300));
      server.kill('SIGTERM');
      await server.waitForLog((line) => line.msg.startsWith('SIGTERM: no longer accepting requests'), 10_000);
      // The batch is really in flight when the shutdown begins.
      expect(answered).toBe(false);

      // New requests, on a new or on the idle connection, are not served.
      const refused = await Promise.allSettled([
        request(new http.Agent(), `${server.origin}/health`),
        request(other, `${server.origin}/health`),
      ]);
      for (const outcome of refused) {
        if (outcome.status === 'fulfilled') expect(outcome.value).toMatchObject({ status: 503 });
      }

      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect(answer.connection).toBe('close');
      expect(JSON.parse(answer.body)).toEqual({ data: { recordReadings: { recorded: 5_000 } } });
      expect(await server.exited).toEqual({ code: 0, signal: null });
    } finally {
      agent.destroy();
      other.destroy();
    }
    expect(existsSync(stateFilePath(dataDir))).toBe(false);

    const again = await startServer({ dataDir });
    expect(await totals(again, 'shutdown', 'v', DAY.from, DAY.to)).toEqual({ count: 5_000, sum: 5_000 });
    expect(await again.stop()).toEqual({ code: 0, signal: null });
  });
});
