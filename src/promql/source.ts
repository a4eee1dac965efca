/**
 * Where PromQL meets the stored data: Prometheus names and labels for the metrics and
 * fields, the series a selector matches, and their buckets, all read through the query
 * engine of the request (`engine/engine.ts`), so the token's metric prefixes, the
 * request's budget of series and buckets and the query time limit hold as for GraphQL.
 *
 * Naming (as VictoriaMetrics names InfluxDB data): a metric's field `value` (the field
 * remote write and OTLP store) answers under the metric's own name, any other field `f`
 * as `<metric>_<f>`; tags are labels. So a series written by remote write keeps its
 * Prometheus name and labels, and line protocol's `cpu,host=a usage=1` answers as
 * `cpu_usage{host="a"}`.
 */
import { mayTouchMetric, type Access } from '../auth/access.ts';
import type { ChartBucket, QueryEngine } from '../engine/engine.ts';
import { parseSeriesBucketsQuery } from '../engine/query.ts';
import { CodedError, ErrorCode } from '../errors.ts';
import type { GranularityName } from '../query/granularity.ts';
import type { MetricDocument, SeriesDocument } from '../storage/store.ts';
import type { Labels, SelectedSeries } from './evaluate.ts';
import { anchored, matches, type Matcher } from './parse.ts';
import type { Cell } from './windows.ts';

/** The field whose name a metric answers under unchanged. */
export const VALUE_FIELD = 'value';

/** The Prometheus name of `field` of `metric`: the metric's name for {@link VALUE_FIELD}, else `<metric>_<field>`. */
export const promName = (metric: string, field: string) => (field === VALUE_FIELD ? metric : `${metric}_${field}`);

/** A metric's field under its Prometheus name. */
export interface NamedField {
  metric: MetricDocument;
  field: string;
  name: string;
}

/** A series of a metric's field as a selector matched it: the series, the field and its labels (the name among them). */
export interface MatchedSeries {
  series: SeriesDocument;
  field: string;
  labels: Labels;
  counter: boolean;
}

/** The bucket widths a query may be read at (UTC, aligned to the epoch), finest first, with their granularities. */
export const WIDTHS: readonly { name: GranularityName; ms: number }[] = [
  { name: 'MINUTE', ms: 60_000 },
  { name: 'TWO_MINUTES', ms: 120_000 },
  { name: 'FIVE_MINUTES', ms: 300_000 },
  { name: 'TEN_MINUTES', ms: 600_000 },
  { name: 'FIFTEEN_MINUTES', ms: 900_000 },
  { name: 'THIRTY_MINUTES', ms: 1_800_000 },
  { name: 'HOUR', ms: 3_600_000 },
  { name: 'TWO_HOURS', ms: 7_200_000 },
  { name: 'THREE_HOURS', ms: 10_800_000 },
  { name: 'SIX_HOURS', ms: 21_600_000 },
  { name: 'TWELVE_HOURS', ms: 43_200_000 },
  { name: 'DAY', ms: 86_400_000 },
];

/** A series' labels: its tags and its name. */
function labelsOf(series: SeriesDocument, name: string): Labels {
  return { ...series.tags, __name__: name };
}

/** Simple regular expressions Grafana writes for multi-value variables (`a|b|c`, `(a|b)`): their literal alternatives, else null. */
function literalAlternatives(pattern: string): string[] | null {
  const inner = /^\((.*)\)$/.test(pattern) ? pattern.slice(1, -1) : pattern;
  const parts = inner.split('|');
  const unescaped = parts.map((part) => part.replace(/\\([.\\+*?[^\]$(){}=!<>|:\-/])/g, '$1'));
  return parts.every((part) => /^(?:[A-Za-z0-9_\-:/ ]|\\[.\\+*?[^\]$(){}=!<>|:\-/])+$/.test(part)) ? unescaped : null;
}

/**
 * The series data of one request: the metrics the token may read (listed once), and the
 * series and buckets of selectors, read through `engine`.
 */
export class PromSource {
  private allMetrics: Promise<MetricDocument[]> | null = null;
  private metricsList: Promise<MetricDocument[]> | null = null;

  constructor(
    readonly engine: QueryEngine,
    private readonly access: Access,
  ) {}

  /** Every metric, sorted by name, listed once per request. */
  private everyMetric(): Promise<MetricDocument[]> {
    this.allMetrics ??= this.engine.metrics();
    return this.allMetrics;
  }

  /** Every metric the token may read, sorted by name. */
  metrics(): Promise<MetricDocument[]> {
    this.metricsList ??= this.everyMetric().then((all) => all.filter((metric) => mayTouchMetric(this.access, metric._id)));
    return this.metricsList;
  }

  /** Every metric's fields under their Prometheus names, in name order. */
  async namedFields(): Promise<NamedField[]> {
    const named = (await this.metrics()).flatMap((metric) =>
      metric.fields.map((field) => ({ metric, field, name: promName(metric._id, field) })),
    );
    return named.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * The series matching `matchers` (Prometheus' rules: a label a series lacks has the
   * value `""`; regular expressions are anchored), at most the request's series budget.
   * @throws CodedError FORBIDDEN when `__name__="x"` names a metric the token may not
   * read; TOO_MANY_SERIES past the budget (`MAX_SERIES`); QUERY_TIMEOUT.
   */
  async select(matchers: readonly Matcher[]): Promise<MatchedSeries[]> {
    const nameMatchers = matchers.filter((matcher) => matcher.name === '__name__');
    const labelMatchers = matchers.filter((matcher) => matcher.name !== '__name__');
    const compiled = new Map(matchers.map((matcher) => [matcher, new RegExp(anchored(matcher), 'u')]));
    const exact = nameMatchers.find((matcher) => matcher.op === '=');
    if (exact !== undefined) {
      const all = await this.everyMetric();
      const named = all.some((metric) => metric.fields.some((field) => promName(metric._id, field) === exact.value));
      const allowed = all.some(
        (metric) => mayTouchMetric(this.access, metric._id) && metric.fields.some((field) => promName(metric._id, field) === exact.value),
      );
      if (named && !allowed) {
        throw new CodedError(
          ErrorCode.FORBIDDEN,
          `The API token may not read ${exact.value} (it is limited to metric names starting with ${this.access.prefixes!.map((prefix) => `"${prefix}"`).join(', ')})`,
        );
      }
    }
    const fields = (await this.namedFields()).filter(({ name }) =>
      nameMatchers.every((matcher) => matches(matcher, name, compiled.get(matcher))),
    );
    const byMetric = new Map<string, NamedField[]>();
    for (const field of fields) {
      const list = byMetric.get(field.metric._id);
      if (list === undefined) byMetric.set(field.metric._id, [field]);
      else list.push(field);
    }
    const where = labelMatchers.flatMap((matcher) => {
      if (matcher.op === '=' && matcher.value !== '') return [{ key: matcher.name, in: [matcher.value] }];
      if (matcher.op === '=~') {
        const values = literalAlternatives(matcher.value);
        if (values !== null && !values.includes('')) return [{ key: matcher.name, in: values }];
      }
      return [];
    });
    const validWhere = where.filter((filter) => /^[A-Za-z_][A-Za-z0-9_-]*$/.test(filter.key) && !filter.key.startsWith('__'));
    if (validWhere.length < where.length) return [];
    const found: MatchedSeries[] = [];
    for (const [metric, named] of byMetric) {
      const filters = validWhere.filter((filter, i) => validWhere.findIndex((other) => other.key === filter.key) === i);
      const series = await this.listSeries(metric, filters);
      for (const entry of series) {
        for (const { field, name, metric: doc } of named) {
          if (!entry.fields.includes(field)) continue;
          const labels = labelsOf(entry, name);
          if (!labelMatchers.every((matcher) => matches(matcher, labels[matcher.name] ?? '', compiled.get(matcher)))) continue;
          found.push({ series: entry, field, labels, counter: doc.kind === 'counter' });
        }
      }
    }
    return found;
  }

  /**
   * The series of `metric` matching `where`, all of them or a refusal: at most what the
   * request's series budget has left.
   * @throws InputError TOO_MANY_SERIES.
   */
  private async listSeries(metric: string, where: { key: string; in: string[] }[]): Promise<SeriesDocument[]> {
    const { maxSeries } = this.engine.budget.limits;
    const left = this.engine.budget.remaining('series');
    const limit = Math.min(maxSeries, left + 1);
    if (limit < 1) this.engine.budget.refuse('series', maxSeries + 1, `the series of ${metric}`);
    const series = await this.engine.listSeries(metric, where, limit);
    if (series.length === limit && limit === maxSeries) {
      this.engine.budget.refuse('series', maxSeries + 1, `the series of ${metric}: ${maxSeries.toLocaleString('en-US')} or more`);
    }
    return series;
  }

  /**
   * The buckets of `field` of each matched series over `[from, to)` (ms, whole minutes)
   * at `granularity`, as cells in time order: count, sum, min, max, first and last
   * reading, and for a counter the reset-aware increase inside each bucket; merged
   * sketches when `sketch`. Read with one pipeline per field batch (the engine's loader).
   * @throws InputError TOO_MANY_BUCKETS, DETAIL_EXPIRED; ServiceError QUERY_TIMEOUT.
   */
  async cells(
    matched: readonly MatchedSeries[],
    range: { from: number; to: number; granularity: GranularityName },
    needs: { increase: boolean; sketch: boolean },
  ): Promise<SelectedSeries[]> {
    if (range.to <= range.from) return matched.map((entry) => ({ labels: entry.labels, cells: [] }));
    const answers = await Promise.all(
      matched.map((entry) => {
        const query = parseSeriesBucketsQuery(
          { field: entry.field, from: range.from, to: range.to, granularity: range.granularity, fill: 'NONE' },
          { firstLast: true, sketch: needs.sketch, counter: needs.increase && entry.counter },
        );
        return this.engine.seriesBuckets(entry.series, query);
      }),
    );
    return matched.map((entry, i) => ({ labels: entry.labels, cells: cellsOf(answers[i]!, entry.counter && needs.increase) }));
  }
}

/**
 * Buckets as cells. The engine's `increase` of a bucket includes the reset-aware
 * difference from the last reading before it (in the range read), which is taken out
 * again here: a cell's `inside` is the increase between its own first and last reading.
 */
export function cellsOf(buckets: readonly ChartBucket[], counter: boolean): Cell[] {
  const cells: Cell[] = [];
  for (const bucket of buckets) {
    if (bucket.count === 0) continue;
    const start = bucket.start.getTime();
    const avg = bucket.avg ?? 0;
    const first = bucket.first ?? { t: start, v: avg };
    const last = bucket.last ?? { t: bucket.end.getTime() - 1, v: avg };
    let inside: number | null = null;
    if (counter && bucket.increase !== null) {
      const previous = cells[cells.length - 1];
      inside =
        previous === undefined ? bucket.increase : bucket.increase - (first.v >= previous.last.v ? first.v - previous.last.v : first.v);
    }
    cells.push({
      start,
      n: bucket.count,
      sum: bucket.sum ?? 0,
      min: bucket.min ?? avg,
      max: bucket.max ?? avg,
      first,
      last,
      inside,
      sketch: bucket.sketch,
    });
  }
  return cells;
}
