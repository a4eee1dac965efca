/**
 * Runs the saved example operations of `schema/examples/` against a running server and
 * prints each answer, as quoted in docs/querying.md.
 *
 *   npm run examples -- --url http://127.0.0.1:4000/graphql [names...]
 *
 * A server with AUTH=tokens needs a token of scope `read`: `--token` or TSGRAPH_TOKEN.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Command } from 'commander';

const program = new Command()
  .name('run-examples')
  .argument('[names...]', 'example files to run (default: all queries, not mutations)')
  .option('--url <url>', 'GraphQL endpoint', 'http://127.0.0.1:4000/graphql')
  .option('--token <token>', 'API token with scope read (default: $TSGRAPH_TOKEN)', process.env.TSGRAPH_TOKEN)
  .parse();
const { url, token } = program.opts<{ url: string; token?: string }>();
const directory = new URL('../schema/examples/', import.meta.url);
const names = program.args.length > 0 ? program.args : readdirSync(directory).filter((name) => name.endsWith('.graphql'));

for (const name of names) {
  const query = readFileSync(new URL(name.endsWith('.graphql') ? name : `${name}.graphql`, directory), 'utf8');
  if (program.args.length === 0 && /^\s*mutation\b/m.test(query)) continue;
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query }),
  });
  const body = await response.json();
  console.log(`### ${name} (${Math.round(performance.now() - started)} ms)\n${JSON.stringify(body, null, 1)}\n`);
}
