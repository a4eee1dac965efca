/**
 * `npm run token`: create, list and revoke against the test database, run as a child
 * process like an operator would, and the tokens it makes used against the API.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { testMongoUri } from '../helpers/db.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
let t: TestApp;

/** Runs `tsx scripts/token.ts ...args` on the test app's database; resolves with its exit code and output. */
function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      `${root}node_modules/.bin/tsx`,
      ['scripts/token.ts', ...args],
      { cwd: root, env: { ...process.env, MONGODB_URI: testMongoUri(), MONGODB_DB: t.store.db.databaseName } },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const TOKEN = /tsg_[A-Za-z0-9_-]{43}/;

beforeAll(async () => {
  // No token cache: each request sees the database as it is.
  t = await openTestApp('token_cli', { auth: 'tokens', tokenCacheMs: 0 });
});
afterAll(async () => t.close());

describe('npm run token', () => {
  const made: Record<string, { id: string; token: string }> = {};

  it('creates a token, prints it once as JSON, and stores only its hash', async () => {
    const run = await cli('create', '--name', 'ingest', '--scope', 'write', '--prefix', 'cpu', '--prefix', 'mem', '--json');
    expect(run.code, run.stderr).toBe(0);
    const printed = JSON.parse(run.stdout) as { id: string; name: string; token: string; scopes: string[]; prefixes: string[] };
    expect(printed).toMatchObject({ name: 'ingest', scopes: ['write'], prefixes: ['cpu', 'mem'] });
    expect(printed.token).toMatch(new RegExp(`^${TOKEN.source}$`));
    expect(printed.id).toBe(printed.token.slice(0, 12));
    made.ingest = printed;

    const docs = await t.store.db.collection('tokens').find({}).toArray();
    expect(docs).toHaveLength(1);
    expect(docs[0]).toMatchObject({ _id: printed.id, name: 'ingest', scopes: ['write'], prefixes: ['cpu', 'mem'] });
    expect(docs[0]!.hash).toBe(createHash('sha256').update(printed.token).digest('hex'));
    expect(JSON.stringify(docs)).not.toContain(printed.token.slice(12));
  });

  it('creates a token in plain text, saying it cannot be shown again', async () => {
    const run = await cli('create', '--name', 'dashboard', '--scope', 'read');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/cannot be shown again/);
    const token = TOKEN.exec(run.stdout)![0];
    made.dashboard = { id: token.slice(0, 12), token };
    expect(JSON.stringify(await t.store.db.collection('tokens').find({}).toArray())).not.toContain(token.slice(12));
  });

  it('makes tokens the API accepts, with their scopes and prefixes', async () => {
    const write = await t.graphql(
      `mutation { recordReading(reading: {metric: "cpu", tags: [{key: "host", value: "a"}], time: "2024-01-01T00:00:00Z", fields: [{name: "usage", value: 1}]}) { recorded } }`,
      {},
      { token: made.ingest!.token },
    );
    expect(write.data).toEqual({ recordReading: { recorded: 1 } });
    const foreign = await t.graphql(
      `mutation { recordReading(reading: {metric: "disk", fields: [{name: "used", value: 1}]}) { recorded } }`,
      {},
      { token: made.ingest!.token },
    );
    expect(foreign.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const read = await t.graphql('{ metrics { name } }', {}, { token: made.dashboard!.token });
    expect(read.data).toEqual({ metrics: [{ name: 'cpu' }] });
  });

  it('refuses a name in use and a bad scope, creating nothing', async () => {
    const again = await cli('create', '--name', 'ingest', '--scope', 'read');
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/"ingest" exists already/);
    expect(again.stdout).not.toMatch(TOKEN);
    const bad = await cli('create', '--name', 'other', '--scope', 'read,superuser');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Unknown scope "superuser"/);
    expect(await t.store.db.collection('tokens').countDocuments()).toBe(2);
  });

  it('lists tokens without the tokens or their hashes', async () => {
    const run = await cli('list', '--json');
    expect(run.code, run.stderr).toBe(0);
    const listed = JSON.parse(run.stdout) as Record<string, unknown>[];
    expect(listed.map((item) => [item.id, item.name, item.scopes, item.prefixes, item.revokedAt])).toEqual([
      [made.ingest!.id, 'ingest', ['write'], ['cpu', 'mem'], undefined],
      [made.dashboard!.id, 'dashboard', ['read'], null, undefined],
    ]);
    expect(listed.every((item) => typeof item.lastUsedAt === 'string')).toBe(true);
    expect(run.stdout).not.toMatch(TOKEN);
    expect(run.stdout).not.toMatch(/[0-9a-f]{64}/);
    const table = await cli('list');
    expect(table.stdout).toMatch(new RegExp(`${made.ingest!.id}\\s+ingest\\s+write\\s+cpu\\* mem\\*`));
    expect(table.stdout).toMatch(new RegExp(`${made.dashboard!.id}\\s+dashboard\\s+read\\s+all metrics`));
  });

  it('revokes by name or id; the API then refuses the token', async () => {
    const byName = await cli('revoke', 'ingest');
    expect(byName.code, byName.stderr).toBe(0);
    expect(byName.stdout).toMatch(/^Revoked token "ingest"/);
    const byId = await cli('revoke', made.dashboard!.id);
    expect(byId.code, byId.stderr).toBe(0);
    expect((await cli('revoke', 'ingest')).stdout).toMatch(/revoked already/);
    const unknown = await cli('revoke', 'nobody');
    expect(unknown.code).toBe(1);

    const listed = JSON.parse((await cli('list', '--json')).stdout) as { revokedAt?: string }[];
    expect(listed.every((item) => typeof item.revokedAt === 'string')).toBe(true);
    for (const { token } of Object.values(made)) {
      const response = await t.graphql('{ __typename }', {}, { token });
      expect(response.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
  });
});
