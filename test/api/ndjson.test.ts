/**
 * `POST /api/readings`: NDJSON readings, stored totals checked against a plain loop;
 * refusals name the line (and the tag or field) and write nothing; a retried request
 * with the same `Idempotency-Key` counts once.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { databaseSnapshot } from '../helpers/snapshot.ts';
import { createWriteRouteTokens } from '../helpers/tokens.ts';

let t: TestApp;
let tokens: Record<string, string>;

beforeAll(async () => {
  t = await openTestApp('ndjson', { auth: 'tokens', journal: false });
  tokens = await createWriteRouteTokens(t, 'nd-writer', 'nd_');
});
afterAll(async () => t.close());

interface Answer {
  code?: string;
  message?: string;
  line?: number;
  extensions?: { code: string };
  recorded?: number;
  applied?: number;
  alreadyApplied?: number;
  series?: number;
  documents?: number;
  batchId?: string | null;
}

async function post(body: string | Uint8Array, options: { headers?: Record<string, string>; token?: string | null } = {}) {
  const token = options.token === undefined ? tokens.writer : options.token;
  const response = await t.app.fetch('http://yoga/api/readings', {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', ...(token ? { authorization: `Bearer ${token}` } : {}), ...options.headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as Answer };
}

const ndjson = (rows: unknown[]) => rows.map((row) => JSON.stringify(row)).join('\n');

async function expectRefused(status: number, code: string, request: () => ReturnType<typeof post>): Promise<Answer> {
  const before = await databaseSnapshot(t.store.db);
  const response = await request();
  expect({ status: response.status, code: response.body.extensions?.code }).toEqual({ status, code });
  expect(await databaseSnapshot(t.store.db)).toBe(before);
  return response.body;
}

const START = Date.UTC(2024, 4, 1);

describe('NDJSON ingest', () => {
  it('stores every reading (RFC 3339 and epoch-ms times, CRLF and empty lines), totals as a plain loop computes', async () => {
    const rows = Array.from({ length: 60 }, (_, i) => ({
      metric: 'nd_temp',
      tags: { room: `r${i % 3}`, floor: String(i % 2) },
      time: i % 2 === 0 ? START + i * 600_000 : new Date(START + i * 600_000).toISOString(),
      fields: { celsius: 18 + (i % 7) * 0.5, humidity: 40 + (i % 5) },
    }));
    const body = `${ndjson(rows.slice(0, 30))}\r\n\n${ndjson(rows.slice(30))}\n`;
    const response = await post(body, { token: tokens['nd-writer'] });
    expect(response).toEqual({
      status: 200,
      body: { batchId: null, recorded: 60, applied: 60, alreadyApplied: 0, series: 6, documents: 6 },
    });
    const answer = await t.graphql<{ aggregate: { tags: { value: string }[]; count: number; sum: number; min: number; max: number }[] }>(
      `query($from: Time!, $to: Time!) { aggregate(metric: "nd_temp", field: "celsius", from: $from, to: $to, groupBy: ["room"]) { tags { value } count sum min max } }`,
      { from: START, to: START + 86_400_000 },
      { token: tokens.admin },
    );
    const expected = new Map<string, { count: number; sum: number; min: number; max: number }>();
    for (const row of rows) {
      const group = expected.get(row.tags.room) ?? { count: 0, sum: 0, min: Infinity, max: -Infinity };
      group.count++;
      group.sum += row.fields.celsius;
      group.min = Math.min(group.min, row.fields.celsius);
      group.max = Math.max(group.max, row.fields.celsius);
      expected.set(row.tags.room, group);
    }
    expect(
      Object.fromEntries(answer.data!.aggregate.map((g) => [g.tags[0]!.value, { count: g.count, sum: g.sum, min: g.min, max: g.max }])),
    ).toEqual(Object.fromEntries(expected));
  });

  it('takes a gzipped body, readings without tags or time (the arrival time)', async () => {
    const before = Date.now();
    const response = await post(
      gzipSync(
        ndjson([
          { metric: 'nd_plain', fields: { v: 2 } },
          { metric: 'nd_plain', fields: { v: 3 }, time: null },
        ]),
      ),
      {
        headers: { 'content-encoding': 'gzip' },
      },
    );
    expect(response.body).toMatchObject({ recorded: 2, series: 1 });
    const answer = await t.graphql<{ aggregate: { count: number; sum: number }[] }>(
      `query($from: Time!, $to: Time!) { aggregate(metric: "nd_plain", field: "v", from: $from, to: $to) { count sum } }`,
      { from: before - 60_000, to: Date.now() + 60_000 },
      { token: tokens.admin },
    );
    expect(answer.data!.aggregate).toEqual([{ count: 2, sum: 5 }]);
  });
});

describe('refusals name the line and write nothing', () => {
  const good = JSON.stringify({ metric: 'nd_bad', fields: { v: 1 }, time: START });
  it.each([
    ['a line that is not JSON', `${good}\n{"metric": "nd_bad",`, 'MALFORMED_BODY', 2, /^line 2: not valid JSON/],
    ['a line that is not a reading', `${good}\n${good}\n[1, 2]`, 'BAD_USER_INPUT', 3, /^line 3: .*a reading is/],
    ['an unknown key', `${good}\n{"metric": "nd_bad", "field": {"v": 1}}`, 'BAD_USER_INPUT', 2, /^line 2: /],
    [
      'a bad tag key',
      `${good}\n{"metric": "nd_bad", "tags": {"a.b": "x"}, "fields": {"v": 1}}`,
      'INVALID_NAME',
      2,
      /^line 2: tag "a\.b": A tag key must/,
    ],
    [
      'a tag value that is not a string',
      `{"metric": "nd_bad", "tags": {"n": 5}, "fields": {"v": 1}}`,
      'BAD_USER_INPUT',
      1,
      /^line 1: tag "n": /,
    ],
    ['a string field', `${good}\n${good}\n{"metric": "nd_bad", "fields": {"v": "high"}}`, 'INVALID_FIELD_VALUE', 3, /^line 3: field "v": /],
    ['no field', `{"metric": "nd_bad", "fields": {}}`, 'NO_FIELDS', 1, /^line 1: fields: A reading needs at least one field/],
    ['a bad time', `{"metric": "nd_bad", "fields": {"v": 1}, "time": "yesterday"}`, 'INVALID_TIME', 1, /^line 1: time: /],
    ['a time before 1970', `{"metric": "nd_bad", "fields": {"v": 1}, "time": -5}`, 'INVALID_TIME', 1, /^line 1: time: /],
    ['a bad metric name', `{"metric": "nd bad", "fields": {"v": 1}}`, 'INVALID_NAME', 1, /^line 1: metric: /],
  ])('%s', async (_, body, code, line, message) => {
    const answer = await expectRefused(400, code, () => post(body));
    expect(answer).toMatchObject({ code: 'invalid', line });
    expect(answer.message).toMatch(message);
  });

  it('an empty body, another content type, no token, the wrong scope or a metric out of reach', async () => {
    await expectRefused(400, 'MALFORMED_BODY', () => post('\n\n'));
    await expectRefused(415, 'UNSUPPORTED_MEDIA_TYPE', () => post(good, { headers: { 'content-type': 'text/plain' } }));
    await expectRefused(401, 'UNAUTHENTICATED', () => post(good, { token: null }));
    await expectRefused(403, 'FORBIDDEN', () => post(good, { token: tokens.reader }));
    const other = `${good}\n${JSON.stringify({ metric: 'other', fields: { v: 1 } })}`;
    const prefix = await expectRefused(403, 'FORBIDDEN', () => post(other, { token: tokens['nd-writer'] }));
    expect(prefix.message).toMatch(/may not touch metric "other"/);
  });
});

describe('exactly once', () => {
  it('a retried request with the same Idempotency-Key counts once; the key with other readings is 409', async () => {
    const body = ndjson([
      { metric: 'nd_once', tags: { host: 'a' }, fields: { v: 10 }, time: START },
      { metric: 'nd_once', tags: { host: 'b' }, fields: { v: 20 }, time: START },
      { metric: 'nd_once', tags: { host: 'a' }, fields: { v: 30 } },
    ]);
    const headers = { 'idempotency-key': 'ingest-7f3a' };
    expect((await post(body, { headers })).body).toMatchObject({ batchId: 'ingest-7f3a', recorded: 3, applied: 3, alreadyApplied: 0 });
    expect((await post(body, { headers })).body).toMatchObject({ batchId: 'ingest-7f3a', recorded: 3, applied: 0, alreadyApplied: 3 });
    await expectRefused(409, 'BATCH_ID_REUSED', () => post(ndjson([{ metric: 'nd_once', fields: { v: 99 } }]), { headers }));
    const answer = await t.graphql<{ aggregate: { count: number; sum: number }[] }>(
      `query($to: Time!) { aggregate(metric: "nd_once", field: "v", from: 0, to: $to) { count sum } }`,
      { to: Date.now() + 120_000 },
      { token: tokens.admin },
    );
    expect(answer.data!.aggregate).toEqual([{ count: 3, sum: 60 }]);
  });
});
