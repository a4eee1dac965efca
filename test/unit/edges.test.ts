import { describe, expect, it } from 'vitest';
import { edgeSplit } from '../../src/query/edges.ts';
import { querySegments, type BucketQuery } from '../../src/query/buckets-pipeline.ts';
import { granularity } from '../../src/query/granularity.ts';
import { QUARTER_MS } from '../../src/model/time.ts';

const MIN = 60_000;
const H = 60 * MIN;
const D = 24 * H;
const at = (iso: string) => Date.parse(iso);

const query = (from: string, to: string, size: BucketQuery['granularity'] = granularity('HOUR')): BucketQuery => ({
  scope: { metric: 'cpu', where: [{ key: 'hostname', in: ['host_1'] }] },
  fields: ['usage_user'],
  from: at(from),
  to: at(to),
  granularity: size,
  grouping: { by: 'tags', keys: ['hostname'] },
});

/** Minute by minute: which of `[from, to)` the segments of `queries` read, and how often. */
function minutesRead(queries: readonly BucketQuery[], from: number, to: number): number[] {
  const counts = new Array<number>((to - from) / MIN).fill(0);
  for (const q of queries) {
    for (const segment of querySegments(q)) {
      for (let t = segment.from; t < segment.to; t += MIN) counts[(t - from) / MIN]! += 1;
    }
  }
  return counts;
}

describe('edgeSplit', () => {
  it('leaves a range on whole hours, without a whole hour inside, or whose hours read minutes anyway, alone', () => {
    expect(edgeSplit(query('2016-01-01T05:00:00Z', '2016-01-01T17:00:00Z'))).toBeNull();
    expect(edgeSplit(query('2016-01-01T05:17:00Z', '2016-01-01T06:59:00Z'))).toBeNull();
    expect(edgeSplit(query('2016-01-01T05:17:00Z', '2016-01-01T08:17:00Z', granularity('MINUTE')))).toBeNull();
    expect(edgeSplit(query('2016-01-01T05:17:00Z', '2016-01-01T08:17:00Z', granularity('FIVE_MINUTES')))).toBeNull();
    expect(edgeSplit(query('2016-01-01T05:17:00Z', '2016-01-01T08:17:00Z', granularity('FIFTEEN_MINUTES')))).not.toBeNull();
  });

  it('reads the inner hours and each edge once, with one edge query when both edges are on one day', () => {
    const q = query('2016-01-01T05:17:00Z', '2016-01-01T17:17:00Z');
    const split = edgeSplit(q)!;
    expect([split.inner.from, split.inner.to]).toEqual([at('2016-01-01T06:00:00Z'), at('2016-01-01T17:00:00Z')]);
    expect(split.edges).toHaveLength(1);
    expect(split.edges[0]!.dateRange).toEqual({ from: at('2016-01-01T00:00:00Z'), to: at('2016-01-02T00:00:00Z') });
    expect(querySegments(split.edges[0]!)).toEqual([
      { level: 'minute', from: q.from, to: at('2016-01-01T06:00:00Z') },
      { level: 'minute', from: at('2016-01-01T17:00:00Z'), to: q.to },
    ]);
    expect(querySegments(split.inner).every((segment) => segment.level === 'hour')).toBe(true);
    expect(new Set(minutesRead([split.inner, ...split.edges], q.from, q.to))).toEqual(new Set([1]));
  });

  it('reads the edges of days far apart in one query each, over its own range', () => {
    const q = query('2016-01-01T23:30:00Z', '2016-01-04T00:10:00Z', granularity('DAY'));
    const split = edgeSplit(q)!;
    expect(split.edges.map((edge) => [edge.from, edge.to, edge.without, edge.dateRange])).toEqual([
      [q.from, at('2016-01-02T00:00:00Z'), undefined, undefined],
      [at('2016-01-04T00:00:00Z'), q.to, undefined, undefined],
    ]);
    // The inner hours read day totals where they can.
    expect(querySegments(split.inner)).toEqual([{ level: 'day', from: at('2016-01-02T00:00:00Z'), to: at('2016-01-04T00:00:00Z') }]);
    expect(new Set(minutesRead([split.inner, ...split.edges], q.from, q.to))).toEqual(new Set([1]));
  });

  it('reads one edge when the other is on a whole hour, aggregates included', () => {
    const q = query('2016-01-01T05:00:00Z', '2016-01-02T07:45:00Z', null);
    const split = edgeSplit(q)!;
    expect(split.edges.map((edge) => [edge.from, edge.to])).toEqual([[at('2016-01-02T07:00:00Z'), q.to]]);
    expect(querySegments(split.edges[0]!)).toEqual([{ level: 'minute', from: at('2016-01-02T07:00:00Z'), to: q.to }]);
    expect(new Set(minutesRead([split.inner, ...split.edges], q.from, q.to))).toEqual(new Set([1]));
  });

  it('cuts at whole quarter hours for a rollup that keeps them, leaving fewer minutes to the documents', () => {
    const q = query('2016-01-01T05:17:00Z', '2016-01-01T17:41:00Z');
    const split = edgeSplit(q, QUARTER_MS)!;
    expect([split.inner.from, split.inner.to]).toEqual([at('2016-01-01T05:30:00Z'), at('2016-01-01T17:30:00Z')]);
    expect(querySegments(split.edges[0]!)).toEqual([
      { level: 'minute', from: q.from, to: at('2016-01-01T05:30:00Z') },
      { level: 'minute', from: at('2016-01-01T17:30:00Z'), to: q.to },
    ]);
    // Read with quarter hours, the inner stretch reads quarters at its ends and hours between.
    expect(querySegments({ ...split.inner, quarters: true }).map((segment) => segment.level)).toEqual(['quarter', 'hour', 'quarter']);
    expect(new Set(minutesRead([split.inner, ...split.edges], q.from, q.to))).toEqual(new Set([1]));
    // Less than a whole hour inside, but whole quarter hours: a split at quarters only.
    expect(edgeSplit(query('2016-01-01T05:17:00Z', '2016-01-01T06:10:00Z'))).toBeNull();
    expect(edgeSplit(query('2016-01-01T05:17:00Z', '2016-01-01T06:10:00Z'), QUARTER_MS)).not.toBeNull();
  });

  it('keeps what the query was: scope, fields, grouping, zone; a day range given is replaced', () => {
    const q = { ...query('2016-01-01T05:17:00Z', '2016-01-01T09:00:00Z'), timeZone: 'Asia/Kolkata', dateRange: { from: 0, to: D } };
    const split = edgeSplit(q)!;
    for (const part of [split.inner, ...split.edges]) {
      expect(part).toMatchObject({ scope: q.scope, fields: q.fields, grouping: q.grouping, timeZone: 'Asia/Kolkata' });
      expect(part.dateRange).toBeUndefined();
    }
  });
});
