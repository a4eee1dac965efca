/**
 * No single request can take the server down: each oversized request ends in its coded
 * error within milliseconds and runs no bucket pipeline (database commands are
 * counted), a query over its time limit is stopped with QUERY_TIMEOUT, and a client
 * that goes away cancels its reads.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getIntrospectionQuery } from 'graphql';
import type { CommandStartedEvent } from 'mongodb';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/server/yoga.ts';
import { openTestApp, type GraphQLResponse, type TestApp } from '../helpers/app.ts';
import { READ_PINS_COLLECTION } from '../../src/storage/read-pins.ts';

const HOSTS = 200;
const HEAVY_HOSTS = 20;
const host = (i: number) => `h${String(i).padStart(3, '0')}`;

let t: TestApp;
/** The database commands since the last `measured` call as `name collection`, e.g. `aggregate series_days` or `find series`. */
const commandTargets: string[] = [];
beforeAll(async () => {
  t = await openTestApp('limits');
  t.store.client.on('commandStarted', (event: CommandStartedEvent) => {
    if (event.databaseName === t.store.db.databaseName)
      commandTargets.push(`${event.commandName} ${String(event.command[event.commandName])}`);
  });
  // 200 hosts with 3 readings each, on 2024-03-01 at 10:00, 10:01 and 10:02 (values 1, 2, 3).
  const readings = Array.from({ length: HOSTS }, (_, i) =>
    [1, 2, 3].map((value) => ({
      metric: 'cpu',
      tags: [{ key: 'host', value: host(i) }],
      time: `2024-03-01T10:0${value - 1}:00Z`,
      fields: [{ name: 'usage', value }],
    })),
  ).flat();
  const recorded = await t.graphql(`mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { recorded series } }`, { r: readings });
  expect(recorded.data).toEqual({ recordReadings: { recorded: 600, series: 200 } });
  // A metric with a reading in every minute of 2024-03-01 for each of 20 hosts: its day documents
  // hold all 1,440 minute slots, so a MINUTE query over it does real work. Sent an hour at a time
  // (1,200 readings a batch, within the 1 MiB request body limit).
  for (let hour = 0; hour < 24; hour++) {
    const heavy = Array.from({ length: HEAVY_HOSTS }, (_, i) =>
      Array.from({ length: 60 }, (_, minute) => ({
        metric: 'heavy',
        tags: [{ key: 'host', value: host(i) }],
        time: new Date(Date.UTC(2024, 2, 1, hour, minute)).toISOString(),
        fields: [{ name: 'v', value: i }],
      })),
    ).flat();
    const answer = await t.graphql(`mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { recorded } }`, { r: heavy });
    expect(answer).toEqual({ data: { recordReadings: { recorded: HEAVY_HOSTS * 60 } } });
  }
  // Fold everything: the reads below run their pipelines on the series-day documents (`aggregate series_days`), with no tail.
  expect(await t.settle()).toBe(HOSTS * 3 + HEAVY_HOSTS * 1440);
}, 600_000);
afterAll(async () => t?.close());

/**
 * The commands that start a read (`aggregate series_days`, `find series`…), leaving out the
 * `getMore`s that continue one and the writes of the process's read pin around its reads
 * (`update read_pins`, `delete read_pins`: src/storage/read-pins.ts, checked by
 * test/integration/read-pins.test.ts).
 */
const reads = (commands: string[]) =>
  commands.filter(
    (command) =>
      !command.startsWith('getMore ') && command !== `update ${READ_PINS_COLLECTION}` && command !== `delete ${READ_PINS_COLLECTION}`,
  );

/** Sends `query`, returns the response, the elapsed milliseconds and the reads it started. */
async function measured<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>) {
  commandTargets.splice(0);
  const started = performance.now();
  const response = await t.graphql<T>(query, variables);
  return { response, ms: performance.now() - started, commands: reads(commandTargets) };
}

/** The codes of a response's errors. */
const codes = (response: GraphQLResponse<unknown>) => (response.errors ?? []).map((error) => error.extensions?.code);
/** Reads of bucket data: pipelines on the series-day documents, and reads of day summaries (whole UTC days of a query grouped by one tag key). */
const bucketPipelines = (commands: string[]) =>
  commands.filter((command) => command === 'aggregate series_days' || command === 'find day_summaries').length;

const MINUTE_BY_HOST = (from: string, to: string, fill = 'NULL') =>
  `{ buckets(metric: "cpu", field: "usage", granularity: MINUTE, from: "${from}", to: "${to}", groupBy: ["host"], fill: ${fill}) { tags { value } buckets { count } } }`;

describe('one budget of buckets per request', () => {
  it('refuses 70 days of MINUTE grouped by 200 hosts with fill NULL before reading anything, in bounded memory', async () => {
    const heapBefore = process.memoryUsage().heapUsed;
    const { response, ms, commands } = await measured(MINUTE_BY_HOST('2024-01-01T00:00:00Z', '2024-03-11T00:00:00Z'));
    const grown = process.memoryUsage().heapUsed - heapBefore;
    expect(codes(response)).toEqual(['TOO_MANY_BUCKETS']);
    expect(response.data).toBeNull();
    // One group alone (100,800 minutes) is over 100,000: not even the groups are counted.
    expect(commands).toEqual([]);
    expect(ms).toBeLessThan(2000);
    // 200 x 100,800 buckets would take gigabytes; the refusal takes next to nothing.
    expect(grown).toBeLessThan(64 * 1024 * 1024);
  });

  it('counts the groups first: one day of MINUTE by 200 hosts (288,000 buckets) is refused after one registry count', async () => {
    for (const fill of ['NULL', 'NONE']) {
      const heapBefore = process.memoryUsage().heapUsed;
      const { response, ms, commands } = await measured(MINUTE_BY_HOST('2024-03-01T00:00:00Z', '2024-03-02T00:00:00Z', fill));
      const grown = process.memoryUsage().heapUsed - heapBefore;
      expect(codes(response)).toEqual(['TOO_MANY_BUCKETS']);
      expect(response.errors![0]!.message).toContain('200 groups x 1,440 buckets');
      expect(commands).toEqual(['aggregate series']);
      expect(ms).toBeLessThan(2000);
      expect(grown).toBeLessThan(64 * 1024 * 1024);
    }
  });

  it('answers a grouped query that fits: 200 hosts x 3 minutes', async () => {
    const { response, commands } = await measured<{ buckets: { tags: { value: string }[]; buckets: { count: number }[] }[] }>(
      MINUTE_BY_HOST('2024-03-01T10:00:00Z', '2024-03-01T10:03:00Z'),
    );
    expect(response.errors).toBeUndefined();
    expect(response.data!.buckets).toHaveLength(200);
    expect(response.data!.buckets[0]).toEqual({ tags: [{ value: 'h000' }], buckets: [{ count: 1 }, { count: 1 }, { count: 1 }] });
    // Minute slots: the metric's retention horizons are read (once) before the pipeline runs; then
    // the visible fold number and, in one command, the metric's unfolded log entries (none:
    // all folded), and the pipeline runs on the series-day documents.
    expect(commands).toEqual(['aggregate series', 'find metrics', 'find fold_state', 'aggregate ingest_log', 'aggregate series_days']);
  });

  const weekOfMinutes = (i: number) =>
    `a${i}: buckets(metric: "cpu", field: "usage", granularity: MINUTE, from: "2024-02-26T00:00:00Z", to: "2024-03-04T00:00:00Z", where: [{key: "host", in: "${host(i)}"}], fill: NULL) { buckets { count } }`;

  it('sums the aliases of a request: 9 weeks of minutes (90,720 buckets) are answered', async () => {
    const { response, commands } = await measured<Record<string, { buckets: { count: number }[] }[]>>(
      `{ ${Array.from({ length: 9 }, (_, i) => weekOfMinutes(i)).join('\n')} }`,
    );
    expect(response.errors).toBeUndefined();
    for (let i = 0; i < 9; i++) {
      const [group] = response.data![`a${i}`]!;
      expect(group!.buckets).toHaveLength(10_080);
      expect(group!.buckets.reduce((sum, bucket) => sum + bucket.count, 0)).toBe(3);
    }
    expect(bucketPipelines(commands)).toBe(9);
  });

  it('sums the aliases of a request: 10 weeks of minutes (100,800 buckets), each alone within the limit, are refused with one error and no pipeline', async () => {
    const { response, ms, commands } = await measured(`{ ${Array.from({ length: 10 }, (_, i) => weekOfMinutes(i)).join('\n')} }`);
    expect(codes(response)).toEqual(['TOO_MANY_BUCKETS']);
    expect(response.errors![0]!.message).toContain('100,800 buckets');
    expect(response.data).toBeNull();
    expect(commands).toEqual([]);
    expect(ms).toBeLessThan(2000);
  });

  it('runs no pipeline of a request refused by a field that had to count its groups first', async () => {
    const { response, commands } = await measured(`{
      small: buckets(metric: "cpu", field: "usage", granularity: HOUR, from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z") { buckets { count } }
      grouped: buckets(metric: "cpu", field: "usage", granularity: MINUTE, from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z", groupBy: ["host"]) { buckets { count } }
    }`);
    expect(codes(response)).toEqual(['TOO_MANY_BUCKETS']);
    expect(commands).toEqual(['aggregate series']);
  });

  it('counts an aggregate as one bucket per group', async () => {
    const { response, commands } = await measured(`{
      ${Array.from({ length: 5 }, (_, i) => `g${i}: aggregate(metric: "cpu", field: "usage", from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z", groupBy: ["host"]) { count }`).join('\n')}
    }`);
    expect(response.errors).toBeUndefined();
    expect(bucketPipelines(commands)).toBe(1);
    const limited = await openTestAppOnSameStore({ maxBuckets: 999 });
    const refused = await limited.graphql(`{
      a: aggregate(metric: "cpu", field: "usage", from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z", groupBy: ["host"]) { count }
      b: aggregate(metric: "cpu", field: "usage", from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z", groupBy: ["host"]) { count }
      c: aggregate(metric: "cpu", field: "usage", from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z", groupBy: ["host"]) { count }
      d: aggregate(metric: "cpu", field: "usage", from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z", groupBy: ["host"]) { count }
      e: aggregate(metric: "cpu", field: "usage", from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z", groupBy: ["host"]) { count }
    }`);
    // 5 x 200 groups = 1,000 > 999.
    expect(codes(refused)).toEqual(['TOO_MANY_BUCKETS']);
  });
});

describe('series lists', () => {
  it('refuses series(limit: 10000) with nested buckets at once, without a look-up', async () => {
    const { response, ms, commands } = await measured(
      `{ series(metric: "cpu", limit: 10000) { id buckets(field: "usage", granularity: MINUTE, from: "2024-03-01T10:00:00Z", to: "2024-03-01T10:10:00Z") { count } } }`,
    );
    expect(codes(response)).toEqual(['TOO_MANY_SERIES']);
    expect(commands).toEqual([]);
    expect(ms).toBeLessThan(2000);
  });

  it('answers 200 series x 10 minutes in one pipeline', async () => {
    const { response, commands } = await measured<{ series: { id: string; buckets: { count: number }[] }[] }>(
      `{ series(metric: "cpu", limit: 1000) { id buckets(field: "usage", granularity: MINUTE, from: "2024-03-01T10:00:00Z", to: "2024-03-01T10:10:00Z") { count } } }`,
    );
    expect(response.errors).toBeUndefined();
    expect(response.data!.series).toHaveLength(200);
    expect(response.data!.series[199]).toEqual({
      id: 'cpu,host=h199',
      buckets: [1, 1, 1, 0, 0, 0, 0, 0, 0, 0].map((count) => ({ count })),
    });
    expect(commands).toEqual(['find series', 'find metrics', 'find fold_state', 'aggregate ingest_log', 'aggregate series_days']);
  });

  it('refuses 200 series x a day of minutes (288,000 buckets) after the look-up, with one error and no pipeline', async () => {
    const { response, commands } = await measured(`{
      alone: buckets(metric: "cpu", field: "usage", granularity: HOUR, from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z") { buckets { count } }
      series(metric: "cpu", limit: 1000) { id buckets(field: "usage", granularity: MINUTE, from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z") { count } }
    }`);
    expect(codes(response)).toEqual(['TOO_MANY_BUCKETS']);
    expect(commands).toEqual(['find series']);
  });

  it('sums the series of all lists of a request', async () => {
    const lists = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `s${i}: series(metric: "cpu", limit: 1000) { id }`).join(' ')} }`;
    const five = await measured<Record<string, unknown[]>>(lists(5));
    expect(five.response.errors).toBeUndefined();
    expect(Object.values(five.response.data!).map((list) => list.length)).toEqual([200, 200, 200, 200, 200]);
    const six = await measured(lists(6));
    expect(codes(six.response)).toEqual(['TOO_MANY_SERIES']);
    expect(six.commands.filter((command) => command !== 'find series')).toEqual([]);
  });

  it('keeps INVALID_ARGUMENT for a limit below 1', async () => {
    expect(codes((await measured(`{ series(metric: "cpu", limit: 0) { id } }`)).response)).toEqual(['INVALID_ARGUMENT']);
  });
});

describe('tag-filter values', () => {
  const values = (n: number, prefix = 'v') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  const QUERY = `query($a: [String!]!, $b: [String!]!) {
    a: buckets(metric: "cpu", field: "usage", granularity: DAY, from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z", where: [{key: "host", in: $a}]) { buckets { count } }
    b: series(metric: "cpu", where: [{key: "host", in: $b}]) { id }
  }`;

  it('refuses 10,000 values in one where.in at once, without reading anything', async () => {
    const { response, ms, commands } = await measured(
      `query($in: [String!]!) { buckets(metric: "cpu", field: "usage", granularity: DAY, from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z", where: [{key: "host", in: $in}]) { buckets { count } } }`,
      { in: values(10_000) },
    );
    expect(codes(response)).toEqual(['TOO_MANY_FILTER_VALUES']);
    expect(commands).toEqual([]);
    expect(ms).toBeLessThan(2000);
  });

  it('sums the values of all filters of a request', async () => {
    const fits = await measured<{ a: { buckets: { count: number }[] }[]; b: { id: string }[] }>(QUERY, {
      a: [...values(499), 'h000'],
      b: [...values(499), 'h001'],
    });
    expect(fits.response.errors).toBeUndefined();
    expect(fits.response.data).toEqual({ a: [{ buckets: [{ count: 3 }] }], b: [{ id: 'cpu,host=h001' }] });
    const over = await measured(QUERY, { a: values(500), b: values(501) });
    expect(codes(over.response)).toEqual(['TOO_MANY_FILTER_VALUES']);
    expect(over.commands).toEqual([]);
  });
});

describe('document limits (GraphQL Armor)', () => {
  it('refuses a document deeper than 12 levels', async () => {
    const deep = `{ metrics { ${'... on Metric { '.repeat(11)}name${' }'.repeat(11)} } }`;
    const { response, ms, commands } = await measured(deep);
    expect(codes(response)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(response.errors![0]!.message).toMatch(/depth/);
    expect(commands).toEqual([]);
    expect(ms).toBeLessThan(2000);
    const twelve = `{ metrics { ${'... on Metric { '.repeat(10)}name${' }'.repeat(10)} } }`;
    expect((await measured(twelve)).response.errors).toBeUndefined();
  });

  it('refuses more than 30 aliases', async () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `m${i}: metrics { name }`).join(' ')} }`;
    expect((await measured(aliases(30))).response.errors).toBeUndefined();
    const { response, commands } = await measured(aliases(31));
    expect(codes(response)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(response.errors![0]!.message).toMatch(/Aliases limit of 30/);
    expect(commands).toEqual([]);
  });

  it('refuses more than 5,000 tokens and more than 20 directives', async () => {
    const tokens = await measured(`{ metrics { ${'name '.repeat(5_000)}} }`);
    expect(codes(tokens.response)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(tokens.response.errors![0]!.message).toMatch(/Token limit of 5000/);
    const directives = await measured(`{ metrics { ${'name @include(if: true) '.repeat(21)}} }`);
    expect(codes(directives.response)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(tokens.commands).toEqual([]);
    expect(directives.commands).toEqual([]);
  });

  it('leaves the introspection query of GraphiQL alone', async () => {
    const { response } = await measured<{ __schema: { queryType: { name: string } } }>(
      getIntrospectionQuery({
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
      }),
    );
    expect(response.errors).toBeUndefined();
    expect(response.data!.__schema.queryType.name).toBe('Query');
  });
});

describe('request body limit', () => {
  /** 300,000 aliases, about 5 MB: the document that blocked the event loop for 9.7 s. */
  const hugeDocument = `{ ${Array.from({ length: 300_000 }, (_, i) => `a${i}: __typename`).join(' ')} }`;
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer(t.app);
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  });

  const post = (body: BodyInit, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
      body,
      // A streamed body needs it.
      duplex: 'half',
    } as RequestInit);

  it('refuses a body whose Content-Length is over 1 MiB with 413 before reading it', async () => {
    const body = JSON.stringify({ query: hugeDocument });
    expect(body.length).toBeGreaterThan(5_000_000);
    const started = performance.now();
    const response = await post(body);
    const ms = performance.now() - started;
    expect(response.status).toBe(413);
    expect(((await response.json()) as GraphQLResponse<unknown>).errors?.[0]?.extensions?.code).toBe('REQUEST_TOO_LARGE');
    expect(ms).toBeLessThan(2000);
  });

  it('refuses a chunked body (no Content-Length) once more than 1 MiB has arrived', async () => {
    const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"query": "{ metrics { name } }"'));
        if (sent >= 80) controller.close();
        else controller.enqueue(chunk);
        sent += 1;
      },
    });
    const response = await post(stream);
    expect(response.status).toBe(413);
    expect(((await response.json()) as GraphQLResponse<unknown>).errors?.[0]?.extensions?.code).toBe('REQUEST_TOO_LARGE');
  });

  it('answers a document just under 1 MiB full of aliases with QUERY_TOO_COMPLEX within milliseconds', async () => {
    const aliases: string[] = [];
    let length = 0;
    for (let i = 0; length < 1_000_000; i++) {
      const alias = `a${i}: __typename `;
      aliases.push(alias);
      length += alias.length;
    }
    const body = JSON.stringify({ query: `{ ${aliases.join('')}}` });
    expect(body.length).toBeLessThan(1_048_576);
    const started = performance.now();
    const response = await post(body);
    const ms = performance.now() - started;
    expect(((await response.json()) as GraphQLResponse<unknown>).errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
    expect(ms).toBeLessThan(2000);
  });

  it('still accepts an ordinary request', async () => {
    const response = await post(JSON.stringify({ query: '{ metrics { name } }' }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { metrics: [{ name: 'cpu' }, { name: 'heavy' }] } });
  });
});

/** A second app on the test app's store (same data) with other limits. */
async function openTestAppOnSameStore(options: { maxBuckets?: number; queryTimeoutMs?: number }) {
  const app = createApp({
    store: t.store,
    logger: pino({ level: 'silent' }),
    limits: { maxBatchSize: 10_000, maxBuckets: options.maxBuckets ?? 100_000 },
    auth: { mode: 'off', corsOrigins: [] },
    requestLimits: options.queryTimeoutMs === undefined ? {} : { queryTimeoutMs: options.queryTimeoutMs },
  });
  return {
    async graphql(query: string, signal?: AbortSignal): Promise<GraphQLResponse<unknown>> {
      const response = await app.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify({ query }),
        ...(signal ? { signal } : {}),
      });
      return (await response.json()) as GraphQLResponse<unknown>;
    },
  };
}

/** A MINUTE query over the 20 series-days of `heavy`, each with readings in all 1,440 minute slots. */
const HEAVY = `{ buckets(metric: "heavy", field: "v", granularity: MINUTE, from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z", fill: NONE) { buckets { count } } }`;

describe('query time limit', () => {
  it('answers the heavy query under the default limit', async () => {
    const { response, commands } = await measured<{ buckets: { buckets: { count: number }[] }[] }>(HEAVY);
    expect(response.errors, JSON.stringify(response.errors)).toBeUndefined();
    // One reading per host in every minute of the day.
    expect(response.data!.buckets).toEqual([{ buckets: Array.from({ length: 1440 }, () => ({ count: HEAVY_HOSTS })) }]);
    expect(bucketPipelines(commands)).toBe(1);
  });

  it('stops it with QUERY_TIMEOUT when QUERY_TIMEOUT_MS is 1', async () => {
    const app = await openTestAppOnSameStore({ queryTimeoutMs: 1 });
    commandTargets.splice(0);
    const response = await app.graphql(HEAVY);
    expect(codes(response)).toEqual(['QUERY_TIMEOUT']);
    expect(response.errors![0]!.message).toMatch(/time limit of 1 ms/);
    // The limit stops the first read that runs past it, the tail's or the pipeline, and
    // nothing is sent again.
    expect(bucketPipelines(reads(commandTargets))).toBeLessThanOrEqual(1);
  });

  it('sends maxTimeMS with every read', async () => {
    const sent: { name: string; collection: string; filter: unknown; maxTimeMS: unknown }[] = [];
    const listener = (event: { commandName: string; command: Record<string, unknown> }) => {
      if (['find', 'aggregate', 'distinct', 'count'].includes(event.commandName))
        sent.push({
          name: event.commandName,
          collection: String(event.command[event.commandName]),
          filter: event.command.filter,
          maxTimeMS: event.command.maxTimeMS,
        });
    };
    t.store.client.on('commandStarted', listener);
    try {
      const response = await t.graphql(`{
        metrics { name seriesCount tagValues(key: "host") }
        tagValues(metric: "cpu", key: "host")
        seriesById(id: "cpu,host=h001") { firstReadingAt aggregate(field: "usage", from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z") { count } }
        series(metric: "cpu", limit: 2) { id }
        grouped: aggregate(metric: "cpu", field: "usage", from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z", groupBy: ["host"]) { count }
      }`);
      expect(response.errors).toBeUndefined();
    } finally {
      t.store.client.off('commandStarted', listener);
    }
    expect(new Set(sent.map((command) => command.name))).toEqual(new Set(['find', 'aggregate', 'distinct']));
    // Every read of the data carries the limit, the reads of the ingest log (the tail) included…
    expect(sent.filter((command) => command.collection === 'ingest_log').length).toBeGreaterThan(0);
    expect(sent.filter((command) => command.collection !== 'fold_state' && command.maxTimeMS !== 30_000)).toEqual([]);
    // …but the visible fold number, read first by each read of series-day documents: one look-up by _id.
    const foldState = sent.filter((command) => command.collection === 'fold_state');
    expect(foldState.length).toBeGreaterThan(0);
    expect(foldState.map(({ name, filter }) => ({ name, filter }))).toEqual(
      foldState.map(() => ({ name: 'find', filter: { _id: 'folds' } })),
    );
  });
});

describe('a client that goes away', () => {
  it('aborts its pipeline on the driver side', async () => {
    const app = await openTestAppOnSameStore({});
    const failed: string[] = [];
    const succeeded: string[] = [];
    // The pipelines on the series-day documents, by request id (the tail's read of the log is an aggregate too).
    const pipelines = new Set<number>();
    const onStarted = (event: { commandName: string; requestId: number; command: Record<string, unknown> }) => {
      if (event.commandName === 'aggregate' && event.command.aggregate === 'series_days') pipelines.add(event.requestId);
    };
    const onFailed = (event: { requestId: number; failure: Error }) => {
      if (pipelines.has(event.requestId)) failed.push(event.failure.name);
    };
    const onSucceeded = (event: { requestId: number; commandName: string }) => {
      if (pipelines.has(event.requestId)) succeeded.push(event.commandName);
    };
    t.store.client.on('commandStarted', onStarted);
    t.store.client.on('commandFailed', onFailed);
    t.store.client.on('commandSucceeded', onSucceeded);
    try {
      const client = new AbortController();
      const answer = app.graphql(HEAVY, client.signal).catch((error: unknown) => (error as Error).name);
      // The heavy query takes seconds on the test server; the client leaves after 100 ms.
      await new Promise((resolve) => setTimeout(resolve, 100));
      client.abort();
      expect(await answer).toBe('AbortError');
      await expect.poll(() => failed, { timeout: 2000 }).toEqual(['AbortError']);
      expect(succeeded).toEqual([]);
    } finally {
      t.store.client.off('commandStarted', onStarted);
      t.store.client.off('commandFailed', onFailed);
      t.store.client.off('commandSucceeded', onSucceeded);
    }
  });
});
