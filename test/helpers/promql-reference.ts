/**
 * Prometheus' answers computed by a plain loop over the samples, for the PromQL tests:
 * the window of a range function at time t is the samples with `t - range < time <= t`
 * (Prometheus 3's left-open range selection), an instant selector takes the last sample
 * within 5 minutes, and the functions follow Prometheus' definitions (`promql/functions.go`,
 * `quantile.go`, as documented). It shares no code with the server.
 */

/** One sample: time in ms, value. */
export interface RefSample {
  t: number;
  v: number;
}

/** One series: its labels (the name among them) and its samples in time order. */
export interface RefSeries {
  labels: Record<string, string>;
  samples: RefSample[];
}

/** The samples of `series` in `(t - range, t]`. */
export function windowOf(series: RefSeries, t: number, rangeMs: number): RefSample[] {
  return series.samples.filter((sample) => sample.t > t - rangeMs && sample.t <= t);
}

/** Prometheus' rate, increase and delta with its extrapolation to the window's edges, from the window's samples. */
export function refExtrapolated(samples: RefSample[], t: number, rangeMs: number, kind: 'rate' | 'increase' | 'delta'): number | undefined {
  if (samples.length < 2) return undefined;
  const counter = kind !== 'delta';
  const first = samples[0]!;
  const last = samples[samples.length - 1]!;
  let result = last.v - first.v;
  if (counter) {
    for (let i = 1; i < samples.length; i++) if (samples[i]!.v < samples[i - 1]!.v) result += samples[i - 1]!.v;
  }
  const rangeStart = t - rangeMs;
  let toStart = (first.t - rangeStart) / 1000;
  let toEnd = (t - last.t) / 1000;
  const sampled = (last.t - first.t) / 1000;
  const average = sampled / (samples.length - 1);
  const threshold = average * 1.1;
  if (toStart >= threshold) toStart = average / 2;
  if (counter && result > 0 && first.v >= 0) {
    const toZero = sampled * (first.v / result);
    if (toZero < toStart) toStart = toZero;
  }
  if (toEnd >= threshold) toEnd = average / 2;
  let factor = (sampled + toStart + toEnd) / sampled;
  if (kind === 'rate') factor /= rangeMs / 1000;
  return result * factor;
}

/** A range function of the subset over one series at time t (undefined: no sample). */
export function refRange(func: string, series: RefSeries, t: number, rangeMs: number): number | undefined {
  const samples = windowOf(series, t, rangeMs);
  if (samples.length === 0) return undefined;
  const values = samples.map((sample) => sample.v);
  switch (func) {
    case 'rate':
    case 'increase':
    case 'delta':
      return refExtrapolated(samples, t, rangeMs, func);
    case 'irate': {
      if (samples.length < 2) return undefined;
      const [previous, last] = samples.slice(-2) as [RefSample, RefSample];
      const change = last.v < previous.v ? last.v : last.v - previous.v;
      return change / ((last.t - previous.t) / 1000);
    }
    case 'resets': {
      let count = 0;
      for (let i = 1; i < values.length; i++) if (values[i]! < values[i - 1]!) count++;
      return count;
    }
    case 'sum_over_time':
      return values.reduce((a, b) => a + b, 0);
    case 'count_over_time':
      return values.length;
    case 'avg_over_time':
      return values.reduce((a, b) => a + b, 0) / values.length;
    case 'min_over_time':
      return Math.min(...values);
    case 'max_over_time':
      return Math.max(...values);
    case 'last_over_time':
      return values[values.length - 1];
    default:
      throw new Error(`no reference for ${func}`);
  }
}

/** The value of an instant selector at t: the last sample in `(t - 5m, t]`. */
export function refInstant(series: RefSeries, t: number): number | undefined {
  const samples = windowOf(series, t, 5 * 60_000);
  return samples[samples.length - 1]?.v;
}

/** Groups values by the values of `by` labels and sums them (Prometheus' `sum by (...)`). */
export function refSumBy(entries: { labels: Record<string, string>; value: number | undefined }[], by: string[]): Map<string, number> {
  const sums = new Map<string, number>();
  for (const { labels, value } of entries) {
    if (value === undefined) continue;
    const key = JSON.stringify(Object.fromEntries(by.filter((name) => labels[name] !== undefined).map((name) => [name, labels[name]])));
    sums.set(key, (sums.get(key) ?? 0) + value);
  }
  return sums;
}

/**
 * `histogram_quantile(q, ...)` of one group of classic-histogram buckets (upper bound,
 * cumulative count), as Prometheus documents it: the bucket holding rank q x count,
 * linear interpolation inside it (from 0 for the first bucket when its bound is
 * positive), the second-highest bound when the rank falls into the +Inf bucket.
 */
export function refHistogramQuantile(q: number, buckets: { le: number; count: number }[]): number {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const total = sorted[sorted.length - 1]!.count;
  if (total === 0) return NaN;
  const rank = q * total;
  let i = 0;
  while (sorted[i]!.count < rank) i++;
  if (i === sorted.length - 1) return sorted[sorted.length - 2]!.le;
  if (i === 0 && sorted[0]!.le <= 0) return sorted[0]!.le;
  const lower = i === 0 ? 0 : sorted[i - 1]!.le;
  const below = i === 0 ? 0 : sorted[i - 1]!.count;
  return lower + (sorted[i]!.le - lower) * ((rank - below) / (sorted[i]!.count - below));
}
