/**
 * The tail's pre-filter (`mayMatch` in `storage/read.ts`) never drops a document the
 * database's own `$match` would keep: over real series-day documents (written by a
 * fold), for the first `$match` of pipelines built by `scopeFilter` and a day range,
 * every document a `find` of the filter returns is one `mayMatch` keeps; and it does
 * drop documents, so a query of a few series does not ship the whole tail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Document } from 'mongodb';
import { scopeFilter, type BucketScope } from '../../src/query/buckets-pipeline.ts';
import { mayMatch } from '../../src/storage/read.ts';
import { CollectionName } from '../../src/storage/store.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';

const DAY = 86_400_000;
const START = Date.parse('2026-03-01T00:00:00Z');
const HOSTS = ['a', 'b', 'c', 'd'];
const REGIONS = ['eu', 'us'];

let t: TestApp;
let documents: Record<string, unknown>[];
let seriesIds: string[];

beforeAll(async () => {
  t = await openTestApp('tail-prefilter', { journal: false });
  const readings = [];
  for (let i = 0; i < 96; i += 1) {
    readings.push({
      metric: i % 3 === 0 ? 'disk' : 'cpu',
      tags: [
        { key: 'host', value: HOSTS[i % HOSTS.length]! },
        { key: 'region', value: REGIONS[(i >> 2) % REGIONS.length]! },
      ],
      time: new Date(START + (i % 6) * DAY + i * 61_000).toISOString(),
      fields: [{ name: 'used', value: i }],
    });
  }
  const recorded = await t.graphql(`mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { recorded } }`, { r: readings });
  expect(recorded.errors).toBeUndefined();
  expect(await t.settle()).toBe(readings.length);
  documents = await t.store.db.collection(CollectionName.buckets).find({}).toArray();
  seriesIds = [...new Set(documents.map((doc) => String(doc.series)))].sort();
});
afterAll(async () => t?.close());

describe('mayMatch', () => {
  it('keeps every document the database matches, and drops others', async () => {
    const scopes: BucketScope[] = [
      { metric: 'cpu' },
      { metric: 'disk', where: [{ key: 'host', in: ['a'] }] },
      {
        metric: 'cpu',
        where: [
          { key: 'host', in: ['a', 'c'] },
          { key: 'region', in: ['us'] },
        ],
      },
      { metric: 'cpu', where: [{ key: 'region', in: ['nowhere'] }] },
      { series: [seriesIds[0]!] },
      { series: seriesIds.slice(1, 4) },
    ];
    const ranges: [number, number][] = [
      [START, START + 6 * DAY],
      [START + DAY, START + 3 * DAY + 3_600_000],
      [START + 10 * DAY, START + 11 * DAY],
    ];
    let dropped = 0;
    let checked = 0;
    for (const scope of scopes) {
      for (const [from, to] of ranges) {
        const filter: Document = { ...scopeFilter(scope).indexed, date: { $gte: new Date(from), $lt: new Date(to) } };
        const matched = await t.store.db.collection(CollectionName.buckets).find(filter).toArray();
        const kept = new Set(documents.filter((doc) => mayMatch(doc, filter)).map((doc) => String(doc._id)));
        for (const doc of matched) expect(kept.has(String(doc._id)), JSON.stringify(filter)).toBe(true);
        // Every condition here is of a form mayMatch reads, so it keeps exactly what matches.
        expect(kept.size).toBe(matched.length);
        dropped += documents.length - kept.size;
        checked += 1;
      }
    }
    expect(checked).toBe(18);
    expect(dropped).toBeGreaterThan(0);
  });

  it('counts conditions of other forms as met', () => {
    const doc = { metric: 'cpu', date: new Date(START), fields: { used: { n: 1 } } };
    expect(mayMatch(doc, { metric: 'cpu', 'fields.used.n': { $gt: 5 }, $and: [{ metric: 'disk' }] })).toBe(true);
    expect(mayMatch(doc, { metric: { $ne: 'cpu' } })).toBe(true);
    expect(mayMatch(doc, { metric: 'disk' })).toBe(false);
  });
});
