/**
 * The bucket-start expression of every granularity (`bucketStartExpression`), evaluated
 * by the test server for an instant every 7 minutes around clock changes in many zones
 * (offsets of 30 and 45 minutes and of seconds, a skipped day), equals the bucket start
 * computed in Node (`bucketStart`).
 */
import type { Collection, Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketStart, bucketStartExpression, granularity, GRANULARITY_NAMES, type GranularityName } from '../../src/query/granularity.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';

let database: TestDatabase;

beforeAll(async () => {
  database = await openTestDatabase('zone_starts');
});

afterAll(async () => {
  await database?.drop();
});

describe('the bucket-start expression on the server', () => {
  /** [zone, from, to] (UTC): windows around clock changes, offsets with 30/45 minutes or seconds, a skipped day. */
  const WINDOWS: [string, string, string][] = [
    ['America/New_York', '2001-03-31T00:00:00Z', '2001-04-03T00:00:00Z'],
    ['America/New_York', '2001-10-27T00:00:00Z', '2001-10-30T00:00:00Z'],
    ['America/Los_Angeles', '2001-03-31T06:00:00Z', '2001-04-02T18:00:00Z'],
    ['Asia/Kolkata', '2001-03-30T00:00:00Z', '2001-04-02T00:00:00Z'],
    ['Asia/Kathmandu', '1985-12-30T00:00:00Z', '1986-01-02T00:00:00Z'],
    ['Australia/Adelaide', '2001-03-23T00:00:00Z', '2001-03-26T00:00:00Z'],
    ['Australia/Lord_Howe', '2001-03-23T00:00:00Z', '2001-03-26T00:00:00Z'],
    ['Pacific/Chatham', '2001-03-16T00:00:00Z', '2001-03-19T00:00:00Z'],
    ['America/St_Johns', '2001-10-27T00:00:00Z', '2001-10-30T00:00:00Z'],
    ['America/Sao_Paulo', '2001-10-13T00:00:00Z', '2001-10-16T00:00:00Z'],
    ['Pacific/Apia', '2011-12-28T00:00:00Z', '2011-12-31T12:00:00Z'],
    ['Africa/Monrovia', '1972-01-05T00:00:00Z', '1972-01-08T00:00:00Z'],
    ['UTC', '2001-12-30T00:00:00Z', '2002-01-02T00:00:00Z'],
  ];
  let coll: Collection<Document>;

  beforeAll(async () => {
    coll = database.db.collection('instants');
    const docs: Document[] = [];
    WINDOWS.forEach(([, fromIso, toIso], w) => {
      for (let t = Date.parse(fromIso); t < Date.parse(toIso); t += 7 * 60_000) docs.push({ w, t: new Date(t) });
    });
    await coll.insertMany(docs);
  });

  it.each(WINDOWS.map((window, w) => [...window, w] as const))('%s over [%s, %s)', async (zone, fromIso, toIso, w) => {
    const from = Date.parse(fromIso);
    const to = Date.parse(toIso);
    const keys = Object.fromEntries(
      GRANULARITY_NAMES.map((name) => [name, bucketStartExpression({ $toLong: '$t' }, granularity(name).cut, zone, from, to)]),
    );
    const rows = await coll
      .aggregate<{ t: Date } & Record<GranularityName, Date>>([{ $match: { w } }, { $project: { _id: 0, t: 1, ...keys } }])
      .toArray();
    expect(rows.length).toBe(Math.ceil((to - from) / (7 * 60_000)));
    for (const row of rows) {
      for (const name of GRANULARITY_NAMES) {
        const expected = bucketStart(row.t.getTime(), granularity(name).cut, zone);
        expect(row[name].getTime(), `${zone} ${name} at ${row.t.toISOString()}`).toBe(expected);
      }
    }
  });
});
