/**
 * `POST /v1/metrics` (OTLP/HTTP): the OpenTelemetry JS SDK exports over a real socket
 * with its protobuf exporter (gzip) and its JSON exporter, and the stored readings,
 * read back through GraphQL, equal what a plain loop over the recorded measurements
 * gives; a JSON body gzipped by hand; bad bodies, unsupported types and auth refusals
 * with their status, `google.rpc.Status` body and the database unchanged; a resent
 * export stored once; partial success naming the rejected data points.
 */
import { gzipSync } from 'node:zlib';
import { OTLPMetricExporter as JsonExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AggregationTemporality, MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createApp } from '../../src/server/yoga.ts';
import { receiverTypes } from '../../src/receivers/proto.ts';
import { ingestLog } from '../../src/storage/ingest-log.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { databaseSnapshot } from '../helpers/snapshot.ts';
import { serveOnLoopback, type Loopback } from '../helpers/loopback.ts';
import { random } from '../helpers/random.ts';
import { createWriteRouteTokens } from '../helpers/tokens.ts';

let t: TestApp;
let server: Loopback;
let url: string;
let tokens: Record<string, string>;
/** Content-Type and Content-Encoding of each request the HTTP server received. */
const received: string[] = [];

beforeAll(async () => {
  t = await openTestApp('otlp', { auth: 'tokens', journal: false });
  tokens = await createWriteRouteTokens(t, 'app-writer', 'app_');
  server = await serveOnLoopback(t.app, (request) => {
    received.push(`${request.headers['content-type']} ${request.headers['content-encoding'] ?? 'none'}`);
  });
  url = server.url;
});
afterAll(async () => {
  await server.close();
  await t.close();
});

/** A meter provider exporting through `exporter` only when flushed. */
function sdk(exporter: PushMetricExporter, service: string) {
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000, exportTimeoutMillis: 30_000 });
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': service, 'service.version': '1.2.3', 'host.name': 'box-1' }),
    readers: [reader],
  });
  return { meter: provider.getMeter('otlp-test', '1.0.0'), flush: () => reader.forceFlush(), close: () => provider.shutdown() };
}

type Tags = { key: string; value: string }[];
const tagText = (tags: Tags) => tags.map((tag) => `${tag.key}=${tag.value}`).join(',');

/** `aggregate` of `field` of `metric` over the last and next hour, per series (all tag keys), keyed by the tags' text. */
async function aggregateBySeries(metric: string, field: string, groupBy: string[]) {
  const answer = await t.graphql<{ aggregate: { tags: Tags; count: number; sum: number; min: number; max: number }[] }>(
    `query($metric: String!, $field: String!, $from: Time!, $to: Time!, $groupBy: [String!]) {
      aggregate(metric: $metric, field: $field, from: $from, to: $to, groupBy: $groupBy) { tags { key value } count sum min max }
    }`,
    { metric, field, from: Date.now() - 3_600_000, to: Date.now() + 3_600_000, groupBy },
    { token: tokens.admin },
  );
  expect(answer.errors).toBeUndefined();
  return Object.fromEntries(answer.data!.aggregate.map(({ tags, ...rest }) => [tagText(tags), rest]));
}

async function tagValues(metric: string, key: string): Promise<string[]> {
  const answer = await t.graphql<{ tagValues: string[] }>(
    `query($metric: String!, $key: String!) { tagValues(metric: $metric, key: $key) }`,
    { metric, key },
    { token: tokens.admin },
  );
  expect(answer.errors).toBeUndefined();
  return answer.data!.tagValues;
}

describe('the OpenTelemetry SDK exports unchanged', () => {
  it('protobuf with gzip, delta temporality: counter increases, histogram count/sum/min/max and gauges stored exactly', async () => {
    const exporter = new ProtoExporter({
      url: `${url}/v1/metrics`,
      headers: { authorization: `Bearer ${tokens['app-writer']}` },
      compression: 'gzip' as never,
      temporalityPreference: AggregationTemporality.DELTA,
    });
    const { meter, flush, close } = sdk(exporter, 'checkout');
    const requests = meter.createCounter('app.requests', { unit: '{request}' });
    const latency = meter.createHistogram('app.latency', { unit: 'ms' });
    const temperature = meter.createGauge('app.temperature', { unit: 'Cel' });
    const next = random(11);
    const expected = {
      requests: new Map<string, { count: number; sum: number }>(),
      latency: new Map<string, { count: number; sum: number; min: number; max: number }>(),
      temperature: new Map<string, number>(),
    };
    const start = received.length;
    for (let round = 0; round < 3; round++) {
      const increases = new Map<string, number>();
      for (let i = 0; i < 40; i++) {
        const route = next() < 0.5 ? '/cart' : '/pay';
        const status = next() < 0.8 ? 200 : 500;
        const amount = 1 + Math.floor(next() * 5);
        requests.add(amount, { 'http.route': route, 'http.status': status });
        const key = `http_route=${route},http_status=${status}`;
        increases.set(key, (increases.get(key) ?? 0) + amount);
        // Eighths: sums of them are exact in doubles, in any order.
        const ms = Math.round(next() * 2000) / 8;
        latency.record(ms, { 'http.route': route });
        const group = expected.latency.get(route) ?? { count: 0, sum: 0, min: Infinity, max: -Infinity };
        group.count++;
        group.sum += ms;
        group.min = Math.min(group.min, ms);
        group.max = Math.max(group.max, ms);
        expected.latency.set(route, group);
      }
      // A delta counter exports one reading per series and round: the round's increase.
      for (const [key, increase] of increases) {
        const total = expected.requests.get(key) ?? { count: 0, sum: 0 };
        expected.requests.set(key, { count: total.count + 1, sum: total.sum + increase });
      }
      for (const room of ['a', 'b']) {
        const value = Math.round(next() * 400) / 10;
        temperature.record(value, { room });
        expected.temperature.set(room, value);
      }
      await flush();
    }
    await close();
    expect(received.slice(start)).toEqual(['application/x-protobuf gzip', 'application/x-protobuf gzip', 'application/x-protobuf gzip']);

    const requestsStored = await aggregateBySeries('app_requests', 'value', ['http_route', 'http_status']);
    const requestsWanted = Object.fromEntries([...expected.requests].map(([key, { count, sum }]) => [key, { count, sum }]));
    expect(Object.fromEntries(Object.entries(requestsStored).map(([key, { count, sum }]) => [key, { count, sum }]))).toEqual(
      requestsWanted,
    );

    // Each round's histogram reading carries the round's count, sum, min and max: over the
    // rounds, counts and sums add up, the smallest min and the largest max are the extremes.
    const counts = await aggregateBySeries('app_latency', 'count', ['http_route']);
    const sums = await aggregateBySeries('app_latency', 'sum', ['http_route']);
    const mins = await aggregateBySeries('app_latency', 'min', ['http_route']);
    const maxes = await aggregateBySeries('app_latency', 'max', ['http_route']);
    for (const [route, group] of expected.latency) {
      const key = `http_route=${route}`;
      expect(counts[key]!.sum).toBe(group.count);
      expect(sums[key]!.sum).toBe(group.sum);
      expect(mins[key]!.min).toBe(group.min);
      expect(maxes[key]!.max).toBe(group.max);
    }

    const latest = await t.graphql<{ series: { tags: Tags; latest: { values: { name: string; value: number }[] }[] }[] }>(
      `{ series(metric: "app_temperature") { tags { key value } latest(n: 1) { values { name value } } } }`,
      {},
      { token: tokens.admin },
    );
    const temperatures = Object.fromEntries(
      latest.data!.series.map((series) => [series.tags.find((tag) => tag.key === 'room')!.value, series.latest[0]!.values]),
    );
    expect(temperatures).toEqual(Object.fromEntries([...expected.temperature].map(([room, value]) => [room, [{ name: 'value', value }]])));

    // Resource attributes of the default list are tags (service.version is not in it); the unit is a tag.
    expect(await tagValues('app_temperature', 'service_name')).toEqual(['checkout']);
    expect(await tagValues('app_temperature', 'host_name')).toEqual(['box-1']);
    expect(await tagValues('app_temperature', 'service_version')).toEqual([]);
    expect(await tagValues('app_latency', 'unit')).toEqual(['ms']);
    expect(await tagValues('app_requests', 'unit')).toEqual(['{request}']);
  });

  it('JSON, cumulative temporality: a counter stores its running total at every export, an up-down counter its value', async () => {
    const exporter = new JsonExporter({ url: `${url}/v1/metrics`, headers: { authorization: `Bearer ${tokens.writer}` } });
    const { meter, flush, close } = sdk(exporter, 'billing');
    const jobs = meter.createCounter('jobs.done');
    const queue = meter.createUpDownCounter('queue.depth');
    const next = random(5);
    const running = new Map<string, number>();
    const exported = new Map<string, number[]>();
    let depth = 0;
    const depths: number[] = [];
    const start = received.length;
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 25; i++) {
        const kind = next() < 0.5 ? 'email' : 'sms';
        const amount = Math.floor(next() * 10);
        jobs.add(amount, { kind });
        running.set(kind, (running.get(kind) ?? 0) + amount);
        const change = Math.floor(next() * 7) - 3;
        queue.add(change);
        depth += change;
      }
      for (const [kind, total] of running) exported.set(kind, [...(exported.get(kind) ?? []), total]);
      depths.push(depth);
      await flush();
    }
    expect(received.slice(start)).toEqual(depths.map(() => 'application/json none'));

    const stored = await aggregateBySeries('jobs_done', 'value', ['kind']);
    const wanted = Object.fromEntries(
      [...exported].map(([kind, totals]) => [
        `kind=${kind}`,
        { count: totals.length, sum: totals.reduce((a, b) => a + b, 0), min: Math.min(...totals), max: Math.max(...totals) },
      ]),
    );
    expect(stored).toEqual(wanted);
    const queueStored = await aggregateBySeries('queue_depth', 'value', []);
    expect(queueStored['']).toEqual({
      count: depths.length,
      sum: depths.reduce((a, b) => a + b, 0),
      min: Math.min(...depths),
      max: Math.max(...depths),
    });
    await close();
  });
});

/** An export request body as OTLP/JSON, one gauge point per value of `values`, at `time` ms. */
function gaugeRequest(metric: string, values: number[], time: number, attributes: Record<string, string> = {}) {
  return {
    resourceMetrics: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'raw' } }] },
        scopeMetrics: [
          {
            metrics: [
              {
                name: metric,
                gauge: {
                  dataPoints: values.map((value, index) => ({
                    timeUnixNano: `${BigInt(time) * 1_000_000n + 123_456n}`,
                    asDouble: value,
                    attributes: [
                      { key: 'n', value: { intValue: String(index) } },
                      ...Object.entries(attributes).map(([key, text]) => ({ key, value: { stringValue: text } })),
                    ],
                  })),
                },
              },
            ],
          },
        ],
      },
    ],
  };
}

/** The protobuf bytes of an OTLP/JSON request object. */
function protobufOf(json: object): Uint8Array {
  const type = receiverTypes().exportRequest;
  return type.encode(type.fromObject(json)).finish();
}

/** Posts a body to /v1/metrics; parses the answer (an ExportMetricsServiceResponse, or a google.rpc.Status for errors). */
async function post(body: string | Uint8Array, headers: Record<string, string>, token: string | null = tokens.writer!) {
  const response = await t.app.fetch('http://yoga/v1/metrics', {
    method: 'POST',
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body,
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const json = (response.headers.get('content-type') ?? '').startsWith('application/json');
  const types = receiverTypes();
  const type = response.status === 200 ? types.exportResponse : types.status;
  const parsed = json ? JSON.parse(new TextDecoder().decode(bytes)) : type.toObject(type.decode(bytes), { longs: String });
  return { status: response.status, headers: response.headers, body: parsed as Record<string, unknown> };
}

const JSON_TYPE = { 'content-type': 'application/json' };
const PROTOBUF_TYPE = { 'content-type': 'application/x-protobuf' };

async function countOf(metric: string): Promise<{ count: number; sum: number } | undefined> {
  const answer = await t.graphql<{ aggregate: { count: number; sum: number }[] }>(
    `query($metric: String!, $to: Time!) { aggregate(metric: $metric, field: "value", from: 0, to: $to) { count sum } }`,
    { metric, to: Date.now() + 3_600_000 },
    { token: tokens.admin },
  );
  return answer.data?.aggregate[0];
}

describe('requests sent by hand', () => {
  it('takes JSON gzipped, keeps the time to the millisecond, and answers an empty response', async () => {
    const time = Date.UTC(2024, 4, 2, 10, 0, 0, 789);
    const response = await post(gzipSync(JSON.stringify(gaugeRequest('raw.gzip', [1.5, 2.5], time))), {
      ...JSON_TYPE,
      'content-encoding': 'gzip',
    });
    expect(response).toMatchObject({ status: 200, body: {} });
    expect(response.headers.get('content-type')).toBe('application/json');
    const answer = await t.graphql<{ series: { tags: Tags; latest: { time: string }[] }[] }>(
      `{ series(metric: "raw_gzip") { tags { key value } latest(n: 1) { time } } }`,
      {},
      { token: tokens.admin },
    );
    expect(answer.data!.series.map((series) => series.latest[0]!.time)).toEqual([
      new Date(time).toISOString(),
      new Date(time).toISOString(),
    ]);
    expect(answer.data!.series.map((series) => tagText(series.tags))).toEqual(['n=0,service_name=raw', 'n=1,service_name=raw']);
  });

  it('refuses bodies that do not decode, other types and encodings, with a google.rpc.Status and nothing written', async () => {
    const before = await databaseSnapshot(t.store.db);
    const cases: [string | Uint8Array, Record<string, string>, number, string][] = [
      [new Uint8Array([0x0a, 0xff, 0xff, 0xff]), PROTOBUF_TYPE, 400, 'MALFORMED_BODY'],
      ['{"resourceMetrics": ', JSON_TYPE, 400, 'MALFORMED_BODY'],
      ['[1, 2]', JSON_TYPE, 400, 'MALFORMED_BODY'],
      ['{"resourceMetrics": 5}', JSON_TYPE, 400, 'MALFORMED_BODY'],
      ['not gzip', { ...JSON_TYPE, 'content-encoding': 'gzip' }, 400, 'MALFORMED_BODY'],
      ['{}', { ...JSON_TYPE, 'content-encoding': 'br' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
      ['{}', { 'content-type': 'text/plain' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ];
    for (const [body, headers, status, code] of cases) {
      const response = await post(body, headers);
      expect({ status: response.status, message: String(response.body.message).split(':')[0] }, JSON.stringify(headers)).toEqual({
        status,
        message: code,
      });
      expect(response.body.code).toBe(3);
    }
    expect(await databaseSnapshot(t.store.db)).toBe(before);
  });

  it('refuses a request without a token (401), without the write scope or outside the prefixes (403), and writes nothing', async () => {
    const before = await databaseSnapshot(t.store.db);
    const body = protobufOf(gaugeRequest('auth.gauge', [1], Date.now()));
    const none = await post(body, PROTOBUF_TYPE, null);
    expect({ status: none.status, grpc: none.body.code }).toEqual({ status: 401, grpc: 16 });
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    const reader = await post(body, PROTOBUF_TYPE, tokens.reader);
    expect({ status: reader.status, grpc: reader.body.code, code: String(reader.body.message).split(':')[0] }).toEqual({
      status: 403,
      grpc: 7,
      code: 'FORBIDDEN',
    });
    const prefixed = await post(body, PROTOBUF_TYPE, tokens['app-writer']);
    expect(prefixed.status).toBe(403);
    expect(await databaseSnapshot(t.store.db)).toBe(before);
  });

  it('stores a resent export once, in either encoding (the batch id is the hash of the body)', async () => {
    const request = gaugeRequest('raw.resent', [10, 20, 30], Date.UTC(2024, 4, 3));
    const bytes = protobufOf(request);
    for (let i = 0; i < 3; i++) expect((await post(bytes, PROTOBUF_TYPE)).status).toBe(200);
    expect((await post(gzipSync(bytes), { ...PROTOBUF_TYPE, 'content-encoding': 'gzip' })).status).toBe(200);
    expect(await countOf('raw_resent')).toEqual({ count: 3, sum: 60 });
    // The same points in JSON are other bytes: another batch.
    const text = JSON.stringify(request);
    expect((await post(text, JSON_TYPE)).status).toBe(200);
    expect((await post(text, JSON_TYPE)).status).toBe(200);
    expect(await countOf('raw_resent')).toEqual({ count: 6, sum: 120 });
    const ids = (
      await ingestLog(t.store)
        .find({}, { projection: { _id: 1 } })
        .toArray()
    ).map((entry) => String(entry._id));
    expect(ids.filter((id) => id.startsWith('otlp:')).every((id) => /^otlp:[0-9a-f]{64}$/.test(id))).toBe(true);
  });

  it('stores the good points and answers partial success for the others, in both encodings', async () => {
    const time = Date.UTC(2024, 4, 4);
    const long = 'x'.repeat(300);
    const request = gaugeRequest('raw.partial', [1, 2, 3, Number.NaN], time);
    const points = (request.resourceMetrics[0]!.scopeMetrics[0]!.metrics[0]!.gauge.dataPoints as { attributes: unknown[] }[]) ?? [];
    points[1]!.attributes.push({ key: 'long', value: { stringValue: long } });
    request.resourceMetrics[0]!.scopeMetrics[0]!.metrics.push({
      name: '',
      gauge: { dataPoints: [{ timeUnixNano: '1', asDouble: 1, attributes: [] }] },
    });
    const json = await post(JSON.stringify(request).replace('"asDouble":null', '"asDouble":"NaN"'), JSON_TYPE);
    expect(json.status).toBe(200);
    const partial = json.body.partialSuccess as { rejectedDataPoints: string; errorMessage: string };
    expect(partial.rejectedDataPoints).toBe('3');
    expect(partial.errorMessage).toMatch(/^3 data points rejected: /);
    expect(partial.errorMessage).toContain('an empty metric name');
    expect(partial.errorMessage).toContain('256 characters');
    expect(partial.errorMessage).toContain('finite number');
    expect(await countOf('raw_partial')).toEqual({ count: 2, sum: 4 });

    const proto = await post(
      protobufOf({ ...request, resourceMetrics: [{ ...request.resourceMetrics[0]!, resource: { attributes: [] } }] }),
      PROTOBUF_TYPE,
    );
    expect(proto.status).toBe(200);
    expect((proto.body.partialSuccess as { rejectedDataPoints: string }).rejectedDataPoints).toBe('3');
    expect(await countOf('raw_partial')).toEqual({ count: 4, sum: 8 });
  });

  it('refuses more data points than MAX_BATCH_SIZE and bodies over MAX_BODY_BYTES once decompressed (413), writing nothing', async () => {
    const small = createApp({
      store: t.store,
      logger: pino({ level: 'silent' }),
      limits: { maxBatchSize: 2, maxBuckets: 1000 },
      auth: { mode: 'off', corsOrigins: [] },
      requestLimits: { maxBodyBytes: 2000 },
    });
    const before = await databaseSnapshot(t.store.db);
    const send = async (body: Uint8Array, headers: Record<string, string> = {}) => {
      const response = await small.fetch('http://yoga/v1/metrics', { method: 'POST', headers: { ...PROTOBUF_TYPE, ...headers }, body });
      const status = receiverTypes().status;
      const answer = status.toObject(status.decode(new Uint8Array(await response.arrayBuffer()))) as { message: string };
      return { status: response.status, code: answer.message.split(':')[0] };
    };
    expect(await send(protobufOf(gaugeRequest('raw.limits', [1, 2, 3], Date.now())))).toEqual({ status: 413, code: 'BATCH_TOO_LARGE' });
    const padded = gaugeRequest('raw.limits', [1], Date.now(), { pad: 'p'.repeat(250) });
    padded.resourceMetrics[0]!.scopeMetrics[0]!.metrics.push(
      ...Array.from({ length: 10 }, () => padded.resourceMetrics[0]!.scopeMetrics[0]!.metrics[0]!),
    );
    const big = protobufOf(padded);
    expect(big.byteLength).toBeGreaterThan(2000);
    expect(gzipSync(big).byteLength).toBeLessThan(2000);
    expect(await send(gzipSync(big), { 'content-encoding': 'gzip' })).toEqual({ status: 413, code: 'REQUEST_TOO_LARGE' });
    expect(await databaseSnapshot(t.store.db)).toBe(before);
    await small.dispose();
  });

  it('answers INGEST_BACKLOG with 503 and Retry-After, which the exporters retry', async () => {
    const backlogged = await openTestApp('otlpbacklog', { auth: 'off', journal: false, ingest: { maxTailReadings: 1, maxTailSeconds: 0 } });
    try {
      const send = (values: number[]) =>
        backlogged.app.fetch('http://yoga/v1/metrics', {
          method: 'POST',
          headers: PROTOBUF_TYPE,
          body: protobufOf(gaugeRequest('raw.backlog', values, Date.now())),
        });
      expect((await send([1, 2])).status).toBe(200);
      // Past the 500 ms for which a process reuses a measured backlog.
      await new Promise((done) => setTimeout(done, 600));
      const before = await databaseSnapshot(backlogged.store.db);
      const refused = await send([3, 4]);
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      const status = receiverTypes().status;
      const body = status.toObject(status.decode(new Uint8Array(await refused.arrayBuffer()))) as { code: number; message: string };
      expect({ code: body.code, message: body.message.split(':')[0] }).toEqual({ code: 14, message: 'INGEST_BACKLOG' });
      expect(await databaseSnapshot(backlogged.store.db)).toBe(before);
    } finally {
      await backlogged.close();
    }
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

  async function increaseBySeries(metric: string, groupBy: string[]) {
    return t.graphql<{ aggregate: { tags: Tags; increase: number | null }[] }>(
      `query($metric: String!, $from: Time!, $to: Time!, $groupBy: [String!]) {
        aggregate(metric: $metric, field: "value", from: $from, to: $to, groupBy: $groupBy) { tags { key value } increase }
      }`,
      { metric, from: Date.now() - 3_600_000, to: Date.now() + 3_600_000, groupBy },
      { token: tokens.admin },
    );
  }

  it('declares a monotonic cumulative sum a counter: its increase across a restart (two SDK runs) is the plain reset-aware loop; a gauge, an up-down counter and a histogram stay gauges', async () => {
    const next = random(23);
    const exported = new Map<string, number[]>();
    for (let run = 0; run < 2; run++) {
      // A new MeterProvider is a restarted process: its cumulative counter starts again from 0.
      const exporter = new JsonExporter({ url: `${url}/v1/metrics`, headers: { authorization: `Bearer ${tokens.writer}` } });
      const { meter, flush, close } = sdk(exporter, 'restarts');
      const requests = meter.createCounter('restart.requests');
      const temperature = meter.createGauge('restart.temperature');
      const depth = meter.createUpDownCounter('restart.depth');
      const latency = meter.createHistogram('restart.latency');
      const running = new Map<string, number>();
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 12; i++) {
          const route = next() < 0.5 ? '/a' : '/b';
          const amount = 1 + Math.floor(next() * 9);
          requests.add(amount, { route });
          running.set(route, (running.get(route) ?? 0) + amount);
          latency.record(amount);
          depth.add(1);
        }
        temperature.record(Math.round(next() * 400) / 10);
        for (const [route, total] of running) exported.set(route, [...(exported.get(route) ?? []), total]);
        await flush();
        // Exports a few milliseconds apart: the readings' times are distinct.
        await new Promise((later) => setTimeout(later, 5));
      }
      await close();
    }
    // The second run's first total is below the first run's last: a reset in each series.
    for (const values of exported.values()) expect(values.some((value, i) => i > 0 && value < values[i - 1]!)).toBe(true);

    expect(await kindOf('restart_requests')).toBe('COUNTER');
    // From the log's tail, then from the folded documents.
    for (const folded of [false, true]) {
      if (folded) await t.settle();
      const answer = await increaseBySeries('restart_requests', ['route']);
      expect(answer.errors).toBeUndefined();
      expect(
        Object.fromEntries(answer.data!.aggregate.map(({ tags, increase }) => [tagText(tags), increase])),
        `folded: ${folded}`,
      ).toEqual(Object.fromEntries([...exported].map(([route, values]) => [`route=${route}`, plainIncrease(values)])));
    }

    for (const metric of ['restart_temperature', 'restart_depth', 'restart_latency']) {
      expect(await kindOf(metric), metric).toBe('GAUGE');
    }
    const refused = await increaseBySeries('restart_temperature', []);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_A_COUNTER', metric: 'restart_temperature' });
  });

  it('leaves a metric declared a gauge by setMetricKind a gauge, and declares nothing for a refused export', async () => {
    const declared = await t.graphql(
      'mutation { setMetricKind(metric: "kept_gauge_total", kind: GAUGE) { kind } }',
      {},
      { token: tokens.admin },
    );
    expect(declared.errors).toBeUndefined();
    const exporter = new JsonExporter({ url: `${url}/v1/metrics`, headers: { authorization: `Bearer ${tokens.writer}` } });
    const { meter, flush, close } = sdk(exporter, 'kept');
    meter.createCounter('kept.gauge.total').add(3);
    await flush();
    await close();
    expect(await kindOf('kept_gauge_total')).toBe('GAUGE');
    const refused = await increaseBySeries('kept_gauge_total', []);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_A_COUNTER' });

    // Outside the writer's prefixes: refused (403), so nothing is stored and nothing declared.
    const outside = new JsonExporter({ url: `${url}/v1/metrics`, headers: { authorization: `Bearer ${tokens['app-writer']}` } });
    const other = sdk(outside, 'outside');
    other.meter.createCounter('refused.requests').add(5);
    await other.flush().catch(() => undefined);
    await other.close().catch(() => undefined);
    expect(await kindOf('refused_requests')).toBeUndefined();
  });
});
