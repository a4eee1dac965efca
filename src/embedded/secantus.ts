import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
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
  const installed = async () => existsSync(binary) && (await readFile(marker, 'utf8').catch(() => '')).trim() === SECANTUS_VERSION;
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

/** How a database process ended: its exit code, or the signal that ended it (one of the two is null). */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running embedded database server process. */
export interface EmbeddedServer {
  /** Connection string for the official driver, e.g. `mongodb://127.0.0.1:41234/?directConnection=true`. */
  readonly uri: string;
  readonly port: number;
  /** Process id of `secantusd-py`. */
  readonly pid: number;
  /** Settles when the process has exited, for whatever reason (never rejects). */
  readonly exited: Promise<ProcessExit>;
  /** The last lines the process printed (at most 4,000 characters), for error reports. */
  output(): string;
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
  // An absolute path, so the process's command line names the directory unambiguously
  // (see `embedded/state.ts`).
  const dataDir = options.dataDir === ':memory:' ? ':memory:' : resolve(options.dataDir);
  if (dataDir !== ':memory:') await mkdir(dataDir, { recursive: true });
  // --standalone: no replica-set advertisement and so no oplog. Nothing here uses
  // change streams or transactions, and without the oplog an update no longer pays for
  // a diff of the whole document (a single $inc on a 1 MiB series-day document: 121 ms
  // instead of 441 ms, scripts/bench/server-costs.ts).
  const args = ['--host', '127.0.0.1', '--port', String(port), '--storage-path', dataDir, '--log-level', 'WARNING', '--standalone'];
  const child = spawnWithDeathSignal(options.binary, args);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<ProcessExit>((done) => {
    child.once('exit', (code, signal) => done({ code, signal }));
    child.once('error', (error) => {
      keep(Buffer.from(`\n${error.message}`));
      done({ code: null, signal: null });
    });
  });

  const uri = `mongodb://127.0.0.1:${port}/?directConnection=true`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  let early: ProcessExit | undefined;
  void exited.then((exit) => (early = exit));
  for (;;) {
    if (early !== undefined) {
      throw new Error(`The embedded database exited (${describeExit(early)}) before it was ready:\n${output}`);
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
  return { uri, port, pid: child.pid!, exited, output: () => output, stop: () => stopChild(child, exited) };
}

/** "exit code 1" or "signal SIGKILL", for messages. */
export function describeExit(exit: ProcessExit): string {
  return exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
}

/**
 * Python run by the venv's interpreter before the database: on Linux it asks the kernel
 * to send the process SIGTERM when its parent dies (prctl PR_SET_PDEATHSIG, which
 * survives execve for programs that are not set-user-ID), exits at once if the parent
 * is already gone, then replaces itself with `secantusd-py`, keeping the process id.
 * argv: [-c, parent pid, secantusd-py path, its arguments...].
 */
const DEATH_SIGNAL_PRELUDE = `
import os, signal, sys
parent, target = int(sys.argv[1]), sys.argv[2]
if sys.platform.startswith("linux"):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(1, int(signal.SIGTERM), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
if os.getppid() != parent:
    sys.exit(0)
os.execv(target, [target] + sys.argv[3:])
`;

/**
 * Spawns `binary args...` so that, on Linux, it receives SIGTERM when this process
 * dies, even by SIGKILL (see {@link DEATH_SIGNAL_PRELUDE}); elsewhere it is spawned
 * as is. Uses the Python interpreter next to `binary` (the virtual environment's).
 */
function spawnWithDeathSignal(binary: string, args: string[]): ChildProcess {
  const python = join(dirname(binary), 'python');
  const stdio: ['ignore', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe'];
  if (process.platform !== 'linux' || !existsSync(python)) return spawn(binary, args, { stdio });
  return spawn(python, ['-c', DEATH_SIGNAL_PRELUDE, String(process.pid), binary, ...args], { stdio });
}

async function stopChild(child: ChildProcess, exited: Promise<ProcessExit>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
