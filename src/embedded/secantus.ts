import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import getPort from 'get-port';
import { MongoClient } from 'mongodb';
import { loadConfig, type Config } from '../config.ts';
import { findRustServer, onPath, RUST_SERVER_BINARY, RUST_SERVER_CRATE, RUST_SERVER_ROOT, RUST_SERVER_VERSION } from './rust.ts';

const run = promisify(execFile);

/** The SecantusDB release the project is tested against (PyPI package `SecantusDB`). */
export const SECANTUS_VERSION = '0.7.0b3';

/** Receives progress messages ("installing ...", "started on port ..."). */
export type Say = (message: string) => void;

/** Which SecantusDB server runs as the embedded database: config `EMBEDDED_SERVER`. */
export type EmbeddedServerKind = Config['EMBEDDED_SERVER'];

/**
 * Makes sure the embedded database server of kind `server` (default: config
 * `EMBEDDED_SERVER`, read from the environment) is there, and returns its executable.
 * - `python`: SecantusDB in the project-local virtual environment `venvDir`, creating
 *   the environment with `python -m venv` and installing the pinned release with pip on
 *   first use (about 20 s to a minute; later calls return at once; `npm install` makes
 *   this call, see `scripts/install-db.ts`). Concurrent callers wait for each other
 *   through a lock directory.
 * - `rust`: `secantusd-rs` as built by `npm run db:install -- --server rust` into
 *   `.embedded-db/rust` (see `rust.ts`); never built here, as that takes minutes.
 * @returns the absolute path of `secantusd-py` or `secantusd-rs`; {@link startSecantus}
 * tells them apart by name.
 * @throws Error when Python or pip fail (the message carries their output), or when the
 * Rust server is asked for and not built (the message says how to build it).
 */
export async function ensureSecantusInstalled(
  venvDir: string,
  python: string,
  say: Say,
  server: EmbeddedServerKind = loadConfig().EMBEDDED_SERVER,
): Promise<string> {
  if (server === 'rust') return findRustServer(RUST_SERVER_ROOT);
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
    say(`Installing the embedded database SecantusDB ${SECANTUS_VERSION} into ${venv} (once; 20 s to a minute)`);
    await rm(venv, { recursive: true, force: true });
    await run(python, ['-m', 'venv', venv]).catch((error: unknown) => {
      throw new Error(
        `Could not create a Python virtual environment with "${python} -m venv" (on Debian and Ubuntu, install the python3-venv package; or set PYTHON to another Python 3.10+): ${String(error)}`,
      );
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
  /** Process id of `secantusd-py` or `secantusd-rs`. */
  readonly pid: number;
  /**
   * Settles when the process has exited, for whatever reason (never rejects), and the
   * throw-away data directory of a Rust server on `':memory:'` has been removed.
   */
  readonly exited: Promise<ProcessExit>;
  /** The last lines the process printed (at most 4,000 characters), for error reports. */
  output(): string;
  /** Stops the process (SIGTERM, then SIGKILL after 10 s) and waits for it to exit. */
  stop(): Promise<void>;
}

/** How {@link startSecantus} starts the embedded database server: its executable, data directory and restart policy. */
export interface StartOptions {
  /** Path of `secantusd-py` or `secantusd-rs`, from {@link ensureSecantusInstalled}. */
  binary: string;
  /**
   * WiredTiger data directory, created if missing; `':memory:'` for a throw-away one
   * (the Python server keeps it in memory; the Rust server, for which the name is not
   * special, gets a temporary directory, removed when it exits).
   */
  dataDir: string;
  /** TCP port on 127.0.0.1; a free one is picked when omitted. */
  port?: number;
  say: Say;
  /** How long to wait for the server to answer a ping, in milliseconds (default 60,000). */
  readyTimeoutMs?: number;
}

/** Prefix of the temporary data directories of Rust servers on `':memory:'`, followed by the owner's pid. */
const RUST_TEMP_PREFIX = 'tsgraph-secantusd-rs-';

/** What differs between the two servers when starting one. */
interface ServerFlavour {
  /** For messages, e.g. `SecantusDB 0.7.0b3`. */
  name: string;
  /**
   * Extra arguments after the common `--host --port --storage-path --log-level
   * --standalone`; `throwAway` when the data directory is a temporary one.
   */
  args(throwAway: boolean): string[];
  /** Extra environment variables. */
  env: Record<string, string>;
  /** The interpreter that runs the death-signal prelude, if any. */
  python(binary: string): string | undefined;
}

const PYTHON_SERVER: ServerFlavour = {
  name: `SecantusDB ${SECANTUS_VERSION}`,
  args: () => [],
  env: {},
  python: (binary) => existingFile(join(dirname(binary), 'python')),
};

const RUST_SERVER: ServerFlavour = {
  name: `${RUST_SERVER_CRATE} ${RUST_SERVER_VERSION} (Rust server)`,
  // Its default WiredTiger cache is 4 GB and its pre-allocated journal file 128 MB, so
  // an empty store takes 129 MB of disk; a throw-away test database needs far less of
  // both. A kept data directory gets 1 GB of cache, the Python server's default.
  args: (throwAway) => (throwAway ? ['--cache-size', '512M', '--log-file-max', '16MB'] : ['--cache-size', '1G']),
  // Its --standalone only stops advertising a replica set; this also stops writing the
  // oplog, as the Python server's --standalone does (nothing here reads the oplog).
  env: { SECANTUS_DISABLE_OPLOG: '1' },
  // The prelude needs only Python's standard library: any python3 on PATH.
  python: () => onPath('python3'),
};

function flavourOf(binary: string): ServerFlavour {
  return basename(binary) === RUST_SERVER_BINARY ? RUST_SERVER : PYTHON_SERVER;
}

function existingFile(path: string): string | undefined {
  return existsSync(path) ? path : undefined;
}

/**
 * Starts `secantusd-py` or `secantusd-rs` (told apart by the file name of
 * `options.binary`) on 127.0.0.1 as a child process and waits until it answers a
 * `ping` through the driver.
 * @throws Error when the process exits early or does not answer in time; the message
 * ends with the last lines the process printed.
 */
export async function startSecantus(options: StartOptions): Promise<EmbeddedServer> {
  const flavour = flavourOf(options.binary);
  const port = options.port ?? (await getPort({ host: '127.0.0.1' }));
  let tempDir: string | undefined;
  if (options.dataDir === ':memory:' && flavour === RUST_SERVER) {
    await removeOrphanedTempDirs();
    tempDir = await mkdtemp(join(tmpdir(), `${RUST_TEMP_PREFIX}${process.pid}-`));
  }
  // An absolute path, so the process's command line names the directory unambiguously
  // (see `embedded/state.ts`).
  const dataDir = tempDir ?? (options.dataDir === ':memory:' ? ':memory:' : resolve(options.dataDir));
  if (dataDir !== ':memory:') await mkdir(dataDir, { recursive: true });
  // --standalone: no replica-set advertisement and so no oplog. Nothing here uses
  // change streams or transactions, and without the oplog an update no longer pays for
  // a diff of the whole document (a single $inc on a 1 MiB series-day document: 121 ms
  // instead of 441 ms, scripts/bench/server-costs.ts, retired after 5e534e9).
  const args = [
    ...['--host', '127.0.0.1', '--port', String(port), '--storage-path', dataDir, '--log-level', 'WARNING', '--standalone'],
    ...flavour.args(tempDir !== undefined),
  ];
  const child = spawnWithDeathSignal(options.binary, args, flavour.python(options.binary), flavour.env);
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
  }).then(async (exit) => {
    if (tempDir) await rm(tempDir, { recursive: true, force: true }).catch(() => {});
    return exit;
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
  options.say(`Embedded database ${flavour.name} is running on 127.0.0.1:${port} (data: ${tempDir ?? options.dataDir})`);
  return { uri, port, pid: child.pid!, exited, output: () => output, stop: () => stopChild(child, exited) };
}

/** "exit code 1" or "signal SIGKILL", for messages. */
export function describeExit(exit: ProcessExit): string {
  return exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
}

/**
 * Removes the temporary data directories of Rust servers (`tsgraph-secantusd-rs-<pid>-*`
 * in `dir`, default the system's temporary directory) whose owner process `<pid>` is
 * gone: a test run or server killed with SIGKILL, whose database got SIGTERM and
 * stopped, but nobody removed its directory. Called before each such directory is made.
 * @returns the names of the directories removed.
 */
export async function removeOrphanedTempDirs(dir: string = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(RUST_TEMP_PREFIX)) continue;
    const owner = Number.parseInt(name.slice(RUST_TEMP_PREFIX.length), 10);
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && !isAlive(owner)) {
      // Not ours to fail on: a directory that cannot be removed is left for the next try.
      const gone = await rm(join(dir, name), { recursive: true, force: true }).then(
        () => true,
        () => false,
      );
      if (gone) removed.push(name);
    }
  }
  return removed;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Python run before the database (by the venv's interpreter, or any python3 for the
 * Rust server): on Linux it asks the kernel to send the process SIGTERM when its parent
 * dies (prctl PR_SET_PDEATHSIG, which survives execve for programs that are not
 * set-user-ID), exits at once if the parent is already gone, then replaces itself with
 * the database server, keeping the process id.
 * argv: [-c, parent pid, server executable path, its arguments...].
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
 * Spawns `binary args...` with `extraEnv` added to this process's environment so that,
 * on Linux, it receives SIGTERM when this process dies, even by SIGKILL (see
 * {@link DEATH_SIGNAL_PRELUDE}, run by `python`); elsewhere, or without a `python`,
 * it is spawned as is.
 */
function spawnWithDeathSignal(binary: string, args: string[], python: string | undefined, extraEnv: Record<string, string>): ChildProcess {
  const options = { stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...extraEnv } };
  if (process.platform !== 'linux' || !python) return spawn(binary, args, options);
  return spawn(python, ['-c', DEATH_SIGNAL_PRELUDE, String(process.pid), binary, ...args], options);
}

/**
 * Stops `child` (SIGTERM, then SIGKILL after 10 s) and waits for it to exit. The Python
 * server's stop takes about 2 s when idle: it waits that long for its accept thread,
 * which closing its listening socket does not wake on Linux. Connecting to it while it
 * stops wakes that thread, but it left the server hung until the SIGKILL in 1 stop of
 * 6 to 12 (measured), so the 2 s stay.
 */
async function stopChild(child: ChildProcess, exited: Promise<ProcessExit>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
