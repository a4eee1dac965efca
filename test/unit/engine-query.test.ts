/**
 * The query boundary: arguments become one normalized value, and queries share a
 * pipeline exactly when everything that shapes the pipeline is equal.
 */
import { describe, expect, it } from 'vitest';
import { batchKey } from '../../src/engine/loader.ts';
import { parseAggregateQuery, parseBucketsQuery, parseSeriesBucketsQuery } from '../../src/engine/query.ts';

const base = {
  metric: 'flights',
  field: 'delay',
  from: Date.parse('2001-01-01T00:00:30Z'),
  to: Date.parse('2001-02-01T00:00:00Z'),
  granularity: 'DAY' as 'DAY' | 'WEEK',
  where: [{ key: 'origin', in: ['LAS', 'PHX'] }],
  groupBy: ['origin'],
};

describe('parseBucketsQuery', () => {
  it('normalizes the arguments into one value', () => {
    const query = parseBucketsQuery(base);
    expect({ ...query, granularity: query.granularity?.name }).toEqual({
      kind: 'buckets',
      metric: 'flights',
      where: [{ key: 'origin', in: ['LAS', 'PHX'] }],
      groupBy: ['origin'],
      field: 'delay',
      from: Date.UTC(2001, 0, 1),
      to: Date.UTC(2001, 1, 1),
      timeZone: 'UTC',
      granularity: 'DAY',
      fill: 'NULL',
      statistic: 'avg',
      transform: { kind: 'none' },
      compareWith: null,
      ranking: null,
      wants: { firstLast: false, sketch: false, counter: false },
    });
  });
});

describe('time zones of the bounds', () => {
  it('reads a local date or date-time in timeZone, an instant as is', () => {
    const query = parseBucketsQuery({
      ...base,
      from: '2001-04-01',
      to: '2001-04-02T06:30',
      timeZone: 'America/New_York',
    });
    // 2001-04-01 00:00 EST is 05:00Z; DST began at 02:00 that day, so 04-02 06:30 EDT is 10:30Z.
    expect([new Date(query.from).toISOString(), new Date(query.to).toISOString()]).toEqual([
      '2001-04-01T05:00:00.000Z',
      '2001-04-02T10:30:00.000Z',
    ]);
    const kathmandu = parseBucketsQuery({
      ...base,
      from: '2001-04-01',
      to: Date.parse('2001-04-02T00:00:00Z'),
      timeZone: 'Asia/Kathmandu',
    });
    expect(new Date(kathmandu.from).toISOString()).toBe('2001-03-31T18:15:00.000Z');
    expect(new Date(kathmandu.to).toISOString()).toBe('2001-04-02T00:00:00.000Z');
  });

  it('moves a local time inside a daylight-saving gap forward by the gap', () => {
    const query = parseBucketsQuery({
      ...base,
      from: '2001-04-01T02:30',
      to: '2001-04-01T04:00',
      timeZone: 'America/New_York',
    });
    expect(new Date(query.from).toISOString()).toBe('2001-04-01T07:30:00.000Z');
  });

  it('refuses an unknown zone', () => {
    expect(() => parseBucketsQuery({ ...base, timeZone: 'Mars/Olympus' })).toThrow(
      expect.objectContaining({ code: 'INVALID_TIME_ZONE', inputPath: 'timeZone' }),
    );
  });
});

describe('granularity', () => {
  it('is picked for maxDataPoints when not given: the finest whose bucket count fits', () => {
    const query = (maxDataPoints: number) =>
      parseBucketsQuery({
        ...base,
        granularity: undefined,
        maxDataPoints,
        from: '2001-01-01',
        to: '2001-04-01',
        timeZone: 'America/New_York',
      });
    // 90 local days before the DST change of April 1: 2,160 hour buckets, 1,080 of two hours, 90 days, 14 weeks.
    expect(query(100).granularity!.name).toBe('DAY');
    expect(query(90).granularity!.name).toBe('DAY');
    expect(query(89).granularity!.name).toBe('WEEK');
    expect(query(2160).granularity!.name).toBe('HOUR');
    expect(query(2159).granularity!.name).toBe('TWO_HOURS');
  });
});

describe('batchKey', () => {
  const key = (over: Partial<typeof base> & { fill?: 'NULL' | 'NONE' }) => batchKey(parseBucketsQuery({ ...base, ...over }));

  it('is shared by queries that differ only in the field or the fill', () => {
    expect(key({ field: 'distance' })).toBe(key({}));
    expect(key({ fill: 'NONE' })).toBe(key({}));
    expect(key({ transform: 'CUMULATIVE_SUM', statistic: 'sum' } as never)).toBe(key({}));
    // Rounding to the minute happens before the key: the same range, the same pipeline.
    expect(key({ from: Date.parse('2001-01-01T00:00:59Z') })).toBe(key({}));
  });

  it('differs for anything that shapes the pipeline', () => {
    const others = [
      key({ metric: 'cpu' }),
      key({ from: Date.parse('2001-01-02T00:00:00Z') }),
      key({ to: Date.parse('2001-03-01T00:00:00Z') }),
      key({ granularity: 'WEEK' }),
      key({ where: [{ key: 'origin', in: ['LAS'] }] }),
      key({ where: [] }),
      key({ groupBy: [] }),
      key({ groupBy: ['destination'] }),
      batchKey(parseAggregateQuery(base)),
      batchKey(parseSeriesBucketsQuery(base)),
      key({ orderBy: { statistic: 'avg' }, limit: 10 } as never),
    ];
    expect(new Set([key({}), ...others]).size).toBe(others.length + 1);
  });
});
