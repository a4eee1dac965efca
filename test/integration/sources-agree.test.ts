/**
 * Every source answers the same (docs/read-design.md): random bucket and aggregate
 * queries (fast-check) over flights-like readings, asked as a user asks them (the planner
 * picks automatic rollups, a rollup with the edges from the series-day documents, day
 * summaries or the documents) and again with a filter on two more tag keys that accepts
 * every value (no rollup or summary keeps three keys, so the series-day documents answer
 * alone) of a second server on the same database that merges no documents itself (every
 * read a pipeline; the first merges the documents of short minute reads,
 * `mergedHere`), both equal to a plain loop over the readings sent: every bucket's start, count,
 * sum, minimum and maximum, in UTC and in zones with +05:30, +05:45 and daylight-saving
 * offsets. The readings are in every state a reader meets: compacted, folded in parts
 * after the rollups were built, and in the log's tail; in the raw form and in slots.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ROLLUP_POLICY } from '../../src/model/rollup-policy.ts';
import { defineAutomaticRollups } from '../../src/storage/auto-rollups.ts';
import { findRollups, rebuildDirtyDays } from '../../src/storage/rollups.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { referenceBuckets, type ZonedGranularity } from '../helpers/zoned-reference.ts';

const MIN = 60_000;
const QUARTER = 15 * MIN;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const START = Date.UTC(2024, 4, 6);
const DAYS = 3;
const ORIGINS = ['ATL', 'BOS', 'DEN', 'SEA'];
const DESTINATIONS = ['JFK', 'ORD', 'SFO'];
const CARRIERS = ['AA', 'DL'];

interface Flight {
  origin: string;
  destination: string;
  carrier: string;
  time: number;
  delay: number;
}

/** `count` flights from `seed` on over the 3 days and 24 routes (whole-number delays: sums are exact). */
const flightsOf = (count: number, seed: number): Flight[] =>
  Array.from({ length: count }, (_, i) => {
    const k = seed + i;
    return {
      origin: ORIGINS[k % 4]!,
      destination: DESTINATIONS[(k * 7) % 3]!,
      carrier: CARRIERS[(k * 5) % 2]!,
      time: START + ((k * 7919) % (DAYS * 1440)) * MIN + ((k * 13) % 60) * 1000,
      delay: ((k * 37) % 201) - 50,
    };
  });

const RECORD = `mutation($readings: [ReadingInput!]!, $batchId: String) { recordReadings(readings: $readings, batchId: $batchId) { recorded } }`;
const asInput = (flights: readonly Flight[]) =>
  flights.map((f) => ({
    metric: 'flights',
    tags: [
      { key: 'origin', value: f.origin },
      { key: 'destination', value: f.destination },
      { key: 'carrier', value: f.carrier },
    ],
    time: new Date(f.time).toISOString(),
    fields: [{ name: 'delay', value: f.delay }],
  }));

interface Ask {
  from: number;
  to: number;
  /** null: an aggregate of the whole range. */
  granularity: ZonedGranularity | null;
  zone: string;
  origins: string[] | null;
  groupBy: readonly string[];
}

type Stats = { count: number; sum: number; min: number; max: number };
type Tag = { key: string; value: string };
type Answer = { tags: Tag[]; buckets: ({ start: number } & Stats)[] }[];
type Read = { rollup: string | null; summaryDays?: number; edges?: unknown[]; fetched?: number };

/** Which source answered a pipeline, from its `extensions.reads` entry. */
const sourceOf = (read: Read) =>
  read.rollup !== null
    ? read.edges === undefined
      ? 'rollup'
      : 'rollup with edges'
    : read.summaryDays
      ? 'summaries'
      : read.fetched === undefined
        ? 'documents'
        : 'documents merged here';

/** Groups sorted by their tags, buckets by start: the server's order is not the point. */
const sorted = (answer: Answer): Answer =>
  answer
    .map((group) => ({ ...group, buckets: [...group.buckets].sort((a, b) => a.start - b.start) }))
    .sort((a, b) => JSON.stringify(a.tags).localeCompare(JSON.stringify(b.tags)));

/** The answer to `ask` by a plain loop over `flights` (bucket starts from `Intl`, zoned-reference.ts). */
function plainAnswer(flights: readonly Flight[], ask: Ask): Answer {
  const buckets = ask.granularity === null ? null : referenceBuckets(ask.from, ask.to, ask.zone, ask.granularity);
  const groups = new Map<string, { tags: Tag[]; buckets: Map<number, Stats> }>();
  for (const f of flights) {
    if (f.time < ask.from || f.time >= ask.to || (ask.origins !== null && !ask.origins.includes(f.origin))) continue;
    const tags = ask.groupBy.map((key) => ({ key, value: key === 'origin' ? f.origin : f.destination }));
    const start = buckets === null ? 0 : buckets.find((bucket) => f.time >= bucket.start && f.time < bucket.end)!.start;
    const key = JSON.stringify(tags);
    const group = groups.get(key) ?? { tags, buckets: new Map<number, Stats>() };
    groups.set(key, group);
    const stats = group.buckets.get(start) ?? { count: 0, sum: 0, min: Infinity, max: -Infinity };
    group.buckets.set(start, {
      count: stats.count + 1,
      sum: stats.sum + f.delay,
      min: Math.min(stats.min, f.delay),
      max: Math.max(stats.max, f.delay),
    });
  }
  return sorted(
    [...groups.values()].map((group) => ({ tags: group.tags, buckets: [...group.buckets].map(([start, stats]) => ({ start, ...stats })) })),
  );
}

// In the raw form (the server's default for a few readings a series-day) and in the slot form with packed minutes.
describe.each([
  ['raw and slot forms', undefined],
  ['slot form only', 0],
] as const)('every source answers the same (%s)', { timeout: 600_000 }, (_form, rawReadings) => {
  let t: TestApp;
  /** A second server on the same database that merges nothing itself: every read of it runs its pipeline. */
  let pipelines: TestApp;
  const sent: Flight[] = [];
  const record = async (flights: Flight[], batchId: string) => {
    const answer = await t.graphql(RECORD, { readings: asInput(flights), batchId });
    expect(answer.errors).toBeUndefined();
    sent.push(...flights);
  };

  beforeAll(async () => {
    t = await openTestApp('sources_agree', { journal: false, rawReadings });
    pipelines = await openTestApp('sources_agree', {
      journal: false,
      rawReadings,
      mergeHereDocuments: 0,
      database: t.store.db.databaseName,
    });
    // Compacted, then rollups defined and built over them.
    for (let i = 0; i < 3; i++) await record(flightsOf(600, i * 600), `first-${i}`);
    expect(await t.settle()).toBe(1800);
    await defineAutomaticRollups(t.store, DEFAULT_ROLLUP_POLICY);
    await rebuildDirtyDays(t.store, 0);
    expect((await findRollups(t.store, ['flights'])).map((rollup) => [rollup.name, rollup.state])).toEqual([
      ['auto_carrier', 'ready'],
      ['auto_destination', 'ready'],
      ['auto_origin', 'ready'],
    ]);
    // Folded after the rollups were built (their parts written by the fold), then left in the log.
    await record(flightsOf(400, 5000), 'folded');
    expect(await t.settle()).toBe(400);
    await record(flightsOf(300, 9000), 'tail');
  });
  afterAll(async () => {
    await pipelines?.store.client.close();
    await t?.close();
  });

  /**
   * `ask` through GraphQL, with the extra keys' filter when `documents` (then of the
   * server that merges nothing itself: every read a pipeline of the series-day
   * documents): its groups and where each pipeline read.
   */
  const askServer = async (ask: Ask, documents: boolean) => {
    const server = documents ? pipelines : t;
    const where = [
      ...(ask.origins === null ? [] : [{ key: 'origin', in: ask.origins }]),
      ...(documents
        ? [
            { key: 'carrier', in: CARRIERS },
            { key: 'destination', in: DESTINATIONS },
          ]
        : []),
    ];
    const variables = {
      from: new Date(ask.from).toISOString(),
      to: new Date(ask.to).toISOString(),
      where,
      groupBy: ask.groupBy,
      timeZone: ask.zone,
      granularity: ask.granularity,
    };
    const text =
      ask.granularity === null
        ? `query($from: Time!, $to: Time!, $where: [TagFilter!], $groupBy: [String!]) {
            aggregate(metric: "flights", field: "delay", from: $from, to: $to, where: $where, groupBy: $groupBy) { tags { key value } count sum min max }
          }`
        : `query($from: Time!, $to: Time!, $where: [TagFilter!], $groupBy: [String!], $timeZone: String, $granularity: Granularity!) {
            buckets(metric: "flights", field: "delay", granularity: $granularity, from: $from, to: $to, where: $where, groupBy: $groupBy, timeZone: $timeZone, fill: NONE) {
              tags { key value } buckets { start count sum min max }
            }
          }`;
    const answer = (await server.graphql(text, variables)) as {
      data?: { aggregate?: (Stats & { tags: Tag[] })[]; buckets?: { tags: Tag[]; buckets: (Stats & { start: string })[] }[] };
      errors?: unknown;
      extensions?: { reads?: Read[] };
    };
    expect(answer.errors, JSON.stringify(variables)).toBeUndefined();
    const groups: Answer =
      ask.granularity === null
        ? answer
            .data!.aggregate!.filter((group) => group.count > 0)
            .map(({ tags, ...stats }) => ({ tags, buckets: [{ start: 0, ...stats }] }))
        : answer.data!.buckets!.map((group) => ({
            tags: group.tags,
            buckets: group.buckets.map((bucket) => ({ ...bucket, start: Date.parse(bucket.start) })),
          }));
    return { groups: sorted(groups), sources: (answer.extensions?.reads ?? []).map(sourceOf) };
  };

  const alignments = [MIN, QUARTER, HOUR, DAY];
  const ask: fc.Arbitrary<Ask> = fc
    .record({
      align: fc.constantFrom(...alignments),
      start: fc.integer({ min: -60, max: DAYS * 1440 }),
      length: fc.integer({ min: 1, max: DAYS * 1440 }),
      granularity: fc.constantFrom<ZonedGranularity | null>(null, 'MINUTE', 'FIFTEEN_MINUTES', 'HOUR', 'DAY'),
      zone: fc.constantFrom('UTC', 'America/New_York', 'Asia/Kolkata', 'Asia/Kathmandu'),
      origins: fc.option(fc.subarray(ORIGINS, { minLength: 1 }), { nil: null }),
      groupBy: fc.constantFrom([], ['origin'], ['destination'], ['origin', 'destination']),
    })
    .map(({ align, start, length, granularity, zone, origins, groupBy }) => {
      const from = START + Math.floor((start * MIN) / align) * align;
      const to = from + Math.max(align, Math.floor((length * MIN) / align) * align);
      // Minute buckets over at most 3 hours, as a chart asks them.
      return { from, to: granularity === 'MINUTE' ? Math.min(to, from + 3 * HOUR) : to, granularity, zone, origins, groupBy };
    });

  it('a rollup, a rollup with edges, day summaries, the series-day documents and the documents merged here answer as a plain loop does', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(ask, async (query) => {
        const want = plainAnswer(sent, query);
        const planned = await askServer(query, false);
        const alone = await askServer(query, true);
        for (const source of planned.sources) seen.add(source);
        expect(new Set(alone.sources)).toEqual(new Set(['documents']));
        expect(planned.groups).toEqual(want);
        expect(alone.groups).toEqual(want);
      }),
      {
        numRuns: 100,
        seed: 45,
        examples: [
          // Day summaries (UTC days, one key), a rollup (whole hours), a rollup with edges (inside hours).
          [{ from: START, to: START + 3 * DAY, granularity: 'DAY', zone: 'UTC', origins: null, groupBy: ['origin'] }],
          [{ from: START + HOUR, to: START + 30 * HOUR, granularity: 'HOUR', zone: 'UTC', origins: ['DEN'], groupBy: [] }],
          [
            {
              from: START + 17 * MIN,
              to: START + DAY + 41 * MIN,
              granularity: 'HOUR',
              zone: 'Asia/Kolkata',
              origins: ['BOS', 'SEA'],
              groupBy: ['origin'],
            },
          ],
        ],
      },
    );
    expect(seen).toEqual(new Set(['rollup', 'rollup with edges', 'summaries', 'documents', 'documents merged here']));
  });
});
