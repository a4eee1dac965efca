/**
 * The typed client (`src/client/request.ts`) with the generated documents, against the
 * real app: answers typed by the document, errors with their code and HTTP status, no
 * answer at all; and the importer's `sendBatch` on top of it (a 503 retried with the
 * same batch id, an input error not retried).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '../../src/auth/manage.ts';
import { ImportBatchDocument, LoadHourBucketsDocument, LoadTotalsDocument, type ReadingInput } from '../../src/client/generated/graphql.ts';
import { GraphQLRequestError, request, type RequestOptions } from '../../src/client/request.ts';
import { SendError, sendBatch } from '../../src/importer/send.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { databaseSnapshot } from '../helpers/snapshot.ts';

const METRIC = 'client_cpu';
const START = Date.UTC(2024, 0, 1);

/** Reading `k`: host h0..h2, 13 minutes apart (spread over hours), an integer value (exact sums). */
const reading = (k: number, metric = METRIC): ReadingInput => ({
  metric,
  tags: [{ key: 'host', value: `h${k % 3}` }],
  time: new Date(START + k * 13 * 60_000).toISOString(),
  fields: [{ name: 'v', value: (k * 7) % 23 }],
});

let t: TestApp;
let token: string;
let options: RequestOptions;

beforeAll(async () => {
  t = await openTestApp('client', { auth: 'tokens' });
  token = (await createApiToken(t.store, { name: 'client', scopes: ['read,write'], prefixes: [] })).token;
  options = { url: 'http://yoga/graphql', token, fetch: (input, init) => Promise.resolve(t.app.fetch(input, init)) };
});
afterAll(async () => {
  await t.close();
});

describe('request() with generated documents', () => {
  const readings = Array.from({ length: 60 }, (_, k) => reading(k));

  it('records a batch once, and reads back totals and hour buckets equal to a plain loop', async () => {
    const first = await request(ImportBatchDocument, { readings, batchId: 'client-1' }, options);
    expect(first.recordReadings).toEqual({ recorded: 60, applied: 60, alreadyApplied: 0 });
    const again = await request(ImportBatchDocument, { readings, batchId: 'client-1' }, options);
    expect(again.recordReadings).toEqual({ recorded: 60, applied: 0, alreadyApplied: 60 });

    let count = 0;
    let sum = 0;
    for (const r of readings) {
      count += 1;
      sum += r.fields[0]!.value;
    }
    const totals = await request(LoadTotalsDocument, { metric: METRIC, from: START, to: '9999-01-01T00:00:00Z' }, options);
    expect(totals.aggregate).toEqual([{ count, sum }]);

    // Hour buckets of hosts h1 and h2 over the first 6 hours: counts per hour from a loop.
    const to = START + 6 * 3_600_000;
    const expected = new Map<number, number>();
    for (let hour = START; hour < to; hour += 3_600_000) expected.set(hour, 0);
    for (const r of readings) {
      const ms = Date.parse(r.time as string);
      if (ms >= to || r.tags![0]!.value === 'h0') continue;
      const hour = ms - (ms % 3_600_000);
      expected.set(hour, expected.get(hour)! + 1);
    }
    const hours = await request(
      LoadHourBucketsDocument,
      { metric: METRIC, from: new Date(START).toISOString(), to, hosts: ['h1', 'h2'] },
      options,
    );
    expect(hours.buckets).toHaveLength(1);
    expect(hours.buckets[0]!.buckets.map((b) => [Date.parse(b.start), b.count])).toEqual([...expected]);
  });

  it('throws the error code and status of a refused batch, and nothing is written', async () => {
    const before = await databaseSnapshot(t.store.db);
    const bad = [reading(1000), { ...reading(1001), time: '2024-13-45T00:00:00Z' }];
    const error = await request(ImportBatchDocument, { readings: bad, batchId: 'client-bad' }, options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GraphQLRequestError);
    expect((error as GraphQLRequestError).code).toBe('INVALID_TIME');
    expect((error as GraphQLRequestError).status).toBe(200); // GraphQL over HTTP: errors in a 200 answer
    expect(await databaseSnapshot(t.store.db)).toBe(before);
  });

  it('throws UNAUTHENTICATED with status 401 without a token', async () => {
    const error = await request(LoadTotalsDocument, { metric: METRIC, from: 0, to: START }, { ...options, token: undefined }).catch(
      (e: unknown) => e,
    );
    expect([(error as GraphQLRequestError).status, (error as GraphQLRequestError).code]).toEqual([401, 'UNAUTHENTICATED']);
  });

  it('throws without a status when nothing answers', async () => {
    const closed = createServer();
    await new Promise<void>((listening) => closed.listen(0, '127.0.0.1', listening));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/graphql`;
    await new Promise((done) => closed.close(done));
    const error = await request(LoadTotalsDocument, { metric: METRIC, from: 0, to: START }, { url, token }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GraphQLRequestError);
    expect((error as GraphQLRequestError).status).toBeUndefined();
    expect((error as GraphQLRequestError).cause).toBeInstanceOf(Error);
  });
});

describe('sendBatch through the typed client', () => {
  let server: Server;
  let url: string;
  /** Requests that reached the HTTP server, and how many more to answer with a bare 503 page. */
  const seen = { requests: 0, unavailable: 0 };

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.requests += 1;
      if (seen.unavailable > 0) {
        seen.unavailable -= 1;
        res.writeHead(503, { 'content-type': 'text/html' }).end('<h1>503 Service Unavailable</h1>');
        return;
      }
      void t.app(req, res);
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  });
  afterAll(async () => {
    await new Promise((closed) => server.close(closed));
  });

  it('retries a 503 with the same batch id and stores the batch once', async () => {
    const metric = 'client_retry';
    const readings = Array.from({ length: 25 }, (_, k) => reading(k, metric));
    Object.assign(seen, { requests: 0, unavailable: 2 });
    const result = await sendBatch(url, readings, { batchId: 'retry-1', token, backoffMs: 5 });
    expect(result).toEqual({ recorded: 25, applied: 25, alreadyApplied: 0 });
    expect(seen.requests).toBe(3);
    const totals = await request(LoadTotalsDocument, { metric, from: 0, to: '9999-01-01T00:00:00Z' }, options);
    expect(totals.aggregate[0]?.count).toBe(25);
  });

  it('does not retry an input error, and nothing is written', async () => {
    const before = await databaseSnapshot(t.store.db);
    Object.assign(seen, { requests: 0, unavailable: 0 });
    const error = await sendBatch(url, [reading(0, 'bad metric name')], { batchId: 'bad-1', token, backoffMs: 5 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SendError);
    expect((error as SendError).message).toMatch(/^INVALID_NAME: /);
    expect(seen.requests).toBe(1);
    expect(await databaseSnapshot(t.store.db)).toBe(before);
  });
});
