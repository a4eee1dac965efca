import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.ts';
import {
  detailFrom,
  firstExpiredRead,
  horizonAt,
  NO_HORIZONS,
  parseRetentionPolicy,
  policyProblem,
  targetHorizons,
} from '../../src/model/retention-policy.ts';

const at = (iso: string) => Date.parse(iso);

describe('retention policy rules', () => {
  it('accepts whole days with minutes <= hours <= days, null as forever', () => {
    for (const policy of [
      { minutes: null, hours: null, days: null },
      { minutes: 30, hours: 365, days: null },
      { minutes: 30, hours: null, days: null },
      { minutes: 7, hours: 7, days: 7 },
      { minutes: 1, hours: 2, days: 3 },
    ]) {
      expect(policyProblem(policy)).toBeNull();
    }
  });

  it('names the argument at fault', () => {
    expect(policyProblem({ minutes: -1, hours: null, days: null })?.argument).toBe('minutes');
    expect(policyProblem({ minutes: 0, hours: null, days: null })?.argument).toBe('minutes');
    expect(policyProblem({ minutes: 1.5, hours: null, days: null })?.argument).toBe('minutes');
    expect(policyProblem({ minutes: null, hours: 40_000, days: null })?.argument).toBe('hours');
    expect(policyProblem({ minutes: 30, hours: 10, days: null })?.argument).toBe('hours');
    // Minutes forever but hours removed: the minutes live inside the hours.
    expect(policyProblem({ minutes: null, hours: 10, days: null })?.argument).toBe('hours');
    expect(policyProblem({ minutes: 1, hours: 30, days: 10 })?.argument).toBe('days');
    expect(policyProblem({ minutes: 1, hours: null, days: 10 })?.argument).toBe('days');
  });

  it('throws INVALID_ARGUMENT with the input path when parsing', () => {
    expect(parseRetentionPolicy({ minutes: 30 })).toEqual({ minutes: 30, hours: null, days: null });
    try {
      parseRetentionPolicy({ minutes: 30, hours: 7 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InputError);
      expect((error as InputError).extensions).toEqual({ code: 'INVALID_ARGUMENT', inputPath: 'hours' });
    }
  });
});

describe('horizons', () => {
  it('keeps today plus the given whole days', () => {
    expect(horizonAt(30, at('2024-03-31T10:00:00Z'))).toBe(at('2024-03-01T00:00:00Z'));
    expect(horizonAt(1, at('2024-03-31T00:00:00Z'))).toBe(at('2024-03-30T00:00:00Z'));
    expect(horizonAt(1, at('2024-03-31T23:59:59.999Z'))).toBe(at('2024-03-30T00:00:00Z'));
    expect(horizonAt(null, at('2024-03-31T10:00:00Z'))).toBeNull();
  });

  it('never moves an applied horizon back when a policy is lengthened', () => {
    const applied = { minute: at('2024-03-20T00:00:00Z'), hour: null, day: null };
    const now = at('2024-03-31T10:00:00Z');
    expect(targetHorizons({ minutes: 30, hours: 60, days: null }, applied, now)).toEqual({
      minute: at('2024-03-20T00:00:00Z'),
      hour: at('2024-01-31T00:00:00Z'),
      day: null,
    });
    expect(targetHorizons({ minutes: null, hours: null, days: null }, applied, now)).toEqual(applied);
    expect(targetHorizons({ minutes: 2, hours: 3, days: 4 }, NO_HORIZONS, now)).toEqual({
      minute: at('2024-03-29T00:00:00Z'),
      hour: at('2024-03-28T00:00:00Z'),
      day: at('2024-03-27T00:00:00Z'),
    });
  });

  it('starts a level where no coarser level is gone either', () => {
    const day = at('2024-03-10T00:00:00Z');
    expect(detailFrom({ minute: null, hour: null, day })).toEqual({ minute: day, hour: day, day });
    expect(detailFrom({ minute: at('2024-03-20T00:00:00Z'), hour: null, day })).toEqual({
      minute: at('2024-03-20T00:00:00Z'),
      hour: day,
      day,
    });
  });
});

describe('firstExpiredRead', () => {
  const horizons = { minute: at('2024-03-20T00:00:00Z'), hour: at('2024-03-10T00:00:00Z'), day: null };
  it('refuses minute and hour reads before their horizons, never day reads', () => {
    expect(
      firstExpiredRead(
        [
          { level: 'day', from: at('2024-03-01T00:00:00Z'), to: at('2024-03-19T00:00:00Z') },
          { level: 'hour', from: at('2024-03-19T00:00:00Z'), to: at('2024-03-19T12:00:00Z') },
          { level: 'minute', from: at('2024-03-19T12:00:00Z'), to: at('2024-03-19T12:07:00Z') },
        ],
        horizons,
      ),
    ).toEqual({ level: 'minute', from: at('2024-03-19T12:00:00Z'), availableFrom: at('2024-03-20T00:00:00Z') });
    expect(firstExpiredRead([{ level: 'hour', from: at('2024-03-09T23:00:00Z'), to: at('2024-03-10T01:00:00Z') }], horizons)).toEqual({
      level: 'hour',
      from: at('2024-03-09T23:00:00Z'),
      availableFrom: at('2024-03-10T00:00:00Z'),
    });
  });

  it('lets reads from the horizon on pass', () => {
    expect(
      firstExpiredRead(
        [
          { level: 'day', from: at('2024-01-01T00:00:00Z'), to: at('2024-03-10T00:00:00Z') },
          { level: 'hour', from: at('2024-03-10T00:00:00Z'), to: at('2024-03-20T00:00:00Z') },
          { level: 'minute', from: at('2024-03-20T00:00:00Z'), to: at('2024-03-20T00:30:00Z') },
        ],
        horizons,
      ),
    ).toBeNull();
    expect(firstExpiredRead([{ level: 'minute', from: 0, to: 60_000 }], NO_HORIZONS)).toBeNull();
  });
});
