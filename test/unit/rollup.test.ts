import { describe, expect, it } from 'vitest';
import { chooseRollup, dayKey, rollupCollectionName, type RollupDefinition } from '../../src/model/rollup.ts';
import { validateReadings, type ReadingInput } from '../../src/record/validate.ts';
import { planContents } from '../../src/documents/from-readings.ts';
import { slotFormDocument } from '../../src/documents/encode.ts';
import { rollupContents, planRollups } from '../../src/documents/rollup.ts';
import type { SeriesDayDocument } from '../../src/documents/series-day.ts';

const reading = (time: string, origin: string, destination: string, delay: number): ReadingInput => ({
  metric: 'flights',
  tags: [
    { key: 'origin', value: origin },
    { key: 'destination', value: destination },
  ],
  time: new Date(time),
  fields: [{ name: 'delay', value: delay }],
});
const validate = (inputs: ReadingInput[]) => validateReadings(inputs, { maxBatchSize: 100, receivedAt: 0 });

const rollup = (name: string, tagKeys: string[], extra: Partial<RollupDefinition> = {}): RollupDefinition => ({
  _id: `flights/${name}`,
  metric: 'flights',
  name,
  tagKeys,
  collection: rollupCollectionName('flights', tagKeys),
  state: 'ready',
  createdAt: new Date(0),
  dirty: {},
  ...extra,
});

const JAN5 = Date.UTC(2001, 0, 5);

describe('rollupContents', () => {
  const inputs = [
    reading('2001-01-05T07:30:10Z', 'LAS', 'PHL', 5),
    reading('2001-01-05T07:45:00Z', 'LAS', 'JFK', -3),
    reading('2001-01-05T19:02:00Z', 'LAS', 'PHL', 10),
    reading('2001-01-05T07:10:00Z', 'PHX', 'PHL', 2),
    reading('2001-01-06T01:00:00Z', 'LAS', 'JFK', 7),
  ];
  const plan = planContents(validate(inputs));

  it('merges the series sharing the kept tag values per day: day, hour and quarter-hour slots, no minutes', () => {
    const writes = rollupContents(plan.days, rollup('by_origin', ['origin']));
    expect(writes).toHaveLength(3);
    const las5 = writes.find((w) => w.tags.origin === 'LAS' && w.date.getTime() === JAN5)!;
    expect(las5.tags).toEqual({ origin: 'LAS' });
    expect(las5.tagPairs).toEqual(['origin=LAS']);
    expect(las5.readings).toBe(3);
    expect(las5.slots.get('fields.delay')).toMatchObject({
      stats: { n: 3, sum: 12, min: -3, max: 10, sq: 25 + 9 + 100 },
      first: { t: Date.parse('2001-01-05T07:30:10Z'), v: 5 },
      last: { t: Date.parse('2001-01-05T19:02:00Z'), v: 10 },
    });
    expect(las5.slots.get('hours.7.fields.delay')?.stats).toEqual({ n: 2, sum: 2, min: -3, max: 5, sq: 34 });
    expect([...las5.slots.keys()].some((path) => path.includes('minutes'))).toBe(false);
    // The minutes merged into their quarter hours: 07:30:10 in quarter 2, 07:45 in quarter 3, 19:02 in quarter 0.
    expect(
      [...las5.slots.entries()]
        .filter(([path]) => path.includes('.quarters.'))
        .map(([path, slot]) => [path, slot.stats.n, slot.stats.sum])
        .sort(),
    ).toEqual([
      ['hours.19.quarters.0.delay', 1, 10],
      ['hours.7.quarters.2.delay', 1, 5],
      ['hours.7.quarters.3.delay', 1, -3],
    ]);
    expect(las5.slots.get('hours.7.quarters.2.delay')).toMatchObject({
      first: { t: Date.parse('2001-01-05T07:30:10Z'), v: 5 },
      last: { t: Date.parse('2001-01-05T07:30:10Z'), v: 5 },
      sketch: null,
    });
    expect(las5.recent).toEqual([]);
    // The batch's own writes are untouched by the merge.
    const phl = plan.days.find((w) => w.tags.destination === 'PHL' && w.tags.origin === 'LAS' && w.date.getTime() === JAN5)!;
    expect(phl.slots.get('fields.delay')?.stats.n).toBe(2);
  });

  it('merges the whole metric per day with no tag keys, sketches included', () => {
    const writes = rollupContents(plan.days, rollup('all', []));
    expect(writes.map((w) => [w.date.getTime(), w.readings])).toEqual([
      [JAN5, 4],
      [JAN5 + 86_400_000, 1],
    ]);
    const day = writes[0]!.slots.get('fields.delay')!;
    expect(day.stats.n).toBe(4);
    expect([...(day.sketch?.values() ?? [])].reduce((a, b) => a + b, 0)).toBe(4);
  });
});

describe('planRollups', () => {
  const plan = planContents(validate([reading('2001-01-05T07:30:10Z', 'LAS', 'PHL', 5), reading('2001-01-06T07:30:10Z', 'LAS', 'PHL', 6)]));

  it('writes ready, clean days directly on a first attempt', () => {
    const result = planRollups(plan, [rollup('all', [])], { retry: false });
    expect(result.writes[0]?.writes).toHaveLength(2);
    expect(result.dirty).toEqual([]);
  });

  it('marks the days dirty for a retry, a building rollup, and a dirty day', () => {
    expect(planRollups(plan, [rollup('all', [])], { retry: true }).dirty[0]?.days).toEqual([JAN5, JAN5 + 86_400_000]);
    expect(planRollups(plan, [rollup('all', [], { state: 'building' })], { retry: false }).writes).toEqual([]);
    const dirtyDay = planRollups(plan, [rollup('all', [], { dirty: { [dayKey(JAN5)]: { n: 1, at: new Date() } } })], { retry: false });
    expect(dirtyDay.dirty[0]?.days).toEqual([JAN5]);
    expect(dirtyDay.writes[0]?.writes.map((w) => w.date.getTime())).toEqual([JAN5 + 86_400_000]);
  });

  it('ignores rollups of other metrics', () => {
    expect(planRollups(plan, [{ ...rollup('all', []), metric: 'cpu' }], { retry: false })).toEqual({ writes: [], dirty: [] });
  });
});

describe('chooseRollup', () => {
  const range = { from: JAN5, to: JAN5 + 2 * 86_400_000 };
  const rollups = [rollup('by_route', ['destination', 'origin']), rollup('by_origin', ['origin']), rollup('all', [])];

  it('picks the rollup with the fewest tag keys that keeps the filtered and grouped keys', () => {
    expect(chooseRollup(rollups, { ...range, filterKeys: [], groupKeys: [] })?.name).toBe('all');
    expect(chooseRollup(rollups, { ...range, filterKeys: ['origin'], groupKeys: [] })?.name).toBe('by_origin');
    expect(chooseRollup(rollups, { ...range, filterKeys: ['origin'], groupKeys: ['destination'] })?.name).toBe('by_route');
    expect(chooseRollup(rollups, { ...range, filterKeys: ['carrier'], groupKeys: [] })).toBeNull();
  });

  it('skips building rollups and those with a dirty day in the range', () => {
    const dirty = { [dayKey(JAN5 + 86_400_000)]: { n: 1, at: new Date() } };
    const some = [rollup('by_origin', ['origin']), rollup('all', [], { dirty }), rollup('b', ['destination'], { state: 'building' })];
    expect(chooseRollup(some, { ...range, filterKeys: [], groupKeys: [] })?.name).toBe('by_origin');
    expect(chooseRollup(some, { from: JAN5, to: JAN5 + 86_400_000, filterKeys: [], groupKeys: [] })?.name).toBe('all');
    expect(chooseRollup(some, { ...range, filterKeys: ['destination'], groupKeys: [] })).toBeNull();
  });
});

describe('slotFormDocument', () => {
  it('builds the document an upsert of the write would store, with the same nesting', () => {
    const plan = planContents(
      validate([reading('2001-01-05T07:30:10Z', 'LAS', 'PHL', 5), reading('2001-01-05T07:31:00Z', 'LAS', 'PHL', -1)]),
    );
    const doc = slotFormDocument(plan.days[0]!, 1) as unknown as SeriesDayDocument;
    expect(doc).toMatchObject({ metric: 'flights', tags: { origin: 'LAS', destination: 'PHL' }, v: 1, readings: 2, date: new Date(JAN5) });
    expect(Number(doc.fields.delay!.n)).toBe(2);
    expect(Number(doc.hours['7']!.fields.delay!.sum)).toBe(4);
    expect(Number(doc.hours['7']!.minutes!['31']!.delay!.min)).toBe(-1);
    expect(doc.fields.delay!.first).toMatchObject({ t: new Date('2001-01-05T07:30:10Z') });
    expect(Object.values(doc.q!.fields!.delay!).reduce((a, b) => a + b, 0)).toBe(2);
    expect(doc.recent!.map((r) => r.t.toISOString())).toEqual(['2001-01-05T07:30:10.000Z', '2001-01-05T07:31:00.000Z']);
  });
});
