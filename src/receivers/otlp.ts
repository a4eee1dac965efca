/**
 * OpenTelemetry metrics (an OTLP `ExportMetricsServiceRequest`, decoded by protobufjs
 * from protobuf or JSON) as readings. Pure: no I/O. The mapping is documented with an
 * example in docs/opentelemetry.md; in short, one data point is one reading:
 *
 * | OTLP | reading |
 * | --- | --- |
 * | metric `name` | metric, sanitized by `sanitizeName` (`http.server.duration` -> `http_server_duration`; past 64 characters shortened with a hash) |
 * | resource attributes in `resourceAttributes` (default {@link DEFAULT_RESOURCE_ATTRIBUTES}) | tags |
 * | metric `unit`, when not empty | tag `unit` |
 * | data-point attributes | tags (they win over a resource attribute or `unit` of the same key) |
 * | `timeUnixNano` | time, in ms rounded down (0: the time the request arrived) |
 * | gauge, sum | field `value` (`asDouble`, or `asInt` as a double) |
 * | histogram, exponential histogram | fields `count`, `sum`, `min`, `max` (those present); buckets are dropped |
 * | summary | fields `count`, `sum` and `p<quantile x 100>` (`p50`, `p99`, `p99_9`) |
 *
 * Attribute keys are sanitized like metric names; values become strings (see
 * {@link attributeText}); empty values are left out. Exemplars, scopes, descriptions,
 * start times and schema URLs are not kept.
 */
import type { ReadingInput } from '../record/validate.ts';
import { NameCache } from './names.ts';
import { int64ToNumber, nanosToMs, type Int64 } from './int64.ts';

/**
 * What the readings of a metric mean, for statistics built on them (a counter's
 * increase must account for resets):
 * - `gauge`: the value at the reading's time (an OTLP gauge, or a sum that is not
 *   monotonic and cumulative, such as an up-down counter's running value);
 * - `counter`: a running total since the series' start time, which may fall back to 0 when
 *   the process restarts (a monotonic cumulative sum; Prometheus' `_total` series); the
 *   only kind stored: the receivers declare such metrics counters once a batch is stored
 *   (`routes/receivers.ts`); the others stay gauges (docs/opentelemetry.md, "Counters");
 * - `delta`: the increase since the previous reading of the series (a delta sum);
 * - `histogram`: `count` and `sum` are running totals as for `counter`, `min` and `max`
 *   those of the same window (cumulative temporality);
 * - `delta-histogram`: `count`, `sum`, `min`, `max` of the interval since the previous reading;
 * - `summary`: `count` and `sum` running totals, the quantiles those of the producer's window.
 */
export type MetricKind = 'gauge' | 'counter' | 'delta' | 'histogram' | 'delta-histogram' | 'summary';

/** The resource attributes kept as tags by default (setting `OTLP_RESOURCE_ATTRIBUTES`): the semantic conventions' identity of a service instance and where it runs. */
export const DEFAULT_RESOURCE_ATTRIBUTES: readonly string[] = [
  'service.name',
  'service.namespace',
  'service.instance.id',
  'host.name',
  'deployment.environment.name',
  'k8s.namespace.name',
  'k8s.pod.name',
];

/** The mapping's settings. */
export interface OtlpMappingOptions {
  /** The resource attributes kept as tags (OTel keys, before sanitizing), or `all`. */
  resourceAttributes: readonly string[] | 'all';
}

/** A data point refused by the mapping (counted in the answer's `rejectedDataPoints`). */
export interface Rejection {
  /** The metric as sent (not sanitized). */
  metric: string;
  /** Why, in words. */
  reason: string;
}

/** The readings of one export request. */
export interface OtlpMapping {
  /** One reading per data point kept, in the order of the request. */
  readings: ReadingInput[];
  /** The kind of each metric of `readings`, by (sanitized) metric name. */
  kinds: Map<string, MetricKind>;
  /** Data points in the request. */
  dataPoints: number;
  /** Data points flagged `NO_RECORDED_VALUE`: accepted, nothing stored. */
  noValue: number;
  /** Data points refused, with why. */
  rejected: Rejection[];
}

/** AggregationTemporality of the OTLP metrics proto. */
const CUMULATIVE = 2;
/** DataPointFlags.FLAG_NO_RECORDED_VALUE_MASK. */
const NO_RECORDED_VALUE = 1;

/** The parts of the decoded messages the mapping reads (protobufjs message instances: `value` names the member of a oneof that is set). */
interface AnyValue {
  value?: 'stringValue' | 'boolValue' | 'intValue' | 'doubleValue' | 'arrayValue' | 'kvlistValue' | 'bytesValue';
  stringValue?: string;
  boolValue?: boolean;
  intValue?: Int64;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] } | null;
  kvlistValue?: { values?: KeyValue[] } | null;
  bytesValue?: Uint8Array;
}
interface KeyValue {
  key: string;
  value?: AnyValue | null;
}
interface PointBase {
  attributes?: KeyValue[];
  timeUnixNano?: Int64;
  flags?: number;
}
interface NumberPoint extends PointBase {
  value?: 'asDouble' | 'asInt';
  asDouble?: number;
  asInt?: Int64;
}
interface HistogramPoint extends PointBase {
  count?: Int64;
  sum?: number | null;
  min?: number | null;
  max?: number | null;
}
interface SummaryPoint extends PointBase {
  count?: Int64;
  sum?: number;
  quantileValues?: { quantile?: number; value?: number }[];
}
interface Metric {
  name: string;
  unit?: string;
  gauge?: { dataPoints?: NumberPoint[] } | null;
  sum?: { dataPoints?: NumberPoint[]; aggregationTemporality?: number; isMonotonic?: boolean } | null;
  histogram?: { dataPoints?: HistogramPoint[]; aggregationTemporality?: number } | null;
  exponentialHistogram?: { dataPoints?: HistogramPoint[]; aggregationTemporality?: number } | null;
  summary?: { dataPoints?: SummaryPoint[] } | null;
}
/** An `ExportMetricsServiceRequest` as protobufjs decodes it. */
export interface ExportRequest {
  resourceMetrics?: {
    resource?: { attributes?: KeyValue[] } | null;
    scopeMetrics?: { metrics?: Metric[] }[];
  }[];
}

const names = new NameCache();

/**
 * An attribute value as a tag value: strings as they are, booleans `true`/`false`,
 * integers in decimal, doubles as JavaScript prints them (`0.5`, `1e+21`), bytes in
 * base64, arrays and key-value lists as JSON (`["a",1]`, `{"k":"v"}`).
 * @returns the text, or undefined for an empty value.
 */
export function attributeText(value: AnyValue | null | undefined): string | undefined {
  if (!value) return undefined;
  switch (value.value) {
    case 'stringValue':
      return value.stringValue || undefined;
    case 'boolValue':
      return value.boolValue ? 'true' : 'false';
    case 'intValue':
      return value.intValue!.toString();
    case 'doubleValue':
      return String(value.doubleValue);
    case 'bytesValue':
      return value.bytesValue!.length === 0 ? undefined : Buffer.from(value.bytesValue!).toString('base64');
    case 'arrayValue':
    case 'kvlistValue':
      return JSON.stringify(plain(value));
    default:
      return undefined;
  }
}

/** An AnyValue as plain JSON data, for arrays and key-value lists. */
function plain(value: AnyValue | null | undefined): unknown {
  if (!value) return null;
  switch (value.value) {
    case 'arrayValue':
      return (value.arrayValue?.values ?? []).map(plain);
    case 'kvlistValue':
      return Object.fromEntries((value.kvlistValue?.values ?? []).map((entry) => [entry.key, plain(entry.value)]));
    case 'boolValue':
      return value.boolValue;
    case 'doubleValue':
      return value.doubleValue;
    case 'intValue':
    case 'stringValue':
    case 'bytesValue':
      return attributeText(value) ?? '';
    default:
      return null;
  }
}

/** Thrown inside the mapping for one data point; caught and counted as a rejection. */
class PointRefused extends Error {}

/**
 * Adds attributes to `tags` as tags (keys sanitized); an attribute with an empty key,
 * or two attributes of `attributes` that become the same key, refuse the
 * point (when `keep` says which keys to take, for resource attributes, the others are
 * skipped without a word).
 */
function addAttributes(tags: Map<string, string>, attributes: readonly KeyValue[] | undefined, keep?: (key: string) => boolean): void {
  if (!attributes || attributes.length === 0) return;
  const own = new Set<string>();
  for (const attribute of attributes) {
    if (keep && !keep(attribute.key)) continue;
    const key = names.get(attribute.key);
    if (key === undefined) throw new PointRefused('an attribute with an empty key');
    if (own.has(key)) throw new PointRefused(`two attributes become tag key "${key}"`);
    own.add(key);
    const text = attributeText(attribute.value);
    if (text === undefined) tags.delete(key);
    else tags.set(key, text);
  }
}

/**
 * A summary quantile as a field name: `p` and the percentile, with `_` for the decimal
 * point (0.5 -> `p50`, 0.999 -> `p99_9`, 0 -> `p0`, 1 -> `p100`).
 */
export function quantileField(quantile: number): string {
  const percent = Math.round(quantile * 100 * 1e6) / 1e6;
  return `p${String(percent).replace('.', '_')}`;
}

/**
 * The readings of an export request (see the module comment for the mapping). Points
 * refused here (an empty metric name or attribute key, two attributes
 * becoming one key, a metric name used with two kinds in the request, a number point
 * without a value, a summary quantile outside [0, 1]) are in `rejected`; the rules of
 * every reading (finite values, tag values, name counts) are checked afterwards by the
 * record path's validation.
 */
export function mapExportRequest(request: ExportRequest, options: OtlpMappingOptions): OtlpMapping {
  const out: OtlpMapping = { readings: [], kinds: new Map(), dataPoints: 0, noValue: 0, rejected: [] };
  const wanted = options.resourceAttributes === 'all' ? undefined : new Set(options.resourceAttributes);
  const keep = wanted === undefined ? undefined : (key: string) => wanted.has(key);
  for (const resourceMetrics of request.resourceMetrics ?? []) {
    const resourceTags = new Map<string, string>();
    let resourceProblem: string | undefined;
    try {
      addAttributes(resourceTags, resourceMetrics.resource?.attributes, keep);
    } catch (error) {
      if (!(error instanceof PointRefused)) throw error;
      resourceProblem = `resource: ${error.message}`;
    }
    for (const scopeMetrics of resourceMetrics.scopeMetrics ?? []) {
      for (const metric of scopeMetrics.metrics ?? []) mapMetric(metric, resourceTags, resourceProblem, out);
    }
  }
  return out;
}

/** The data points of one metric, with its kind. */
function pointsOf(metric: Metric): { kind: MetricKind; points: PointBase[]; type: 'number' | 'histogram' | 'summary' } | undefined {
  if (metric.gauge) return { kind: 'gauge', points: metric.gauge.dataPoints ?? [], type: 'number' };
  if (metric.sum) {
    const cumulative = metric.sum.aggregationTemporality === CUMULATIVE;
    const kind = cumulative ? (metric.sum.isMonotonic ? 'counter' : 'gauge') : 'delta';
    return { kind, points: metric.sum.dataPoints ?? [], type: 'number' };
  }
  const histogram = metric.histogram ?? metric.exponentialHistogram;
  if (histogram) {
    const kind = histogram.aggregationTemporality === CUMULATIVE ? 'histogram' : 'delta-histogram';
    return { kind, points: histogram.dataPoints ?? [], type: 'histogram' };
  }
  if (metric.summary) return { kind: 'summary', points: metric.summary.dataPoints ?? [], type: 'summary' };
  return undefined;
}

function mapMetric(metric: Metric, resourceTags: ReadonlyMap<string, string>, resourceProblem: string | undefined, out: OtlpMapping): void {
  const data = pointsOf(metric);
  if (data === undefined) return;
  out.dataPoints += data.points.length;
  const refuseAll = (reason: string) => {
    for (let i = 0; i < data.points.length; i++) out.rejected.push({ metric: metric.name, reason });
  };
  const name = names.get(metric.name);
  if (name === undefined) {
    refuseAll('an empty metric name');
    return;
  }
  if (resourceProblem !== undefined) {
    refuseAll(resourceProblem);
    return;
  }
  const known = out.kinds.get(name);
  if (known !== undefined && known !== data.kind) {
    refuseAll(`metric "${name}" is a ${known} earlier in the request and a ${data.kind} here`);
    return;
  }
  const baseTags = new Map(resourceTags);
  if (metric.unit) baseTags.set('unit', metric.unit);
  for (const point of data.points) {
    if (((point.flags ?? 0) & NO_RECORDED_VALUE) !== 0) {
      out.noValue++;
      continue;
    }
    try {
      const tags = new Map(baseTags);
      addAttributes(tags, point.attributes);
      const fields = fieldsOf(point, data.type);
      const nanos = point.timeUnixNano ?? 0;
      const time =
        nanos === 0 || nanos === '0' || (typeof nanos === 'object' && nanos.low === 0 && nanos.high === 0)
          ? null
          : new Date(nanosToMs(nanos));
      out.readings.push({ metric: name, tags: [...tags].map(([key, value]) => ({ key, value })), time, fields });
      out.kinds.set(name, data.kind);
    } catch (error) {
      if (!(error instanceof PointRefused)) throw error;
      out.rejected.push({ metric: metric.name, reason: error.message });
    }
  }
}

/** The fields of a data point of the given type (see the module comment). */
function fieldsOf(point: PointBase, type: 'number' | 'histogram' | 'summary'): { name: string; value: number }[] {
  if (type === 'number') {
    const number = point as NumberPoint;
    if (number.value === 'asDouble') return [{ name: 'value', value: number.asDouble! }];
    if (number.value === 'asInt') return [{ name: 'value', value: int64ToNumber(number.asInt!) }];
    throw new PointRefused('a number data point without a value (neither asDouble nor asInt)');
  }
  if (type === 'histogram') {
    const histogram = point as HistogramPoint;
    const fields = [{ name: 'count', value: int64ToNumber(histogram.count ?? 0) }];
    if (histogram.sum !== null && histogram.sum !== undefined) fields.push({ name: 'sum', value: histogram.sum });
    if (histogram.min !== null && histogram.min !== undefined) fields.push({ name: 'min', value: histogram.min });
    if (histogram.max !== null && histogram.max !== undefined) fields.push({ name: 'max', value: histogram.max });
    return fields;
  }
  const summary = point as SummaryPoint;
  const fields = [
    { name: 'count', value: int64ToNumber(summary.count ?? 0) },
    { name: 'sum', value: summary.sum ?? 0 },
  ];
  for (const { quantile = 0, value = 0 } of summary.quantileValues ?? []) {
    if (!(quantile >= 0 && quantile <= 1)) throw new PointRefused(`summary quantile ${quantile} is outside [0, 1]`);
    fields.push({ name: quantileField(quantile), value });
  }
  return fields;
}
