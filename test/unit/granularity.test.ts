import { describe, expect, it } from 'vitest';
import { bucketStart, countBuckets, granularity, GRANULARITY_NAMES, nextBucketStart } from '../../src/query/granularity.ts';
import { referenceStart } from '../helpers/reference.ts';

const at = (iso: string) => Date.parse(iso);

describe('granularities', () => {
  const samples = [
    '1970-01-01T00:00:00Z',
    '1970-01-04T23:59:00Z',
    '2000-02-29T13:37:00Z',
    '2001-01-01T00:00:00Z',
    '2001-03-31T23:59:59.999Z',
    '2001-12-31T18:04:00Z',
    '2024-07-15T06:00:00Z',
  ].map(at);

  it.each(GRANULARITY_NAMES)('%s: bucketStart agrees with calendar arithmetic', (name) => {
    const { cut } = granularity(name);
    for (let ms = samples[0]!; ms < samples[0]! + 40 * 86_400_000; ms += 7 * 3_600_000 + 13 * 60_000) {
      expect(bucketStart(ms, cut)).toBe(referenceStart(ms, name));
    }
    for (const ms of samples) expect(bucketStart(ms, cut)).toBe(referenceStart(ms, name));
  });

  it.each(GRANULARITY_NAMES)('%s: nextBucketStart and countBuckets agree with walking minute by minute', (name) => {
    const { cut } = granularity(name);
    const from = at('2001-01-30T22:13:00Z');
    const to = name === 'YEAR' || name === 'QUARTER' ? at('2003-05-02T00:00:00Z') : at('2001-03-02T01:00:00Z');
    const starts = new Set<number>();
    const step = name === 'YEAR' || name === 'QUARTER' || name === 'MONTH' ? 3_600_000 : 60_000;
    for (let ms = from; ms < to; ms += step) starts.add(referenceStart(ms, name));
    const sorted = [...starts].sort((a, b) => a - b);
    expect(countBuckets(from, to, cut)).toBe(sorted.length);
    for (let i = 0; i + 1 < sorted.length; i++) expect(nextBucketStart(sorted[i]!, cut)).toBe(sorted[i + 1]);
  });

  it('weeks start on Monday', () => {
    expect(new Date(bucketStart(at('2001-01-07T12:00:00Z'), granularity('WEEK').cut)).toISOString()).toBe('2001-01-01T00:00:00.000Z');
  });
});
