/**
 * Rollups: once built, queries that filter and group only by a rollup's tag keys read
 * the rollup (reported in `extensions.reads`) and answer exactly what the series-day
 * documents answer, checked against plain loops over the readings sent: after first
 * writes, batches written while building, batches not folded yet (the log's tail, merged
 * into rollup groups) and folded (rollup parts of their fold), retried batches (which
 * write nothing), folds adding parts to a dirty day before a rebuild, folds racing a
 * rebuild, and a drop. No folder runs: the tests fold with `settle` and `foldOnce`.
 */
import type { CommandStartedEvent, CommandSucceededEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { backfillRollup, findRollups, markDirty, rebuildDirtyDays, rebuildRollupDay } from '../../src/storage/rollups.ts';
import { foldOnce } from '../../src/storage/fold.ts';
import { ingestLog } from '../../src/storage/ingest-log.ts';
import { dayKey } from '../../src/model/rollup.ts';
import { readVisible } from '../../src/storage/fold-state.ts';

const METRIC = 'trips';
const DAY = 86_400_000;
const START = Date.UTC(2024, 2, 1);
const ORIGINS = ['ATL', 'BOS', 'DEN', 'LAX', 'SEA'];
const DESTINATIONS = ['JFK', 'ORD', 'SFO', 'MIA'];
const CARRIERS = ['AA', 'DL', 'UA'];

interface Sent {
  origin: string;
  destination: string;
  carrier: string;
  time: number;
  delay: number;
  distance: number;
}

/** `count` readings from `seed` on, spread over 4 days, 60 series, values with repeats and negatives. */
function readingsOf(count: number, seed: number): Sent[] {
  return Array.from({ length: count }, (_, i) => {
    const k = seed + i;
    return {
      origin: ORIGINS[k % 5]!,
      destination: DESTINATIONS[(k * 7) % 4]!,
      carrier: CARRIERS[(k * 11) % 3]!,
      time: START + ((k * 7919) % (4 * 1440)) * 60_000 + ((k * 13) % 60) * 1000,
      delay: ((k * 37) % 181) - 40,
      distance: 100 + ((k * 53) % 2400),
    };
  });
}

const asInput = (readings: readonly Sent[]) =>
  readings.map((r) => ({
    metric: METRIC,
    tags: [
      { key: 'origin', value: r.origin },
      { key: 'destination', value: r.destination },
      { key: 'carrier', value: r.carrier },
    ],
    time: new Date(r.time).toISOString(),
    fields: [
      { name: 'delay', value: r.delay },
      { name: 'distance', value: r.distance },
    ],
  }));

interface Expected {
  count: number;
  sum: number;
  min: number;
  max: number;
  first: { time: string; value: number };
  last: { time: string; value: number };
}

/** Statistics of `delay` over readings, by a plain loop (first/last ties: smaller/larger value). */
function expected(readings: readonly Sent[]): Expected | undefined {
  if (readings.length === 0) return undefined;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  let first = readings[0]!;
  let last = readings[0]!;
  for (const r of readings) {
    sum += r.delay;
    min = Math.min(min, r.delay);
    max = Math.max(max, r.delay);
    if (r.time < first.time || (r.time === first.time && r.delay < first.delay)) first = r;
    if (r.time > last.time || (r.time === last.time && r.delay > last.delay)) last = r;
  }
  const pair = (r: Sent) => ({ time: new Date(r.time).toISOString(), value: r.delay });
  return { count: readings.length, sum, min, max, first: pair(first), last: pair(last) };
}

const RECORD = `mutation($readings: [ReadingInput!]!, $batchId: String) {
  recordReadings(readings: $readings, batchId: $batchId) { recorded applied alreadyApplied }
}`;
const DAILY = `query($where: [TagFilter!], $groupBy: [String!], $granularity: Granularity!, $from: Time!, $to: Time!) {
  buckets(metric: "trips", field: "delay", granularity: $granularity, from: $from, to: $to, where: $where, groupBy: $groupBy, fill: NONE) {
    tags { key value }
    buckets { start count sum min max first { time value } last { time value } }
  }
}`;
/** Zoned buckets without first and last readings (a rollup's quarter hours keep none). */
const ZONED = `query($where: [TagFilter!], $groupBy: [String!], $from: Time!, $to: Time!, $timeZone: String!) {
  buckets(metric: "trips", field: "delay", granularity: DAY, from: $from, to: $to, where: $where, groupBy: $groupBy, timeZone: $timeZone, fill: NONE) {
    tags { key value }
    buckets { start count sum min max }
  }
}`;
const TOTALS = `query($where: [TagFilter!], $groupBy: [String!], $from: Time!, $to: Time!) {
  aggregate(metric: "trips", field: "delay", from: $from, to: $to, where: $where, groupBy: $groupBy) {
    tags { key value }
    count sum min max first { time value } last { time value } p95
  }
}`;
/** Buckets and totals without first and last readings or percentiles (the statistics an edge read merges). */
const EDGED = `query($where: [TagFilter!], $groupBy: [String!], $granularity: Granularity!, $from: Time!, $to: Time!) {
  buckets(metric: "trips", field: "delay", granularity: $granularity, from: $from, to: $to, where: $where, groupBy: $groupBy, fill: NONE) {
    tags { key value }
    buckets { start count sum min max }
  }
  aggregate(metric: "trips", field: "delay", from: $from, to: $to, where: $where, groupBy: $groupBy) {
    tags { key value }
    count sum min max
  }
}`;
const DEFINE = `mutation($name: String!, $tagKeys: [String!]!, $metric: String! = "trips") {
  defineRollup(metric: $metric, name: $name, tagKeys: $tagKeys) { name tagKeys state }
}`;

interface Reads {
  extensions?: {
    reads?: { rollup: string | null; tail?: { entries: number; readings: number }; edges?: { from: string; to: string }[] }[];
  };
}
type Bucket = Expected & { start: string };
type Group = { tags: { key: string; value: string }[]; buckets: Bucket[] };
type Total = Expected & { tags: { key: string; value: string }[]; p95: number | null };

// Each batch writes every level, sketches included: slow on the embedded server under load.
describe('rollups', { timeout: 300_000 }, () => {
  let t: TestApp;
  const sent: Sent[] = [];
  const record = async (readings: Sent[], batchId?: string) => {
    const answer = await t.graphql<{ recordReadings: { applied: number; alreadyApplied: number } }>(RECORD, {
      readings: asInput(readings),
      batchId,
    });
    expect(answer.errors).toBeUndefined();
    return answer.data!.recordReadings;
  };
  const daily = async (variables: Record<string, unknown>) => {
    const answer = (await t.graphql<{ buckets: Group[] }>(DAILY, {
      granularity: 'DAY',
      from: new Date(START).toISOString(),
      to: new Date(START + 4 * DAY).toISOString(),
      ...variables,
    })) as { data?: { buckets: Group[] }; errors?: unknown } & Reads;
    expect(answer.errors).toBeUndefined();
    const read = answer.extensions?.reads?.[0];
    return { groups: answer.data!.buckets, rollup: read?.rollup ?? null, tailReadings: read?.tail?.readings ?? 0 };
  };
  const totals = async (variables: Record<string, unknown>) => {
    const answer = (await t.graphql<{ aggregate: Total[] }>(TOTALS, {
      from: new Date(START).toISOString(),
      to: new Date(START + 4 * DAY).toISOString(),
      ...variables,
    })) as { data?: { aggregate: Total[] }; errors?: unknown } & Reads;
    expect(answer.errors).toBeUndefined();
    const read = answer.extensions?.reads?.[0];
    return { results: answer.data!.aggregate, rollup: read?.rollup ?? null, tailReadings: read?.tail?.readings ?? 0 };
  };
  /** Daily buckets of `readings` by a plain loop, for the given origin filter, grouped by origin or not. */
  const expectedDaily = (origins: readonly string[] | null, byOrigin: boolean) => {
    const groups = new Map<string, Sent[]>();
    for (const r of sent) {
      if (origins !== null && !origins.includes(r.origin)) continue;
      const key = byOrigin ? r.origin : '';
      groups.set(key, [...(groups.get(key) ?? []), r]);
    }
    return [...groups.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([origin, readings]) => ({
        tags: byOrigin ? [{ key: 'origin', value: origin }] : [],
        buckets: [0, 1, 2, 3].flatMap((d) => {
          const stats = expected(readings.filter((r) => Math.floor((r.time - START) / DAY) === d));
          return stats === undefined ? [] : [{ start: new Date(START + d * DAY).toISOString(), ...stats }];
        }),
      }));
  };
  /** The plain loop's daily buckets (see `expectedDaily`) that start before `to`. */
  const startingBefore = (wanted: ReturnType<typeof expectedDaily>, to: number) =>
    wanted
      .map((group) => ({ ...group, buckets: group.buckets.filter((bucket) => Date.parse(bucket.start) < to) }))
      .filter((group) => group.buckets.length > 0);
  /** Whether no rollup has a dirty day. */
  const allClean = async () => (await findRollups(t.store)).every((rollup) => Object.keys(rollup.dirty).length === 0);
  /** Documents of each rollup's collection, by rollup name, that match `filter`. */
  const rollupDocuments = async (filter: Record<string, unknown> = {}) => {
    const counts: Record<string, number> = {};
    for (const rollup of await findRollups(t.store, [METRIC])) {
      counts[rollup.name] = await t.store.db.collection(rollup.collection).countDocuments(filter);
    }
    return counts;
  };
  /** Compares bucket groups with the plain loop's (sums to 1e-9 relative). */
  const expectSameGroups = (actual: Group[], wanted: ReturnType<typeof expectedDaily>) => {
    expect(actual.map((group) => group.tags)).toEqual(wanted.map((group) => group.tags));
    actual.forEach((group, i) => {
      const want = wanted[i]!.buckets;
      expect(group.buckets.map(({ sum: _s, ...rest }) => rest)).toEqual(want.map(({ sum: _s, ...rest }) => rest));
      for (const [j, bucket] of group.buckets.entries()) expect(bucket.sum).toBeCloseTo(want[j]!.sum, 6);
    });
  };

  beforeAll(async () => {
    t = await openTestApp('rollups', { journal: false });
    const first = readingsOf(600, 0);
    for (let i = 0; i < first.length; i += 300) await record(first.slice(i, i + 300), `before-${i}`);
    sent.push(...first);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses bad definitions with stable codes and writes nothing', async () => {
    const unknownKey = await t.graphql(DEFINE, { name: 'x', tagKeys: ['airline'] });
    expect(unknownKey.errors?.[0]?.extensions?.code).toBe('INVALID_ARGUMENT');
    const noMetric = await t.graphql(DEFINE, { name: 'x', tagKeys: [], metric: 'nothing' });
    expect(noMetric.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const badName = await t.graphql(DEFINE, { name: 'no spaces', tagKeys: [] });
    expect(badName.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_NAME', inputPath: 'name' });
    const repeated = await t.graphql(DEFINE, { name: 'x', tagKeys: ['origin', 'origin'] });
    expect(repeated.errors?.[0]?.extensions?.code).toBe('DUPLICATE_NAME');
    expect(await findRollups(t.store)).toEqual([]);
  });

  it('is not used while building, and answers exactly once backfilled', async () => {
    for (const [name, tagKeys] of [
      ['all', []],
      ['by_origin', ['origin']],
    ] as const) {
      const defined = await t.graphql<{ defineRollup: { state: string } }>(DEFINE, { name, tagKeys });
      expect(defined.data?.defineRollup.state).toBe('BUILDING');
    }
    const clash = await t.graphql(DEFINE, { name: 'again', tagKeys: ['origin'] });
    expect(clash.errors?.[0]?.extensions?.code).toBe('INVALID_ARGUMENT');

    const building = await daily({});
    expect(building.rollup).toBeNull();
    expectSameGroups(building.groups, expectedDaily(null, false));

    // Written while building: its fold marks its days dirty and writes no rollup part.
    // Backfills read the folded series-day documents, so everything is folded first.
    const during = readingsOf(150, 5000);
    await record(during, 'during-build');
    sent.push(...during);
    expect(await t.settle()).toBe(sent.length);
    const duringDays = new Set(during.map((r) => dayKey(Math.floor(r.time / DAY) * DAY)));
    for (const rollup of await findRollups(t.store)) expect(new Set(Object.keys(rollup.dirty))).toEqual(duringDays);
    expect(await rollupDocuments()).toEqual({ all: 0, by_origin: 0 });

    for (const name of ['all', 'by_origin']) {
      const outcome = await backfillRollup(t.store, METRIC, name, { graceMs: 0 });
      expect(outcome).toEqual({ rebuilt: 4, dirty: 0 });
    }
    const whole = await daily({});
    expect(whole.rollup).toBe('all');
    expectSameGroups(whole.groups, expectedDaily(null, false));
    const twoOrigins = await daily({ where: [{ key: 'origin', in: ['BOS', 'SEA'] }], groupBy: ['origin'] });
    expect(twoOrigins.rollup).toBe('by_origin');
    expectSameGroups(twoOrigins.groups, expectedDaily(['BOS', 'SEA'], true));
  });

  /** Hourly and grouped totals from the rollups equal plain loops and the series documents; `tail` readings of the metric were not folded yet. */
  const expectRollupAnswers = async (tail: number) => {
    const hourly = await daily({ granularity: 'HOUR', where: [{ key: 'origin', in: ['DEN'] }] });
    expect(hourly.rollup).toBe('by_origin');
    expect(hourly.tailReadings).toBe(tail);
    const hours = new Map<number, Sent[]>();
    for (const r of sent.filter((r) => r.origin === 'DEN')) {
      const hour = Math.floor(r.time / 3_600_000) * 3_600_000;
      hours.set(hour, [...(hours.get(hour) ?? []), r]);
    }
    const wantHours = [...hours.keys()]
      .sort((a, b) => a - b)
      .map((hour) => ({ start: new Date(hour).toISOString(), ...expected(hours.get(hour)!)! }));
    expectSameGroups(hourly.groups, [{ tags: [], buckets: wantHours }]);

    // Local days whose midnights cut hours at quarter hours (18:30 and 18:15 UTC) read the
    // rollup's quarter hours, not the series' minutes.
    for (const [zone, offsetMinutes] of [
      ['Asia/Kolkata', 330],
      ['Asia/Kathmandu', 345],
    ] as const) {
      const from = START + DAY - offsetMinutes * 60_000;
      const zoned = (await t.graphql<{ buckets: Group[] }>(ZONED, {
        where: [{ key: 'origin', in: ['DEN', 'LAX'] }],
        groupBy: ['origin'],
        timeZone: zone,
        from: new Date(from).toISOString(),
        to: new Date(from + 3 * DAY).toISOString(),
      })) as { data?: { buckets: Group[] }; errors?: unknown } & Reads;
      expect(zoned.errors).toBeUndefined();
      expect(zoned.extensions?.reads?.[0]?.rollup, zone).toBe('by_origin');
      expect(zoned.extensions?.reads?.[0]?.tail?.readings ?? 0, zone).toBe(tail);
      const wantZoned = ['DEN', 'LAX'].map((origin) => ({
        tags: [{ key: 'origin', value: origin }],
        buckets: [0, 1, 2].flatMap((d) => {
          const start = from + d * DAY;
          const stats = expected(sent.filter((r) => r.origin === origin && r.time >= start && r.time < start + DAY));
          if (stats === undefined) return [];
          const { first: _first, last: _last, ...rest } = stats;
          return [{ start: new Date(start).toISOString(), ...rest }];
        }),
      }));
      expect(zoned.data!.buckets.map((group) => group.tags)).toEqual(wantZoned.map((group) => group.tags));
      zoned.data!.buckets.forEach((group, i) => {
        const want = wantZoned[i]!.buckets;
        expect(group.buckets.map(({ sum: _s, ...rest }) => rest)).toEqual(want.map(({ sum: _s, ...rest }) => rest));
        for (const [j, bucket] of group.buckets.entries()) expect(bucket.sum).toBeCloseTo(want[j]!.sum, 6);
      });
      // Asked with first readings, the same buckets read the series (quarter hours keep none).
      const withFirst = (await t.graphql(ZONED.replace('buckets { start count sum min max }', 'buckets { start count first { time } }'), {
        where: [{ key: 'origin', in: ['DEN', 'LAX'] }],
        groupBy: ['origin'],
        timeZone: zone,
        from: new Date(from).toISOString(),
        to: new Date(from + 3 * DAY).toISOString(),
      })) as { errors?: unknown } & Reads;
      expect(withFirst.errors).toBeUndefined();
      expect(withFirst.extensions?.reads?.[0]?.rollup, zone).toBeNull();
    }

    // A range whose edges fall inside hours: the rollup reads the whole hours and quarter
    // hours, the series' minutes only the edges (on two days, then on one), every reading
    // once, the tail's too.
    for (const [from, to] of [
      [START + 17 * 60_000, START + 2 * DAY + 41 * 60_000],
      [START + DAY + 5 * 60_000 + 3_600_000, START + DAY + 20 * 3_600_000 + 59 * 60_000],
    ] as const) {
      const iso = (ms: number) => new Date(ms).toISOString();
      const edged = (await t.graphql<{ buckets: Group[]; aggregate: Total[] }>(EDGED, {
        granularity: 'HOUR',
        where: [{ key: 'origin', in: ['DEN', 'LAX'] }],
        groupBy: ['origin'],
        from: iso(from),
        to: iso(to),
      })) as { data?: { buckets: Group[]; aggregate: Total[] }; errors?: unknown } & Reads;
      expect(edged.errors).toBeUndefined();
      // The rollups keep quarter hours: the edges are the minutes outside whole quarter hours.
      const wantEdges = [
        { from: iso(from), to: iso(Math.ceil(from / 900_000) * 900_000) },
        { from: iso(Math.floor(to / 900_000) * 900_000), to: iso(to) },
      ];
      for (const read of edged.extensions!.reads!) {
        expect(read.rollup).toBe('by_origin');
        expect(read.edges).toEqual(wantEdges);
      }
      expect(edged.extensions!.reads!.map((read) => read.tail?.readings ?? 0)).toEqual([tail, tail]);
      const inRange = (origin: string) => sent.filter((r) => r.origin === origin && r.time >= from && r.time < to);
      const wantHours = ['DEN', 'LAX'].map((origin) => {
        const hours = new Map<number, Sent[]>();
        for (const r of inRange(origin)) {
          const hour = Math.floor(r.time / 3_600_000) * 3_600_000;
          hours.set(hour, [...(hours.get(hour) ?? []), r]);
        }
        return {
          tags: [{ key: 'origin', value: origin }],
          buckets: [...hours.keys()]
            .sort((a, b) => a - b)
            .map((hour) => {
              const { first: _first, last: _last, ...stats } = expected(hours.get(hour)!)!;
              return { start: iso(hour), ...stats };
            }),
        };
      });
      expectSameGroups(edged.data!.buckets, wantHours as ReturnType<typeof expectedDaily>);
      expect(edged.data!.aggregate.map(({ tags, count, min, max }) => ({ tags, count, min, max }))).toEqual(
        ['DEN', 'LAX'].map((origin) => {
          const { count, min, max } = expected(inRange(origin))!;
          return { tags: [{ key: 'origin', value: origin }], count, min, max };
        }),
      );
      edged.data!.aggregate.forEach((total, i) => {
        expect(total.sum).toBeCloseTo(expected(inRange(['DEN', 'LAX'][i]!))!.sum, 6);
      });
    }

    // Grouped by origin from the rollup; the same data through a carrier filter (not in any
    // rollup) reads the series documents: every statistic equal, the merged sketches too.
    const fromRollup = await totals({ groupBy: ['origin'] });
    const fromSeries = await totals({ groupBy: ['origin'], where: [{ key: 'carrier', in: CARRIERS }] });
    expect(fromRollup.rollup).toBe('by_origin');
    expect(fromRollup.tailReadings).toBe(tail);
    expect(fromSeries.rollup).toBeNull();
    expect(fromSeries.tailReadings).toBe(tail);
    expect(fromRollup.results.map(({ sum: _s, ...rest }) => rest)).toEqual(fromSeries.results.map(({ sum: _s, ...rest }) => rest));
    for (const [i, origin] of ORIGINS.entries()) {
      const want = expected(sent.filter((r) => r.origin === origin))!;
      const { tags, p95: _p95, sum, ...stats } = fromRollup.results[i]!;
      expect(tags).toEqual([{ key: 'origin', value: origin }]);
      const { sum: wantSum, ...wantStats } = want;
      expect(stats).toEqual(wantStats);
      expect(sum).toBeCloseTo(wantSum, 6);
      expect(fromRollup.results[i]!.p95).not.toBeNull();
    }
  };

  it('keeps answering exactly as batches arrive and as they are folded, and equals the series documents (percentiles too)', async () => {
    const more = readingsOf(400, 9000);
    for (let i = 0; i < more.length; i += 200) await record(more.slice(i, i + 200), `after-${i}`);
    sent.push(...more);
    expect(await allClean()).toBe(true);

    // Not folded yet: the rollup's documents plus the log's tail merged into its groups.
    await expectRollupAnswers(more.length);

    // Folded: the days are clean, so the fold writes the rollups' parts with its series-day
    // parts (numbered with the fold) and marks nothing dirty; no tail is left.
    const visible = await readVisible(t.store);
    expect(await rollupDocuments({ f: { $gt: visible } })).toEqual({ all: 0, by_origin: 0 });
    expect(await t.settle()).toBe(more.length);
    const parts = await rollupDocuments({ f: { $gt: visible } });
    expect(parts.all).toBeGreaterThan(0);
    expect(parts.by_origin).toBeGreaterThan(parts.all!);
    expect(await allClean()).toBe(true);
    await expectRollupAnswers(0);
  });

  it('reads the series where a rollup cannot answer', async () => {
    expect((await daily({ groupBy: ['destination'] })).rollup).toBeNull();
    expect(
      (await daily({ granularity: 'MINUTE', from: new Date(START).toISOString(), to: new Date(START + 3_600_000).toISOString() })).rollup,
    ).toBeNull();
    // Ragged edges read minute slots.
    expect((await totals({ from: new Date(START + 90_000).toISOString() })).rollup).toBeNull();
  });

  it('reads its view beside the rollup definitions, and again after them when a rollup answers', async () => {
    // The order of the fold-state reads and of the rollup definitions' answers, per request.
    const events: string[] = [];
    const names = new Map<number, string>();
    const started = (event: CommandStartedEvent) => {
      if (event.databaseName !== t.store.db.databaseName || event.commandName !== 'find') return;
      const collection = String(event.command.find);
      if (collection !== 'fold_state' && collection !== 'rollups') return;
      names.set(event.requestId, collection);
      events.push(`start ${collection}`);
    };
    const succeeded = (event: CommandSucceededEvent) => {
      const collection = names.get(event.requestId);
      if (collection !== undefined) events.push(`end ${collection}`);
    };
    const order = async (read: () => Promise<void>) => {
      events.length = 0;
      t.store.client.on('commandStarted', started);
      t.store.client.on('commandSucceeded', succeeded);
      try {
        await read();
      } finally {
        t.store.client.off('commandStarted', started);
        t.store.client.off('commandSucceeded', succeeded);
      }
      return [...events];
    };
    // Answered by the rollup: a second view, read once the definitions are in.
    const fromRollup = await order(async () => {
      const whole = await daily({});
      expect(whole.rollup).toBe('all');
      expectSameGroups(whole.groups, expectedDaily(null, false));
    });
    expect(fromRollup.filter((event) => event === 'start fold_state')).toHaveLength(2);
    expect(fromRollup.lastIndexOf('start fold_state')).toBeGreaterThan(fromRollup.indexOf('end rollups'));
    // Answered by the series-day documents: the one view read beside the definitions.
    const fromSeries = await order(async () => {
      const byDestination = await daily({ groupBy: ['destination'] });
      expect(byDestination.rollup).toBeNull();
      const want = new Map<string, number>();
      for (const r of sent) want.set(r.destination, (want.get(r.destination) ?? 0) + 1);
      const counts = new Map(
        byDestination.groups.map((group) => [group.tags[0]!.value, group.buckets.reduce((total, bucket) => total + bucket.count, 0)]),
      );
      expect(counts).toEqual(want);
    });
    expect(fromSeries.filter((event) => event === 'start fold_state')).toHaveLength(1);
    expect(fromSeries).toContain('start rollups');
  });

  /** What is stored: log entries, series-day documents, documents of each rollup, the visible fold number. */
  const stored = async () => ({
    log: await ingestLog(t.store).countDocuments({}),
    buckets: await t.store.seriesDays.countDocuments({}),
    rollups: await rollupDocuments(),
    visible: await readVisible(t.store),
  });
  const expectExactFromRollups = async () => {
    const whole = await daily({});
    expect(whole.rollup).toBe('all');
    expectSameGroups(whole.groups, expectedDaily(null, false));
    const byOrigin = await daily({ groupBy: ['origin'] });
    expect(byOrigin.rollup).toBe('by_origin');
    expectSameGroups(byOrigin.groups, expectedDaily(null, true));
  };

  it('writes nothing for a retried batch, before or after its fold, and the rollups stay exact', async () => {
    const batch = readingsOf(100, 20_000);
    expect(await record(batch, 'retried')).toMatchObject({ applied: 100, alreadyApplied: 0 });
    sent.push(...batch);
    const unfolded = await stored();
    // As if the answer to the first attempt were lost: the client sends it again, twice at once.
    const retries = await Promise.all([record(batch, 'retried'), record(batch, 'retried')]);
    for (const retry of retries) expect(retry).toMatchObject({ applied: 0, alreadyApplied: 100 });
    expect(await stored()).toEqual(unfolded);
    expect(await ingestLog(t.store).countDocuments({ _id: 'retried' })).toBe(1);
    expect(await allClean()).toBe(true);
    await expectExactFromRollups();

    // Two first attempts at once: the log keeps one of them.
    const twin = readingsOf(80, 21_000);
    const attempts = await Promise.all([record(twin, 'twin'), record(twin, 'twin')]);
    sent.push(...twin);
    expect(attempts.reduce((total, attempt) => total + attempt.applied, 0)).toBe(80);
    expect(attempts.reduce((total, attempt) => total + attempt.alreadyApplied, 0)).toBe(80);
    expect(await ingestLog(t.store).countDocuments({ _id: 'twin' })).toBe(1);
    await expectExactFromRollups();

    // Folded once, and retried afterwards: nothing more is stored, nothing is folded again.
    expect(await t.settle()).toBe(180);
    expect(await allClean()).toBe(true);
    const folded = await stored();
    expect(folded.visible).toBeGreaterThan(unfolded.visible);
    expect(await record(batch, 'retried')).toMatchObject({ applied: 0, alreadyApplied: 100 });
    expect(await record(twin, 'twin')).toMatchObject({ applied: 0, alreadyApplied: 80 });
    expect(await t.settle()).toBe(0);
    expect(await stored()).toEqual(folded);
    expect(await allClean()).toBe(true);
    await expectExactFromRollups();
  });

  it('keeps a dirty day out of the rollups while folds add parts to it, and a rebuild makes it exact without doubling', async () => {
    expect(await t.settle()).toBe(0);
    const day = START + 2 * DAY;
    const date = new Date(day);
    const rollups = await findRollups(t.store, [METRIC]);
    await markDirty(
      t.store,
      rollups.map((rollup) => ({ rollup, days: [day] })),
    );
    const visible = await readVisible(t.store);
    for (let i = 0; i < 3; i++) {
      const batch = readingsOf(120, 40_000 + i * 1000);
      await record(batch, `dirty-day-${i}`);
      sent.push(...batch);
      const fold = await foldOnce(t.store, t.store.holder);
      expect(fold).toMatchObject({ fold: visible + i + 1, readings: 120 });
      // The range holds the dirty day: the series documents answer, exactly.
      const answer = await daily({});
      expect(answer.rollup).toBeNull();
      expectSameGroups(answer.groups, expectedDaily(null, false));
      // A range without it still reads the rollup, and the parts the fold wrote to its clean days.
      const clean = await daily({ to: new Date(day).toISOString() });
      expect(clean.rollup).toBe('all');
      expectSameGroups(clean.groups, startingBefore(expectedDaily(null, false), day));
    }
    for (const rollup of await findRollups(t.store, [METRIC])) expect(Object.keys(rollup.dirty)).toEqual([dayKey(day)]);
    // Each fold added a part to the day's series-day documents, none to its rollup documents.
    const parts = await t.store.seriesDays
      .aggregate<{ parts: number }>([
        { $match: { metric: METRIC, date, f: { $gt: visible } } },
        { $group: { _id: '$series', parts: { $sum: 1 } } },
      ])
      .toArray();
    expect(parts.some((series) => series.parts > 1)).toBe(true);
    expect(await rollupDocuments({ date, f: { $gt: visible } })).toEqual({ all: 0, by_origin: 0 });
    const cleanDays = await rollupDocuments({ date: { $ne: date }, f: { $gt: visible } });
    expect(cleanDays.all).toBeGreaterThan(0);
    expect(cleanDays.by_origin).toBeGreaterThan(0);

    // A batch not folded yet when the rebuild runs: the rebuild reads the folded parts
    // only, queries add the tail, and its fold (the day clean again) adds rollup parts.
    const late = readingsOf(90, 44_000);
    await record(late, 'dirty-day-tail');
    sent.push(...late);
    expect(await rebuildDirtyDays(t.store, 0)).toEqual({ rebuilt: rollups.length, dirty: 0 });
    const now = await readVisible(t.store);
    const groups = { all: 1, by_origin: ORIGINS.length };
    expect(await rollupDocuments({ date })).toEqual(groups);
    expect(await rollupDocuments({ date, f: now })).toEqual(groups);
    await expectExactFromRollups();
    expect(await t.settle()).toBe(late.length);
    expect(await allClean()).toBe(true);
    await expectExactFromRollups();

    // Marked and rebuilt again: the same documents, nothing doubled.
    await markDirty(
      t.store,
      rollups.map((rollup) => ({ rollup, days: [day] })),
    );
    expect(await rebuildDirtyDays(t.store, 0)).toEqual({ rebuilt: rollups.length, dirty: 0 });
    expect(await rollupDocuments({ date })).toEqual(groups);
    await expectExactFromRollups();
  });

  it('stays exact when batches and their folds race a rebuild of the same day', async () => {
    const day = START + DAY;
    const [all] = await findRollups(t.store, [METRIC]);
    // Make the day dirty, as a deletion would.
    await markDirty(t.store, [{ rollup: all!, days: [day] }]);
    const batches = Array.from({ length: 4 }, (_, i) => readingsOf(60, 30_000 + i * 1000));
    const rebuilds = (async () => {
      const outcomes = [];
      for (let i = 0; i < 4; i++) outcomes.push(await rebuildRollupDay(t.store, all!._id, day, 0));
      return outcomes;
    })();
    // One folder, as a server runs: each fold after its batch, while the rebuilds run.
    const folds = (async () => {
      for (const [i, batch] of batches.entries()) {
        await record(batch, `race-${i}`);
        await foldOnce(t.store, t.store.holder);
      }
    })();
    await Promise.all([folds, rebuilds]);
    for (const batch of batches) sent.push(...batch);
    expect(await t.settle()).toBe(0);
    for (let pass = 0; pass < 5; pass++) if ((await rebuildDirtyDays(t.store, 0)).dirty === 0) break;
    expect((await findRollups(t.store)).every((rollup) => Object.keys(rollup.dirty).length === 0)).toBe(true);
    const whole = await daily({});
    expect(whole.rollup).toBe('all');
    expectSameGroups(whole.groups, expectedDaily(null, false));
    const byOrigin = await daily({ groupBy: ['origin'] });
    expect(byOrigin.rollup).toBe('by_origin');
    expectSameGroups(byOrigin.groups, expectedDaily(null, true));
  });

  it('takes a deleted series out of the rollups', async () => {
    const gone = (r: Sent) => r.origin === 'ATL' && r.destination === 'JFK' && r.carrier === 'AA';
    expect(sent.some(gone)).toBe(true);
    const deleted = await t.graphql<{ deleteSeries: { documents: number } }>(
      'mutation { deleteSeries(id: "trips,carrier=AA,destination=JFK,origin=ATL") { documents } }',
    );
    expect(deleted.errors).toBeUndefined();
    sent.splice(0, sent.length, ...sent.filter((r) => !gone(r)));
    const meanwhile = await daily({ groupBy: ['origin'] });
    expect(meanwhile.rollup).toBeNull();
    expectSameGroups(meanwhile.groups, expectedDaily(null, true));
    expect((await rebuildDirtyDays(t.store, 0)).dirty).toBe(0);
    const after = await daily({ groupBy: ['origin'] });
    expect(after.rollup).toBe('by_origin');
    expectSameGroups(after.groups, expectedDaily(null, true));
  });

  it('is listed on the metric and removed by dropRollup', async () => {
    const listed = await t.graphql<{ metric: { rollups: { name: string; tagKeys: string[]; state: string; dirtyDays: string[] }[] } }>(
      '{ metric(name: "trips") { rollups { name tagKeys state dirtyDays } } }',
    );
    expect(listed.data?.metric.rollups).toEqual([
      { name: 'all', tagKeys: [], state: 'READY', dirtyDays: [] },
      { name: 'by_origin', tagKeys: ['origin'], state: 'READY', dirtyDays: [] },
    ]);
    const [all] = await findRollups(t.store, [METRIC]);
    const dropped = await t.graphql<{ dropRollup: boolean }>('mutation { dropRollup(metric: "trips", name: "all") }');
    expect(dropped.data?.dropRollup).toBe(true);
    expect(await t.store.db.listCollections({ name: all!.collection }).toArray()).toEqual([]);
    const again = await t.graphql<{ dropRollup: boolean }>('mutation { dropRollup(metric: "trips", name: "all") }');
    expect(again.data?.dropRollup).toBe(false);
    const whole = await daily({});
    expect(whole.rollup).toBe('by_origin');
    expectSameGroups(whole.groups, expectedDaily(null, false));
  });
});
