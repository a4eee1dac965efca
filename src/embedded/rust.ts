/**
 * SecantusDB's Rust server (crate `secantus-mdb`, binary `secantusd-rs`), the opt-in
 * alternative to the Python server (`EMBEDDED_SERVER=rust`). There is no prebuilt
 * package on a registry this project may use, so it is built from source with
 * `cargo install` into a project-local directory by `npm run db:install -- --server rust`
 * (needs cargo, cmake and a C compiler; 5 minutes on a quiet 2-core machine, 57 minutes
 * measured on 2 cores at a load average of 10 to 12). Neither the server nor the tests ever start that build: they only look for
 * its result ({@link findRustServer}).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The crate holding the Rust server, on crates.io. */
export const RUST_SERVER_CRATE = 'secantus-mdb';

/** The `secantus-mdb` release the project is tested against. */
export const RUST_SERVER_VERSION = '0.5.3-beta.196';

/** Name of the server's executable inside `<root>/bin`. */
export const RUST_SERVER_BINARY = 'secantusd-rs';

/** Where `npm run db:install -- --server rust` installs it (cargo's `--root`), relative to the working directory. */
export const RUST_SERVER_ROOT = '.embedded-db/rust';

/** Path of `secantusd-rs` under the cargo install root `root`. */
export function rustServerBinary(root: string = RUST_SERVER_ROOT): string {
  return join(resolve(root), 'bin', RUST_SERVER_BINARY);
}

/** The marker file written once a build of {@link RUST_SERVER_VERSION} succeeded. */
function markerPath(root: string): string {
  return join(resolve(root), 'installed-version');
}

async function isBuilt(root: string): Promise<boolean> {
  const marker = await readFile(markerPath(root), 'utf8').catch(() => '');
  return existsSync(rustServerBinary(root)) && marker.trim() === RUST_SERVER_VERSION;
}

/**
 * The path of a built `secantusd-rs` of {@link RUST_SERVER_VERSION} under `root`.
 * @throws Error saying how to build it when it is missing or of another version
 * (building takes minutes, so it is never started implicitly).
 */
export async function findRustServer(root: string = RUST_SERVER_ROOT): Promise<string> {
  if (await isBuilt(root)) return rustServerBinary(root);
  throw new Error(
    `EMBEDDED_SERVER=rust, but ${RUST_SERVER_CRATE} ${RUST_SERVER_VERSION} is not built in ${resolve(root)}: ` +
      'run "npm run db:install -- --server rust" once (5 to 60 minutes; needs cargo, cmake and a C compiler), ' +
      'or unset EMBEDDED_SERVER to use the Python server',
  );
}

/** Tools the build needs, each with how to get it. */
const BUILD_TOOLS = [
  { command: 'cargo', install: 'Rust 1.95 or newer, from rustup (https://rustup.rs) or your system packages' },
  { command: 'cmake', install: 'cmake 3.x (Debian/Ubuntu: apt-get install cmake; Fedora: dnf install cmake; macOS: brew install cmake)' },
  { command: 'cc', install: 'a C compiler (Debian/Ubuntu: apt-get install build-essential; macOS: xcode-select --install)' },
] as const;

/** True when `command` is an executable file in one of the `PATH` directories. */
export function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

/** Receives one line of progress: a message of ours, or a line cargo printed. */
export type Progress = (line: string) => void;

/**
 * Builds `secantusd-rs` {@link RUST_SERVER_VERSION} with
 * `cargo install secantus-mdb --version ... --locked --ignore-rust-version --root <root>`
 * unless it is already there, passing every line cargo prints to `progress` as it
 * comes, prefixed with the minutes and seconds since the start (`[ 3:07] Compiling ...`).
 * `--locked` builds the dependency versions the release was published with;
 * `--ignore-rust-version` because the crate asks for Rust 1.98 and builds on 1.95.
 * @returns the absolute path of the executable.
 * @throws Error naming what to install when cargo, cmake or a C compiler is missing,
 * or carrying cargo's last lines when the build fails.
 */
export async function buildRustServer(root: string, progress: Progress): Promise<string> {
  const binary = rustServerBinary(root);
  if (await isBuilt(root)) {
    progress(`${RUST_SERVER_CRATE} ${RUST_SERVER_VERSION} is already built: ${binary}`);
    return binary;
  }
  const missing = BUILD_TOOLS.filter((tool) => !onPath(tool.command));
  if (missing.length > 0) {
    throw new Error(
      `Building the Rust server needs ${missing.map((tool) => tool.command).join(', ')}, not found on PATH. Install:\n` +
        missing.map((tool) => `  ${tool.command}: ${tool.install}`).join('\n'),
    );
  }
  const { stdout: cargoVersion } = await run('cargo', ['--version']);
  await mkdir(resolve(root), { recursive: true });
  const started = Date.now();
  const stamp = () => {
    const seconds = Math.floor((Date.now() - started) / 1000);
    return `[${String(Math.floor(seconds / 60)).padStart(2)}:${String(seconds % 60).padStart(2, '0')}]`;
  };
  progress(
    `Building ${RUST_SERVER_CRATE} ${RUST_SERVER_VERSION} with ${cargoVersion.trim()} into ${resolve(root)} ` +
      '(5 minutes on a quiet 2-core machine, up to an hour on a busy one; cargo prints a line per crate, ' +
      'with long silences while it compiles the WiredTiger C library and links)',
  );
  const args = [
    'install',
    RUST_SERVER_CRATE,
    '--version',
    RUST_SERVER_VERSION,
    '--locked',
    '--ignore-rust-version',
    '--root',
    resolve(root),
    '--color',
    'never',
  ];
  const child = spawn('cargo', args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Line-by-line messages instead of a redrawn progress bar.
    env: { ...process.env, CARGO_TERM_PROGRESS_WHEN: 'never' },
  });
  const last: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      last.push(line);
      if (last.length > 30) last.shift();
      if (line.trim() !== '') progress(`${stamp()} ${line.trim()}`);
    });
  }
  const code = await new Promise<number | null>((done, fail) => {
    child.once('error', fail);
    child.once('close', (exitCode) => done(exitCode));
  });
  if (code !== 0 || !existsSync(binary)) {
    throw new Error(`cargo install ${RUST_SERVER_CRATE} ${RUST_SERVER_VERSION} failed (exit code ${code}):\n${last.join('\n')}`);
  }
  await writeFile(markerPath(root), `${RUST_SERVER_VERSION}\n`);
  progress(`${stamp()} Built ${binary}`);
  return binary;
}
