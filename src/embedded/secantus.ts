import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import getPort from 'get-port';
import { MongoClient } from 'mongodb';

const run = promisify(execFile);

/** The SecantusDB release the project is tested against (PyPI package `SecantusDB`). */
export const SECANTUS_VERSION = '0.7.0b3';

/** Receives progress messages ("installing ...", "started on port ..."). */
export type Say = (message: string) => void;

/**
 * Makes sure SecantusDB is installed in the project-local virtual environment
 * `venvDir`, creating the environment with `python -m venv` and installing the pinned
 * release with pip on first use (about a minute; later calls return at once).
 * Concurrent callers wait for each other through a lock directory.
 * @returns the absolute path of the `secantusd-py` executable.
 * @throws Error when Python or pip fail; the message carries their output.
 */
export async function ensureSecantusInstalled(venvDir: string, python: string, say: Say): Promise<string> {
  const venv = resolve(venvDir);
  const binary = join(venv, 'bin', 'secantusd-py');
  const marker = join(venv, 'installed-version');
  const installed = async () =>
    existsSync(binary) && (await readFile(marker, 'utf8').catch(() => '')).trim() === SECANTUS_VERSION;
  if (await installed()) return binary;

  const lock = `${venv}.lock`;
  await mkdir(resolve(venv, '..'), { recursive: true });
  for (let waited = 0; ; waited += 500) {
    try {
      await mkdir(lock);
      break;
    } catch {
      if (waited === 0) say(`Waiting for another process installing the embedded database (${lock})`);
      if (waited > 600_000) throw new Error(`Gave up waiting for ${lock}; remove it if no install is running`);
      await new Promise((done) => setTimeout(done, 500));
    }
  }
  try {
    if (await installed()) return binary;
    say(`Installing the embedded database SecantusDB ${SECANTUS_VERSION} into ${venv} (first run only, about a minute)`);
    await rm(venv, { recursive: true, force: true });
    await run(python, ['-m', 'venv', venv]).catch((error: unknown) => {
      throw new Error(`Could not create a Python virtual environment with "${python} -m venv": ${String(error)}`);
    });
    await run(join(venv, 'bin', 'pip'), [
      'install',
      '--disable-pip-version-check',
      '--no-input',
      '--quiet',
      `SecantusDB==${SECANTUS_VERSION}`,
    ]).catch((error: unknown) => {
      throw new Error(`pip could not install SecantusDB==${SECANTUS_VERSION}: ${String(error)}`);
    });
    await writeFile(marker, `${SECANTUS_VERSION}\n`);
    say(`Installed SecantusDB ${SECANTUS_VERSION}`);
    return binary;
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/** A running embedded database server process. */
export interface EmbeddedServer {
  /** Connection string for the official driver, e.g. `mongodb://127.0.0.1:41234/?directConnection=true`. */
  readonly uri: string;
  readonly port: number;
  /** Stops the process (SIGTERM, then SIGKILL after 10 s) and waits for it to exit. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Path of `secantusd-py`, from {@link ensureSecantusInstalled}. */
  binary: string;
  /** WiredTiger data directory, created if missing; `':memory:'` for a throw-away one. */
  dataDir: string;
  /** TCP port on 127.0.0.1; a free one is picked when omitted. */
  port?: number;
  say: Say;
  /** How long to wait for the server to answer a ping, in milliseconds (default 60,000). */
  readyTimeoutMs?: number;
}

/**
 * Starts `secantusd-py` on 127.0.0.1 as a child process and waits until it answers a
 * `ping` through the driver.
 * @throws Error when the process exits early or does not answer in time; the message
 * ends with the last lines the process printed.
 */
export async function startSecantus(options: StartOptions): Promise<EmbeddedServer> {
  const port = options.port ?? (await getPort({ host: '127.0.0.1' }));
  if (options.dataDir !== ':memory:') await mkdir(options.dataDir, { recursive: true });
  // --standalone: no replica-set advertisement and so no oplog. Nothing here uses
  // change streams or transactions, and without the oplog an update no longer pays for
  // a diff of the whole document (a single $inc on a 1 MiB bucket document: 121 ms
  // instead of 441 ms, scripts/bench/server-costs.ts).
  const child = spawn(
    options.binary,
    ['--host', '127.0.0.1', '--port', String(port), '--storage-path', options.dataDir, '--log-level', 'WARNING', '--standalone'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));

  const uri = `mongodb://127.0.0.1:${port}/?directConnection=true`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  let early: number | null | undefined;
  void exited.then((code) => (early = code));
  for (;;) {
    if (early !== undefined) {
      throw new Error(`The embedded database exited with code ${early} before it was ready:\n${output}`);
    }
    const client = new MongoClient(uri, { serverSelectionTimeoutMS: 500, connectTimeoutMS: 500 });
    try {
      await client.db('admin').command({ ping: 1 });
      break;
    } catch {
      if (Date.now() > deadline) {
        await stopChild(child, exited);
        throw new Error(`The embedded database did not answer on port ${port} in time:\n${output}`);
      }
      await new Promise((done) => setTimeout(done, 200));
    } finally {
      await client.close();
    }
  }
  options.say(`Embedded database SecantusDB ${SECANTUS_VERSION} is running on 127.0.0.1:${port} (data: ${options.dataDir})`);
  return { uri, port, stop: () => stopChild(child, exited) };
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
