/**
 * The tail's pre-filter (`selectsReading` in `documents/selection.ts`) keeps exactly the
 * readings whose series-day documents the selection's own `$match` stages select: over
 * real documents (written by a fold), for scopes on a metric with tag filters and on
 * series, and day ranges, the documents a `find` of the selection's filters returns are
 * exactly the series-days of the readings the pre-filter keeps; so a query of a few
 * series does not ship the whole tail, and drops none of it that it reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DocumentScope,
  type DocumentSelection,
  selectionStages,
  selectsReading,
  tagPairLists,
} from '../../src/documents/selection.ts';
import { type Reading, validateReadings } from '../../src/record/validate.ts';
import { CollectionName } from '../../src/storage/store.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';

const DAY = 86_400_000;
const START = Date.parse('2026-03-01T00:00:00Z');
const HOSTS = ['a', 'b', 'c', 'd'];
const REGIONS = ['eu', 'us'];

let t: TestApp;
let readings: Reading[];
let seriesIds: string[];

beforeAll(async () => {
  t = await openTestApp('tail-prefilter', { journal: false });
  const inputs = [];
  for (let i = 0; i < 96; i += 1) {
    inputs.push({
      metric: i % 3 === 0 ? 'disk' : 'cpu',
      tags: [
        { key: 'host', value: HOSTS[i % HOSTS.length]! },
        { key: 'region', value: REGIONS[(i >> 2) % REGIONS.length]! },
      ],
      time: new Date(START + (i % 6) * DAY + i * 61_000).toISOString(),
      fields: [{ name: i % 5 === 0 ? 'free' : 'used', value: i }],
    });
  }
  const recorded = await t.graphql(`mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { recorded } }`, { r: inputs });
  expect(recorded.errors).toBeUndefined();
  expect(await t.settle()).toBe(inputs.length);
  readings = validateReadings(
    inputs.map((input) => ({ ...input, time: new Date(input.time) })),
    { maxBatchSize: 1000, receivedAt: 0 },
  );
  seriesIds = [...new Set(readings.map((reading) => reading.seriesId))].sort();
});
afterAll(async () => t?.close());

describe('selectsReading', () => {
  it('keeps exactly the readings of the documents the selection selects', async () => {
    const scopes: DocumentScope[] = [
      { metric: 'cpu' },
      { metric: 'disk', tagPairs: tagPairLists([{ key: 'host', in: ['a'] }]) },
      {
        metric: 'cpu',
        tagPairs: tagPairLists([
          { key: 'host', in: ['a', 'c'] },
          { key: 'region', in: ['us'] },
        ]),
      },
      { metric: 'cpu', tagPairs: tagPairLists([{ key: 'region', in: ['nowhere'] }]) },
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
        const selection: DocumentSelection = { scope, days: { from, to }, fields: ['used', 'free'], paths: ['date'] };
        const { match } = selectionStages(selection);
        const filter = { $and: match.map((stage) => stage.$match) };
        const selected = await t.store.db
          .collection(CollectionName.seriesDays)
          .find(filter, { projection: { series: 1, date: 1 } })
          .toArray();
        const documents = new Set(selected.map((doc) => `${doc.series}:${doc.date.getTime()}`));
        const keep = selectsReading(selection, false);
        const kept = readings.filter(keep);
        const dayOf = (reading: Reading) => `${reading.seriesId}:${Math.floor(reading.time / DAY) * DAY}`;
        expect(new Set(kept.map(dayOf)), JSON.stringify(filter)).toEqual(documents);
        dropped += readings.length - kept.length;
        checked += 1;
      }
    }
    expect(checked).toBe(18);
    expect(dropped).toBeGreaterThan(0);
  });
});
