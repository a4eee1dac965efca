/**
 * Backpressure of the write path (docs/ingest-design.md, "Acknowledge with one durable
 * write"): once the readings acknowledged but not yet folded pass their bound (in
 * readings or in age), every write route refuses with INGEST_BACKLOG, HTTP 503 and
 * `Retry-After`, writes nothing, and accepts again once the folder caught up; `/metrics`
 * reports the lag.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestLog, recentBacklog } from '../../src/storage/ingest-log.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { databaseSnapshot } from '../helpers/snapshot.ts';

const RECORD = `mutation($readings: [ReadingInput!]!, $batchId: String) { recordReadings(readings: $readings, batchId: $batchId) { applied } }`;

/** `count` readings of metric `metric`, one a minute from 2024-01-01 UTC, value i. */
const readingsOf = (metric: string, count: number, offset = 0) =>
  Array.from({ length: count }, (_, i) => ({
    metric,
    tags: [{ key: 'host', value: `h${i % 3}` }],
    time: new Date(Date.UTC(2024, 0, 1) + (offset + i) * 60_000).toISOString(),
    fields: [{ name: 'v', value: i }],
  }));

/** Posts a GraphQL request and returns the raw response (status and headers matter here). */
const post = (t: TestApp, variables: Record<string, unknown>) =>
  t.app.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query: RECORD, variables }),
  });

/** Waits past the 500 ms for which a process reuses a measured backlog. */
const pastBacklogReuse = () => new Promise((done) => setTimeout(done, 600));

describe('a bound in readings', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp('backlog_readings', { ingest: { maxTailReadings: 100, maxTailSeconds: 0 } });
  });
  afterAll(async () => t.close());

  it('refuses every write route with INGEST_BACKLOG, 503 and Retry-After, writes nothing, and accepts once folded', async () => {
    // Under the bound when it arrives: accepted, and now 150 readings wait for the folder.
    const first = (await (await post(t, { readings: readingsOf('bp', 150), batchId: 'bp-1' })).json()) as { data?: unknown };
    expect(first.data).toEqual({ recordReadings: { applied: 150 } });
    await pastBacklogReuse();

    const before = await databaseSnapshot(t.store.db);
    const refused = await post(t, { readings: readingsOf('bp', 10, 150), batchId: 'bp-2' });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await refused.json()) as { errors: { extensions: { code: string; retryAfterSeconds: number } }[] };
    expect(body.errors[0]!.extensions.code).toBe('INGEST_BACKLOG');
    expect(body.errors[0]!.extensions.retryAfterSeconds).toBe(Number(refused.headers.get('retry-after')));

    const line = await t.app.fetch('http://yoga/api/v2/write?precision=s', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'bp,host=h9 v=1 1704067200\n',
    });
    expect(line.status).toBe(503);
    expect(Number(line.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await line.json()) as { extensions: { code: string } }).extensions.code).toBe('INGEST_BACKLOG');
    expect(await databaseSnapshot(t.store.db)).toBe(before);

    // Queries still answer, from the log: 150 readings.
    const answer = await t.graphql<{ aggregate: { count: number }[] }>(
      `{ aggregate(metric: "bp", field: "v", from: "2024-01-01T00:00:00Z", to: "2024-01-02T00:00:00Z") { count } }`,
    );
    expect(answer.data?.aggregate).toEqual([{ count: 150 }]);

    expect(await t.settle()).toBe(150);
    await pastBacklogReuse();
    const again = (await (await post(t, { readings: readingsOf('bp', 10, 150), batchId: 'bp-2' })).json()) as { data?: unknown };
    expect(again.data).toEqual({ recordReadings: { applied: 10 } });
    expect(await ingestLog(t.store).countDocuments({})).toBe(2);
  });
});

describe('a bound in age', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp('backlog_age', { ingest: { maxTailReadings: 0, maxTailSeconds: 1 } });
  });
  afterAll(async () => t.close());

  it('refuses once the oldest unfolded reading is older than the bound, and /metrics reports the lag', async () => {
    expect(((await (await post(t, { readings: readingsOf('age', 5) })).json()) as { data?: unknown }).data).toEqual({
      recordReadings: { applied: 5 },
    });
    await new Promise((done) => setTimeout(done, 1_600));
    const refused = await post(t, { readings: readingsOf('age', 5, 5) });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('INGEST_BACKLOG');
    expect(await ingestLog(t.store).countDocuments({})).toBe(1);

    const scrape = await (await t.app.fetch('http://yoga/metrics')).text();
    expect(scrape).toMatch(/^tsgraph_fold_lag_readings 5$/m);
    const lag = Number(/^tsgraph_fold_lag_seconds (\S+)$/m.exec(scrape)?.[1]);
    expect(lag).toBeGreaterThanOrEqual(1.5);

    expect(await t.settle()).toBe(5);
    await pastBacklogReuse();
    const accepted = (await (await post(t, { readings: readingsOf('age', 5, 5) })).json()) as { data?: unknown };
    expect(accepted.data).toEqual({ recordReadings: { applied: 5 } });
    const after = await (await t.app.fetch('http://yoga/metrics')).text();
    expect(after).toMatch(/^tsgraph_fold_lag_readings 5$/m);
  });
});

describe('the measured backlog, shared', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await openTestApp('backlog_shared', { ingest: { maxTailReadings: 1000, maxTailSeconds: 0 } });
  });
  afterAll(async () => t.close());

  it('gives requests that find it stale at the same moment one measurement, and measures again after 500 ms', async () => {
    await post(t, { readings: readingsOf('bp_shared', 150), batchId: 'bp-shared-1' });
    await pastBacklogReuse();
    const [a, b, c] = await Promise.all([recentBacklog(t.store), recentBacklog(t.store), recentBacklog(t.store)]);
    expect(a.readings).toBe(150);
    expect(b).toBe(a);
    expect(c).toBe(a);
    await post(t, { readings: readingsOf('bp_shared', 20, 150), batchId: 'bp-shared-2' });
    await pastBacklogReuse();
    const again = await recentBacklog(t.store);
    expect(again).not.toBe(a);
    expect(again.readings).toBe(170);
  });
});
