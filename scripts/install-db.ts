/**
 * Installs the embedded database server, if it is not there yet.
 *
 *   npm run db:install                     # the Python server (SecantusDB, pinned) into .embedded-db/venv
 *   npm run db:install -- --server rust    # builds the Rust server (secantus-mdb) with cargo into .embedded-db/rust
 *   tsx scripts/install-db.ts --optional   # what `npm install` runs after it (the `postinstall` script)
 *
 * `npm install` installs the Python server this way, so the first `npm test` or `npm
 * start` does not pay for it (about 18 s here, from a warm pip cache). With `--optional`
 * nothing is installed when `MONGODB_URI` names another server, and a failure (no
 * Python, no `venv` module, no package index) is printed as a warning and leaves the
 * exit code 0: `npm install` succeeds, and the server and the tests, which install the
 * Python server themselves on first use, try again and report the error then. The Rust server is opt-in
 * (`EMBEDDED_SERVER=rust`) and only ever built here: 5 to 60 minutes, needs cargo,
 * cmake and a C compiler; cargo's lines are printed as they come.
 */
import { Command, Option } from 'commander';
import { loadConfig } from '../src/config.ts';
import { buildRustServer, RUST_SERVER_ROOT } from '../src/embedded/rust.ts';
import { ensureSecantusInstalled } from '../src/embedded/secantus.ts';

const options = new Command()
  .name('db:install')
  .description('Install the embedded database server.')
  .addOption(
    new Option('--server <kind>', 'python: SecantusDB from PyPI; rust: build secantus-mdb with cargo')
      .choices(['python', 'rust'])
      .default('python'),
  )
  .option('--optional', 'skip when MONGODB_URI is set; on failure warn and exit 0 (the first run tries again)')
  .parse()
  .opts<{ server: 'python' | 'rust'; optional?: boolean }>();

try {
  const config = loadConfig();
  if (options.optional && config.MONGODB_URI) {
    console.log('MONGODB_URI is set: the embedded database is not installed now (the first run without it installs it).');
    process.exit(0);
  }
  const say = (message: string) => console.log(message);
  const binary =
    options.server === 'rust'
      ? await buildRustServer(RUST_SERVER_ROOT, say)
      : await ensureSecantusInstalled(config.EMBEDDED_VENV_DIR, config.PYTHON, say, 'python');
  console.log(`Embedded database server: ${binary}`);
  if (options.server === 'rust') console.log('Use it with EMBEDDED_SERVER=rust (npm start, npm test); see docs/compatibility.md.');
} catch (error) {
  console.error((error as Error).message);
  if (options.optional) {
    console.error('The embedded database is not installed; the first `npm start` or `npm test` without MONGODB_URI tries again.');
    process.exit(0);
  }
  process.exit(1);
}
