/**
 * The receivers' mappings, without a database: OTLP metrics of every type and
 * Prometheus remote-write series as readings (names, tags, fields, times, kinds, what
 * is refused or skipped), name sanitizing and 64-bit integers. Inputs are built with
 * the official schemas (protobufjs from JSON, as the JSON encoding of OTLP is read, and
 * through protobuf bytes), expected values written out by hand.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { int64ToBigInt, int64ToNumber, nanosToMs } from '../../src/receivers/int64.ts';
import { sanitizeName } from '../../src/receivers/names.ts';
import { DEFAULT_RESOURCE_ATTRIBUTES, type ExportRequest, mapExportRequest, quantileField } from '../../src/receivers/otlp.ts';
import { receiverTypes } from '../../src/receivers/proto.ts';
import { mapWriteRequest, STALE_NAN_BITS, type WriteRequest } from '../../src/receivers/remote-write.ts';
import { contentBatchId, rejectionMessage } from '../../src/routes/receivers.ts';
import { loadConfig } from '../../src/config.ts';

const T = Date.UTC(2024, 6, 1, 12, 0, 0, 250);
const nanos = (ms: number, extra = 0) => `${BigInt(ms) * 1_000_000n + BigInt(extra)}`;

/** A decoded export request from its OTLP/JSON form, once read as JSON and once through protobuf bytes. */
function decoded(json: object): ExportRequest[] {
  const type = receiverTypes().exportRequest;
  const fromJson = type.fromObject(json);
  return [fromJson as unknown as ExportRequest, type.decode(type.encode(fromJson).finish()) as unknown as ExportRequest];
}

const str = (key: string, value: string) => ({ key, value: { stringValue: value } });

function request(metrics: object[], resource: object[] = [str('service.name', 'shop'), str('telemetry.sdk.language', 'nodejs')]) {
  return { resourceMetrics: [{ resource: { attributes: resource }, scopeMetrics: [{ scope: { name: 'lib' }, metrics }] }] };
}

const DEFAULTS = { resourceAttributes: DEFAULT_RESOURCE_ATTRIBUTES };

describe('sanitizeName', () => {
  it('replaces characters one for one, prefixes a leading digit, shortens a leading run of underscores', () => {
    expect(sanitizeName('http.server.request.duration')).toBe('http_server_request_duration');
    expect(sanitizeName('node:cpu:rate5m')).toBe('node_cpu_rate5m');
    expect(sanitizeName('already_fine-1')).toBe('already_fine-1');
    expect(sanitizeName('2xx.count')).toBe('_2xx_count');
    expect(sanitizeName('-x')).toBe('_-x');
    expect(sanitizeName('__internal')).toBe('_internal');
    expect(sanitizeName('.hidden')).toBe('_hidden');
    expect(sanitizeName('größe')).toBe('gr__e');
    expect(sanitizeName('a😀b')).toBe('a_b');
    expect(sanitizeName('a'.repeat(64))).toBe('a'.repeat(64));
    expect(sanitizeName('')).toBeUndefined();
  });

  it('shortens a name past 64 characters to its first 55, `_` and 8 hex digits of the SHA-256 of the name as sent', () => {
    const hash = (name: string) => createHash('sha256').update(name, 'utf8').digest('hex').slice(0, 8);
    const prometheus = 'prometheus_remote_storage_string_interner_zero_reference_releases_total';
    expect(sanitizeName(prometheus)).toBe(`prometheus_remote_storage_string_interner_zero_referenc_${hash(prometheus)}`);
    const dotted = `${'x.'.repeat(40)}y`;
    expect(sanitizeName(dotted)).toBe(`${'x_'.repeat(27)}x_${hash(dotted)}`);
    expect(sanitizeName(dotted)).toHaveLength(64);
    // Two long names with the same first 55 characters stay apart.
    expect(sanitizeName(`${'a'.repeat(60)}_one`)).not.toBe(sanitizeName(`${'a'.repeat(60)}_two`));
  });
});

describe('64-bit integers', () => {
  it('reads Longs, strings and numbers, and nanoseconds as milliseconds rounded down', () => {
    const type = receiverTypes().exportRequest;
    const message = type.decode(
      type
        .encode(type.fromObject(request([{ name: 'g', gauge: { dataPoints: [{ timeUnixNano: '18446744073709551615', asInt: '-5' }] } }])))
        .finish(),
    ) as unknown as {
      resourceMetrics: { scopeMetrics: { metrics: { gauge: { dataPoints: { timeUnixNano: never; asInt: never }[] } }[] }[] }[];
    };
    const point = message.resourceMetrics[0]!.scopeMetrics[0]!.metrics[0]!.gauge.dataPoints[0]!;
    expect(int64ToBigInt(point.timeUnixNano)).toBe(18446744073709551615n);
    expect(int64ToNumber(point.asInt)).toBe(-5);
    expect(int64ToBigInt(point.asInt)).toBe(-5n);
    expect(nanosToMs('1719835200250999999')).toBe(1719835200250);
    expect(nanosToMs(nanos(T, 999_999))).toBe(T);
    expect(nanosToMs('-1')).toBe(-1);
    expect(int64ToNumber('9007199254740993')).toBe(9007199254740992);
  });
});

describe('OTLP metrics as readings', () => {
  it('maps a gauge: sanitized name, kept resource attributes and data-point attributes as tags, unit as a tag, time in ms', () => {
    for (const input of decoded(
      request([
        {
          name: 'system.cpu.utilization',
          unit: '1',
          gauge: {
            dataPoints: [
              {
                timeUnixNano: nanos(T, 500_000),
                asDouble: 0.25,
                attributes: [str('cpu', '0'), { key: 'system.cpu.state', value: { stringValue: 'idle' } }, str('service.name', 'override')],
              },
              { timeUnixNano: nanos(T + 1), asInt: '7', attributes: [{ key: 'big', value: { intValue: '123' } }] },
              { timeUnixNano: '0', asDouble: 1 },
            ],
          },
        },
      ]),
    )) {
      const mapped = mapExportRequest(input, DEFAULTS);
      expect(mapped.rejected).toEqual([]);
      expect(mapped.dataPoints).toBe(3);
      expect(mapped.kinds).toEqual(new Map([['system_cpu_utilization', 'gauge']]));
      expect(mapped.readings).toEqual([
        {
          metric: 'system_cpu_utilization',
          tags: [
            { key: 'service_name', value: 'override' },
            { key: 'unit', value: '1' },
            { key: 'cpu', value: '0' },
            { key: 'system_cpu_state', value: 'idle' },
          ],
          time: new Date(T),
          fields: [{ name: 'value', value: 0.25 }],
        },
        {
          metric: 'system_cpu_utilization',
          tags: [
            { key: 'service_name', value: 'shop' },
            { key: 'unit', value: '1' },
            { key: 'big', value: '123' },
          ],
          time: new Date(T + 1),
          fields: [{ name: 'value', value: 7 }],
        },
        {
          metric: 'system_cpu_utilization',
          tags: [
            { key: 'service_name', value: 'shop' },
            { key: 'unit', value: '1' },
          ],
          time: null,
          fields: [{ name: 'value', value: 1 }],
        },
      ]);
    }
  });

  it('gives sums their kind: monotonic cumulative a counter, other cumulative a gauge, delta a delta', () => {
    const sum = (name: string, aggregationTemporality: number, isMonotonic: boolean) => ({
      name,
      sum: { aggregationTemporality, isMonotonic, dataPoints: [{ timeUnixNano: nanos(T), asInt: '42' }] },
    });
    for (const input of decoded(request([sum('requests', 2, true), sum('in.flight', 2, false), sum('bytes', 1, true)]))) {
      const mapped = mapExportRequest(input, { resourceAttributes: [] });
      expect(mapped.kinds).toEqual(
        new Map([
          ['requests', 'counter'],
          ['in_flight', 'gauge'],
          ['bytes', 'delta'],
        ]),
      );
      expect(mapped.readings.map((reading) => [reading.metric, reading.tags, reading.fields])).toEqual([
        ['requests', [], [{ name: 'value', value: 42 }]],
        ['in_flight', [], [{ name: 'value', value: 42 }]],
        ['bytes', [], [{ name: 'value', value: 42 }]],
      ]);
    }
  });

  it('maps histograms to count, sum, min and max (those present) and drops the buckets; summaries to count, sum and quantiles', () => {
    for (const input of decoded(
      request([
        {
          name: 'latency',
          unit: 'ms',
          histogram: {
            aggregationTemporality: 2,
            dataPoints: [
              { timeUnixNano: nanos(T), count: '6', sum: 55.5, min: 0.5, max: 30, bucketCounts: ['1', '2', '3'], explicitBounds: [1, 10] },
              { timeUnixNano: nanos(T), count: '0', bucketCounts: ['0', '0', '0'], explicitBounds: [1, 10] },
            ],
          },
        },
        {
          name: 'size',
          exponentialHistogram: {
            aggregationTemporality: 1,
            dataPoints: [
              {
                timeUnixNano: nanos(T),
                count: '3',
                sum: 7,
                scale: 2,
                zeroCount: '1',
                positive: { offset: 0, bucketCounts: ['2'] },
                max: 4,
              },
            ],
          },
        },
        {
          name: 'rpc.duration',
          summary: {
            dataPoints: [
              {
                timeUnixNano: nanos(T),
                count: '10',
                sum: 12.5,
                quantileValues: [
                  { quantile: 0, value: 0.1 },
                  { quantile: 0.5, value: 1 },
                  { quantile: 0.999, value: 4.5 },
                  { quantile: 1, value: 5 },
                ],
              },
            ],
          },
        },
      ]),
    )) {
      const mapped = mapExportRequest(input, { resourceAttributes: [] });
      expect(mapped.kinds).toEqual(
        new Map([
          ['latency', 'histogram'],
          ['size', 'delta-histogram'],
          ['rpc_duration', 'summary'],
        ]),
      );
      expect(mapped.readings.map((reading) => reading.fields)).toEqual([
        [
          { name: 'count', value: 6 },
          { name: 'sum', value: 55.5 },
          { name: 'min', value: 0.5 },
          { name: 'max', value: 30 },
        ],
        [{ name: 'count', value: 0 }],
        [
          { name: 'count', value: 3 },
          { name: 'sum', value: 7 },
          { name: 'max', value: 4 },
        ],
        [
          { name: 'count', value: 10 },
          { name: 'sum', value: 12.5 },
          { name: 'p0', value: 0.1 },
          { name: 'p50', value: 1 },
          { name: 'p99_9', value: 4.5 },
          { name: 'p100', value: 5 },
        ],
      ]);
      expect(mapped.readings[0]!.tags).toEqual([{ key: 'unit', value: 'ms' }]);
    }
    expect([0.25, 0.9, 0.99, 0.995, 0.9999].map(quantileField)).toEqual(['p25', 'p90', 'p99', 'p99_5', 'p99_99']);
  });

  it('refuses points one by one: empty names, attributes becoming one key, kinds in conflict, no value, bad quantiles', () => {
    for (const input of decoded(
      request([
        {
          name: '',
          gauge: {
            dataPoints: [
              { timeUnixNano: nanos(T), asDouble: 1 },
              { timeUnixNano: nanos(T), asDouble: 2 },
            ],
          },
        },
        {
          name: 'clash',
          gauge: {
            dataPoints: [
              { timeUnixNano: nanos(T), asDouble: 1, attributes: [str('a.b', '1'), str('a_b', '2')] },
              { timeUnixNano: nanos(T), asDouble: 2, attributes: [str('a.b', '1')] },
              { timeUnixNano: nanos(T) },
              { timeUnixNano: nanos(T), asDouble: 3, flags: 1 },
            ],
          },
        },
        { name: 'clash', sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: [{ timeUnixNano: nanos(T), asDouble: 1 }] } },
        {
          name: 'quantiles',
          summary: { dataPoints: [{ timeUnixNano: nanos(T), count: '1', sum: 1, quantileValues: [{ quantile: 1.5, value: 1 }] }] },
        },
      ]),
    )) {
      const mapped = mapExportRequest(input, { resourceAttributes: [] });
      expect(mapped.dataPoints).toBe(8);
      expect(mapped.noValue).toBe(1);
      expect(mapped.readings.map((reading) => [reading.metric, reading.tags])).toEqual([['clash', [{ key: 'a_b', value: '1' }]]]);
      expect(mapped.rejected.map((rejection) => rejection.reason)).toEqual([
        'an empty metric name',
        'an empty metric name',
        'two attributes become tag key "a_b"',
        expect.stringContaining('without a value'),
        'metric "clash" is a gauge earlier in the request and a counter here',
        'summary quantile 1.5 is outside [0, 1]',
      ]);
      expect(rejectionMessage(mapped.rejected)).toMatch(/^6 data points rejected: metric "": an empty metric name; .*; and 3 more$/);
    }
  });

  it('keeps the resource attributes chosen: a list (OTel keys), all, or none; attribute values of every type as text', () => {
    const resource = [
      str('service.name', 'shop'),
      str('k8s.pod.name', 'shop-7d9'),
      { key: 'process.pid', value: { intValue: '4242' } },
      { key: 'flag', value: { boolValue: true } },
      { key: 'ratio', value: { doubleValue: 0.5 } },
      { key: 'list', value: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: '1' }, { boolValue: false }] } } },
      { key: 'map', value: { kvlistValue: { values: [str('k', 'v')] } } },
      { key: 'raw', value: { bytesValue: 'AQID' } },
      str('empty', ''),
    ];
    const metric = { name: 'm', gauge: { dataPoints: [{ timeUnixNano: nanos(T), asDouble: 1 }] } };
    const tagsWith = (resourceAttributes: readonly string[] | 'all') =>
      decoded(request([metric], resource)).map((input) => mapExportRequest(input, { resourceAttributes }).readings[0]!.tags);
    for (const tags of tagsWith(DEFAULT_RESOURCE_ATTRIBUTES)) {
      expect(tags).toEqual([
        { key: 'service_name', value: 'shop' },
        { key: 'k8s_pod_name', value: 'shop-7d9' },
      ]);
    }
    for (const tags of tagsWith(['process.pid'])) expect(tags).toEqual([{ key: 'process_pid', value: '4242' }]);
    for (const tags of tagsWith([])) expect(tags).toEqual([]);
    for (const tags of tagsWith('all')) {
      expect(Object.fromEntries(tags!.map((tag) => [tag.key, tag.value]))).toEqual({
        service_name: 'shop',
        k8s_pod_name: 'shop-7d9',
        process_pid: '4242',
        flag: 'true',
        ratio: '0.5',
        list: '["a","1",false]',
        map: '{"k":"v"}',
        raw: 'AQID',
      });
    }
  });

  it('reads OTLP_RESOURCE_ATTRIBUTES: the default list, a list of keys, all, none', () => {
    expect(loadConfig({}).OTLP_RESOURCE_ATTRIBUTES).toEqual(DEFAULT_RESOURCE_ATTRIBUTES);
    expect(loadConfig({ OTLP_RESOURCE_ATTRIBUTES: 'service.name, host.name' }).OTLP_RESOURCE_ATTRIBUTES).toEqual([
      'service.name',
      'host.name',
    ]);
    expect(loadConfig({ OTLP_RESOURCE_ATTRIBUTES: 'all' }).OTLP_RESOURCE_ATTRIBUTES).toBe('all');
    expect(loadConfig({ OTLP_RESOURCE_ATTRIBUTES: 'none' }).OTLP_RESOURCE_ATTRIBUTES).toEqual([]);
    expect(() => loadConfig({ OTLP_RESOURCE_ATTRIBUTES: 'a,,b' })).toThrow(/OTLP_RESOURCE_ATTRIBUTES/);
  });
});

/** A decoded write request through protobuf bytes. */
function writeRequest(json: object): WriteRequest {
  const type = receiverTypes().writeRequest;
  return type.decode(type.encode(type.fromObject(json)).finish()) as unknown as WriteRequest;
}

describe('remote-write series as readings', () => {
  it('maps labels to tags and samples to readings; skips NaN, stale markers, values out of range and histograms; tells counters', () => {
    const stale = new Float64Array(new BigUint64Array([STALE_NAN_BITS]).buffer)[0]!;
    const mapped = mapWriteRequest(
      writeRequest({
        timeseries: [
          {
            labels: [
              { name: '__name__', value: 'http_requests_total' },
              { name: 'job', value: 'api' },
              { name: '__replica__', value: 'r1' },
              { name: 'empty', value: '' },
            ],
            samples: [
              { value: 1, timestamp: T },
              { value: Number.NaN, timestamp: T + 1 },
              { value: stale, timestamp: T + 2 },
              { value: 2.5, timestamp: T + 3 },
              { value: Number.POSITIVE_INFINITY, timestamp: T + 4 },
              { value: -2e150, timestamp: T + 5 },
            ],
          },
          {
            labels: [{ name: '__name__', value: 'job:up:sum' }],
            samples: [{ value: 0, timestamp: T }],
            histograms: [{ sum: 1, timestamp: T }],
          },
          { labels: [{ name: '__name__', value: 'jobs' }], samples: [{ value: 4, timestamp: T }] },
        ],
        metadata: [{ type: 1, metricFamilyName: 'jobs' }],
      }),
    );
    expect(mapped.readings).toEqual([
      { metric: 'http_requests_total', tags: [{ key: 'job', value: 'api' }], time: new Date(T), fields: [{ name: 'value', value: 1 }] },
      {
        metric: 'http_requests_total',
        tags: [{ key: 'job', value: 'api' }],
        time: new Date(T + 3),
        fields: [{ name: 'value', value: 2.5 }],
      },
      { metric: 'job_up_sum', tags: [], time: new Date(T), fields: [{ name: 'value', value: 0 }] },
      { metric: 'jobs', tags: [], time: new Date(T), fields: [{ name: 'value', value: 4 }] },
    ]);
    expect(mapped.seriesOf).toEqual([0, 0, 1, 2]);
    expect(mapped.samples).toBe(9);
    expect(mapped.skipped).toEqual({ stale: 1, nan: 1, outOfRange: 2, histograms: 1 });
    expect(mapped.kinds).toEqual(
      new Map([
        ['http_requests_total', 'counter'],
        ['job_up_sum', 'gauge'],
        ['jobs', 'counter'],
      ]),
    );
  });

  it('refuses a series without a name, or with a label of empty name, naming it', () => {
    const one = (labels: { name: string; value: string }[]) => () =>
      mapWriteRequest(writeRequest({ timeseries: [{ labels, samples: [{ value: 1, timestamp: T }] }] }));
    expect(one([{ name: 'job', value: 'api' }])).toThrow('series {job="api"} has no __name__ label');
    expect(one([{ name: '__name__', value: '' }])).toThrow('series {__name__=""} has no __name__ label');
    expect(
      one([
        { name: '__name__', value: 'up' },
        { name: '', value: 'v' },
      ]),
    ).toThrow('series {__name__="up", ="v"} has a label with an empty name');
    // A series without samples is not looked at.
    expect(mapWriteRequest(writeRequest({ timeseries: [{ labels: [{ name: 'job', value: 'x' }] }] })).readings).toEqual([]);
  });
});

describe('batch ids', () => {
  it('are the prefix and the SHA-256 of the body in hex', () => {
    expect(contentBatchId('otlp', new TextEncoder().encode('abc'))).toBe(
      'otlp:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(contentBatchId('prw', new Uint8Array())).toBe('prw:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

describe('the example of docs/opentelemetry.md', () => {
  it('stores the two readings the page shows, of kinds delta and delta-histogram', () => {
    const example = {
      resourceMetrics: [
        {
          resource: { attributes: [str('service.name', 'checkout'), str('host.name', 'web-1'), str('telemetry.sdk.language', 'nodejs')] },
          scopeMetrics: [
            {
              scope: { name: 'my-lib' },
              metrics: [
                {
                  name: 'http.server.requests',
                  unit: '{request}',
                  sum: {
                    aggregationTemporality: 1,
                    isMonotonic: true,
                    dataPoints: [{ timeUnixNano: '1717236000123456789', asInt: '42', attributes: [str('http.route', '/cart')] }],
                  },
                },
                {
                  name: 'http.server.duration',
                  unit: 'ms',
                  histogram: {
                    aggregationTemporality: 1,
                    dataPoints: [
                      {
                        timeUnixNano: '1717236000123456789',
                        count: '3',
                        sum: 61.5,
                        min: 4.5,
                        max: 40,
                        bucketCounts: ['1', '1', '1'],
                        explicitBounds: [5, 25],
                        attributes: [str('http.route', '/cart')],
                      },
                    ],
                  },
                },
              ],
            },
          ],
        },
      ],
    };
    const tags = (unit: string) => [
      { key: 'service_name', value: 'checkout' },
      { key: 'host_name', value: 'web-1' },
      { key: 'unit', value: unit },
      { key: 'http_route', value: '/cart' },
    ];
    for (const input of decoded(example)) {
      const mapped = mapExportRequest(input, DEFAULTS);
      expect(mapped.readings).toEqual([
        {
          metric: 'http_server_requests',
          time: new Date('2024-06-01T10:00:00.123Z'),
          tags: tags('{request}'),
          fields: [{ name: 'value', value: 42 }],
        },
        {
          metric: 'http_server_duration',
          time: new Date('2024-06-01T10:00:00.123Z'),
          tags: tags('ms'),
          fields: [
            { name: 'count', value: 3 },
            { name: 'sum', value: 61.5 },
            { name: 'min', value: 4.5 },
            { name: 'max', value: 40 },
          ],
        },
      ]);
      expect(mapped.kinds).toEqual(
        new Map([
          ['http_server_requests', 'delta'],
          ['http_server_duration', 'delta-histogram'],
        ]),
      );
    }
  });
});
