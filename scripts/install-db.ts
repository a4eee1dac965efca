/**
 * Installs the embedded database (SecantusDB, pinned) into the project-local Python
 * virtual environment, if it is not there yet. The server and the tests also do this on
 * first use; CI calls it up front so the install is its own step.
 */
import { loadConfig } from '../src/config.ts';
import { ensureSecantusInstalled } from '../src/embedded/secantus.ts';

const config = loadConfig();
const binary = await ensureSecantusInstalled(config.EMBEDDED_VENV_DIR, config.PYTHON, (message) => console.log(message));
console.log(`Embedded database server: ${binary}`);
