/**
 * The embedded database never outlives the server: real server processes on temporary
 * data directories, killed and restarted.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { ensureSecantusInstalled, startSecantus } from '../../src/embedded/secantus.ts';
import { readEmbeddedState, stateFilePath, writeEmbeddedState } from '../../src/embedded/state.ts';
import { isAlive, recordReadings, startServer, stopAllServers, totals, waitUntil } from '../helpers/server-process.ts';

const DAY = { from: '2024-05-01T00:00:00Z', to: '2024-05-02T00:00:00Z' };
const readings = [
  { metric: 'lifecycle', time: '2024-05-01T08:00:12Z', fields: [{ name: 'v', value: 1.5 }] },
  { metric: 'lifecycle', time: '2024-05-01T09:30:00Z', fields: [{ name: 'v', value: 2.25 }] },
  { metric: 'lifecycle', time: '2024-05-01T23:59:59Z', fields: [{ name: 'v', value: 4 }] },
];

// Real server processes: each start takes seconds (tsx compiles the server every time).
describe('embedded database lifecycle', { timeout: 300_000 }, () => {
  let root: string;
  let binary: string;
  const fresh = async (name: string) => mkdtemp(join(root, `${name}-`));

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tsgraph-lifecycle-'));
    const config = loadConfig();
    binary = await ensureSecantusInstalled(config.EMBEDDED_VENV_DIR, config.PYTHON, () => {});
  });
  afterAll(async () => {
    await stopAllServers();
    await rm(root, { recursive: true, force: true });
  });

  it('a server killed with SIGKILL takes its database along; the next one starts on the same data', async () => {
    const dataDir = await fresh('sigkill');
    const first = await startServer({ dataDir });
    const recorded = await recordReadings(first, readings);
    expect(recorded.body).toEqual({ data: { recordReadings: { recorded: 3 } } });
    const dbPid = await first.dbPid();
    expect(dbPid).toBeGreaterThan(0);
    expect(isAlive(dbPid!)).toBe(true);

    first.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // The database got SIGTERM from the kernel when its parent died and shuts down cleanly.
    await waitUntil(() => !isAlive(dbPid!), 10_000, `database ${dbPid} outlived its server`);
    expect(await readEmbeddedState(dataDir)).toBeNull();

    const second = await startServer({ dataDir });
    expect(await totals(second, 'lifecycle', 'v', DAY.from, DAY.to)).toEqual({ count: 3, sum: 7.75 });
    const state = await readEmbeddedState(dataDir);
    expect(state?.pid).toBe(await second.dbPid());
    expect(state?.pid).not.toBe(dbPid);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  });

  it('stops a database left running on the data directory and starts its own', async () => {
    const dataDir = await fresh('leftover');
    // A database on the directory, as a crashed server would leave it (state file included).
    const leftover = await startSecantus({ binary, dataDir, say: () => {} });
    await writeEmbeddedState(dataDir, { pid: leftover.pid, port: leftover.port, startedAt: new Date().toISOString() });
    expect(await readEmbeddedState(dataDir)).toEqual({
      pid: leftover.pid,
      port: leftover.port,
      uri: `mongodb://127.0.0.1:${leftover.port}/?directConnection=true`,
    });

    const server = await startServer({ dataDir });
    // Our child: the server's SIGTERM ended it normally.
    expect(await leftover.exited).toEqual({ code: 0, signal: null });
    expect(server.logs.filter((line) => line.msg.includes('left running by an earlier server'))).toHaveLength(1);
    const state = await readEmbeddedState(dataDir);
    expect(state?.pid).not.toBe(leftover.pid);
    expect(isAlive(state!.pid)).toBe(true);
    expect((await recordReadings(server, readings)).body).toEqual({ data: { recordReadings: { recorded: 3 } } });
    expect(await server.stop()).toEqual({ code: 0, signal: null });
    expect(existsSync(stateFilePath(dataDir))).toBe(false);
  });

  it('leaves alone a process that a stale state file names but that is not its database', async () => {
    const dataDir = await fresh('stale');
    const sleeper = spawn('sleep', ['120'], { stdio: 'ignore' });
    const sleeperExit = new Promise((done) => sleeper.once('exit', done));
    try {
      await writeEmbeddedState(dataDir, { pid: sleeper.pid!, port: 1, startedAt: new Date().toISOString() });
      expect(await readEmbeddedState(dataDir)).toBeNull();

      const server = await startServer({ dataDir });
      expect(isAlive(sleeper.pid!)).toBe(true);
      expect(sleeper.exitCode).toBeNull();
      expect(sleeper.signalCode).toBeNull();
      const state = await readEmbeddedState(dataDir);
      expect(state?.pid).toBe(await server.dbPid());
      expect(state?.pid).not.toBe(sleeper.pid);
      expect(await totals(server, 'lifecycle', 'v', DAY.from, DAY.to)).toEqual({ count: 0, sum: null });
      expect(await server.stop()).toEqual({ code: 0, signal: null });
      expect(isAlive(sleeper.pid!)).toBe(true);
    } finally {
      sleeper.kill('SIGKILL');
      await sleeperExit;
    }
  });
});
