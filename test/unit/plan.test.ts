import { describe, expect, it } from 'vitest';
import { addToSketch } from '../../src/model/sketch.ts';
import type { SlotLevel } from '../../src/model/statistics-settings.ts';
import { validateReadings, type ReadingInput } from '../../src/record/validate.ts';
import { planContents } from '../../src/documents/from-readings.ts';

const reading = (time: string, origin: string, delay: number, distance = 100): ReadingInput => ({
  metric: 'flights',
  tags: [
    { key: 'origin', value: origin },
    { key: 'destination', value: 'PHL' },
  ],
  time: new Date(time),
  fields: [
    { name: 'delay', value: delay },
    { name: 'distance', value: distance },
  ],
});
const validate = (inputs: ReadingInput[]) => validateReadings(inputs, { maxBatchSize: 100, receivedAt: 0 });

describe('planContents', () => {
  it('merges a batch into one write per series and day, every level at once', () => {
    const plan = planContents(
      validate([
        reading('2001-01-05T07:30:10Z', 'LAS', 5),
        reading('2001-01-05T07:30:50Z', 'LAS', -3),
        reading('2001-01-05T19:02:00Z', 'LAS', 10),
        reading('2001-01-04T23:59:00Z', 'LAS', 1),
        reading('2001-01-05T07:30:00Z', 'PHX', 2),
      ]),
    );
    expect(plan.readings).toBe(5);
    expect(plan.series).toHaveLength(2);
    expect(plan.days).toHaveLength(3);
    const las5 = plan.days.find((w) => w.tags.origin === 'LAS' && w.date.toISOString().startsWith('2001-01-05'))!;
    expect(las5.readings).toBe(3);
    const at = (time: string, v: number) => ({ t: Date.parse(time), v });
    expect(las5.slots.get('fields.delay')).toMatchObject({
      stats: { n: 3, sum: 12, min: -3, max: 10, sq: 25 + 9 + 100 },
      first: at('2001-01-05T07:30:10Z', 5),
      last: at('2001-01-05T19:02:00Z', 10),
    });
    expect(las5.slots.get('hours.7.fields.delay')).toMatchObject({
      stats: { n: 2, sum: 2, min: -3, max: 5, sq: 34 },
      first: at('2001-01-05T07:30:10Z', 5),
      last: at('2001-01-05T07:30:50Z', -3),
    });
    expect(las5.slots.get('hours.7.minutes.30.delay')?.stats).toEqual({ n: 2, sum: 2, min: -3, max: 5, sq: 34 });
    expect(las5.slots.get('hours.19.minutes.2.delay')?.stats).toEqual({ n: 1, sum: 10, min: 10, max: 10, sq: 100 });
    // Sketches at the day and hour levels by default, not per minute.
    expect(las5.slots.get('fields.delay')?.sketch).toBeInstanceOf(Map);
    expect(las5.slots.get('hours.7.fields.delay')?.sketch).toBeInstanceOf(Map);
    expect(las5.slots.get('hours.7.minutes.30.delay')?.sketch).toBeNull();
    expect(las5.recent.map((r) => r.f.delay)).toEqual([5, -3, 10]);
    expect([las5.first, las5.last]).toEqual([Date.parse('2001-01-05T07:30:10Z'), Date.parse('2001-01-05T19:02:00Z')]);
  });

  it('sketches every level a metric keeps with exactly the values of its slot, quarter hours included (day and hour merged from them)', () => {
    // 300 readings over two days, at every minute of the hour, two hosts.
    const inputs = Array.from({ length: 300 }, (_, k) =>
      reading(
        new Date(Date.UTC(2001, 0, 5) + ((k * 7919) % 2880) * 60_000 + (k % 60) * 1000).toISOString(),
        k % 2 === 0 ? 'LAS' : 'PHX',
        ((k * 37) % 41) - 20,
      ),
    );
    const readings = validate(inputs.slice(0, 100)).concat(validate(inputs.slice(100, 200)), validate(inputs.slice(200)));
    for (const sketchLevels of [
      ['day', 'hour', 'quarter'],
      ['day', 'quarter'],
      ['hour', 'quarter', 'minute'],
      ['day', 'hour'],
    ] as SlotLevel[][]) {
      const plan = planContents(readings, () => ({ sketchLevels, sketchFields: ['delay'], latestReadings: 0 }));
      // The plain loop: each delay value in the bins of its day, hour, quarter hour and minute (ISO text prefixes).
      const expected = new Map<string, Map<string, number>>();
      for (const input of inputs) {
        const iso = (input.time as Date).toISOString();
        const minute = Number(iso.slice(14, 16));
        const slots: [SlotLevel, string][] = [
          ['day', `${input.tags![0]!.value} ${iso.slice(0, 10)}`],
          ['hour', `${input.tags![0]!.value} ${iso.slice(0, 13)}`],
          ['quarter', `${input.tags![0]!.value} ${iso.slice(0, 13)} q${Math.floor(minute / 15)}`],
          ['minute', `${input.tags![0]!.value} ${iso.slice(0, 16)}`],
        ];
        for (const [level, slot] of slots) {
          if (!sketchLevels.includes(level)) continue;
          const bins = expected.get(slot) ?? new Map<string, number>();
          addToSketch(bins, input.fields[0]!.value);
          expected.set(slot, bins);
        }
      }
      const actual = new Map<string, Map<string, number>>();
      for (const write of plan.days) {
        const prefix = `${write.tags.origin} ${write.date.toISOString().slice(0, 10)}`;
        const hourText = (hour: string) => `${prefix}T${hour.padStart(2, '0')}`;
        for (const [path, slot] of write.slots) {
          if (slot.sketch === null) continue;
          const [, hour, , minute] = path.split('.');
          const name = path.startsWith('fields.')
            ? prefix
            : path.includes('.minutes.')
              ? `${hourText(hour!)}:${minute!.padStart(2, '0')}`
              : hourText(hour!);
          actual.set(name, slot.sketch);
        }
        for (const [path, bins] of write.quarters) {
          const [, hour, , quarter] = path.split('.');
          actual.set(`${hourText(hour!)} q${quarter}`, bins);
        }
        expect(write.slots.get('fields.distance')?.sketch, 'an unsketched field').toBeNull();
      }
      expect(actual, sketchLevels.join(',')).toEqual(expected);
    }
  });

  it('gives every slot of every level the statistics of exactly its readings, over metrics sharing field names, days, hours and minutes', () => {
    // 600 readings of two metrics that share the field `delay`, over two days, each
    // reading at some minute of some hour; a field only some readings carry.
    const inputs: ReadingInput[] = Array.from({ length: 600 }, (_, k) => ({
      metric: k % 3 === 0 ? 'arrivals' : 'flights',
      tags: [{ key: 'origin', value: k % 2 === 0 ? 'LAS' : 'PHX' }],
      time: new Date(Date.UTC(2001, 0, 5) + ((k * 7919) % 2880) * 60_000 + (k % 60) * 1000),
      fields: [{ name: 'delay', value: ((k * 37) % 41) - 20 }, ...(k % 5 === 0 ? [{ name: 'taxi', value: k % 17 }] : [])],
    }));
    const readings = [0, 100, 200, 300, 400, 500].flatMap((from) => validate(inputs.slice(from, from + 100)));
    const plan = planContents(readings);
    // The plain loop: count, sum, min and max of each (metric, origin, slot) from ISO text prefixes.
    const expected = new Map<string, { n: number; sum: number; min: number; max: number }>();
    for (const input of inputs) {
      const iso = (input.time as Date).toISOString();
      const day = iso.slice(0, 10);
      const hour = Number(iso.slice(11, 13));
      const minute = Number(iso.slice(14, 16));
      for (const { name, value } of input.fields) {
        for (const path of [`fields.${name}`, `hours.${hour}.fields.${name}`, `hours.${hour}.minutes.${minute}.${name}`]) {
          const key = `${input.metric} ${input.tags![0]!.value} ${day} ${path}`;
          const stats = expected.get(key) ?? { n: 0, sum: 0, min: Infinity, max: -Infinity };
          expected.set(key, { n: stats.n + 1, sum: stats.sum + value, min: Math.min(stats.min, value), max: Math.max(stats.max, value) });
        }
      }
    }
    const actual = new Map<string, { n: number; sum: number; min: number; max: number }>();
    for (const write of plan.days) {
      for (const [path, { stats }] of write.slots) {
        const key = `${write.metric} ${write.tags.origin} ${write.date.toISOString().slice(0, 10)} ${path}`;
        actual.set(key, { n: stats.n, sum: stats.sum, min: stats.min, max: stats.max });
      }
    }
    expect(actual.size).toBe(expected.size);
    expect(actual).toEqual(expected);
  });

  it('treats the same tags in another order as the same series', () => {
    const a = reading('2001-01-05T07:30:00Z', 'LAS', 1);
    const b = { ...a, tags: [...a.tags!].reverse() };
    const plan = planContents(validate([a, b]));
    expect(plan.series).toHaveLength(1);
    expect(plan.series[0]?.key).toBe('flights,destination=PHL,origin=LAS');
  });
});
