/**
 * `POST /api/v1/write` (Prometheus remote write 1.0): the npm remote-write client
 * (`prometheus-remote-write`, snappy-compressed protobuf over a real socket) writes
 * series whose stored readings, read back through GraphQL, equal a plain loop over the
 * samples sent; stale markers and NaN skipped and counted in `/metrics`; a resent body
 * stored once; every refusal with its status and code, and the database unchanged.
 */
import { createHash } from 'node:crypto';
import { pushTimeseries } from 'prometheus-remote-write';
import { compress } from 'snappyjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createApp } from '../../src/server/yoga.ts';
import { receiverTypes } from '../../src/receivers/proto.ts';
import { STALE_NAN_BITS } from '../../src/receivers/remote-write.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { databaseSnapshot } from '../helpers/snapshot.ts';
import { serveOnLoopback, type Loopback } from '../helpers/loopback.ts';
import { random } from '../helpers/random.ts';
import { createWriteRouteTokens } from '../helpers/tokens.ts';

let t: TestApp;
let server: Loopback;
let url: string;
let tokens: Record<string, string>;
/** Content-Type of each request the HTTP server received. */
const received: string[] = [];

beforeAll(async () => {
  t = await openTestApp('remotewrite', { auth: 'tokens', journal: false });
  tokens = await createWriteRouteTokens(t, 'node-writer', 'node_');
  server = await serveOnLoopback(t.app, (request) => {
    received.push(String(request.headers['content-type']));
  });
  url = server.url;
});
afterAll(async () => {
  await server.close();
  await t.close();
});

const START = Date.UTC(2024, 5, 1);
const MINUTE = 60_000;
type Tags = { key: string; value: string }[];

async function aggregate(metric: string, groupBy: string[]) {
  const answer = await t.graphql<{ aggregate: { tags: Tags; count: number; sum: number; min: number; max: number }[] }>(
    `query($metric: String!, $groupBy: [String!], $to: Time!) {
      aggregate(metric: $metric, field: "value", from: 0, to: $to, groupBy: $groupBy) { tags { key value } count sum min max }
    }`,
    { metric, groupBy, to: START + 30 * 86_400_000 },
    { token: tokens.admin },
  );
  expect(answer.errors).toBeUndefined();
  return Object.fromEntries(
    answer.data!.aggregate.map(({ tags, ...rest }) => [tags.map((tag) => `${tag.key}=${tag.value}`).join(','), rest]),
  );
}

/** A snappy-compressed WriteRequest of the given series, encoded with the Prometheus schema. */
function writeRequest(series: { labels: Record<string, string>; samples: [number, number][] }[]): Uint8Array {
  const type = receiverTypes().writeRequest;
  const message = type.fromObject({
    timeseries: series.map(({ labels, samples }) => ({
      labels: Object.entries(labels).map(([name, value]) => ({ name, value })),
      samples: samples.map(([value, timestamp]) => ({ value, timestamp })),
    })),
  });
  return type.encode(message).finish();
}

async function post(body: Uint8Array, headers: Record<string, string> = {}, token: string | null = tokens.writer!) {
  const response = await t.app.fetch('http://yoga/api/v1/write', {
    method: 'POST',
    headers: {
      'content-type': 'application/x-protobuf',
      'content-encoding': 'snappy',
      'x-prometheus-remote-write-version': '0.1.0',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body,
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text === '' ? null : (JSON.parse(text) as { message: string; extensions: { code: string } }),
  };
}

describe('the remote-write client library writes unchanged', () => {
  it('stores every sample of pushTimeseries exactly, as a plain loop computes, with metric names sanitized', async () => {
    const next = random(3);
    const series: { labels: { __name__: string; [key: string]: string }; samples: { value: number; timestamp: number }[] }[] = [];
    for (const instance of ['node-1:9100', 'node-2:9100']) {
      for (const code of ['200', '500']) {
        series.push({ labels: { __name__: 'node_http_requests_total', job: 'api', instance, code }, samples: [] });
      }
      series.push({ labels: { __name__: 'node:cpu:rate5m', instance }, samples: [] });
    }
    const expected = new Map<string, { count: number; sum: number; min: number; max: number }>();
    for (let request = 0; request < 3; request++) {
      for (const one of series) {
        const samples = Array.from({ length: 20 }, (_, i) => ({
          // Quarters: sums of them are exact in doubles, in any order.
          value: Math.round(next() * 40_000) / 4,
          timestamp: START + (request * 20 + i) * MINUTE,
        }));
        one.samples = samples;
        const key = `${one.labels.__name__}|${one.labels.instance}|${one.labels.code ?? ''}`;
        const total = expected.get(key) ?? { count: 0, sum: 0, min: Infinity, max: -Infinity };
        for (const { value } of samples) {
          total.count++;
          total.sum += value;
          total.min = Math.min(total.min, value);
          total.max = Math.max(total.max, value);
        }
        expected.set(key, total);
      }
      const result = await pushTimeseries(series, {
        url: `${url}/api/v1/write`,
        headers: { authorization: `Bearer ${tokens['node-writer']}` },
        fetch: globalThis.fetch as never,
      });
      expect(result.status).toBe(204);
    }
    expect(received.slice(-3)).toEqual(['application/x-protobuf', 'application/x-protobuf', 'application/x-protobuf']);

    const requests = await aggregate('node_http_requests_total', ['instance', 'code', 'job']);
    const cpu = await aggregate('node_cpu_rate5m', ['instance']);
    const stored: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(requests)) {
      const [instance, code] = key.split(',').map((part) => part.split('=')[1]);
      stored[`node_http_requests_total|${instance}|${code}`] = value;
    }
    for (const [key, value] of Object.entries(cpu)) stored[`node:cpu:rate5m|${key.split('=')[1]}|`] = value;
    expect(stored).toEqual(Object.fromEntries(expected));
    expect(Object.keys(requests).every((key) => key.endsWith(',job=api'))).toBe(true);
  });
});

describe('requests sent by hand', () => {
  it('refuses more samples than MAX_BATCH_SIZE and bodies over MAX_BODY_BYTES once decompressed (413), writing nothing', async () => {
    const small = createApp({
      store: t.store,
      logger: pino({ level: 'silent' }),
      limits: { maxBatchSize: 2, maxBuckets: 1000 },
      auth: { mode: 'off', corsOrigins: [] },
      requestLimits: { maxBodyBytes: 2000 },
    });
    const before = await databaseSnapshot(t.store.db);
    const send = async (body: Uint8Array) => {
      const response = await small.fetch('http://yoga/api/v1/write', {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf' },
        body,
      });
      return { status: response.status, code: ((await response.json()) as { extensions: { code: string } }).extensions.code };
    };
    const three = writeRequest([
      {
        labels: { __name__: 'rw_limits' },
        samples: [
          [1, START],
          [2, START + MINUTE],
          [3, START + 2 * MINUTE],
        ],
      },
    ]);
    expect(await send(compress(three))).toEqual({ status: 413, code: 'BATCH_TOO_LARGE' });
    const big = writeRequest([{ labels: { __name__: 'rw_limits', pad: 'p'.repeat(3000) }, samples: [[1, START]] }]);
    expect(compress(big).byteLength).toBeLessThan(2000);
    expect(await send(compress(big))).toEqual({ status: 413, code: 'REQUEST_TOO_LARGE' });
    expect(await databaseSnapshot(t.store.db)).toBe(before);
    await small.dispose();
  });

  it('skips stale markers, NaN and infinite samples, counts them in /metrics, and stores the rest', async () => {
    const sentinel = 1234.5678;
    const bytes = writeRequest([
      {
        labels: { __name__: 'rw_stale', host: 'a', empty: '', __meta_internal: 'x' },
        samples: [
          [1, START],
          [sentinel, START + MINUTE],
          [Number.NaN, START + 2 * MINUTE],
          [3, START + 3 * MINUTE],
          [Number.POSITIVE_INFINITY, START + 4 * MINUTE],
        ],
      },
    ]);
    // The stale marker is a NaN with particular bits: written over the sentinel's eight bytes.
    const pattern = Buffer.alloc(8);
    pattern.writeDoubleLE(sentinel);
    const at = Buffer.from(bytes).indexOf(pattern);
    expect(at).toBeGreaterThan(0);
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).writeBigUInt64LE(STALE_NAN_BITS, at);
    expect((await post(compress(bytes))).status).toBe(204);
    expect(await aggregate('rw_stale', ['host'])).toEqual({ 'host=a': { count: 2, sum: 4, min: 1, max: 3 } });
    const tagKeys = await t.graphql<{ metric: { tagKeys: string[] } }>(
      `{ metric(name: "rw_stale") { tagKeys } }`,
      {},
      { token: tokens.admin },
    );
    expect(tagKeys.data!.metric.tagKeys).toEqual(['host']);
    const metrics = await (await t.app.fetch('http://yoga/metrics', { headers: { authorization: `Bearer ${tokens.admin}` } })).text();
    expect(metrics).toContain('tsgraph_receiver_dropped_total{receiver="prometheus",reason="stale"} 1');
    expect(metrics).toContain('tsgraph_receiver_dropped_total{receiver="prometheus",reason="nan"} 1');
    expect(metrics).toContain('tsgraph_receiver_dropped_total{receiver="prometheus",reason="out_of_range"} 1');
  });

  it('stores a series whose name is longer than 64 characters under the shortened name', async () => {
    const name = 'rw_remote_storage_string_interner_zero_reference_releases_total';
    const long = `${name}_${'x'.repeat(10)}`;
    expect(long.length).toBeGreaterThan(64);
    expect((await post(compress(writeRequest([{ labels: { __name__: long, job: 'p' }, samples: [[2, START]] }])))).status).toBe(204);
    const shortened = `${long.slice(0, 55)}_${createHash('sha256').update(long).digest('hex').slice(0, 8)}`;
    expect(await aggregate(shortened, ['job'])).toEqual({ 'job=p': { count: 1, sum: 2, min: 2, max: 2 } });
  });

  it('stores a resent body once (its batch id is the hash of the decompressed body)', async () => {
    const bytes = writeRequest([
      {
        labels: { __name__: 'rw_resent', host: 'a' },
        samples: [
          [5, START],
          [7, START + MINUTE],
        ],
      },
    ]);
    for (let i = 0; i < 3; i++) expect((await post(compress(bytes))).status).toBe(204);
    expect(await aggregate('rw_resent', [])).toEqual({ '': { count: 2, sum: 12, min: 5, max: 7 } });
  });

  it('refuses what it cannot store with the code, the series named, and nothing written', async () => {
    const before = await databaseSnapshot(t.store.db);
    const good = compress(writeRequest([{ labels: { __name__: 'rw_refused' }, samples: [[1, START]] }]));
    const cases: [Uint8Array, Record<string, string>, string | null, number, string, RegExp?][] = [
      [new Uint8Array([1, 2, 3, 4, 5]), {}, tokens.writer!, 400, 'MALFORMED_BODY', /snappy/],
      [compress(new Uint8Array([0x0a, 0xff, 0xff])), {}, tokens.writer!, 400, 'MALFORMED_BODY', /WriteRequest/],
      [
        compress(writeRequest([{ labels: { job: 'x' }, samples: [[1, START]] }])),
        {},
        tokens.writer!,
        400,
        'INVALID_NAME',
        /\{job="x"\} has no __name__/,
      ],
      [
        compress(writeRequest([{ labels: { __name__: 'rw_refused', long: 'v'.repeat(300) }, samples: [[1, START]] }])),
        {},
        tokens.writer!,
        400,
        'INVALID_TAG_VALUE',
        /^series \{__name__="rw_refused", long="v{300}"\}: /,
      ],
      [good, { 'content-type': 'application/json' }, tokens.writer!, 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [
        good,
        { 'content-type': 'application/x-protobuf;proto=io.prometheus.write.v2.Request' },
        tokens.writer!,
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        /2\.0|v2/,
      ],
      [good, { 'content-encoding': 'gzip' }, tokens.writer!, 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [good, {}, null, 401, 'UNAUTHENTICATED'],
      [good, {}, tokens.reader!, 403, 'FORBIDDEN'],
      [good, {}, tokens['node-writer']!, 403, 'FORBIDDEN'],
    ];
    for (const [body, headers, token, status, code, message] of cases) {
      const response = await post(body, headers, token);
      expect({ status: response.status, code: response.body?.extensions.code }, `${code} ${JSON.stringify(headers)}`).toEqual({
        status,
        code,
      });
      if (message) expect(response.body!.message).toMatch(message);
    }
    expect(await databaseSnapshot(t.store.db)).toBe(before);
  });
});

describe('counters declared by the receiver', () => {
  /** The reset-aware increase of one series' values in time order, by a plain loop: a drop is a restart from 0. */
  function plainIncrease(values: readonly number[]): number {
    let increase = 0;
    for (let i = 1; i < values.length; i++) increase += values[i]! >= values[i - 1]! ? values[i]! - values[i - 1]! : values[i]!;
    return increase;
  }

  async function kindOf(metric: string): Promise<string | undefined> {
    const answer = await t.graphql<{ metric: { kind: string } | null }>(
      'query($name: String!) { metric(name: $name) { kind } }',
      { name: metric },
      { token: tokens.admin },
    );
    expect(answer.errors).toBeUndefined();
    return answer.data!.metric?.kind;
  }

  async function increaseBySeries(metric: string) {
    return t.graphql<{ aggregate: { tags: Tags; increase: number | null }[] }>(
      `query($metric: String!, $to: Time!) {
        aggregate(metric: $metric, field: "value", from: 0, to: $to, groupBy: ["instance"]) { tags { key value } increase }
      }`,
      { metric, to: START + 30 * 86_400_000 },
      { token: tokens.admin },
    );
  }

  it('declares a _total series a counter: its increase over two requests with a reset is the plain reset-aware loop; other series stay gauges', async () => {
    const next = random(41);
    const sent = new Map<string, number[]>();
    const base = START + 10 * 86_400_000;
    const totals = new Map<string, number>();
    for (let request = 0; request < 2; request++) {
      const series = ['a:9100', 'b:9100'].flatMap((instance) => {
        const samples: { value: number; timestamp: number }[] = [];
        for (let i = 0; i < 15; i++) {
          // The second request starts with a restarted process: the count begins again from 0.
          const previous = request === 1 && i === 0 ? 0 : (totals.get(instance) ?? 0);
          const value = previous + Math.floor(next() * 50);
          totals.set(instance, value);
          samples.push({ value, timestamp: base + (request * 15 + i) * MINUTE });
          sent.set(instance, [...(sent.get(instance) ?? []), value]);
        }
        const load = samples.map(({ timestamp }) => ({ value: Math.round(next() * 400) / 4, timestamp }));
        return [
          { labels: { __name__: 'jobs_processed_total', instance }, samples },
          { labels: { __name__: 'jobs_queue_load', instance }, samples: load },
        ];
      });
      const result = await pushTimeseries(series, {
        url: `${url}/api/v1/write`,
        headers: { authorization: `Bearer ${tokens.writer}` },
        fetch: globalThis.fetch as never,
      });
      expect(result.status).toBe(204);
    }
    for (const values of sent.values()) expect(values.some((value, i) => i > 0 && value < values[i - 1]!)).toBe(true);

    expect(await kindOf('jobs_processed_total')).toBe('COUNTER');
    // From the log's tail, then from the folded documents.
    for (const folded of [false, true]) {
      if (folded) await t.settle();
      const answer = await increaseBySeries('jobs_processed_total');
      expect(answer.errors).toBeUndefined();
      expect(
        Object.fromEntries(answer.data!.aggregate.map(({ tags, increase }) => [tags.map((tag) => tag.value).join(','), increase])),
        `folded: ${folded}`,
      ).toEqual(Object.fromEntries([...sent].map(([instance, values]) => [instance, plainIncrease(values)])));
    }

    expect(await kindOf('jobs_queue_load')).toBe('GAUGE');
    const refused = await increaseBySeries('jobs_queue_load');
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_A_COUNTER', metric: 'jobs_queue_load' });
  });

  it('declares nothing for a refused request', async () => {
    const body = compress(writeRequest([{ labels: { __name__: 'refused_total', job: 'x'.repeat(300) }, samples: [[1, START]] }]));
    const answer = await post(body);
    expect(answer.status).toBe(400);
    expect(await kindOf('refused_total')).toBeUndefined();
  });
});
