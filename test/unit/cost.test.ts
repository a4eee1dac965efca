/**
 * The price of a query (buckets per group x groups, an aggregate counting 1) and the
 * request budget it is reserved from: sums over the request, refuses at the first
 * reservation over the limit, and stays refused.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CodedError } from '../../src/errors.ts';
import { RequestBudget, type BudgetKind } from '../../src/query/budget.ts';
import { bucketsPerGroup, filterValueCount, queryCost } from '../../src/query/cost.ts';
import { granularity, GRANULARITY_NAMES } from '../../src/query/granularity.ts';
import { referenceStart } from '../helpers/reference.ts';

const at = (iso: string) => Date.parse(iso);
const MINUTE = 60_000;
const query = (name: (typeof GRANULARITY_NAMES)[number] | null, from: string, to: string) => ({
  from: at(from),
  to: at(to),
  granularity: name === null ? null : granularity(name),
});

describe('query cost', () => {
  it('counts every bucket a range overlaps, per group', () => {
    // 70 days of minutes: 70 x 1,440.
    expect(bucketsPerGroup(query('MINUTE', '2024-01-01T00:00:00Z', '2024-03-11T00:00:00Z'))).toBe(100_800);
    // [10:30, 12:00) overlaps the 10:00 and 11:00 hours.
    expect(bucketsPerGroup(query('HOUR', '2024-01-01T10:30:00Z', '2024-01-01T12:00:00Z'))).toBe(2);
    // [Jan 15, Mar 1) overlaps January and February.
    expect(bucketsPerGroup(query('MONTH', '2024-01-15T00:00:00Z', '2024-03-01T00:00:00Z'))).toBe(2);
    // 2024-01-01 is a Monday; [Mon, next Wed) overlaps two ISO weeks.
    expect(bucketsPerGroup(query('WEEK', '2024-01-01T00:00:00Z', '2024-01-10T00:00:00Z'))).toBe(2);
    expect(bucketsPerGroup(query('FIVE_MINUTES', '2024-01-01T00:03:00Z', '2024-01-01T00:11:00Z'))).toBe(3);
  });

  it('prices an aggregate at 1 per group and an empty range at 0', () => {
    expect(bucketsPerGroup(query(null, '2024-01-01T00:00:00Z', '2030-01-01T00:00:00Z'))).toBe(1);
    expect(bucketsPerGroup(query('MINUTE', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z'))).toBe(0);
    expect(bucketsPerGroup(query(null, '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z'))).toBe(0);
  });

  it('multiplies by the groups', () => {
    expect(queryCost(query('MINUTE', '2024-03-01T00:00:00Z', '2024-03-02T00:00:00Z'), 200)).toBe(288_000);
    expect(queryCost(query(null, '2024-03-01T00:00:00Z', '2024-03-02T00:00:00Z'), 200)).toBe(200);
    expect(queryCost(query('DAY', '2024-03-01T00:00:00Z', '2024-03-02T00:00:00Z'), 0)).toBe(0);
  });

  it('prices eight millennia of minutes without listing them', () => {
    // 2,932,532 days from 1970-01-01 to 9999-01-01, of 1,440 minutes each.
    expect(bucketsPerGroup(query('MINUTE', '1970-01-01T00:00:00Z', '9999-01-01T00:00:00Z'))).toBe(2_932_532 * 1_440);
  });

  it.each(GRANULARITY_NAMES)('%s: equals the buckets found by walking the range minute by minute', (name) => {
    const start = at('2023-12-20T00:00:00Z');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 * 24 * 60 }), fc.integer({ min: 1, max: 3 * 24 * 60 }), (offset, length) => {
        const from = start + offset * MINUTE;
        const to = from + length * MINUTE;
        const starts = new Set<number>();
        for (let ms = from; ms < to; ms += MINUTE) starts.add(referenceStart(ms, name));
        expect(bucketsPerGroup({ from, to, granularity: granularity(name) })).toBe(starts.size);
      }),
      { numRuns: 40 },
    );
  });

  it('counts the values of every tag filter', () => {
    expect(filterValueCount([{ in: ['a', 'b'] }, { in: ['c'] }])).toBe(3);
    expect(filterValueCount([])).toBe(0);
    expect(filterValueCount(null)).toBe(0);
    expect(filterValueCount(undefined)).toBe(0);
  });
});

describe('request budget', () => {
  const limits = { maxBuckets: 100_000, maxSeries: 1_000, maxFilterValues: 1_000 };
  const codeOf = (work: () => void) => {
    try {
      work();
    } catch (error) {
      return (error as CodedError).code;
    }
    return 'accepted';
  };

  it('sums reservations over the request and refuses the one that goes over', () => {
    const budget = new RequestBudget(limits);
    for (let i = 0; i < 9; i++) budget.reserve('buckets', 10_080);
    expect(budget.spent('buckets')).toBe(90_720);
    expect(budget.remaining('buckets')).toBe(9_280);
    expect(codeOf(() => budget.reserve('buckets', 10_080))).toBe('TOO_MANY_BUCKETS');
    expect(budget.refusal?.code).toBe('TOO_MANY_BUCKETS');
    expect(budget.refusal?.message).toContain('100,800 buckets');
    expect(budget.spent('buckets')).toBe(90_720);
  });

  it('accepts exactly the limit', () => {
    const budget = new RequestBudget(limits);
    budget.reserve('buckets', 99_999);
    budget.reserve('buckets', 1);
    expect(budget.remaining('buckets')).toBe(0);
    expect(budget.refusal).toBeUndefined();
    expect(codeOf(() => budget.reserve('buckets', 1))).toBe('TOO_MANY_BUCKETS');
  });

  it('stays refused: later reservations throw the same error, even small ones of another kind', () => {
    const budget = new RequestBudget(limits);
    let first: unknown;
    try {
      budget.reserve('filterValues', 10_000);
    } catch (error) {
      first = error;
    }
    expect((first as CodedError).code).toBe('TOO_MANY_FILTER_VALUES');
    let second: unknown;
    try {
      budget.reserve('buckets', 1);
    } catch (error) {
      second = error;
    }
    expect(second).toBe(first);
    expect(budget.remaining('series')).toBe(0);
  });

  it('checks without reserving', () => {
    const budget = new RequestBudget(limits);
    budget.check('buckets', 100_000);
    expect(budget.spent('buckets')).toBe(0);
    expect(codeOf(() => budget.check('buckets', 100_001))).toBe('TOO_MANY_BUCKETS');
    expect(budget.refusal).toBeDefined();
  });

  it('gives each kind its code', () => {
    const cases: [BudgetKind, number, string][] = [
      ['buckets', 100_001, 'TOO_MANY_BUCKETS'],
      ['series', 1_001, 'TOO_MANY_SERIES'],
      ['filterValues', 1_001, 'TOO_MANY_FILTER_VALUES'],
    ];
    for (const [kind, amount, code] of cases) {
      expect(codeOf(() => new RequestBudget(limits).reserve(kind, amount))).toBe(code);
      expect(codeOf(() => new RequestBudget(limits).refuse(kind, amount))).toBe(code);
    }
  });

  it('accepts a sequence exactly while its running total stays within the limit', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 30 }), fc.integer({ min: 1, max: 300 }), (amounts, max) => {
        const budget = new RequestBudget({ maxBuckets: max, maxSeries: 1, maxFilterValues: 1 });
        let total = 0;
        let refused = false;
        for (const amount of amounts) {
          const outcome = codeOf(() => budget.reserve('buckets', amount));
          if (!refused && total + amount <= max) {
            expect(outcome).toBe('accepted');
            total += amount;
          } else {
            expect(outcome).toBe('TOO_MANY_BUCKETS');
            refused = true;
          }
        }
        expect(budget.spent('buckets')).toBe(total);
      }),
    );
  });
});
