/**
 * Automatic rollups (docs/rollups.md, "Automatic rollups"): from the shape of the series
 * alone, the rollup pass defines a rollup over each tag key that merges series and one
 * over every key of a dense metric, backfills them, and queries read them (reported in
 * `extensions.reads`) with answers equal to plain loops over the readings sent; a pass
 * defines nothing twice, and an automatic rollup an operator drops is not defined again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ROLLUP_POLICY } from '../../src/model/rollup-policy.ts';
import { defineAutomaticRollups } from '../../src/storage/auto-rollups.ts';
import { findRollups, rebuildDirtyDays } from '../../src/storage/rollups.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const START = Date.UTC(2024, 3, 1);
const ORIGINS = ['ATL', 'BOS', 'DEN', 'SEA'];
const DESTINATIONS = ['JFK', 'ORD', 'SFO'];
const HOSTS = ['h1', 'h2', 'h3'];

interface Flight {
  origin: string;
  destination: string;
  time: number;
  delay: number;
}
interface Load {
  host: string;
  time: number;
  usage: number;
}

/** 600 flights over 2 days on the 12 routes, values with repeats and negatives. */
const flights: Flight[] = Array.from({ length: 600 }, (_, k) => ({
  origin: ORIGINS[k % 4]!,
  destination: DESTINATIONS[(k * 7) % 3]!,
  time: START + ((k * 7919) % 2880) * 60_000 + (k % 60) * 1000,
  delay: ((k * 37) % 181) - 40,
}));
/** One reading per host every 5 minutes for a day: 288 a host-day, a dense metric. */
const loads: Load[] = HOSTS.flatMap((host, h) =>
  Array.from({ length: 288 }, (_, i) => ({ host, time: START + i * 300_000, usage: ((i * 13 + h * 7) % 100) / 4 })),
);

const RECORD = `mutation($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { recorded } }`;
const BUCKETS = `query($metric: String!, $field: String!, $granularity: Granularity!, $from: Time!, $to: Time!, $groupBy: [String!], $timeZone: String) {
  buckets(metric: $metric, field: $field, granularity: $granularity, from: $from, to: $to, groupBy: $groupBy, timeZone: $timeZone, fill: NONE) {
    tags { value } buckets { start count sum min max }
  }
}`;
const ROLLUPS = `query($metric: String!) { metric(name: $metric) { rollups { name tagKeys state automatic quarterHours } } }`;

type Group = { tags: { value: string }[]; buckets: { start: string; count: number; sum: number; min: number; max: number }[] };
type Answer = {
  data?: { buckets: Group[] };
  errors?: unknown;
  extensions?: { reads?: { metric: string | null; rollup: string | null }[] };
};

/** Buckets per group by a plain loop: `startOf` maps a time to its bucket's start (ms). */
function plainGroups<R>(
  readings: readonly R[],
  groupOf: (r: R) => string,
  startOf: (time: number) => number,
  timeOf: (r: R) => number,
  valueFrom: (r: R) => number,
) {
  const groups = new Map<string, Map<number, number[]>>();
  for (const r of readings) {
    const group = groups.get(groupOf(r)) ?? new Map<number, number[]>();
    const start = startOf(timeOf(r));
    group.set(start, [...(group.get(start) ?? []), valueFrom(r)]);
    groups.set(groupOf(r), group);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, buckets]) => ({
      tags: [{ value: group }],
      buckets: [...buckets.entries()]
        .sort(([a], [b]) => a - b)
        .map(([start, values]) => ({
          start: new Date(start).toISOString(),
          count: values.length,
          sum: values.reduce((a, b) => a + b, 0),
          min: Math.min(...values),
          max: Math.max(...values),
        })),
    }));
}

describe('automatic rollups', { timeout: 300_000 }, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await openTestApp('auto_rollups', { journal: false });
    const asFlight = (f: Flight) => ({
      metric: 'flights',
      tags: [
        { key: 'origin', value: f.origin },
        { key: 'destination', value: f.destination },
      ],
      time: new Date(f.time).toISOString(),
      fields: [{ name: 'delay', value: f.delay }],
    });
    const asLoad = (l: Load) => ({
      metric: 'cpu',
      tags: [{ key: 'host', value: l.host }],
      time: new Date(l.time).toISOString(),
      fields: [{ name: 'usage', value: l.usage }],
    });
    const recorded = await t.graphql(RECORD, { readings: [...flights.map(asFlight), ...loads.map(asLoad)] });
    expect(recorded.errors).toBeUndefined();
    expect(await t.settle()).toBe(flights.length + loads.length);
  });
  afterAll(async () => t?.close());

  it('defines a rollup over each key that merges series and one over every key of a dense metric, once', async () => {
    const defined = await defineAutomaticRollups(t.store, DEFAULT_ROLLUP_POLICY);
    expect(defined).toEqual([
      { metric: 'cpu', name: 'auto-all-keys', tagKeys: ['host'] },
      { metric: 'flights', name: 'auto_destination', tagKeys: ['destination'] },
      { metric: 'flights', name: 'auto_origin', tagKeys: ['origin'] },
    ]);
    expect(await defineAutomaticRollups(t.store, DEFAULT_ROLLUP_POLICY)).toEqual([]);
    const listed = await t.graphql<{ metric: { rollups: unknown[] } }>(ROLLUPS, { metric: 'flights' });
    expect(listed.data?.metric.rollups).toEqual([
      { name: 'auto_destination', tagKeys: ['destination'], state: 'BUILDING', automatic: true, quarterHours: true },
      { name: 'auto_origin', tagKeys: ['origin'], state: 'BUILDING', automatic: true, quarterHours: true },
    ]);
  });

  it('backfills them in the rollup pass, and queries read them with exact answers', async () => {
    await rebuildDirtyDays(t.store, 0);
    expect((await findRollups(t.store)).map((rollup) => [rollup.name, rollup.state, Object.keys(rollup.dirty).length])).toEqual([
      ['auto-all-keys', 'ready', 0],
      ['auto_destination', 'ready', 0],
      ['auto_origin', 'ready', 0],
    ]);
    // Kolkata's days by origin, cut at 18:30 UTC: from the origin rollup's quarter hours.
    const offset = 330 * 60_000;
    const from = START + DAY - offset;
    const zoned = (await t.graphql<{ buckets: Group[] }>(BUCKETS, {
      metric: 'flights',
      field: 'delay',
      granularity: 'DAY',
      from: new Date(from).toISOString(),
      to: new Date(from + DAY).toISOString(),
      groupBy: ['origin'],
      timeZone: 'Asia/Kolkata',
    })) as Answer;
    expect(zoned.errors).toBeUndefined();
    expect(zoned.extensions?.reads).toMatchObject([{ metric: 'flights', rollup: 'auto_origin' }]);
    const inDay = flights.filter((f) => f.time >= from && f.time < from + DAY);
    expect(zoned.data!.buckets).toEqual(
      plainGroups(
        inDay,
        (f) => f.origin,
        () => from,
        (f) => f.time,
        (f) => f.delay,
      ),
    );
    // Hourly per host of the dense metric: from the rollup over every key, no minutes read.
    const hourly = (await t.graphql<{ buckets: Group[] }>(BUCKETS, {
      metric: 'cpu',
      field: 'usage',
      granularity: 'HOUR',
      from: new Date(START).toISOString(),
      to: new Date(START + DAY).toISOString(),
      groupBy: ['host'],
    })) as Answer;
    expect(hourly.errors).toBeUndefined();
    expect(hourly.extensions?.reads).toMatchObject([{ metric: 'cpu', rollup: 'auto-all-keys' }]);
    expect(hourly.data!.buckets).toEqual(
      plainGroups(
        loads,
        (l) => l.host,
        (time) => Math.floor(time / HOUR) * HOUR,
        (l) => l.time,
        (l) => l.usage,
      ),
    );
  });

  it('does not define again an automatic rollup an operator dropped', async () => {
    const dropped = await t.graphql(`mutation { dropRollup(metric: "flights", name: "auto_origin") }`);
    expect(dropped.errors).toBeUndefined();
    expect((await t.store.metrics.findOne({ _id: 'flights' }))?.declinedRollups).toEqual([['origin']]);
    expect(await defineAutomaticRollups(t.store, DEFAULT_ROLLUP_POLICY)).toEqual([]);
    expect((await findRollups(t.store, ['flights'])).map((rollup) => rollup.name)).toEqual(['auto_destination']);
  });
});
