/**
 * The embedded database's state file, `<dataDir>/tsgraph-embedded.json`: which process
 * serves a data directory, so that a server started after a crash can stop a database
 * left running by its predecessor (WiredTiger allows one process per directory), and
 * so that other programs (command-line tools) can reach the database of a running
 * server. Recognising the process relies on Linux's `/proc/<pid>/cmdline`; elsewhere
 * no process is ever recognised, so none is ever signalled.
 */
import { readFile, readlink, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';

/** Name of the state file inside the data directory. */
export const STATE_FILE_NAME = 'tsgraph-embedded.json';

/** Contents of the state file. */
export interface EmbeddedStateFile {
  /** Process id of `secantusd-py` or `secantusd-rs`. */
  pid: number;
  /** Its TCP port on 127.0.0.1. */
  port: number;
  /** When it was started, ISO 8601 in UTC, e.g. `2025-01-31T12:00:00.000Z`. */
  startedAt: string;
}

/** A live embedded database found through the state file. */
export interface EmbeddedState {
  pid: number;
  port: number;
  /** Connection string for the driver, e.g. `mongodb://127.0.0.1:41234/?directConnection=true`. */
  uri: string;
}

/** Path of the state file of `dataDir`. */
export function stateFilePath(dataDir: string): string {
  return join(resolve(dataDir), STATE_FILE_NAME);
}

/**
 * Records that process `pid` serves `dataDir` on `port` (written to a temporary file,
 * then renamed, so readers never see half a file).
 */
export async function writeEmbeddedState(dataDir: string, state: EmbeddedStateFile): Promise<void> {
  const path = stateFilePath(dataDir);
  await writeFile(`${path}.tmp`, `${JSON.stringify(state)}\n`);
  await rename(`${path}.tmp`, path);
}

/**
 * Removes the state file, but only when it still names `pid` (when given): a file
 * written by a later process is left alone.
 */
export async function removeEmbeddedState(dataDir: string, pid?: number): Promise<void> {
  if (pid !== undefined && (await readStateFile(dataDir))?.pid !== pid) return;
  await rm(stateFilePath(dataDir), { force: true });
}

/** The state file's contents, or null when it is missing or malformed. */
export async function readStateFile(dataDir: string): Promise<EmbeddedStateFile | null> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(stateFilePath(dataDir), 'utf8'));
  } catch {
    return null;
  }
  const { pid, port, startedAt } = (parsed ?? {}) as Partial<EmbeddedStateFile>;
  if (!Number.isInteger(pid) || pid! <= 1 || !Number.isInteger(port) || typeof startedAt !== 'string') return null;
  return { pid: pid!, port: port!, startedAt };
}

/** File names of the database servers' executables (the Python and the Rust server). */
const SERVER_EXECUTABLES = new Set(['secantusd-py', 'secantusd-rs']);

/**
 * True when `pid` is a live (not zombie) `secantusd-py` or `secantusd-rs` process whose `--storage-path`
 * is `dataDir` (compared after resolving symbolic links, a relative path against the
 * process's working directory). False for any other program, a dead process, or when
 * `/proc` cannot tell (not Linux, another user's process).
 */
export async function isSecantusServing(pid: number, dataDir: string): Promise<boolean> {
  let argv: string[];
  try {
    argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
  } catch {
    return false;
  }
  // A zombie's command line is empty; so is a kernel thread's.
  if (!argv.some((arg) => SERVER_EXECUTABLES.has(basename(arg)))) return false;
  const at = argv.indexOf('--storage-path');
  const storage = at >= 0 ? argv[at + 1] : undefined;
  if (!storage) return false;
  try {
    const cwd = await readlink(`/proc/${pid}/cwd`);
    return (await canonical(resolve(cwd, storage))) === (await canonical(dataDir));
  } catch {
    return false;
  }
}

async function canonical(path: string): Promise<string> {
  return realpath(path).catch(() => resolve(path));
}

/**
 * The embedded database serving `dataDir` according to its state file, or null when
 * there is no state file or the process it names is gone or is not a database server
 * on that directory (a stale file). A running tsgraph server keeps the file current,
 * also across restarts of the database; command-line tools use this to reach it.
 */
export async function readEmbeddedState(dataDir: string): Promise<EmbeddedState | null> {
  const state = await readStateFile(dataDir);
  if (!state || !(await isSecantusServing(state.pid, dataDir))) return null;
  return { pid: state.pid, port: state.port, uri: `mongodb://127.0.0.1:${state.port}/?directConnection=true` };
}

/**
 * Stops the database a previous server left running on `dataDir`, if the state file
 * names one: SIGTERM, then SIGKILL after `timeoutMs` (default 10,000 ms), and waits until
 * the process is gone. A state file naming a dead process or another program is stale
 * and only removed; that process is never signalled.
 * @returns the process id that was stopped, or null when there was none.
 * @throws Error when the process is still alive `timeoutMs` after SIGKILL.
 */
export async function stopLeftoverEmbedded(
  dataDir: string,
  options: { timeoutMs?: number; onFound?: (pid: number) => void } = {},
): Promise<number | null> {
  const state = await readStateFile(dataDir);
  if (!state) return null;
  if (!(await isSecantusServing(state.pid, dataDir))) {
    await removeEmbeddedState(dataDir, state.pid);
    return null;
  }
  options.onFound?.(state.pid);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const gone = () => isSecantusServing(state.pid, dataDir).then((serving) => !serving);
  signal(state.pid, 'SIGTERM');
  if (!(await waitFor(gone, timeoutMs))) {
    // Checked again just before: the pid still names that database.
    if (await isSecantusServing(state.pid, dataDir)) signal(state.pid, 'SIGKILL');
    if (!(await waitFor(gone, timeoutMs))) {
      throw new Error(`The embedded database left running on ${dataDir} (pid ${state.pid}) did not stop`);
    }
  }
  await removeEmbeddedState(dataDir, state.pid);
  return state.pid;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Exited meanwhile.
  }
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((done) => setTimeout(done, 50));
  }
}
