/**
 * The parts of the opt-in Rust server's support that need no build of it: the message
 * when it is not built, the message when a build tool is missing, and the sweep of
 * throw-away data directories left by killed processes. Starting and stopping it is
 * covered by the whole suite run with `EMBEDDED_SERVER=rust` (see docs/compatibility.md).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { buildRustServer, findRustServer } from '../../src/embedded/rust.ts';
import { removeOrphanedTempDirs } from '../../src/embedded/secantus.ts';

describe('the Rust server', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tsgraph-rust-test-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('EMBEDDED_SERVER defaults to python and accepts only python or rust', () => {
    expect(loadConfig({}).EMBEDDED_SERVER).toBe('python');
    expect(loadConfig({ EMBEDDED_SERVER: 'rust' }).EMBEDDED_SERVER).toBe('rust');
    expect(() => loadConfig({ EMBEDDED_SERVER: 'java' })).toThrow(ConfigError);
  });

  it('when it is not built, says how to build it instead of building it', async () => {
    await expect(findRustServer(dir)).rejects.toThrow('npm run db:install -- --server rust');
    // Nothing was started or written.
    expect(await readdir(dir)).toEqual([]);
  });

  it('a build without cmake on PATH stops at once and names what to install', async () => {
    // A PATH holding only a cargo and a cc (empty stand-ins: the check looks for the names).
    const bin = join(dir, 'bin');
    await mkdir(bin);
    for (const name of ['cargo', 'cc']) spawnSync('touch', [join(bin, name)]);
    const saved = process.env.PATH;
    process.env.PATH = bin;
    const lines: string[] = [];
    try {
      const error = await buildRustServer(join(dir, 'root'), (line) => lines.push(line)).catch((caught: Error) => caught);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(/needs cmake, not found on PATH/);
      expect((error as Error).message).toMatch(/apt-get install cmake/);
    } finally {
      process.env.PATH = saved;
    }
    expect(lines).toEqual([]);
    expect(existsSync(join(dir, 'root'))).toBe(false);
  });

  it('removes throw-away data directories whose owner process is gone, and only those', async () => {
    // The pid of a process that has exited.
    const dead = spawnSync('true').pid;
    const orphan = `tsgraph-secantusd-rs-${dead}-abc123`;
    const ours = `tsgraph-secantusd-rs-${process.pid}-def456`;
    const parents = `tsgraph-secantusd-rs-${process.ppid}-ghi789`;
    const unrelated = `tsgraph-other-${dead}-jkl`;
    for (const name of [orphan, ours, parents, unrelated]) await mkdir(join(dir, name, 'journal'), { recursive: true });

    expect(await removeOrphanedTempDirs(dir)).toEqual([orphan]);
    expect((await readdir(dir)).sort()).toEqual([ours, parents, unrelated].sort());
  });
});
