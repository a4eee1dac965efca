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
  from: new Date('2001-01-01T00:00:30Z'),
  to: new Date('2001-02-01T00:00:00Z'),
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
      granularity: 'DAY',
      fill: 'NULL',
    });
  });
});

describe('batchKey', () => {
  const key = (over: Partial<typeof base> & { fill?: 'NULL' | 'NONE' }) => batchKey(parseBucketsQuery({ ...base, ...over }));

  it('is shared by queries that differ only in the field or the fill', () => {
    expect(key({ field: 'distance' })).toBe(key({}));
    expect(key({ fill: 'NONE' })).toBe(key({}));
    // Rounding to the minute happens before the key: the same range, the same pipeline.
    expect(key({ from: new Date('2001-01-01T00:00:59Z') })).toBe(key({}));
  });

  it('differs for anything that shapes the pipeline', () => {
    const others = [
      key({ metric: 'cpu' }),
      key({ from: new Date('2001-01-02T00:00:00Z') }),
      key({ to: new Date('2001-03-01T00:00:00Z') }),
      key({ granularity: 'WEEK' }),
      key({ where: [{ key: 'origin', in: ['LAS'] }] }),
      key({ where: [] }),
      key({ groupBy: [] }),
      key({ groupBy: ['destination'] }),
      batchKey(parseAggregateQuery(base)),
      batchKey(parseSeriesBucketsQuery(base)),
    ];
    expect(new Set([key({}), ...others]).size).toBe(others.length + 1);
  });
});
