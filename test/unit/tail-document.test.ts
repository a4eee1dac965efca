/**
 * A reader's tail documents are built only as far as its pipeline reads them: planned
 * with only the levels the paths reach (`levelsWithin`, src/documents/encode.ts) and
 * built without what the paths drop (`slotFormDocument` with `within`). Once projected to the
 * pipeline's paths (`projectDocument`, src/documents/encode.ts), such a document must equal
 * the whole document of the whole plan projected to the same paths, key order included,
 * for any readings of a gauge or a counter and any paths, present in the document or not.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateReadings, type ReadingInput } from '../../src/record/validate.ts';
import { slotFormDocument, levelsWithin, projectDocument } from '../../src/documents/encode.ts';
import { planContents } from '../../src/documents/from-readings.ts';
import { pathTree } from '../../src/documents/selection.ts';

const DAY = 86_400_000;
const START = Date.UTC(2024, 0, 1);

/** A reading of host `host` at `offset` ms into the two days from START, with `v` and, when given, `w`. */
const input = (host: number, offset: number, v: number, w: number | null): ReadingInput => ({
  metric: 'tail_doc',
  tags: [{ key: 'host', value: `h${host}` }],
  time: new Date(START + offset),
  fields: [{ name: 'v', value: v }, ...(w === null ? [] : [{ name: 'w', value: w }])],
});

const readingArb = fc.tuple(
  fc.integer({ min: 0, max: 2 }),
  fc.integer({ min: 0, max: 2 * DAY - 1 }),
  fc.integer({ min: -50, max: 50 }),
  fc.option(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { nil: null }),
);

/** Every path of `doc` and every prefix of one, dotted (the keys of embedded documents that are not values of a slot included). */
function pathsOf(doc: unknown, prefix = '', into: string[] = []): string[] {
  if (doc === null || typeof doc !== 'object' || doc instanceof Date || Array.isArray(doc) || '_bsontype' in doc) return into;
  for (const [key, value] of Object.entries(doc)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    into.push(path);
    pathsOf(value, path, into);
  }
  return into;
}

/** A projection as the database would send it back, for comparing with key order. */
const asJson = (doc: unknown) => JSON.stringify(doc);

describe('a tail document built within the paths a pipeline reads', () => {
  it('projects to the same document as the whole one, for any readings and any paths', () => {
    fc.assert(
      fc.property(
        fc.array(readingArb, { minLength: 1, maxLength: 60 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.constantFrom('hours.99.fields.v', 'hours.2.minutes', 'fields.zz', 'q.hours.3.quarters', 'nothing', 'recent'),
        fc.constantFrom('gauge' as const, 'counter' as const),
        (readings, picks, absent, kind) => {
          const valid = validateReadings(
            readings.map(([host, offset, v, w]) => input(host, offset, v, w)),
            { maxBatchSize: 1000, receivedAt: 0 },
          );
          const plan = planContents(valid, undefined, () => kind);
          for (const write of plan.days) {
            const whole = slotFormDocument(write);
            const candidates = pathsOf(whole);
            const paths = [...new Set([...picks.map((pick) => candidates[pick % candidates.length]!), absent])];
            const tree = pathTree(paths);
            const expected = projectDocument(whole, tree);
            const built = projectDocument(slotFormDocument(write, undefined, tree), tree);
            expect(built).toEqual(expected);
            expect(asJson(built)).toBe(asJson(expected));
            // Planned with only the levels the paths reach, the same once projected.
            const within = planContents(valid, undefined, () => kind, levelsWithin(tree)).days.find(
              (other) => other.series === write.series && other.date.getTime() === write.date.getTime(),
            )!;
            const planned = projectDocument(slotFormDocument(within, undefined, tree), tree);
            expect(asJson(planned)).toBe(asJson(expected));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('plans only the levels the paths reach', () => {
    expect(levelsWithin(null)).toEqual({ hours: true, minutes: true, sketches: true, recent: true });
    expect(levelsWithin(pathTree(['metric', 'fields.v.n']))).toEqual({ hours: false, minutes: false, sketches: false, recent: false });
    expect(levelsWithin(pathTree(['hours.3.fields.v', 'recent']))).toEqual({ hours: true, minutes: false, sketches: false, recent: true });
    expect(levelsWithin(pathTree(['hours.3.minutes.4.v']))).toEqual({ hours: true, minutes: true, sketches: false, recent: false });
    expect(levelsWithin(pathTree(['hours.3']))).toEqual({ hours: true, minutes: true, sketches: false, recent: false });
    expect(levelsWithin(pathTree(['fields.v', 'q.fields.v']))).toEqual({ hours: true, minutes: true, sketches: true, recent: true });
    const plan = planContents(
      validateReadings([input(0, 3_600_000, 5, 1), input(0, 3_660_000, 7, null), input(0, 7_260_000, 10, null)], {
        maxBatchSize: 10,
        receivedAt: 0,
      }),
      undefined,
      () => 'counter',
      levelsWithin(pathTree(['fields.v'])),
    );
    expect([...plan.days[0]!.slots.keys()]).toEqual(['fields.v', 'fields.w']);
    // The counter's increase over the day: 7 - 5 within hour 1, then 10 - 7 across hours 1 and 2.
    expect(plan.days[0]!.slots.get('fields.v')).toMatchObject({ stats: { n: 3, sum: 22 }, sketch: null, inc: 5 });
    expect(plan.days[0]!.quarters.size).toBe(0);
    expect(plan.days[0]!.recent).toEqual([]);
  });

  it('leaves out what the paths do not reach: minute slots and sketches for a day total', () => {
    const plan = planContents(
      validateReadings([input(0, 3_600_000, 5, 1), input(0, 3_660_000, 7, null), input(0, 7_300_000, -2, 4)], {
        maxBatchSize: 10,
        receivedAt: 0,
      }),
    );
    const tree = pathTree(['metric', 'date', 'fields.v.n', 'fields.v.sum']);
    const built = slotFormDocument(plan.days[0]!, undefined, tree);
    expect(Object.keys(built.hours as object)).toEqual([]);
    expect(built.q).toBeUndefined();
    expect(built.recent).toBeUndefined();
    expect(projectDocument(built, tree)).toEqual({
      metric: 'tail_doc',
      date: new Date(START),
      fields: { v: { n: expect.anything(), sum: expect.anything() } },
    });
    const fields = (projectDocument(built, tree).fields as { v: { n: { valueOf(): number }; sum: { valueOf(): number } } }).v;
    expect([fields.n.valueOf(), fields.sum.valueOf()]).toEqual([3, 10]);
  });
});
