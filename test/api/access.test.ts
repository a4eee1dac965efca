/**
 * Access: API tokens (401 without a valid one), scopes and metric prefixes (FORBIDDEN,
 * nothing written), the admin deletions, CORS and the refusal of cross-site requests.
 * Every refusal is checked against the real database: the whole database is compared
 * before and after.
 */
import { createHash } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '../../src/auth/manage.ts';
import { generateToken } from '../../src/auth/tokens.ts';
import { createApp } from '../../src/server/yoga.ts';
import { revokeToken } from '../../src/storage/tokens.ts';
import { openTestApp, type GraphQLResponse, type TestApp } from '../helpers/app.ts';
import { databaseSnapshot } from '../helpers/snapshot.ts';

const RECORD = `mutation($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded series documents } }`;
const reading = (metric: string, host: string, time: string, field: string, value: number) => ({
  metric,
  tags: [{ key: 'host', value: host }],
  time,
  fields: [{ name: field, value }],
});

/** The seed: cpu (host a on 2 days, host b on 2 days), cpu_temp, mem, disk (2 series on 2 days). */
const SEED = [
  reading('cpu', 'a', '2024-01-01T10:00:00Z', 'usage', 1),
  reading('cpu', 'a', '2024-01-02T10:00:00Z', 'usage', 2),
  reading('cpu', 'b', '2024-01-01T11:00:00Z', 'usage', 3),
  reading('cpu', 'b', '2024-01-03T00:30:00Z', 'usage', 4),
  reading('cpu', 'b', '2024-01-03T05:00:00Z', 'usage', 5),
  reading('cpu_temp', 'a', '2024-01-01T10:00:00Z', 'celsius', 50),
  reading('mem', 'a', '2024-01-01T10:00:00Z', 'used', 10),
  reading('disk', 'a', '2024-01-01T10:00:00Z', 'used', 7),
  reading('disk', 'c', '2024-01-02T10:00:00Z', 'used', 8),
];

const CACHE_MS = 200;
let t: TestApp;
const tokens: Record<string, string> = {};

async function token(name: string, scopes: string, prefixes: string[] = []): Promise<string> {
  const created = await createApiToken(t.store, { name, scopes: [scopes], prefixes });
  tokens[name] = created.token;
  return created.token;
}

beforeAll(async () => {
  t = await openTestApp('access', { auth: 'tokens', tokenCacheMs: CACHE_MS, corsOrigins: ['https://dash.example.com'] });
  await token('admin', 'admin');
  await token('reader', 'read');
  await token('writer', 'write');
  await token('cpu-writer', 'write', ['cpu']);
  await token('cpu-reader', 'read', ['cpu']);
  await token('cpu-admin', 'admin', ['cpu']);
  await token('read-write', 'read,write');
  const seeded = await t.graphql(RECORD, { readings: SEED }, { token: tokens.admin });
  expect(seeded.errors).toBeUndefined();
  // First use of each token records lastUsedAt (at most once an hour); do it before any snapshot.
  for (const value of Object.values(tokens)) expect((await t.graphql('{ __typename }', {}, { token: value })).errors).toBeUndefined();
});
afterAll(async () => t.close());

/** Posts a GraphQL request and returns the status, headers and body. */
async function post(body: unknown, headers: Record<string, string> = {}) {
  const response = await t.app.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as GraphQLResponse<unknown> };
}

const codeOf = (response: GraphQLResponse<unknown>) => response.errors?.[0]?.extensions?.code;

/** Runs `request`, expects it refused with `code` and the database exactly as before. */
async function expectRefused(code: string, request: () => Promise<GraphQLResponse<unknown>>): Promise<GraphQLResponse<unknown>> {
  const before = await databaseSnapshot(t.store.db);
  const response = await request();
  expect(codeOf(response)).toBe(code);
  expect(await databaseSnapshot(t.store.db)).toBe(before);
  return response;
}

describe('authentication', () => {
  const mutation = { query: RECORD, variables: { readings: [reading('cpu', 'z', '2024-02-01T00:00:00Z', 'usage', 9)] } };

  it.each([
    ['no Authorization header', {}],
    ['an empty bearer', { authorization: 'Bearer ' }],
    ['another scheme', { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` }],
    ['a bearer that is not a token', { authorization: 'Bearer hunter2' }],
    ['a well-formed token nobody created', { authorization: `Bearer ${generateToken().token}` }],
  ])('refuses %s with 401 UNAUTHENTICATED and writes nothing', async (_case, headers) => {
    const before = await databaseSnapshot(t.store.db);
    const response = await post(mutation, headers);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(codeOf(response.body)).toBe('UNAUTHENTICATED');
    expect(response.body.data ?? null).toBeNull();
    expect(await databaseSnapshot(t.store.db)).toBe(before);
  });

  it('refuses queries without a token too, before parsing them', async () => {
    const response = await post({ query: '{ metrics { name } }' });
    expect([response.status, codeOf(response.body)]).toEqual([401, 'UNAUTHENTICATED']);
    const broken = await post({ query: '{ metrics { nme' });
    expect([broken.status, codeOf(broken.body)]).toEqual([401, 'UNAUTHENTICATED']);
  });

  it('lets a token in, whatever the case of the scheme', async () => {
    const response = await post({ query: '{ metrics { name } }' }, { authorization: `bearer ${tokens.reader}` });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ metrics: [{ name: 'cpu' }, { name: 'cpu_temp' }, { name: 'disk' }, { name: 'mem' }] });
  });

  it('refuses a revoked token once the cache has expired', async () => {
    const { token: value, doc } = await createApiToken(t.store, { name: 'short-lived', scopes: ['read'], prefixes: [] });
    expect((await t.graphql('{ metrics { name } }', {}, { token: value })).errors).toBeUndefined();
    expect((await revokeToken(t.store, doc._id, new Date())).kind).toBe('revoked');
    await new Promise((done) => setTimeout(done, CACHE_MS * 2));
    const response = await post(mutation, { authorization: `Bearer ${value}` });
    expect([response.status, codeOf(response.body)]).toEqual([401, 'UNAUTHENTICATED']);
    const query = await post({ query: '{ metrics { name } }' }, { authorization: `Bearer ${value}` });
    expect([query.status, codeOf(query.body)]).toEqual([401, 'UNAUTHENTICATED']);
  });

  it('refuses a token revoked before its first use at once', async () => {
    const { token: value } = await createApiToken(t.store, { name: 'never-used', scopes: ['admin'], prefixes: [] });
    await revokeToken(t.store, 'never-used', new Date());
    await expectRefused('UNAUTHENTICATED', () => t.graphql(RECORD, mutation.variables, { token: value }));
  });

  it('keeps /health, /ready and the GraphiQL page open, with the header editor pre-filled', async () => {
    expect((await t.app.fetch('http://yoga/health')).status).toBe(200);
    expect((await t.app.fetch('http://yoga/ready')).status).toBe(200);
    const page = await t.app.fetch('http://yoga/graphql', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const html = await page.text();
    const options = JSON.parse(/renderYogaGraphiQL\(\s*window\.document\.querySelector\('#root'\),\s*(\{.*\}),\s*\);/.exec(html)![1]!) as {
      headers?: string;
    };
    expect(JSON.parse(options.headers!)).toEqual({ Authorization: 'Bearer <paste a token>' });
  });

  it('records when a token was last used, and stores no token in clear', async () => {
    const docs = await t.store.db.collection('tokens').find({}).toArray();
    const admin = docs.find((doc) => doc.name === 'admin')!;
    expect(admin.lastUsedAt).toBeInstanceOf(Date);
    expect(admin.hash).toBe(createHash('sha256').update(tokens.admin!).digest('hex'));
    const stored = JSON.stringify(docs);
    for (const value of Object.values(tokens)) expect(stored).not.toContain(value.slice(12));
  });
});

describe('scopes', () => {
  it('refuses writes with a read token: FORBIDDEN, nothing written', async () => {
    const response = await expectRefused('FORBIDDEN', () =>
      t.graphql(RECORD, { readings: [reading('cpu', 'a', '2024-01-05T00:00:00Z', 'usage', 1)] }, { token: tokens.reader }),
    );
    expect(response.errors![0]!.message).toContain('"write"');
    expect(response.data ?? null).toBeNull();
    await expectRefused('FORBIDDEN', () =>
      t.graphql(
        `mutation { recordReading(reading: {metric: "fresh", fields: [{name: "x", value: 1}]}) { recorded } }`,
        {},
        { token: tokens.reader },
      ),
    );
  });

  it('refuses reads with a write token, leaking nothing', async () => {
    for (const query of [
      '{ metrics { name } }',
      '{ metric(name: "cpu") { name fields } }',
      '{ tagValues(metric: "cpu", key: "host") }',
      '{ series(metric: "cpu") { id } }',
      '{ seriesById(id: "cpu,host=a") { id } }',
      '{ buckets(metric: "cpu", field: "usage", granularity: DAY, from: "2024-01-01T00:00:00Z", to: "2024-01-04T00:00:00Z") { buckets { count } } }',
      '{ aggregate(metric: "cpu", field: "usage", from: "2024-01-01T00:00:00Z", to: "2024-01-04T00:00:00Z") { count } }',
    ]) {
      const response = await expectRefused('FORBIDDEN', () => t.graphql(query, {}, { token: tokens.writer }));
      expect(response.data ?? null, query).toSatisfy(
        (data: unknown) => data === null || Object.values(data as object).every((value) => value === null),
      );
      expect(JSON.stringify(response), query).not.toMatch(/usage|host=|"a"/);
    }
  });

  it('lets a read,write token do both', async () => {
    const recorded = await t.graphql(
      RECORD,
      { readings: [reading('mem', 'b', '2024-01-05T00:00:00Z', 'used', 3)] },
      { token: tokens['read-write'] },
    );
    expect(recorded.data).toEqual({ recordReadings: { recorded: 1, series: 1, documents: 1 } });
    const read = await t.graphql<{ series: { id: string }[] }>('{ series(metric: "mem") { id } }', {}, { token: tokens['read-write'] });
    expect(read.data!.series.map((series) => series.id)).toEqual(['mem,host=a', 'mem,host=b']);
  });

  it('keeps setMetricKind, deleteMetric and deleteSeries to admin tokens', async () => {
    for (const value of [tokens.reader, tokens.writer, tokens['read-write']]) {
      await expectRefused('FORBIDDEN', () =>
        t.graphql('mutation { setMetricKind(metric: "claimed", kind: COUNTER) { name } }', {}, { token: value }),
      );
      await expectRefused('FORBIDDEN', () => t.graphql('mutation { deleteMetric(metric: "mem") { documents } }', {}, { token: value }));
      await expectRefused('FORBIDDEN', () => t.graphql('mutation { deleteSeries(id: "mem,host=a") { documents } }', {}, { token: value }));
    }
    const response = await t.graphql(
      'mutation { setMetricKind(metric: "claimed", kind: COUNTER) { name kind } }',
      {},
      { token: tokens.admin },
    );
    expect(response.data).toEqual({ setMetricKind: { name: 'claimed', kind: 'COUNTER' } });
  });
});

describe('metric prefixes', () => {
  it('refuses a write to a metric outside the prefixes', async () => {
    const response = await expectRefused('FORBIDDEN', () =>
      t.graphql(RECORD, { readings: [reading('mem', 'a', '2024-01-06T00:00:00Z', 'used', 1)] }, { token: tokens['cpu-writer'] }),
    );
    expect(response.errors![0]!.message).toContain('"mem"');
  });

  it('refuses a whole batch with one foreign metric among allowed ones, writing nothing', async () => {
    const readings = [
      reading('cpu', 'a', '2024-01-06T00:00:00Z', 'usage', 1),
      reading('cpu_temp', 'a', '2024-01-06T00:00:00Z', 'celsius', 40),
      reading('new_cpu_metric', 'a', '2024-01-06T00:00:00Z', 'usage', 1),
      reading('cpu', 'q', '2024-01-06T00:00:00Z', 'usage', 1),
    ];
    const response = await expectRefused('FORBIDDEN', () => t.graphql(RECORD, { readings }, { token: tokens['cpu-writer'] }));
    expect(response.errors![0]!.message).toContain('"new_cpu_metric"');
  });

  it('accepts a batch whose metrics all start with a prefix', async () => {
    const readings = [
      reading('cpu', 'a', '2024-01-07T00:00:00Z', 'usage', 6),
      reading('cpu_temp', 'a', '2024-01-07T00:00:00Z', 'celsius', 41),
    ];
    const response = await t.graphql(RECORD, { readings }, { token: tokens['cpu-writer'] });
    expect(response.data).toEqual({ recordReadings: { recorded: 2, series: 2, documents: 2 } });
    // The batch is acknowledged as a log entry; the fold writes its series-day documents.
    await t.settle();
    const stored = await t.store.seriesDays.countDocuments({ date: new Date('2024-01-07T00:00:00Z') });
    expect(stored).toBe(2);
  });

  it('lists only the metrics a token may touch', async () => {
    const response = await t.graphql('{ metrics { name } }', {}, { token: tokens['cpu-reader'] });
    expect(response.data).toEqual({ metrics: [{ name: 'cpu' }, { name: 'cpu_temp' }] });
  });

  it('refuses every operation naming a metric outside the prefixes', async () => {
    const reader = tokens['cpu-reader'];
    for (const query of [
      '{ metric(name: "mem") { name } }',
      '{ metric(name: "nothing_here") { name } }',
      '{ tagValues(metric: "mem", key: "host") }',
      '{ series(metric: "mem") { id } }',
      '{ seriesById(id: "mem,host=a") { id } }',
      '{ buckets(metric: "mem", field: "used", granularity: DAY, from: "2024-01-01T00:00:00Z", to: "2024-01-02T00:00:00Z") { buckets { count } } }',
      '{ aggregate(metric: "mem", field: "used", from: "2024-01-01T00:00:00Z", to: "2024-01-02T00:00:00Z") { count } }',
    ]) {
      const response = await expectRefused('FORBIDDEN', () => t.graphql(query, {}, { token: reader }));
      expect(JSON.stringify(response.data ?? null), query).not.toContain('mem,');
    }
    const admin = tokens['cpu-admin'];
    await expectRefused('FORBIDDEN', () =>
      t.graphql('mutation { setMetricKind(metric: "mem", kind: GAUGE) { name } }', {}, { token: admin }),
    );
    await expectRefused('FORBIDDEN', () => t.graphql('mutation { deleteMetric(metric: "mem") { documents } }', {}, { token: admin }));
    await expectRefused('FORBIDDEN', () => t.graphql('mutation { deleteSeries(id: "mem,host=a") { documents } }', {}, { token: admin }));
  });

  it('answers operations inside the prefixes', async () => {
    const response = await t.graphql<{ aggregate: { count: number; sum: number }[] }>(
      '{ aggregate(metric: "cpu", field: "usage", from: "2024-01-01T00:00:00Z", to: "2024-01-04T00:00:00Z") { count sum } }',
      {},
      { token: tokens['cpu-reader'] },
    );
    expect(response.data).toEqual({ aggregate: [{ count: 5, sum: 15 }] });
  });
});

describe('admin deletions', () => {
  it('deleteSeries removes the series-day documents and registry entry of one series', async () => {
    const id = (await t.store.series.findOne({ key: 'cpu,host=b' }))!._id;
    const response = await t.graphql(
      'mutation { deleteSeries(id: "cpu,host=b") { documents series metrics } }',
      {},
      { token: tokens['cpu-admin'] },
    );
    expect(response.data).toEqual({ deleteSeries: { documents: 2, series: 1, metrics: 0 } });
    expect(await t.store.seriesDays.countDocuments({ series: id })).toBe(0);
    expect(await t.store.series.countDocuments({ _id: id })).toBe(0);
    // host a of cpu keeps its data
    expect(await t.store.series.countDocuments({ key: 'cpu,host=a' })).toBe(1);
    const left = await t.graphql(
      '{ aggregate(metric: "cpu", field: "usage", from: "2024-01-01T00:00:00Z", to: "2024-01-04T00:00:00Z") { count sum } }',
      {},
      { token: tokens.admin },
    );
    expect(left.data).toEqual({ aggregate: [{ count: 2, sum: 3 }] });
  });

  it('deleteMetric removes the series-day documents, series and registry entry of a metric', async () => {
    const response = await t.graphql('mutation { deleteMetric(metric: "disk") { documents series metrics } }', {}, { token: tokens.admin });
    expect(response.data).toEqual({ deleteMetric: { documents: 2, series: 2, metrics: 1 } });
    expect(await t.store.seriesDays.countDocuments({ metric: 'disk' })).toBe(0);
    expect(await t.store.series.countDocuments({ metric: 'disk' })).toBe(0);
    expect(await t.store.metrics.countDocuments({ _id: 'disk' })).toBe(0);
    const metrics = await t.graphql<{ metrics: { name: string }[] }>('{ metrics { name } }', {}, { token: tokens.admin });
    expect(metrics.data!.metrics.map((metric) => metric.name)).not.toContain('disk');
  });

  it('forgets the deleted metric in the registry caches, so recording it again registers it again', async () => {
    const again = await t.graphql(
      RECORD,
      { readings: [reading('disk', 'a', '2024-01-01T10:00:00Z', 'used', 70)] },
      { token: tokens.admin },
    );
    expect(again.data).toEqual({ recordReadings: { recorded: 1, series: 1, documents: 1 } });
    const metric = await t.graphql('{ metric(name: "disk") { fields seriesCount series { id } } }', {}, { token: tokens.admin });
    expect(metric.data).toEqual({ metric: { fields: ['used'], seriesCount: 1, series: [{ id: 'disk,host=a' }] } });
  });

  it('answers NOT_FOUND for what does not exist, changing nothing', async () => {
    await expectRefused('NOT_FOUND', () =>
      t.graphql('mutation { deleteMetric(metric: "never_recorded") { documents } }', {}, { token: tokens.admin }),
    );
    await expectRefused('NOT_FOUND', () =>
      t.graphql('mutation { deleteSeries(id: "cpu,host=nobody") { documents } }', {}, { token: tokens.admin }),
    );
  });
});

describe('CORS', () => {
  const preflight = (origin: string) =>
    t.app.fetch('http://yoga/graphql', {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });

  it('gives a foreign origin no allow-origin and never allow-credentials', async () => {
    const options = await preflight('https://evil.example');
    expect(options.headers.get('access-control-allow-origin')).toBeNull();
    expect(options.headers.get('access-control-allow-credentials')).toBeNull();
    const response = await post(
      { query: '{ metrics { name } }' },
      { origin: 'https://evil.example', authorization: `Bearer ${tokens.reader}` },
    );
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('allows an origin of CORS_ORIGINS, without credentials', async () => {
    const options = await preflight('https://dash.example.com');
    expect(options.headers.get('access-control-allow-origin')).toBe('https://dash.example.com');
    expect(options.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(options.headers.get('access-control-allow-credentials')).toBeNull();
    const response = await post(
      { query: '{ metrics { name } }' },
      { origin: 'https://dash.example.com', authorization: `Bearer ${tokens.reader}` },
    );
    expect(response.headers.get('access-control-allow-origin')).toBe('https://dash.example.com');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect(response.headers.get('vary')).toMatch(/Origin/);
  });
});

describe('cross-site requests (CSRF)', () => {
  let open: TestApp;
  beforeAll(async () => {
    // Without tokens nothing but these checks stands between a web page and the data.
    open = await openTestApp('csrf');
  });
  afterAll(async () => open.close());

  const write = 'mutation { recordReading(reading: {metric: "csrf", fields: [{name: "x", value: 1}]}) { recorded } }';

  async function refusedRequest(init: RequestInit, status: number, code: string, url = 'http://yoga/graphql'): Promise<void> {
    const before = await databaseSnapshot(open.store.db);
    const response = await open.app.fetch(url, init);
    expect(response.status).toBe(status);
    const body = (await response.json()) as GraphQLResponse<unknown>;
    expect(codeOf(body)).toBe(code);
    expect(body.data ?? null).toBeNull();
    expect(await databaseSnapshot(open.store.db)).toBe(before);
  }

  it('refuses a form-encoded mutation with 415 and writes nothing', async () => {
    await refusedRequest(
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
        body: new URLSearchParams({ query: write }).toString(),
      },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('refuses a multipart mutation with 415 and writes nothing', async () => {
    const form = new FormData();
    form.set('operations', JSON.stringify({ query: write }));
    form.set('map', '{}');
    await refusedRequest({ method: 'POST', headers: { origin: 'https://evil.example' }, body: form }, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('refuses a text/plain body with 415 and writes nothing', async () => {
    await refusedRequest(
      { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ query: write }) },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('refuses a GET without a header that forces a preflight', async () => {
    const url = `http://yoga/graphql?query=${encodeURIComponent('{ metrics { name } }')}`;
    await refusedRequest({ headers: { accept: 'application/json' } }, 403, 'CSRF_HEADER_REQUIRED', url);
  });

  it('answers a GET query with x-graphql-yoga-csrf, and JSON or GraphQL-document POSTs', async () => {
    await open.graphql(write);
    const url = `http://yoga/graphql?query=${encodeURIComponent('{ metrics { name } }')}`;
    const get = await open.app.fetch(url, { headers: { accept: 'application/json', 'x-graphql-yoga-csrf': '1' } });
    expect(await get.json()).toEqual({ data: { metrics: [{ name: 'csrf' }] } });
    const json = await open.app.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ query: '{ metrics { name } }' }),
    });
    expect(await json.json()).toEqual({ data: { metrics: [{ name: 'csrf' }] } });
    const document = await open.app.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/graphql' },
      body: '{ metrics { name } }',
    });
    expect(await document.json()).toEqual({ data: { metrics: [{ name: 'csrf' }] } });
  });

  it('refuses forms with a valid token too', async () => {
    const before = await databaseSnapshot(t.store.db);
    const response = await t.app.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${tokens.admin}` },
      body: new URLSearchParams({ query: write }).toString(),
    });
    expect(response.status).toBe(415);
    expect(await databaseSnapshot(t.store.db)).toBe(before);
  });
});

describe('the app factory without an auth option', () => {
  it('requires tokens (the secure default)', async () => {
    const app = createApp({ store: t.store, logger: pino({ level: 'silent' }), limits: { maxBatchSize: 10, maxBuckets: 100 } });
    const response = await app.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ metrics { name } }' }),
    });
    expect(response.status).toBe(401);
  });
});
