/**
 * Prometheus remote write 1.0 (a `prometheus.WriteRequest`, decoded by protobufjs) as
 * readings. Pure: no I/O. Documented in docs/prometheus-remote-write.md:
 *
 * | remote write | reading |
 * | --- | --- |
 * | label `__name__` | metric, sanitized by `sanitizeName` (`:` -> `_`) |
 * | other labels | tags (names starting with `__` are left out, as are empty values) |
 * | sample value | field `value` |
 * | sample timestamp (ms) | time |
 * | NaN values, the stale marker among them | skipped and counted |
 * | infinite values and values beyond +-1e150 (`Limits.maxAbsValue`) | skipped and counted |
 * | native histograms, exemplars, metadata | skipped (histograms counted); metadata only tells counters |
 *
 * A series whose name ends in `_total`, or whose metric family the request's metadata
 * types COUNTER, is a counter (declared one once the request is stored, see
 * `routes/receivers.ts`); the others are gauges (remote write 1.0 sends no type with the
 * samples).
 */
import { ErrorCode, InputError } from '../errors.ts';
import { Limits } from '../model/limits.ts';
import type { ReadingInput } from '../record/validate.ts';
import type { MetricKind } from './otlp.ts';
import { NameCache } from './names.ts';
import { int64ToNumber, type Int64 } from './int64.ts';

/**
 * The bits of Prometheus' stale marker, a NaN written when a series disappears
 * (`value.StaleNaN` in prometheus/model/value: 0x7ff0000000000002).
 */
export const STALE_NAN_BITS = 0x7ff0000000000002n;

/** MetricMetadata.MetricType COUNTER. */
const COUNTER = 1;

/** A `WriteRequest` as protobufjs decodes it (the parts the mapping reads). */
export interface WriteRequest {
  timeseries?: {
    labels?: { name: string; value: string }[];
    samples?: { value: number; timestamp: Int64 }[];
    histograms?: unknown[];
  }[];
  metadata?: { type?: number; metricFamilyName?: string }[];
}

/** The readings of one write request. */
export interface RemoteWriteMapping {
  /** One reading per sample kept, in the order of the request. */
  readings: ReadingInput[];
  /** For each reading, the index of its series in the request (for error messages). */
  seriesOf: number[];
  /** The kind of each metric of `readings`, by (sanitized) metric name. */
  kinds: Map<string, MetricKind>;
  /** Samples in the request. */
  samples: number;
  /** Samples skipped: stale markers, other NaN values, values out of range (infinite or beyond +-1e150), native histogram samples. */
  skipped: { stale: number; nan: number; outOfRange: number; histograms: number };
}

const names = new NameCache();
const bits = new Float64Array(1);
const bitsView = new BigUint64Array(bits.buffer);

/** True when `value` is Prometheus' stale marker (a NaN with its own bits, see {@link STALE_NAN_BITS}). */
export function isStaleMarker(value: number): boolean {
  if (!Number.isNaN(value)) return false;
  bits[0] = value;
  return bitsView[0] === STALE_NAN_BITS;
}

/** The labels of a series as Prometheus writes them: `{__name__="up", job="api"}`. */
export function seriesText(labels: readonly { name: string; value: string }[] | undefined): string {
  return `{${(labels ?? []).map((label) => `${label.name}=${JSON.stringify(label.value)}`).join(', ')}}`;
}

/**
 * The readings of a write request (see the module comment for the mapping).
 * @throws InputError INVALID_NAME (nothing written) for a series without a `__name__`
 * label or with a label of empty name; the message names the series. Other rules of
 * readings (tag values, tag counts) are checked afterwards by the record path's validation.
 */
export function mapWriteRequest(request: WriteRequest): RemoteWriteMapping {
  const out: RemoteWriteMapping = {
    readings: [],
    seriesOf: [],
    kinds: new Map(),
    samples: 0,
    skipped: { stale: 0, nan: 0, outOfRange: 0, histograms: 0 },
  };
  const counters = new Set<string>();
  for (const entry of request.metadata ?? []) {
    if (entry.type === COUNTER && entry.metricFamilyName) counters.add(entry.metricFamilyName);
  }
  const series = request.timeseries ?? [];
  for (let index = 0; index < series.length; index++) {
    const { labels = [], samples = [], histograms = [] } = series[index]!;
    out.samples += samples.length + histograms.length;
    out.skipped.histograms += histograms.length;
    if (samples.length === 0) continue;
    let raw: string | undefined;
    const tags: { key: string; value: string }[] = [];
    for (const label of labels) {
      if (label.name === '__name__') {
        raw = label.value;
        continue;
      }
      if (label.name.startsWith('__') || label.value === '') continue;
      const key = names.get(label.name);
      if (key === undefined) throw new InputError(ErrorCode.INVALID_NAME, `series ${seriesText(labels)} has a label with an empty name`);
      tags.push({ key, value: label.value });
    }
    const metric = raw === undefined ? undefined : names.get(raw);
    if (raw === undefined || metric === undefined)
      throw new InputError(ErrorCode.INVALID_NAME, `series ${seriesText(labels)} has no __name__ label`);
    if (!out.kinds.has(metric)) out.kinds.set(metric, raw.endsWith('_total') || counters.has(raw) ? 'counter' : 'gauge');
    for (const sample of samples) {
      const value = sample.value;
      if (Number.isNaN(value)) {
        if (isStaleMarker(value)) out.skipped.stale++;
        else out.skipped.nan++;
        continue;
      }
      if (!(Math.abs(value) <= Limits.maxAbsValue)) {
        out.skipped.outOfRange++;
        continue;
      }
      out.readings.push({ metric, tags, time: new Date(int64ToNumber(sample.timestamp)), fields: [{ name: 'value', value }] });
      out.seriesOf.push(index);
    }
  }
  return out;
}
