/**
 * The raw form of a series-day document (`SeriesDayDocument.r`) in Node: `rawFormDocument`
 * writes it from a write only when the write holds every reading and at most the limit;
 * `dayContentOf` and `fullContentOf` read it back as the slots the slot form would
 * have (what compactions and rollup rebuilds merge). Checked against a plain loop over
 * the readings and against the slot form the same readings plan to.
 */
import { Double } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { sketchKey } from '../../src/model/sketch.ts';
import { DEFAULT_STATISTICS, type SlotLevel } from '../../src/model/statistics-settings.ts';
import { validateReadings, type ReadingInput } from '../../src/record/validate.ts';
import { random } from '../helpers/random.ts';
import type { SeriesDayDocument } from '../../src/documents/series-day.ts';
import { planContents } from '../../src/documents/from-readings.ts';
import { rawFormDocument } from '../../src/documents/encode.ts';
import { dayContentOf, fullContentOf } from '../../src/documents/decode.ts';

const DAY = Date.UTC(2001, 0, 5);

/** `count` readings of one route on 2001-01-05, in no order, at random seconds; every third without `distance`. */
function readings(count: number, seed: number): ReadingInput[] {
  const next = random(seed);
  return Array.from({ length: count }, (_, i) => ({
    metric: 'flights',
    tags: [
      { key: 'origin', value: 'LAS' },
      { key: 'destination', value: 'PHL' },
    ],
    time: new Date(DAY + Math.floor(next() * 86_400) * 1000),
    fields: [
      { name: 'delay', value: Math.round(next() * 400) - 100 },
      ...(i % 3 === 0 ? [] : [{ name: 'distance', value: 100 + i * 37.5 }]),
    ],
  }));
}

const writeOf = (inputs: ReadingInput[], latestReadings = 50, sketchLevels: SlotLevel[] = DEFAULT_STATISTICS.sketchLevels) => {
  const plan = planContents(validateReadings(inputs, { maxBatchSize: 100, receivedAt: 0 }), () => ({
    ...DEFAULT_STATISTICS,
    latestReadings,
    sketchLevels,
  }));
  expect(plan.days).toHaveLength(1);
  return plan.days[0]!;
};

describe('rawFormDocument', () => {
  it('keeps the identity, the day totals and every reading oldest first with its sketch bins, nothing else', () => {
    const inputs = readings(12, 1);
    const doc = rawFormDocument(writeOf(inputs), 16)!;
    expect(Object.keys(doc).sort()).toEqual(
      ['date', 'fields', 'first', 'last', 'kl', 'metric', 'r', 'readings', 'series', 'tagPairs', 'tags', 'v'].sort(),
    );
    // The default sketch levels: day (1), hour (2) and quarter hour (4).
    expect(doc.kl).toBe(7);
    const r = doc.r as { t: Date; f: Record<string, number>; k: Record<string, string> }[];
    const sorted = [...inputs].sort((a, b) => a.time!.getTime() - b.time!.getTime());
    expect(r.map((reading) => reading.t.getTime())).toEqual(sorted.map((input) => input.time!.getTime()));
    r.forEach((reading, i) => {
      const fields = Object.fromEntries(sorted[i]!.fields.map((field) => [field.name, field.value]));
      expect(Object.fromEntries(Object.entries(reading.f).map(([name, value]) => [name, Number(value)]))).toEqual(fields);
      expect(reading.k).toEqual(Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, sketchKey(value)])));
    });
    // Day totals as a plain loop adds them up.
    const delays = inputs.map((input) => input.fields[0]!.value);
    const fields = doc.fields as Record<string, { n: number; sum: number; min: number; max: number }>;
    expect([fields.delay!.n, fields.delay!.sum, fields.delay!.min, fields.delay!.max].map(Number)).toEqual([
      12,
      delays.reduce((a, b) => a + b, 0),
      Math.min(...delays),
      Math.max(...delays),
    ]);
    expect(Number(fields.distance!.n)).toBe(8);
  });

  it('keeps values as doubles, as the slot form keeps its statistics', () => {
    const doc = rawFormDocument(writeOf(readings(4, 9)), 16)!;
    for (const reading of doc.r as { f: Record<string, unknown> }[]) {
      for (const value of Object.values(reading.f)) expect(value).toBeInstanceOf(Double);
    }
  });

  it('is null for a write whose slots its readings alone would not make: trimmed at a horizon, or sketched for some readings only', () => {
    const trimmed = writeOf(readings(6, 10));
    for (const path of [...trimmed.slots.keys()]) if (path.includes('.minutes.')) trimmed.slots.delete(path);
    expect(rawFormDocument(trimmed, 16)).toBeNull();
    // As after a compaction of a part written without sketches and one with them.
    const partly = writeOf(readings(6, 11));
    const hour = [...partly.slots.entries()].find(
      ([path, slot]) => path.startsWith('hours.') && !path.includes('.minutes.') && slot.stats.n > 1,
    )!;
    const [first] = hour[1].sketch!.keys();
    hour[1].sketch!.set(first!, hour[1].sketch!.get(first!)! - 1);
    expect(rawFormDocument(partly, 16)).toBeNull();
    const unsketched = writeOf(readings(6, 11));
    // The day sketch of one field only, as a part written before that field was sketched.
    unsketched.slots.get('fields.delay')!.sketch = null;
    expect(rawFormDocument(unsketched, 16)).toBeNull();
    expect(rawFormDocument(writeOf(readings(6, 11)), 16)).not.toBeNull();
  });

  it('is null past the limit, and when the latest readings kept do not hold every reading', () => {
    expect(rawFormDocument(writeOf(readings(17, 2)), 16)).toBeNull();
    expect(rawFormDocument(writeOf(readings(16, 2)), 16)).not.toBeNull();
    expect(rawFormDocument(writeOf(readings(10, 3), 5), 16)).toBeNull();
    expect(rawFormDocument(writeOf(readings(5, 3), 5), 16)).not.toBeNull();
  });
});

describe('a raw document read in Node', () => {
  it('gives every slot, quarter-hour sketch and latest reading the slot form of the same readings has, for every set of sketch levels', () => {
    const levelSets: SlotLevel[][] = [DEFAULT_STATISTICS.sketchLevels, ['day', 'hour'], ['day', 'hour', 'minute'], ['minute'], []];
    for (const [seed, levels] of levelSets.entries()) {
      const write = writeOf(readings(16, seed + 4), 50, levels);
      const raw = rawFormDocument(write, 16)! as unknown as SeriesDayDocument;
      expect(raw.kl ?? 0, levels.join()).toBe(levels.reduce((sum, level) => sum + { day: 1, hour: 2, quarter: 4, minute: 8 }[level], 0));
      const full = fullContentOf(raw);
      expect([...full.slots.keys()].sort()).toEqual([...write.slots.keys()].sort());
      for (const [path, slot] of write.slots) {
        const read = full.slots.get(path)!;
        expect(read.stats.n, path).toBe(slot.stats.n);
        expect(read.stats.min, path).toBe(slot.stats.min);
        expect(read.stats.max, path).toBe(slot.stats.max);
        expect(read.stats.sum, path).toBeCloseTo(slot.stats.sum, 9);
        expect(read.stats.sq, path).toBeCloseTo(slot.stats.sq, 6);
        expect([read.first, read.last], path).toEqual([slot.first, slot.last]);
        expect(read.sketch === null ? null : Object.fromEntries(read.sketch), path).toEqual(
          slot.sketch === null ? null : Object.fromEntries(slot.sketch),
        );
      }
      expect(new Map([...full.quarters].map(([path, bins]) => [path, Object.fromEntries(bins)]))).toEqual(
        new Map([...write.quarters].map(([path, bins]) => [path, Object.fromEntries(bins)])),
      );
      expect(full.recent).toEqual([...write.recent].sort((a, b) => a.t - b.t));
      expect([full.readings, full.first, full.last]).toEqual([write.readings, write.first, write.last]);
      // What a rollup merges: day and hour slots only.
      const day = dayContentOf(raw);
      expect([...day.slots.keys()].sort()).toEqual([...write.slots.keys()].filter((path) => !path.includes('.minutes.')).sort());
      expect(day.recent).toEqual([]);
    }
  });
});
