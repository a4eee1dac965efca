/**
 * Installs the embedded database server, if it is not there yet.
 *
 *   npm run db:install                     # the Python server (SecantusDB, pinned) into .embedded-db/venv
 *   npm run db:install -- --server rust    # builds the Rust server (secantus-mdb) with cargo into .embedded-db/rust
 *
 * The server and the tests install the Python server themselves on first use; CI calls
 * this up front so the install is its own step. The Rust server is opt-in
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
  .parse()
  .opts<{ server: 'python' | 'rust' }>();

const config = loadConfig();
try {
  const say = (message: string) => console.log(message);
  const binary =
    options.server === 'rust'
      ? await buildRustServer(RUST_SERVER_ROOT, say)
      : await ensureSecantusInstalled(config.EMBEDDED_VENV_DIR, config.PYTHON, say, 'python');
  console.log(`Embedded database server: ${binary}`);
  if (options.server === 'rust') console.log('Use it with EMBEDDED_SERVER=rust (npm start, npm test); see docs/compatibility.md.');
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
