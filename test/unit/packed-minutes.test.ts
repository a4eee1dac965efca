/**
 * Packed minutes (`PackedMinutes`) in Node: `packHours` packs an hour exactly when it
 * can (enough minutes, every reading with every field, no counter increase, not too
 * many empty minutes), `unpackedMinutes` gives back the minute slots, and a compaction's
 * reading of a document (`fullContentOf`) is the same packed or not. Checked against a
 * plain loop over the readings.
 */
import { BSON } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { DEFAULT_STATISTICS } from '../../src/model/statistics-settings.ts';
import { validateReadings, type ReadingInput } from '../../src/record/validate.ts';
import { random } from '../helpers/random.ts';
import type { SeriesDayDocument, FieldStats, PackedMinutes } from '../../src/documents/series-day.ts';
import { packHours, unpackedMinutes } from '../../src/documents/packed-minutes.ts';
import { planContents } from '../../src/documents/from-readings.ts';
import { slotFormDocument } from '../../src/documents/encode.ts';
import { fullContentOf } from '../../src/documents/decode.ts';

const DAY = Date.UTC(2016, 0, 1);

/** Readings of one host at `seconds` after 07:00 on 2016-01-01, fields `x` and `y` (y left out where `without` says). */
function readings(seconds: number[], seed: number, without: (i: number) => boolean = () => false): ReadingInput[] {
  const next = random(seed);
  return seconds.map((second, i) => ({
    metric: 'cpu',
    tags: [{ key: 'host', value: 'h1' }],
    time: new Date(DAY + 7 * 3_600_000 + second * 1000),
    fields: [
      { name: 'x', value: Math.round(next() * 1000) / 8 },
      ...(without(i) ? [] : [{ name: 'y', value: Math.round(next() * 100) - 50 }]),
    ],
  }));
}

/** The document a fold writes of `inputs` (one series-day) with hours of at least `least` minutes packed, as the driver reads it back. */
function documentOf(inputs: ReadingInput[], least: number): SeriesDayDocument {
  const plan = planContents(validateReadings(inputs, { maxBatchSize: 10_000, receivedAt: 0 }), () => DEFAULT_STATISTICS);
  expect(plan.days).toHaveLength(1);
  const doc = slotFormDocument(plan.days[0]!);
  packHours(doc, least);
  return BSON.deserialize(BSON.serialize(doc)) as SeriesDayDocument;
}

/** A plain loop's minute slots of hour 7: minute -> field -> statistics with first and last readings. */
function plainMinutes(inputs: ReadingInput[]): Record<string, FieldStats> {
  const minutes: Record<string, FieldStats> = {};
  const sorted = [...inputs].sort((a, b) => a.time!.getTime() - b.time!.getTime());
  for (const input of sorted) {
    const t = input.time!;
    const minute = String(t.getUTCMinutes());
    minutes[minute] ??= {};
    for (const { name, value } of input.fields) {
      const s = minutes[minute]![name];
      if (s === undefined) {
        minutes[minute]![name] = {
          n: 1,
          sum: value,
          sq: value * value,
          min: value,
          max: value,
          first: { t, v: value },
          last: { t, v: value },
        };
        continue;
      }
      s.n += 1;
      s.sum += value;
      s.sq += value * value;
      s.min = Math.min(s.min, value);
      s.max = Math.max(s.max, value);
      s.last = { t, v: value };
    }
  }
  return minutes;
}

/** Every 10 s from 07:00:00 for `minutes` minutes. */
const everyTenSeconds = (minutes: number) => Array.from({ length: minutes * 6 }, (_, i) => i * 10);

describe('packHours and unpackedMinutes', () => {
  it('pack an hour where every reading has every field, and give back the minutes of a plain loop', () => {
    const inputs = readings(
      everyTenSeconds(50).filter((s) => s < 600 || s >= 900),
      1,
    );
    const doc = documentOf(inputs, 4);
    const hour = doc.hours['7']!;
    expect(hour.minutes).toBeUndefined();
    const mc = hour.mc as PackedMinutes;
    // Minutes 0 to 49, 10 to 14 without readings.
    expect(mc.n).toHaveLength(50);
    expect(mc.n.filter((n) => n === 0)).toHaveLength(5);
    expect(Object.keys(mc.f).sort()).toEqual(['x', 'y']);
    // Times as ms since the hour's start: minute 15 from 07:15:00 to 07:15:50.
    expect([mc.tf[15], mc.tl[15], mc.tf[10], mc.n[10]]).toEqual([900_000, 950_000, null, 0]);
    const unpacked = unpackedMinutes(mc, DAY + 7 * 3_600_000);
    const plain = plainMinutes(inputs);
    expect(Object.keys(unpacked).sort()).toEqual(Object.keys(plain).sort());
    for (const [minute, fields] of Object.entries(plain)) {
      for (const [field, stats] of Object.entries(fields)) {
        const got = unpacked[minute]![field]!;
        expect({ ...got, sum: 0, sq: 0 }, `${minute}.${field}`).toEqual({ ...stats, sum: 0, sq: 0 });
        expect(got.sum).toBeCloseTo(stats.sum, 9);
        expect(got.sq).toBeCloseTo(stats.sq, 6);
      }
    }
  });

  it('pack minutes whose fields share count and times though readings skip fields, each field exact', () => {
    // Each minute: both fields at :00, x alone at :10, y alone at :20, both at :30: each field 3 readings from :00 to :30.
    const seconds = Array.from({ length: 5 }, (_, minute) => [0, 10, 20, 30].map((s) => minute * 60 + s)).flat();
    const inputs = readings(seconds, 9).map((input, i) =>
      i % 4 === 1
        ? { ...input, fields: input.fields.filter((f) => f.name === 'x') }
        : i % 4 === 2
          ? { ...input, fields: input.fields.filter((f) => f.name === 'y') }
          : input,
    );
    const mc = documentOf(inputs, 2).hours['7']!.mc!;
    expect(mc.n).toEqual([3, 3, 3, 3, 3]);
    const unpacked = unpackedMinutes(mc, DAY + 7 * 3_600_000);
    for (const [minute, fields] of Object.entries(plainMinutes(inputs))) {
      for (const [field, stats] of Object.entries(fields)) {
        const got = unpacked[minute]![field]!;
        expect({ ...got, sum: 0, sq: 0 }, `${minute}.${field}`).toEqual({ ...stats, sum: 0, sq: 0 });
        expect(got.sum).toBeCloseTo(stats.sum, 9);
        expect(got.sq).toBeCloseTo(stats.sq, 6);
      }
    }
  });

  it('leave an hour in the object form when it cannot be packed', () => {
    // Fewer minutes than the least.
    expect(documentOf(readings(everyTenSeconds(3), 2), 4).hours['7']!.mc).toBeUndefined();
    expect(documentOf(readings(everyTenSeconds(3), 2), 3).hours['7']!.mc).toBeDefined();
    // A reading without field y: the fields' counts differ in its minute.
    const gap = documentOf(
      readings(everyTenSeconds(20), 3, (i) => i === 40),
      4,
    ).hours['7']!;
    expect([gap.mc, Object.keys(gap.minutes!).length]).toEqual([undefined, 20]);
    // Field y only in some minutes.
    expect(
      documentOf(
        readings(everyTenSeconds(20), 4, (i) => i < 6),
        4,
      ).hours['7']!.mc,
    ).toBeUndefined();
    // More empty minutes than minutes with readings before the last: 6 minutes up to minute 49.
    const spread = documentOf(readings([0, 600, 1200, 1800, 2400, 2940], 5), 4).hours['7']!;
    expect(spread.mc).toBeUndefined();
    expect(documentOf(readings([0, 600, 1200, 1800, 2400, 2940], 5), 4).hours['7']!.minutes).toBeDefined();
    // Packing off.
    expect(documentOf(readings(everyTenSeconds(30), 6), 0).hours['7']!.mc).toBeUndefined();
  });

  it('leave a counter hour in the object form: its increases (`inc`) are not packed', () => {
    const plan = planContents(
      validateReadings(readings(everyTenSeconds(10), 7), { maxBatchSize: 10_000, receivedAt: 0 }),
      () => DEFAULT_STATISTICS,
      () => 'counter',
    );
    const doc = slotFormDocument(plan.days[0]!);
    packHours(doc, 4);
    const hour = (doc.hours as Record<string, { mc?: unknown; minutes?: Record<string, FieldStats> }>)['7']!;
    expect(hour.mc).toBeUndefined();
    expect(hour.minutes?.['3']?.x?.inc).toBeDefined();
  });

  it('read back by a compaction as the same write, packed or not', () => {
    const inputs = readings(everyTenSeconds(45), 8);
    const packed = fullContentOf(documentOf(inputs, 4));
    const objects = fullContentOf(documentOf(inputs, 0));
    expect([...packed.slots.keys()].sort()).toEqual([...objects.slots.keys()].sort());
    for (const [path, slot] of objects.slots) expect(packed.slots.get(path), path).toEqual(slot);
    expect(packed.slots.size).toBe(2 + 2 + 45 * 2);
  });
});
