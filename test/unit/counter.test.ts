/**
 * What a counter metric's slots keep (`inc`, the reset-aware increase inside a slot),
 * as the fold plans it and as a compaction merges parts, checked against plain loops
 * over the readings that share no code with the planner.
 */
import { BSON } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { chainIncrease, counterDelta, readingsIncrease } from '../../src/model/counter.ts';
import { validateReadings } from '../../src/record/validate.ts';
import type { CounterRow } from '../../src/query/buckets-pipeline.ts';
import { counterIncreases } from '../../src/query/counters.ts';
import type { SeriesDayDocument } from '../../src/documents/series-day.ts';
import { planContents } from '../../src/documents/from-readings.ts';
import type { DayContent } from '../../src/documents/content.ts';
import { slotFormDocument } from '../../src/documents/encode.ts';
import { rollupContents } from '../../src/documents/rollup.ts';
import { mergeParts } from '../../src/documents/merge.ts';

const DAY = Date.UTC(2024, 2, 1);
const MINUTE = 60_000;
const HOUR = 3_600_000;

interface Sent {
  time: number;
  value: number;
}

/** Increase of readings in time order by the definition: a drop is a reset, whose increase is the new value. */
function plainIncrease(readings: readonly Sent[]): number {
  const sorted = [...readings].sort((a, b) => a.time - b.time);
  let total = 0;
  for (let i = 1; i < sorted.length; i++) {
    const before = sorted[i - 1]!.value;
    const after = sorted[i]!.value;
    total += after < before ? after : after - before;
  }
  return total;
}

/**
 * A counter sampled at distinct times over two days (`count` readings), reset to 0 now
 * and then, integer values so every sum is exact: a small deterministic generator.
 */
function counterReadings(count: number, seed: number): Sent[] {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state;
  };
  const times = new Set<number>();
  while (times.size < count) times.add(DAY + (next() % (2 * 24 * 60)) * MINUTE + (next() % 60) * 1000);
  let value = 0;
  return [...times]
    .sort((a, b) => a - b)
    .map((time) => {
      value = next() % 9 === 0 ? next() % 5 : value + (next() % 50);
      return { time, value };
    });
}

const plan = (readings: readonly Sent[], kind: 'counter' | 'gauge' = 'counter', metric = 'requests') =>
  planContents(
    validateReadings(
      readings.map((r) => ({
        metric,
        tags: [{ key: 'host', value: 'a' }],
        time: new Date(r.time),
        fields: [{ name: 'n', value: r.value }],
      })),
      { maxBatchSize: 100_000, receivedAt: 0 },
    ),
    undefined,
    () => kind,
  );

/** The slot paths of field `n` a reading at `time` falls in, in the document of its day. */
function pathsOf(time: number): { day: number; paths: string[] } {
  const day = Math.floor(time / (24 * HOUR)) * 24 * HOUR;
  const hour = Math.floor((time - day) / HOUR);
  const minute = Math.floor((time % HOUR) / MINUTE);
  return { day, paths: ['fields.n', `hours.${hour}.fields.n`, `hours.${hour}.minutes.${minute}.n`] };
}

/** The expected `inc` of every slot: a plain loop over the readings of each slot. */
function expectedIncreases(readings: readonly Sent[]): Map<string, number> {
  const bySlot = new Map<string, Sent[]>();
  for (const reading of readings) {
    const { day, paths } = pathsOf(reading.time);
    for (const path of paths) {
      const key = `${day}:${path}`;
      bySlot.set(key, [...(bySlot.get(key) ?? []), reading]);
    }
  }
  return new Map([...bySlot].map(([key, slot]) => [key, plainIncrease(slot)]));
}

/** `inc` of every slot of some writes, keyed like {@link expectedIncreases} (undefined where absent). */
function increasesOf(writes: readonly DayContent[]): Map<string, number | undefined> {
  const found = new Map<string, number | undefined>();
  for (const write of writes) for (const [path, slot] of write.slots) found.set(`${write.date.getTime()}:${path}`, slot.inc);
  return found;
}

/** A write as stored and read back (BSON round trip, doubles as numbers): what a compaction reads. */
const stored = (write: DayContent): SeriesDayDocument => BSON.deserialize(BSON.serialize(slotFormDocument(write))) as SeriesDayDocument;

describe('counter deltas', () => {
  it('treats a drop as a reset whose increase is the new value', () => {
    expect(counterDelta(10, 15)).toBe(5);
    expect(counterDelta(10, 10)).toBe(0);
    expect(counterDelta(10, 3)).toBe(3);
    expect(readingsIncrease([3, 7, 2, 4, 0, 5].map((v, t) => ({ t, v })))).toBe(4 + 2 + 2 + 0 + 5);
  });

  it('chains pieces that do not interleave, in any order, and knows nothing of pieces that do', () => {
    const a = { first: { t: 0, v: 1 }, last: { t: 10, v: 6 }, n: 3, inc: 5 };
    const b = { first: { t: 20, v: 8 }, last: { t: 30, v: 2 }, n: 2, inc: 2 };
    expect(chainIncrease([b, a])).toBe(5 + 2 + 2);
    // b's first reading falls before a's last: their order between them is unknown.
    expect(chainIncrease([a, { ...b, first: { t: 5, v: 8 } }])).toBeNull();
    // A piece of one reading needs no stored increase; one of several does.
    expect(chainIncrease([a, { ...b, n: 1, inc: null, last: b.first }])).toBe(5 + 2);
    expect(chainIncrease([a, { ...b, inc: null }])).toBeNull();
  });
});

describe('planContents of a counter', () => {
  it('keeps in every slot the increase between its readings, whatever order they come in', () => {
    const readings = counterReadings(800, 7);
    const shuffled = [...readings].sort((a, b) => ((a.time * 7919) % 1009) - ((b.time * 7919) % 1009));
    const found = increasesOf(plan(shuffled).days);
    const expected = expectedIncreases(readings);
    expect(found.size).toBe(expected.size);
    for (const [key, increase] of expected) expect(found.get(key), key).toBe(increase);
    // Resets happened.
    expect(readings.some((r, i) => i > 0 && r.value < readings[i - 1]!.value)).toBe(true);
  });

  it('keeps nothing of the kind for a gauge, and a rollup keeps no increase', () => {
    const readings = counterReadings(50, 11);
    for (const write of plan(readings, 'gauge').days) for (const slot of write.slots.values()) expect(slot.inc).toBeUndefined();
    const rollup = rollupContents(plan(readings).days, { metric: 'requests', tagKeys: [] });
    for (const write of rollup) for (const slot of write.slots.values()) expect(slot.inc).toBeUndefined();
  });
});

describe('merging the parts of a counter series-day', () => {
  const readings = counterReadings(600, 3).filter((r) => r.time < DAY + 24 * HOUR);

  it('is exact when the parts hold readings of separate times', () => {
    // Three parts of consecutive stretches, as folds of readings arriving in time order write them.
    const cuts = [0, Math.floor(readings.length / 4), Math.floor((readings.length * 2) / 3), readings.length];
    const parts = cuts.slice(1).map((end, i) => stored(plan(readings.slice(cuts[i], end)).days[0]!));
    const { write } = mergeParts(parts, 0);
    const found = increasesOf([write]);
    for (const [key, increase] of expectedIncreases(readings)) expect(found.get(key), key).toBe(increase);
  });

  it('recomputes an hour from its minutes when parts interleave only across minutes', () => {
    // Readings of alternate minutes in two parts: every hour interleaves, no minute does.
    const even = readings.filter((r) => Math.floor(r.time / MINUTE) % 2 === 0);
    const odd = readings.filter((r) => Math.floor(r.time / MINUTE) % 2 === 1);
    const { write } = mergeParts([stored(plan(even).days[0]!), stored(plan(odd).days[0]!)], 0);
    const found = increasesOf([write]);
    for (const [key, increase] of expectedIncreases(readings)) expect(found.get(key), key).toBe(increase);
  });

  it('leaves a minute whose parts interleave without an increase, and its hour and day', () => {
    // A late reading between two readings of one minute of the first part.
    const minute = readings.findIndex((r, i) => i > 0 && Math.floor(r.time / MINUTE) === Math.floor(readings[i - 1]!.time / MINUTE));
    const [before, after] = [readings[minute - 1]!, readings[minute]!];
    const late = { time: (before.time + after.time) / 2, value: before.value };
    expect(late.time > before.time && late.time < after.time).toBe(true);
    const { write } = mergeParts([stored(plan(readings).days[0]!), stored(plan([late]).days[0]!)], 0);
    const found = increasesOf([write]);
    const hit = new Set(pathsOf(late.time).paths.map((path) => `${DAY}:${path}`));
    for (const [key, increase] of expectedIncreases([...readings, late])) {
      expect(found.has(key), key).toBe(true);
      expect(found.get(key), key).toBe(hit.has(key) ? undefined : increase);
    }
  });
});

describe('counterIncreases', () => {
  const at = (minute: number) => new Date(DAY + minute * MINUTE);
  /** A slot of field 0: count, first and last reading (minute, value), `inc` when known. */
  const slot = (n: number, first: [number, number], last: [number, number], inc?: number) => ({
    v0: { n, f: { t: at(first[0]), v: first[1] }, l: { t: at(last[0]), v: last[1] }, ...(inc === undefined ? {} : { i: inc }) },
  });
  const keyOf = (id: { t?: Date } | null) => String(id?.t?.getTime() ?? '');
  const hour = (h: number) => String(DAY + h * HOUR);

  it('chains each series from its first slot in the range, adds the series of a bucket, and needs no inc for one reading', () => {
    const rows: CounterRow[] = [
      // Series a: 5 -> 9 in hour 0 (inc 4), then 2 (a reset) alone in hour 1, then 6 -> 1 -> 3 in hour 2 (inc 1 + 2).
      { _id: { s: 'a', t: at(0) }, p: [slot(2, [10, 5], [20, 9], 4)] },
      { _id: { s: 'a', t: at(60) }, p: [slot(1, [70, 2], [70, 2])] },
      { _id: { s: 'a', t: at(120) }, p: [slot(3, [125, 6], [130, 3], 3)] },
      // Series b: one reading in hour 1, two parts of hour 2 one after the other.
      { _id: { s: 'b', t: at(60) }, p: [slot(1, [61, 100], [61, 100], 0)] },
      { _id: { s: 'b', t: at(120) }, p: [slot(2, [150, 130], [170, 120], 120), slot(2, [121, 101], [140, 110], 9)] },
    ];
    const found = counterIncreases(rows, 0, keyOf);
    expect(Object.fromEntries(found)).toEqual({
      [hour(0)]: 4,
      [hour(1)]: 2 + 0,
      [hour(2)]: 4 + 3 + (1 + 9 + 20 + 120),
    });
  });

  it('knows nothing of a bucket whose parts interleave, or of a series without first and last readings, and the rest stays exact', () => {
    const interleaved: CounterRow[] = [
      { _id: { s: 'a', t: at(0) }, p: [slot(2, [10, 5], [30, 9], 4), slot(1, [20, 7], [20, 7])] },
      { _id: { s: 'a', t: at(60) }, p: [slot(1, [70, 12], [70, 12], 0)] },
    ];
    expect(Object.fromEntries(counterIncreases(interleaved, 0, keyOf))).toEqual({ [hour(0)]: null, [hour(1)]: 3 });
    const old: CounterRow[] = [
      { _id: { s: 'a', t: at(0) }, p: [{ v0: { n: 2 } }] },
      { _id: { s: 'a', t: at(60) }, p: [slot(1, [70, 12], [70, 12], 0)] },
      { _id: { s: 'b', t: at(60) }, p: [slot(2, [61, 1], [62, 3])] },
    ];
    expect(Object.fromEntries(counterIncreases(old, 0, keyOf))).toEqual({ [hour(0)]: null, [hour(1)]: null });
  });
});
