/**
 * `POST /api/v2/write`: InfluxDB line protocol as a real client writes it (the official
 * `@influxdata/influxdb-client` WriteApi over HTTP, gzipped, `Authorization: Token`),
 * stored totals checked exactly against a plain loop through the GraphQL API; escaping;
 * every refusal with its HTTP status, code, line and column, and the whole database
 * unchanged; exactly-once retries with `Idempotency-Key`.
 */
import { gzipSync } from 'node:zlib';
import { InfluxDB, Point } from '@influxdata/influxdb-client';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/server/yoga.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { databaseSnapshot } from '../helpers/snapshot.ts';
import { serveOnLoopback, type Loopback } from '../helpers/loopback.ts';
import { random } from '../helpers/random.ts';
import { createWriteRouteTokens } from '../helpers/tokens.ts';

let t: TestApp;
let server: Loopback;
let url: string;
/** An app on the same database with small limits: 2,000 body bytes, 5 readings per request. */
let small: ReturnType<typeof createApp>;
let tokens: Record<string, string>;
/** Content-Encoding and Authorization scheme of each request the HTTP server received. */
const received: string[] = [];

beforeAll(async () => {
  t = await openTestApp('lineprotocol', { auth: 'tokens', journal: false });
  tokens = await createWriteRouteTokens(t, 'lp-writer', 'lp_');
  server = await serveOnLoopback(t.app, (request) => {
    received.push(`${request.headers['content-encoding']} ${request.headers.authorization?.split(' ')[0]}`);
  });
  url = server.url;
  small = createApp({
    store: t.store,
    logger: pino({ level: 'silent' }),
    limits: { maxBatchSize: 5, maxBuckets: 1000 },
    auth: { mode: 'tokens', corsOrigins: [] },
    requestLimits: { maxBodyBytes: 2000 },
  });
});
afterAll(async () => {
  await server.close();
  await t.close();
});

/** Sends a body to /api/v2/write of `app` (default: the test app) and returns status, headers and parsed body. */
async function write(
  body: string | Uint8Array,
  options: { query?: string; headers?: Record<string, string>; token?: string | null; app?: ReturnType<typeof createApp> } = {},
) {
  const token = options.token === undefined ? tokens.writer : options.token;
  const response = await (options.app ?? t.app).fetch(`http://yoga/api/v2/write?org=o&bucket=b${options.query ?? ''}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain; charset=utf-8', ...(token ? { authorization: `Token ${token}` } : {}), ...options.headers },
    body,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? null : (JSON.parse(text) as ErrorBody) };
}

interface ErrorBody {
  code: string;
  message: string;
  line?: number;
  column?: number;
  extensions: { code: string };
}

/** Runs `request`, expects its status, InfluxDB code and our code, and the database exactly as before. */
async function expectRefused(status: number, code: string, request: () => ReturnType<typeof write>) {
  const before = await databaseSnapshot(t.store.db);
  const response = await request();
  expect({ status: response.status, code: response.body?.extensions.code }).toEqual({ status, code });
  expect(await databaseSnapshot(t.store.db)).toBe(before);
  return response.body!;
}

const START = Date.UTC(2024, 2, 1);
const DAY = 86_400_000;

describe('the InfluxDB client library writes unchanged', () => {
  it('stores every point of a WriteApi (gzipped batches, Token scheme) exactly, as a plain loop computes', async () => {
    const next = random(7);
    const points: { host: string; region: string; time: number; usage: number; requests: number; bytes: number }[] = [];
    for (let i = 0; i < 160; i++) {
      points.push({
        host: `web-${Math.floor(next() * 2)}`,
        region: next() < 0.5 ? 'eu' : 'us',
        time: START + Math.floor(next() * 2 * DAY),
        usage: Math.floor(next() * 400) / 4,
        requests: Math.floor(next() * 1000),
        bytes: Math.floor(next() * 2 ** 40),
      });
    }
    const client = new InfluxDB({ url, token: tokens['lp-writer'], timeout: 120_000 });
    const writeApi = client.getWriteApi('my-org', 'my-bucket', 'ns', { batchSize: 10_000, flushInterval: 0, maxRetries: 0 });
    writeApi.useDefaultTags({ source: 'client' });
    const toPoint = (p: (typeof points)[number]) =>
      new Point('lp_cpu')
        .tag('host', p.host)
        .tag('region', p.region)
        .floatField('usage', p.usage)
        .intField('requests', p.requests)
        .uintField('bytes', p.bytes)
        .timestamp(new Date(p.time));
    // Two requests of 80 lines (over the client's 1,000-byte threshold, so gzipped); each flush waits for its answer.
    for (let i = 0; i < points.length; i += 80) {
      writeApi.writePoints(points.slice(i, i + 80).map(toPoint));
      await writeApi.flush();
    }
    await writeApi.close();
    expect(received).toEqual(['gzip Token', 'gzip Token']);

    const answer = await t.graphql<{
      usage: { tags: { key: string; value: string }[]; count: number; sum: number; min: number; max: number }[];
      bytes: { count: number; sum: number }[];
      days: { tags: { key: string; value: string }[]; buckets: { start: string; count: number; sum: number | null }[] }[];
      sources: string[];
    }>(
      `query($from: Time!, $to: Time!) {
        usage: aggregate(metric: "lp_cpu", field: "usage", from: $from, to: $to, groupBy: ["host", "region"]) { tags { key value } count sum min max }
        bytes: aggregate(metric: "lp_cpu", field: "bytes", from: $from, to: $to) { count sum }
        days: buckets(metric: "lp_cpu", field: "requests", granularity: DAY, from: $from, to: $to, groupBy: ["host"]) { tags { key value } buckets { start count sum } }
        sources: tagValues(metric: "lp_cpu", key: "source")
      }`,
      { from: START, to: START + 3 * DAY },
      { token: tokens.admin },
    );
    expect(answer.errors).toBeUndefined();

    const groups = new Map<string, { count: number; sum: number; min: number; max: number }>();
    const days = new Map<string, { count: number; sum: number }>();
    let bytes = 0;
    for (const p of points) {
      const key = `${p.host}/${p.region}`;
      const group = groups.get(key) ?? { count: 0, sum: 0, min: Infinity, max: -Infinity };
      group.count++;
      group.sum += p.usage;
      group.min = Math.min(group.min, p.usage);
      group.max = Math.max(group.max, p.usage);
      groups.set(key, group);
      const day = `${p.host}/${new Date(p.time - (p.time % DAY)).toISOString()}`;
      const bucket = days.get(day) ?? { count: 0, sum: 0 };
      bucket.count++;
      bucket.sum += p.requests;
      days.set(day, bucket);
      bytes += p.bytes;
    }
    const usage = Object.fromEntries(
      answer.data!.usage.map((g) => [g.tags.map((tag) => tag.value).join('/'), { count: g.count, sum: g.sum, min: g.min, max: g.max }]),
    );
    expect(usage).toEqual(Object.fromEntries(groups));
    expect(answer.data!.bytes).toEqual([{ count: points.length, sum: bytes }]);
    const stored = new Map<string, { count: number; sum: number }>();
    for (const group of answer.data!.days) {
      for (const bucket of group.buckets) {
        if (bucket.count > 0) stored.set(`${group.tags[0]!.value}/${bucket.start}`, { count: bucket.count, sum: bucket.sum! });
      }
    }
    expect(Object.fromEntries(stored)).toEqual(Object.fromEntries(days));
    expect(answer.data!.sources).toEqual(['client']);
  });

  it('takes Bearer as well as Token, every precision, and the arrival time for lines without one', async () => {
    const at = Date.UTC(2024, 3, 1, 12, 30, 15, 250);
    const lines = [
      ['ns', `${BigInt(at) * 1_000_000n + 999_999n}`],
      ['us', `${BigInt(at) * 1000n + 999n}`],
      ['ms', `${at}`],
      ['s', `${Math.floor(at / 1000)}`],
    ];
    for (const [precision, timestamp] of lines) {
      const response = await write(`lp_prec,precision=${precision} v=1 ${timestamp}`, {
        query: `&precision=${precision}`,
        headers: { authorization: `Bearer ${tokens.writer}` },
      });
      expect(response.status).toBe(204);
    }
    const before = Date.now();
    expect((await write('lp_prec,precision=none v=1')).status).toBe(204);
    const after = Date.now();
    const answer = await t.graphql<{ series: { tags: { value: string }[]; latest: { time: string }[] }[] }>(
      `{ series(metric: "lp_prec") { tags { value } latest(n: 1) { time } } }`,
      {},
      { token: tokens.admin },
    );
    const times = Object.fromEntries(answer.data!.series.map((s) => [s.tags[0]!.value, Date.parse(s.latest[0]!.time)]));
    expect(times).toMatchObject({ ns: at, us: at, ms: at, s: at - 250 });
    expect(times.none).toBeGreaterThanOrEqual(before);
    expect(times.none).toBeLessThanOrEqual(after);
  });
});

describe('escaping', () => {
  it('stores escaped spaces, commas and equals signs in tag values, and reads backslashes as InfluxDB does', async () => {
    const body = [
      '# tag values with special characters',
      'lp_esc,host=web\\ 1,dc=eu\\,west\\=2 v=1 1711972800000000000',
      'lp_esc,host=C:\\\\temp\\ dir,dc=a\\b v=2 1711972800000000000',
      'lp_esc,host="quoted",dc=🚀 v=3 1711972800000000000',
    ].join('\n');
    expect((await write(body)).status).toBe(204);
    const answer = await t.graphql<{ series: { tags: { key: string; value: string }[] }[] }>(
      `{ series(metric: "lp_esc") { tags { key value } } }`,
      {},
      { token: tokens.admin },
    );
    const series = answer.data!.series.map((s) => Object.fromEntries(s.tags.map((tag) => [tag.key, tag.value])));
    expect(series).toEqual(
      expect.arrayContaining([
        { host: 'web 1', dc: 'eu,west=2' },
        { host: 'C:\\\\temp dir', dc: 'a\\b' },
        { host: '"quoted"', dc: '🚀' },
      ]),
    );
    expect(series).toHaveLength(3);
  });
});

describe('refusals write nothing', () => {
  it('a line that does not parse: 400 invalid, MALFORMED_BODY, with its line and column', async () => {
    const body = await expectRefused(400, 'MALFORMED_BODY', () => write('lp_bad v=1 1\nlp_bad v=2 2\nlp_bad,host=a v=1x 3\n'));
    expect(body).toMatchObject({ code: 'invalid', line: 3, column: 17 });
    expect(body.message).toMatch(/^line 3, column 17: field "v": "1x" is not a field value/);
  });

  it('a string or boolean field: INVALID_FIELD_VALUE naming the line, unless nonNumeric=ignore', async () => {
    const body = await expectRefused(400, 'INVALID_FIELD_VALUE', () => write('lp_str v=1 1\nlp_str v=2,status="ok" 2'));
    expect(body).toMatchObject({ line: 2, column: 19 });
    expect(body.message).toMatch(/^line 2, column 19: field "status" is a string.*nonNumeric=ignore/);
    await expectRefused(400, 'INVALID_FIELD_VALUE', () => write('lp_str up=true 1'));
    await expectRefused(400, 'INVALID_ARGUMENT', () => write('lp_str v=1 1', { query: '&nonNumeric=drop' }));

    expect((await write('lp_str v=1,status="ok" 60000000000\nlp_str up=true 60000000000', { query: '&nonNumeric=ignore' })).status).toBe(
      204,
    );
    expect((await write('lp_str v=2,up=f 60000000000', { headers: { 'tsgraph-non-numeric': 'ignore' } })).status).toBe(204);
    const answer = await t.graphql<{ metric: { fields: string[] }; aggregate: { count: number; sum: number }[] }>(
      `{ metric(name: "lp_str") { fields } aggregate(metric: "lp_str", field: "v", from: 0, to: 120000) { count sum } }`,
      {},
      { token: tokens.admin },
    );
    expect(answer.data).toEqual({ metric: { fields: ['v'] }, aggregate: [{ count: 2, sum: 3 }] });
  });

  it('a name or value the record path refuses: its code, at the tag, field or timestamp', async () => {
    const cases: [string, string, number, number][] = [
      ['lp_ok v=1 1\n__lp v=1 1', 'INVALID_NAME', 2, 1],
      ['lp_ok,host=a,bad$key=b v=1 1', 'INVALID_NAME', 1, 14],
      ['lp_ok,host=a,host=b v=1 1', 'DUPLICATE_NAME', 1, 14],
      ['lp_ok,host=a v=1,v=2 1', 'DUPLICATE_NAME', 1, 18],
      [`lp_ok,host=${'x'.repeat(257)} v=1 1`, 'INVALID_TAG_VALUE', 1, 12],
      ['lp_ok v=1,w=1e200 1', 'INVALID_FIELD_VALUE', 1, 13],
      ['lp_ok v=1 -1000000000', 'INVALID_TIME', 1, 11],
      ['lp_ok v=1 9223372036854775808', 'INVALID_TIME', 1, 11],
    ];
    for (const [line, code, number, column] of cases) {
      const body = await expectRefused(400, code, () => write(line));
      expect({ line: body.line, column: body.column }).toEqual({ line: number, column });
      expect(body.message).toMatch(new RegExp(`^line ${number}, column ${column}: `));
    }
  });

  it('no token, an unknown one, the wrong scope or a metric out of reach: 401 and 403', async () => {
    const missing = await expectRefused(401, 'UNAUTHENTICATED', () => write('lp_auth v=1 1', { token: null }));
    expect(missing.code).toBe('unauthorized');
    await expectRefused(401, 'UNAUTHENTICATED', () => write('lp_auth v=1 1', { token: `tsg_${'A'.repeat(43)}` }));
    const reader = await expectRefused(403, 'FORBIDDEN', () => write('lp_auth v=1 1', { token: tokens.reader }));
    expect(reader).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/needs the "write" scope/) });
    const prefix = await expectRefused(403, 'FORBIDDEN', () => write('lp_auth v=1 1\nmem v=1 1', { token: tokens['lp-writer'] }));
    expect(prefix.message).toMatch(/may not touch metric "mem"/);
  });

  it('a write from a web page of another origin: 403', async () => {
    await expectRefused(403, 'FORBIDDEN', () => write('lp_origin v=1 1', { headers: { origin: 'https://evil.example' } }));
  });

  it('too large: the body, the body once decompressed, or too many readings: 413', async () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `lp_big,host=h${i} v=${i} ${i}`).join('\n');
    const big = lines(200);
    expect(big.length).toBeGreaterThan(2000);
    const tooLarge = await expectRefused(413, 'REQUEST_TOO_LARGE', () => write(big, { app: small }));
    expect(tooLarge.code).toBe('request too large');
    await expectRefused(413, 'REQUEST_TOO_LARGE', () => write(gzipSync(big), { app: small, headers: { 'content-encoding': 'gzip' } }));
    expect(gzipSync(big).byteLength).toBeLessThan(2000);
    await expectRefused(413, 'BATCH_TOO_LARGE', () => write(lines(6), { app: small }));
    expect((await write(lines(5), { app: small })).status).toBe(204);
  });

  it('gzip: a gzipped body is written, one that does not decompress is MALFORMED_BODY, other encodings 415', async () => {
    expect((await write(gzipSync('lp_gzip v=4 1\nlp_gzip v=5 2'), { headers: { 'content-encoding': 'gzip' } })).status).toBe(204);
    await expectRefused(400, 'MALFORMED_BODY', () => write(Buffer.from('not gzip at all'), { headers: { 'content-encoding': 'gzip' } }));
    await expectRefused(415, 'UNSUPPORTED_MEDIA_TYPE', () => write('lp_gzip v=1 1', { headers: { 'content-encoding': 'br' } }));
    await expectRefused(400, 'MALFORMED_BODY', () => write(Buffer.from([0x6c, 0x70, 0x20, 0xff, 0xfe])));
    const answer = await t.graphql<{ aggregate: { count: number; sum: number }[] }>(
      `{ aggregate(metric: "lp_gzip", field: "v", from: 0, to: 60000) { count sum } }`,
      {},
      { token: tokens.admin },
    );
    expect(answer.data!.aggregate).toEqual([{ count: 2, sum: 9 }]);
  });

  it('a bad precision or batch id, an empty body: 400', async () => {
    await expectRefused(400, 'INVALID_ARGUMENT', () => write('lp_p v=1 1', { query: '&precision=h' }));
    await expectRefused(400, 'INVALID_BATCH_ID', () => write('lp_p v=1 1', { headers: { 'idempotency-key': 'no spaces allowed' } }));
    await expectRefused(400, 'MALFORMED_BODY', () => write('# nothing but a comment\n'));
  });
});

describe('exactly once', () => {
  it('a retried request with the same Idempotency-Key counts once; the key with other lines is 409', async () => {
    const body = 'lp_once,host=a v=10 1000000000\nlp_once,host=b v=20 1000000000\nlp_once,host=a v=30';
    const headers = { 'idempotency-key': 'telegraf-batch:42' };
    expect((await write(body, { headers })).status).toBe(204);
    expect((await write(body, { headers })).status).toBe(204);
    expect((await write(gzipSync(body), { headers: { ...headers, 'content-encoding': 'gzip' } })).status).toBe(204);
    const reused = await expectRefused(409, 'BATCH_ID_REUSED', () => write('lp_once,host=a v=99 1000000000', { headers }));
    expect(reused.code).toBe('conflict');
    const answer = await t.graphql<{ aggregate: { count: number; sum: number }[] }>(
      `query($to: Time!) { aggregate(metric: "lp_once", field: "v", from: 0, to: $to) { count sum } }`,
      { to: Date.now() + 120_000 },
      { token: tokens.admin },
    );
    expect(answer.data!.aggregate).toEqual([{ count: 3, sum: 60 }]);
  });
});
