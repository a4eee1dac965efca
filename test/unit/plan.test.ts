import { Double } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { dayUpdate, planWrites } from '../../src/record/plan.ts';
import { validateReadings, type ReadingInput } from '../../src/record/validate.ts';

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

describe('planWrites', () => {
  it('merges a batch into one write per series and day, every level at once', () => {
    const plan = planWrites(
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
    expect(plan.buckets).toHaveLength(3);
    const las5 = plan.buckets.find((w) => w.tags.origin === 'LAS' && w.date.toISOString().startsWith('2001-01-05'))!;
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

  it('produces one update with $inc, $min and $max over all levels, numbers as doubles', () => {
    const [write] = planWrites(validate([reading('2001-01-05T07:30:10Z', 'LAS', 5, 2176)])).buckets;
    const update = dayUpdate(write!, true) as Record<string, Record<string, unknown>>;
    expect(
      Object.keys(update.$inc!)
        .filter((path) => !path.startsWith('q.') && path !== 'readings')
        .sort(),
    ).toEqual(
      ['fields', 'hours.7.fields', 'hours.7.minutes.30']
        .flatMap((level) => ['delay', 'distance'].flatMap((f) => ['n', 'sum', 'sq'].map((s) => `${level}.${f}.${s}`)))
        .sort(),
    );
    expect(update.$inc!.readings).toBe(1);
    expect(update.$min!['hours.7.minutes.30.delay.first']).toEqual({ t: new Date('2001-01-05T07:30:10Z'), v: new Double(5) });
    expect(update.$inc!['hours.7.minutes.30.delay.sum']).toEqual(new Double(5));
    expect(update.$min!['fields.distance.min']).toEqual(new Double(2176));
    expect(update.$max!.last).toEqual(new Date('2001-01-05T07:30:10Z'));
    expect(update.$setOnInsert).toEqual({
      metric: 'flights',
      tags: { destination: 'PHL', origin: 'LAS' },
      tagPairs: ['destination=PHL', 'origin=LAS'],
      v: 2,
    });
    expect((dayUpdate(write!, false) as Record<string, unknown>).$setOnInsert).toBeUndefined();
  });

  it('treats the same tags in another order as the same series', () => {
    const a = reading('2001-01-05T07:30:00Z', 'LAS', 1);
    const b = { ...a, tags: [...a.tags!].reverse() };
    const plan = planWrites(validate([a, b]));
    expect(plan.series).toHaveLength(1);
    expect(plan.series[0]?.key).toBe('flights,destination=PHL,origin=LAS');
  });
});
