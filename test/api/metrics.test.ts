/**
 * `GET /metrics` (Prometheus text format) and the slow-query log: exact counter
 * increments after known requests, the token rule, and the log lines of slow requests
 * (queries as warnings, write batches at info, bursts collapsed per operation name),
 * which never carry the token.
 */
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '../../src/auth/manage.ts';
import { loadConfig } from '../../src/config.ts';
import { ensureSecantusInstalled, startSecantus, type EmbeddedServer } from '../../src/embedded/secantus.ts';
import { createApp } from '../../src/server/yoga.ts';
import { openStore, type Store } from '../../src/storage/store.ts';
import { testMongoUri } from '../helpers/db.ts';

/** One sample of a scrape: metric name and labels (sorted, `k="v"` joined by commas) to value. */
type Samples = Map<string, number>;

/** Parses the Prometheus text format (version 0.0.4) into samples; written here, sharing nothing with the server. */
function parseSamples(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    expect(match, `a sample line: ${line}`).not.toBeNull();
    const labels = [...(match![2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)]
      .map((label) => `${label[1]}="${label[2]}"`)
      .sort()
      .join(',');
    samples.set(`${match![1]}{${labels}}`, Number(match![3]));
  }
  return samples;
}

/** The value of one sample (0 when the scrape does not list it yet). */
function sample(samples: Samples, name: string, labels: Record<string, string> = {}): number {
  const key = Object.entries(labels)
    .map(([label, value]) => `${label}="${value}"`)
    .sort()
    .join(',');
  return samples.get(`${name}{${key}}`) ?? 0;
}

/** A GraphQL answer, or an error answer of `/metrics` (the same shape). */
interface Answer {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions: { code: string } }[];
}

/** The code of an answer's first error. */
const codeOf = (answer: Answer) => answer.errors?.[0]?.extensions.code;

/** An app on a fresh database with its log lines collected. */
interface MetricsApp {
  store: Store;
  app: ReturnType<typeof createApp>;
  logs: Record<string, unknown>[];
  /** Raw log output, for "never contains" checks. */
  logText(): string;
  graphql(query: string, variables?: Record<string, unknown>, token?: string): Promise<{ status: number; body: Answer }>;
  scrape(token?: string): Promise<Samples>;
  close(): Promise<void>;
}

async function openMetricsApp(
  label: string,
  options: { auth?: 'off' | 'tokens'; slowQueryMs?: number; slowQueryIntervalMs?: number; uri?: string; heartbeatMs?: number } = {},
): Promise<MetricsApp> {
  const store = await openStore(options.uri ?? testMongoUri(), `test_${label}_${randomBytes(4).toString('hex')}`, {
    client: options.heartbeatMs === undefined ? {} : { heartbeatFrequencyMS: options.heartbeatMs, serverSelectionTimeoutMS: 2_000 },
  });
  let raw = '';
  const logs: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'debug' },
    {
      write: (line: string) => {
        raw += line;
        logs.push(JSON.parse(line));
      },
    },
  );
  const app = createApp({
    store,
    logger,
    limits: { maxBatchSize: 10_000, maxBuckets: 100_000 },
    auth: { mode: options.auth ?? 'off', corsOrigins: [] },
    slowQueryMs: options.slowQueryMs ?? 60_000,
    slowQueryIntervalMs: options.slowQueryIntervalMs,
  });
  const bearer = (token?: string): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});
  return {
    store,
    app,
    logs,
    logText: () => raw,
    async graphql(query, variables, token) {
      const response = await app.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(token) },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, body: (await response.json()) as Answer };
    },
    async scrape(token) {
      const response = await app.fetch('http://yoga/metrics', { headers: bearer(token) });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      return parseSamples(await response.text());
    },
    async close() {
      await app.dispose();
      await store.db.dropDatabase().catch(() => {});
      await store.client.close();
    },
  };
}

const RECORD = `mutation Record($readings: [ReadingInput!]!, $batchId: String) {
  recordReadings(readings: $readings, batchId: $batchId) { recorded applied }
}`;

/** `n` readings of metric `cpu`, one a minute from `start` (minutes after 2024-05-01T00:00Z), host `h<i mod 2>`. */
const readings = (n: number, start: number, metric = 'cpu') =>
  Array.from({ length: n }, (_, i) => ({
    metric,
    tags: [{ key: 'host', value: `h${i % 2}` }],
    time: new Date(Date.UTC(2024, 4, 1) + (start + i) * 60_000).toISOString(),
    fields: [{ name: 'usage', value: i + 1 }],
  }));

describe('/metrics', () => {
  let t: MetricsApp;
  beforeAll(async () => {
    t = await openMetricsApp('metrics');
  });
  afterAll(() => t.close());

  it('counts readings recorded, already applied and refused, and requests by operation and code, exactly', async () => {
    const before = await t.scrape();
    for (let batch = 0; batch < 3; batch++) {
      const answer = await t.graphql(RECORD, { readings: readings(5, batch * 5), batchId: `b${batch}` });
      expect(answer.body).toEqual({ data: { recordReadings: { recorded: 5, applied: 5 } } });
    }
    // A retry of a stored batch: nothing stored again.
    const retry = await t.graphql(RECORD, { readings: readings(5, 5), batchId: 'b1' });
    expect(retry.body).toEqual({ data: { recordReadings: { recorded: 5, applied: 0 } } });
    // A batch of 4 with one bad metric name: refused whole.
    const bad = [...readings(3, 100), ...readings(1, 200, '9-not-a-name')];
    const refused = await t.graphql(RECORD, { readings: bad });
    expect(codeOf(refused.body)).toBe('INVALID_NAME');
    // A request that does not parse, and an anonymous query.
    expect(codeOf((await t.graphql('{ metrics { name ')).body)).toBe('GRAPHQL_PARSE_FAILED');
    expect((await t.graphql('{ metrics { name } }')).body.errors).toBeUndefined();

    const after = await t.scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('tsgraph_readings_recorded_total')).toBe(15);
    expect(delta('tsgraph_readings_already_applied_total')).toBe(5);
    expect(delta('tsgraph_readings_refused_total', { code: 'INVALID_NAME' })).toBe(4);
    expect(delta('tsgraph_graphql_requests_total', { operation: 'Record', code: 'OK' })).toBe(4);
    expect(delta('tsgraph_graphql_requests_total', { operation: 'Record', code: 'INVALID_NAME' })).toBe(1);
    expect(delta('tsgraph_graphql_requests_total', { operation: 'unknown', code: 'GRAPHQL_PARSE_FAILED' })).toBe(1);
    expect(delta('tsgraph_graphql_requests_total', { operation: 'anonymous', code: 'OK' })).toBe(1);
    // The latency histogram counts the same requests.
    expect(delta('tsgraph_graphql_request_duration_seconds_count', { operation: 'Record', code: 'OK' })).toBe(4);
    expect(delta('tsgraph_graphql_request_duration_seconds_bucket', { operation: 'Record', code: 'OK', le: '+Inf' })).toBe(4);
    // Nothing of the refused batch was written.
    expect(await t.store.series.countDocuments({ metric: { $ne: 'cpu' } })).toBe(0);
    expect(sample(after, 'tsgraph_database_up')).toBe(1);
  });

  it('counts the readings of the ingest routes and their requests by route and code', async () => {
    const before = await t.scrape();
    const send = (body: string, batchId?: string) =>
      t.app.fetch('http://yoga/api/v2/write?precision=s', {
        method: 'POST',
        headers: { 'content-type': 'text/plain', ...(batchId ? { 'idempotency-key': batchId } : {}) },
        body,
      });
    // 3 points, sent twice with the same key (the retry stores nothing), then a line that does not parse.
    const points = ['disk,host=a used=1 1714521600', 'disk,host=b used=2 1714521660', 'disk,host=a used=3 1714521720'].join('\n');
    expect((await send(points, 'lp-1')).status).toBe(204);
    expect((await send(points, 'lp-1')).status).toBe(204);
    expect((await send('disk,host=a used= 1714521600')).status).toBe(400);
    const ndjson = await t.app.fetch('http://yoga/api/readings', {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: '{"metric": "disk", "tags": {"host": "c"}, "time": 1714521600000, "fields": {"used": 4}}\n',
    });
    expect(ndjson.status).toBe(200);

    const after = await t.scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('tsgraph_readings_recorded_total')).toBe(4);
    expect(delta('tsgraph_readings_already_applied_total')).toBe(3);
    expect(delta('tsgraph_http_requests_total', { route: '/api/v2/write', code: 'OK' })).toBe(2);
    expect(delta('tsgraph_http_requests_total', { route: '/api/readings', code: 'OK' })).toBe(1);
    const refusedCodes = [...after.keys()].filter(
      (key) => key.startsWith('tsgraph_http_requests_total{') && key.includes('route="/api/v2/write"') && !key.includes('code="OK"'),
    );
    expect(refusedCodes.reduce((sum, key) => sum + (after.get(key) ?? 0) - (before.get(key) ?? 0), 0)).toBe(1);
  });

  it('times each pipeline by granularity, finest level read, kind and source', async () => {
    const before = await t.scrape();
    // Whole UTC days: day totals only.
    const days = await t.graphql(`{ buckets(metric: "cpu", field: "usage", granularity: DAY, from: "2024-05-01", to: "2024-05-03") {
      buckets { count } } }`);
    expect(days.body.errors).toBeUndefined();
    // Hours with a ragged start: minute slots too. With a percentile: a sketch pipeline beside it.
    const hours =
      await t.graphql(`{ buckets(metric: "cpu", field: "usage", granularity: HOUR, from: "2024-05-01T00:07:00Z", to: "2024-05-01T03:00:00Z", statistic: P95) {
      buckets { count value } } }`);
    expect(hours.body.errors).toBeUndefined();
    // An aggregate over whole days.
    const total = await t.graphql(`{ aggregate(metric: "cpu", field: "usage", from: "2024-05-01", to: "2024-05-02") { count } }`);
    expect(total.body.data?.aggregate).toEqual([{ count: 15 }]);

    const after = await t.scrape();
    const count = (labels: Record<string, string>) =>
      sample(after, 'tsgraph_pipeline_duration_seconds_count', labels) - sample(before, 'tsgraph_pipeline_duration_seconds_count', labels);
    expect(count({ granularity: 'DAY', level: 'day', kind: 'buckets', source: 'documents' })).toBe(1);
    expect(count({ granularity: 'HOUR', level: 'minute', kind: 'buckets', source: 'documents' })).toBe(1);
    expect(count({ granularity: 'HOUR', level: 'minute', kind: 'sketches', source: 'documents' })).toBe(1);
    expect(count({ granularity: 'none', level: 'day', kind: 'buckets', source: 'documents' })).toBe(1);
  });

  it('serves the process metrics of prom-client too', async () => {
    const samples = await t.scrape();
    expect(sample(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sample(samples, 'nodejs_heap_size_total_bytes')).toBeGreaterThan(0);
  });

  it('refuses other methods than GET and HEAD', async () => {
    const response = await t.app.fetch('http://yoga/metrics', {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(405);
  });
});

describe('/metrics with API tokens', () => {
  let t: MetricsApp;
  const tokens: Record<string, string> = {};
  beforeAll(async () => {
    t = await openMetricsApp('metrics_tokens', { auth: 'tokens' });
    for (const [name, scopes] of [
      ['scraper', ['monitor']],
      ['admin', ['admin']],
      ['reader', ['read']],
    ] as const) {
      tokens[name] = (await createApiToken(t.store, { name, scopes: [...scopes], prefixes: [] })).token;
    }
  });
  afterAll(() => t.close());

  it('needs a token with scope monitor or admin', async () => {
    const none = await t.app.fetch('http://yoga/metrics');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(((await none.json()) as Answer).errors![0]!.extensions.code).toBe('UNAUTHENTICATED');

    const reader = await t.app.fetch('http://yoga/metrics', { headers: { authorization: `Bearer ${tokens.reader}` } });
    expect(reader.status).toBe(403);
    const refusal = ((await reader.json()) as Answer).errors![0]!;
    expect(refusal.extensions.code).toBe('FORBIDDEN');
    expect(refusal.message).toContain('"monitor"');

    expect(sample(await t.scrape(tokens.scraper), 'tsgraph_database_up')).toBe(1);
    expect(sample(await t.scrape(tokens.admin), 'tsgraph_database_up')).toBe(1);
  });

  it('gives a monitor token nothing else: no reads, no writes', async () => {
    const read = await t.graphql('{ metrics { name } }', undefined, tokens.scraper);
    expect(codeOf(read.body)).toBe('FORBIDDEN');
    const write = await t.graphql(RECORD, { readings: readings(2, 0) }, tokens.scraper);
    expect(codeOf(write.body)).toBe('FORBIDDEN');
    expect(await t.store.seriesDays.countDocuments({})).toBe(0);
    // The refused batch is counted with its code.
    expect(sample(await t.scrape(tokens.scraper), 'tsgraph_readings_refused_total', { code: 'FORBIDDEN' })).toBe(2);
  });
});

describe('the slow-query log', () => {
  it('logs a query at or over SLOW_QUERY_MS as a warning with the document without its literals, a write batch at info with its readings, never the token', async () => {
    const t = await openMetricsApp('slow_queries', { auth: 'tokens', slowQueryMs: 0 });
    try {
      const { token } = await createApiToken(t.store, { name: 'writer', scopes: ['read', 'write'], prefixes: [] });
      const secret = 'secret-host-7f3a';
      const recorded = await t.graphql(
        `mutation Seed { recordReading(reading: { metric: "cpu", tags: [{ key: "host", value: "${secret}" }], time: "2024-05-01T10:00:00Z", fields: [{ name: "usage", value: 42.5 }] }) { recorded } }`,
        undefined,
        token,
      );
      expect(recorded.body.errors).toBeUndefined();
      const query = await t.graphql(
        `# a comment
        query Busy($from: Time!) { buckets(metric: "cpu", field: "usage", granularity: HOUR, from: $from, to: "2024-05-02", where: [{ key: "host", in: ["${secret}"] }]) { buckets { count } } }`,
        { from: '2024-05-01T00:00:00Z' },
        token,
      );
      expect(query.body.errors).toBeUndefined();

      const slow = t.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('Slow '));
      expect(slow.map((line) => line.operation)).toEqual(['Seed', 'Busy']);
      for (const line of slow) {
        expect(line.code).toBe('OK');
        expect(typeof line.ms).toBe('number');
      }
      // The one-reading write is a write batch: info, its readings, no document.
      expect(slow[0]).toMatchObject({ level: 20, readings: 1 });
      expect(slow[0]!.msg).toBe(`Slow write batch: Seed, 1 readings in ${slow[0]!.ms} ms`);
      expect(slow[0]!.query).toBeUndefined();
      expect(slow[1]).toMatchObject({ level: 40, msg: `Slow query: Busy took ${slow[1]!.ms} ms` });
      expect(slow[1]!.query).toBe(
        'query Busy($from:Time!){buckets(metric:"" field:"" granularity:HOUR from:$from to:"" where:[]){buckets{count}}}',
      );
      const text = t.logText();
      expect(text).not.toContain(token);
      expect(text).not.toContain(token.slice(4));
      expect(text).not.toContain('Bearer');
      expect(text).not.toContain(secret);
      expect(text).not.toContain('2024-05-01T00:00:00Z');
    } finally {
      await t.close();
    }
  });

  it('collapses bursts: one line per operation name per interval, the next one saying how many were not logged', async () => {
    const t = await openMetricsApp('slow_bursts', { slowQueryMs: 0, slowQueryIntervalMs: 2_500 });
    const IMPORT = `mutation ImportBatch($readings: [ReadingInput!]!, $batchId: String) {
      recordReadings(readings: $readings, batchId: $batchId) { recorded applied alreadyApplied }
    }`;
    const slowLines = () => t.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('Slow '));
    try {
      const started = Date.now();
      // A burst: four import batches and three queries, well within one interval.
      for (let batch = 0; batch < 4; batch++) {
        const answer = await t.graphql(IMPORT, { readings: readings(25, batch * 25), batchId: `batch-${batch}` });
        expect(answer.body.errors).toBeUndefined();
      }
      for (let query = 0; query < 3; query++) expect((await t.graphql('query Names { metrics { name } }')).body.errors).toBeUndefined();
      expect(Date.now() - started).toBeLessThan(2_500);
      expect(slowLines().map((line) => [line.level, line.operation, line.readings, line.suppressed])).toEqual([
        [20, 'ImportBatch', 25, undefined],
        [40, 'Names', undefined, undefined],
      ]);
      expect(slowLines()[0]!.msPerReading).toBeCloseTo((slowLines()[0]!.ms as number) / 25, 0);

      // After the interval, the next line of each name says how many were not logged since.
      await new Promise((resolve) => setTimeout(resolve, 2_600));
      expect((await t.graphql(IMPORT, { readings: readings(10, 100), batchId: 'batch-4' })).body.errors).toBeUndefined();
      expect((await t.graphql('query Names { metrics { name } }')).body.errors).toBeUndefined();
      const [write, query] = slowLines().slice(2);
      expect(write).toMatchObject({ level: 20, operation: 'ImportBatch', readings: 10, suppressed: 3 });
      expect(write!.msg).toBe(`Slow write batch: ImportBatch, 10 readings in ${write!.ms} ms; 3 similar since the last line not logged`);
      expect(query).toMatchObject({ level: 40, operation: 'Names', suppressed: 2 });
      expect(query!.msg).toBe(`Slow query: Names took ${query!.ms} ms; 2 similar since the last line not logged`);
      expect(slowLines()).toHaveLength(4);
      // Every slow request is counted, logged or not.
      expect(sample(await t.scrape(), 'tsgraph_slow_queries_total')).toBe(9);
      // The readings themselves are never logged.
      expect(t.logText()).not.toContain('2024-05-01T00:00:00');
    } finally {
      await t.close();
    }
  });

  it('judges a mutation that does more than record readings as a query', async () => {
    const t = await openMetricsApp('slow_mixed', { slowQueryMs: 0 });
    try {
      const answer = await t.graphql(
        `mutation Mixed($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded } setRetention(metric: "cpu", minutes: 30, hours: 30, days: 30) { name } }`,
        { readings: readings(2, 0) },
      );
      expect(answer.body.errors).toBeUndefined();
      const [line] = t.logs.filter((entry) => String(entry.msg).startsWith('Slow '));
      expect(line).toMatchObject({ level: 40, operation: 'Mixed', code: 'OK' });
      expect(line!.readings).toBeUndefined();
      expect(String(line!.query)).toContain('recordReadings(readings:$readings)');
    } finally {
      await t.close();
    }
  });

  it('logs nothing for requests under the threshold', async () => {
    const t = await openMetricsApp('fast_queries', { slowQueryMs: 60_000 });
    try {
      expect((await t.graphql('{ metrics { name } }')).body.errors).toBeUndefined();
      expect(t.logs.filter((line) => String(line.msg).startsWith('Slow query'))).toEqual([]);
      expect(sample(await t.scrape(), 'tsgraph_slow_queries_total')).toBe(0);
    } finally {
      await t.close();
    }
  });
});

describe('database errors and reconnects', () => {
  let db: EmbeddedServer | undefined;
  afterAll(async () => {
    await db?.stop();
  });

  it('counts the errors the driver sees while the database is gone, and the reconnect once it is back', async () => {
    const config = loadConfig({});
    const binary = await ensureSecantusInstalled(config.EMBEDDED_VENV_DIR, config.PYTHON, () => {});
    db = await startSecantus({ binary, dataDir: ':memory:', say: () => {} });
    const port = db.port;
    const t = await openMetricsApp('reconnects', { uri: db.uri, heartbeatMs: 500 });
    try {
      const before = await t.scrape();
      expect(sample(before, 'tsgraph_database_up')).toBe(1);
      expect(sample(before, 'tsgraph_database_reconnects_total')).toBe(0);

      await db.stop();
      // An operation while the database is gone fails, and the app marks it down.
      const failed = await t.graphql('{ metrics { name } }');
      expect(codeOf(failed.body)).toBe('UNAVAILABLE');
      const down = await t.scrape();
      expect(sample(down, 'tsgraph_database_up')).toBe(0);
      const errors = ['heartbeat', 'pool_cleared', 'checkout', 'operation'].reduce(
        (sum, kind) => sum + sample(down, 'tsgraph_database_errors_total', { kind }),
        0,
      );
      expect(errors).toBeGreaterThan(0);

      db = await startSecantus({ binary, dataDir: ':memory:', port, say: () => {} });
      let after = await t.scrape();
      for (let i = 0; i < 100 && sample(after, 'tsgraph_database_up') === 0; i++) {
        await new Promise((done) => setTimeout(done, 100));
        after = await t.scrape();
      }
      expect(sample(after, 'tsgraph_database_up')).toBe(1);
      expect(sample(after, 'tsgraph_database_reconnects_total')).toBe(1);
    } finally {
      await t.close();
    }
  });
});
