/**
 * Manages API tokens in the server's database.
 *
 *   npm run token -- create --name ingest --scope write --prefix cpu --prefix mem
 *   npm run token -- list
 *   npm run token -- revoke ingest          # or its id, e.g. tsg_3fK9xQ2a
 *
 * Reaches the database through MONGODB_URI (+ MONGODB_DB) when set; otherwise the
 * embedded database of a server running on EMBEDDED_DATA_DIR, or the embedded database
 * started for this command. A token is printed once, at creation; only its SHA-256
 * hash is stored.
 */
import { Command } from 'commander';
import { createApiToken } from '../src/auth/manage.ts';
import { TOKEN_CACHE_MS, TokenSpecError } from '../src/auth/tokens.ts';
import { openToolStore, type ToolStore } from '../src/cli/database.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { listTokens, revokeToken, type TokenDocument } from '../src/storage/tokens.ts';

const collect = (value: string, previous: string[]) => [...previous, value];
const say = (message: string) => console.error(message);

/** Runs `work` on the tool's store, closing it afterwards; prints errors as one line and sets the exit code. */
async function withStore(work: (tool: ToolStore) => Promise<void>): Promise<void> {
  let tool: ToolStore | undefined;
  try {
    tool = await openToolStore(loadConfig(), say);
    await work(tool);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof TokenSpecError) {
      console.error(error.message);
      process.exitCode = 2;
    } else {
      console.error(`token: ${(error as Error).message}`);
      process.exitCode = 1;
    }
  } finally {
    await tool?.close();
  }
}

const metricsText = (doc: TokenDocument) => (doc.prefixes === null ? 'all metrics' : doc.prefixes.map((prefix) => `${prefix}*`).join(' '));
const when = (date: Date | undefined) => (date ? date.toISOString().replace(/\.\d{3}Z$/, 'Z') : '-');

const program = new Command().name('token').description('Create, list and revoke API tokens.');

program
  .command('create')
  .description('create a token and print it once')
  .requiredOption('--name <name>', 'unique name, e.g. the service using it (letters, digits, _ - .)')
  .requiredOption(
    '--scope <scopes>',
    'read, write, admin and/or monitor, comma-separated (admin includes the others; monitor: GET /metrics only)',
    collect,
    [],
  )
  .option('--prefix <prefix>', 'limit the token to metrics whose name starts with this (repeatable)', collect, [])
  .option('--json', 'print the token and its settings as JSON')
  .action(async (options: { name: string; scope: string[]; prefix: string[]; json?: boolean }) => {
    await withStore(async ({ store, where }) => {
      const { token, doc } = await createApiToken(store, { name: options.name, scopes: options.scope, prefixes: options.prefix });
      if (options.json) {
        console.log(
          JSON.stringify({ id: doc._id, name: doc.name, token, scopes: doc.scopes, prefixes: doc.prefixes, createdAt: doc.createdAt }),
        );
        return;
      }
      console.log(`Created API token "${doc.name}" (id ${doc._id}; scopes: ${doc.scopes.join(', ')}; ${metricsText(doc)}) in ${where}:`);
      console.log(`\n  ${token}\n`);
      console.log('Copy it now: it cannot be shown again (only its SHA-256 hash is stored).');
      console.log('Clients send it as the header "Authorization: Bearer <token>".');
    });
  });

program
  .command('list')
  .description('list tokens, valid and revoked (never the tokens themselves)')
  .option('--json', 'print JSON, one array')
  .action(async (options: { json?: boolean }) => {
    await withStore(async ({ store, where }) => {
      const docs = await listTokens(store);
      if (options.json) {
        console.log(JSON.stringify(docs.map(({ _id, hash: _hash, ...doc }) => ({ id: _id, ...doc }))));
        return;
      }
      if (docs.length === 0) {
        console.log(`No API tokens in ${where}. Create one with: npm run token -- create --name NAME --scope read`);
        return;
      }
      const rows = docs.map((doc) => [
        doc._id,
        doc.name,
        doc.scopes.join(','),
        metricsText(doc),
        when(doc.createdAt),
        when(doc.lastUsedAt),
        doc.revokedAt ? `revoked ${when(doc.revokedAt)}` : 'valid',
      ]);
      const header = ['id', 'name', 'scopes', 'metrics', 'created', 'last used', 'status'];
      const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
      for (const row of [header, ...rows])
        console.log(
          row
            .map((cell, column) => cell.padEnd(widths[column]!))
            .join('  ')
            .trimEnd(),
        );
    });
  });

program
  .command('revoke')
  .description('revoke a token by id or name; servers refuse it within a few seconds')
  .argument('<id-or-name>', 'the token id (tsg_ and 8 characters) or name')
  .action(async (idOrName: string) => {
    await withStore(async ({ store }) => {
      const outcome = await revokeToken(store, idOrName, new Date());
      if (outcome.kind === 'unknown') {
        console.error(`No token has the id or name "${idOrName}"`);
        process.exitCode = 1;
      } else if (outcome.kind === 'already') {
        console.log(`Token "${outcome.token.name}" (${outcome.token._id}) was revoked already, at ${when(outcome.token.revokedAt)}`);
      } else {
        console.log(
          `Revoked token "${outcome.token.name}" (${outcome.token._id}); running servers refuse it within ${TOKEN_CACHE_MS / 1000} seconds.`,
        );
      }
    });
  });

await program.parseAsync();
