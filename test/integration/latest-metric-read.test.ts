/**
 * The latest values of most of a metric's series come from one read of the metric's
 * newest documents (those whose last reading is at most an hour before the metric's,
 * `latestValuesOf` in src/storage/latest.ts), and stay exact where that read does not
 * hold the answer: a field whose readings in the newest documents are older than a
 * document left out, a series whose newest day is not the metric's, a series quiet for
 * more than the hour. Every expected answer comes from a plain loop over the readings
 * sent; the parts are left as folds wrote them (no compaction), so a series' day is
 * several documents.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldOnce } from '../../src/storage/fold.ts';
import { METRIC_READ_REACH_MS } from '../../src/storage/latest.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';

const MINUTE = 60_000;
const DAY = Date.UTC(2024, 4, 2);
const at = (hours: number, minutes = 0) => DAY + hours * 3_600_000 + minutes * MINUTE;

interface Sent {
  host: string;
  time: number;
  fields: Record<string, number>;
}
const sent: Sent[] = [];
let t: TestApp;

/** Records `readings` in one batch, then folds exactly that batch into parts of its own. */
async function recordAndFold(readings: Sent[]): Promise<void> {
  const response = await t.graphql<{ recordReadings: { recorded: number } }>(
    'mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { recorded } }',
    {
      r: readings.map((r) => ({
        metric: 'room',
        tags: [{ key: 'host', value: r.host }],
        time: new Date(r.time).toISOString(),
        fields: Object.entries(r.fields).map(([name, value]) => ({ name, value })),
      })),
    },
  );
  expect(response.errors).toBeUndefined();
  sent.push(...readings);
  const outcome = await foldOnce(t.store, t.store.holder);
  expect(outcome.readings).toBe(readings.length);
}

beforeAll(async () => {
  t = await openTestApp('latest_metric_read', { journal: false });
  // First parts: a, b and c report `temp` and `rh`; d reports on the day before only.
  await recordAndFold([
    { host: 'a', time: at(10, 30), fields: { temp: 1, rh: 11 } },
    { host: 'b', time: at(10, 30), fields: { temp: 2, rh: 12 } },
    { host: 'c', time: at(9), fields: { temp: 3, rh: 13 } },
    { host: 'd', time: at(-2), fields: { temp: 4, rh: 14 } },
  ]);
  // Second parts, the metric's latest reading at 12:00: a's newest part holds `temp`
  // only from a late reading at 10:00, older than its first part's 10:30; b keeps
  // reporting both fields; c stays quiet (its last reading 09:00 is more than an hour
  // before 12:00).
  await recordAndFold([
    { host: 'a', time: at(12), fields: { rh: 21 } },
    { host: 'a', time: at(10), fields: { temp: 5 } },
    { host: 'b', time: at(12), fields: { temp: 6, rh: 22 } },
  ]);
}, 60_000);
afterAll(async () => t?.close());

/** The latest reading of `field` per host, from a plain loop over what was sent. */
function plainLatest(field: string): Map<string, { time: string; value: number }> {
  const best = new Map<string, Sent>();
  for (const reading of sent) {
    if (reading.fields[field] === undefined) continue;
    const held = best.get(reading.host);
    if (held === undefined || reading.time > held.time) best.set(reading.host, reading);
  }
  return new Map([...best].map(([host, r]) => [host, { time: new Date(r.time).toISOString(), value: r.fields[field]! }]));
}

describe('latest values from the metric read', () => {
  it('answers every host and field exactly, reading per series only the hosts the metric read does not answer', async () => {
    expect(METRIC_READ_REACH_MS).toBe(3_600_000);
    const query = `{ temp: latestValues(metric: "room", field: "temp", groupBy: ["host"]) { tags { value } latest { time value } }
      rh: latestValues(metric: "room", field: "rh", groupBy: ["host"]) { tags { value } latest { time value } } }`;
    expect((await t.graphql(query)).errors).toBeUndefined();
    t.resetCommands();
    const answer = await t.graphql<Record<string, { tags: { value: string }[]; latest: { time: string; value: number } }[]>>(query);
    expect(answer.errors).toBeUndefined();
    for (const field of ['temp', 'rh']) {
      const expected = plainLatest(field);
      expect(new Map(answer.data![field]!.map((group) => [group.tags[0]!.value, group.latest])), field).toEqual(expected);
    }
    // a's `temp` is its first part's 10:30, not the 10:00 of the part the metric read holds.
    expect(plainLatest('temp').get('a')).toEqual({ time: new Date(at(10, 30)).toISOString(), value: 1 });
    // One metric read answers b; a (its `temp`), c (quiet for more than the hour) and d
    // (no document that day) are read per series: their documents from 2024-05-02 on, and
    // for d, whose newest day is earlier, that day's look-up and its parts.
    const pipelines = t.targets.filter((target) => target === 'aggregate series_days').length;
    expect(pipelines).toBe(1 + 3 + 2);
  });
});
