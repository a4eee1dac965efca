/**
 * The reset-aware increase of counters per bucket and group, from the rows of the
 * counter pipeline (`counterPipeline` in `query/buckets-pipeline.ts`): pure, no I/O.
 *
 * For one series with readings `r_1 .. r_N` in `[from, to)`, in time order (of readings
 * at the same millisecond, the smaller value first, as `first`/`last` order them), the
 * increase of a bucket B is the sum of `counterDelta(r_(i-1), r_i)` over the readings
 * `r_i` in B with `i >= 2`: the deltas between consecutive readings inside B, plus the
 * delta from the last reading before B (inside the range, possibly several empty buckets
 * back) to B's first. Buckets of one series therefore add up to the increase over the
 * whole range, which is the aggregate's. A group's increase is the sum of its series'.
 * No extrapolation to the bucket's edges (Prometheus' `increase()` extrapolates).
 *
 * The stored slots hold `inc` (the deltas inside a slot), so a bucket's increase is the
 * chain of its slots in time order: their `inc`, plus the delta from each slot's last
 * reading to the next slot's first. Several parts holding one slot are chained alike,
 * ordered by their first reading; when one part's first reading falls before the last
 * reading of a part before it, the parts' readings interleave in time (a late reading
 * folded after its neighbours), their order is unknown and so is the increase of that
 * bucket: null (see docs/statistics.md, "Counters").
 */
import { counterDelta, knownIncrease, type CounterPiece } from '../model/counter.ts';
import { compareTimed, isEarlier, type TimedValue } from '../model/stats.ts';
import type { CounterSlot } from '../documents/slots.ts';
import type { CounterRow } from './buckets-pipeline.ts';

/** The key of a bucket and group, as rows of the bucket pipeline are matched (`rowKey` of the loader). */
export type BucketKey = (id: { t?: Date; g?: unknown } | null) => string;

/** A stored `{t, v}` pair as a {@link TimedValue}; null when absent (layout version 1). */
const pair = (value: CounterSlot['f']): TimedValue | null =>
  value !== undefined && value !== null && value.t instanceof Date && typeof value.v === 'number'
    ? { t: value.t.getTime(), v: value.v }
    : null;

/** One slot of one series as a piece of its chain, with the bucket it belongs to. */
interface Link {
  bucket: string;
  /** Null for a slot without first and last readings (layout version 1). */
  piece: CounterPiece | null;
}

/**
 * The increase of the field at `index` per bucket and group (keyed by `keyOf`): every
 * series' slots ordered by their first reading and chained from the first one of the
 * range, each slot's `inc` and the delta from the previous slot's last reading added to
 * its bucket; summed over the series of a bucket and group. Null for a bucket where a
 * series' increase is not known: a slot without `inc` (folded before the metric was a
 * counter) holding more than one reading, a slot without first and last readings
 * (layout version 1), or slots of different parts that interleave in time.
 * @returns bucket key -> increase (or null); buckets without readings of the field are absent.
 */
export function counterIncreases(rows: readonly CounterRow[], index: number, keyOf: BucketKey): Map<string, number | null> {
  const field = `v${index}`;
  const bySeries = new Map<string, Link[]>();
  for (const row of rows) {
    const bucket = keyOf(row._id);
    for (const slot of row.p) {
      const entry = slot[field];
      if (entry === undefined || !(entry.n > 0)) continue;
      const first = pair(entry.f);
      const last = pair(entry.l);
      const piece = first === null || last === null ? null : { first, last, n: entry.n, inc: typeof entry.i === 'number' ? entry.i : null };
      const links = bySeries.get(row._id.s);
      const link = { bucket, piece };
      if (links === undefined) bySeries.set(row._id.s, [link]);
      else links.push(link);
    }
  }
  const totals = new Map<string, number | null>();
  const add = (bucket: string, amount: number | null) => {
    const total = totals.get(bucket);
    totals.set(bucket, total === null || amount === null ? null : (total ?? 0) + amount);
  };
  for (const links of bySeries.values()) {
    if (links.some((link) => link.piece === null)) {
      // Without first and last readings nothing can be chained: no bucket of the series is known.
      for (const link of links) add(link.bucket, null);
      continue;
    }
    links.sort((a, b) => compareTimed(a.piece!.first, b.piece!.first));
    let last: TimedValue | null = null;
    for (const { bucket, piece } of links) {
      const { first } = piece!;
      let amount = knownIncrease(piece!);
      if (last !== null && amount !== null) amount = isEarlier(first, last) ? null : amount + counterDelta(last.v, first.v);
      add(bucket, amount);
      if (last === null || isEarlier(last, piece!.last)) last = piece!.last;
    }
  }
  return totals;
}
