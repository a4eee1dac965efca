/**
 * The SHOW statements Grafana's query editor sends (measurements, tag keys, tag values,
 * field keys), answered from the series registry for the metrics the token may read,
 * and the FROM clause's metrics with the series a condition selects.
 */
import { mayTouchMetric } from '../auth/access.ts';
import { CodedError, ErrorCode } from '../errors.ts';
import type { MetricDocument, SeriesDocument } from '../storage/store.ts';
import type { Condition, Source, Statement } from './parse.ts';
import type { ExecutionContext, ResultSeries } from './context.ts';
import { compile, splitCondition, tagFilters, tagsMatch } from './conditions.ts';

/** The metrics a FROM clause names that the token may read (a named one it may not: FORBIDDEN). */
export async function metricsOf(sources: readonly Source[], context: ExecutionContext): Promise<MetricDocument[]> {
  const all = await context.engine.metrics();
  if (sources.length === 0) return all.filter((metric) => mayTouchMetric(context.access, metric._id));
  const found = new Map<string, MetricDocument>();
  for (const source of sources) {
    if (source.kind === 'name') {
      if (!mayTouchMetric(context.access, source.name)) {
        throw new CodedError(
          ErrorCode.FORBIDDEN,
          `The API token may not read measurement "${source.name}" (it is limited to metric names starting with ${context.access.prefixes!.map((prefix) => `"${prefix}"`).join(', ')})`,
        );
      }
      const metric = all.find((entry) => entry._id === source.name);
      if (metric !== undefined) found.set(metric._id, metric);
    } else {
      const regex = compile(source.pattern);
      for (const metric of all) if (regex.test(metric._id) && mayTouchMetric(context.access, metric._id)) found.set(metric._id, metric);
    }
  }
  return [...found.values()].sort((a, b) => (a._id < b._id ? -1 : 1));
}

/**
 * The series of `metric` the request may list (at most its series budget), matching
 * `condition`.
 * @throws InputError TOO_MANY_SERIES.
 */
export async function matchingSeries(
  metric: MetricDocument,
  condition: Condition | null,
  context: ExecutionContext,
): Promise<SeriesDocument[]> {
  const { engine } = context;
  const { maxSeries } = engine.budget.limits;
  const limit = Math.min(maxSeries, engine.budget.remaining('series') + 1);
  if (limit < 1) engine.budget.refuse('series', maxSeries + 1, `the series of ${metric._id}`);
  const filters = (await tagFilters(condition, metric, engine)) ?? [];
  const series = await engine.listSeries(metric._id, filters, limit);
  if (series.length === limit && limit === maxSeries) {
    engine.budget.refuse('series', maxSeries + 1, `the series of ${metric._id}: ${maxSeries.toLocaleString('en-US')} or more`);
  }
  return series.filter((entry) => tagsMatch(condition, entry.tags, metric));
}

/** Applies LIMIT and OFFSET to a list. */
export const page = <T>(list: readonly T[], limit: number | null, offset: number) =>
  list.slice(offset, limit === null ? undefined : offset + limit);

/**
 * `SHOW MEASUREMENTS [WITH MEASUREMENT = | != | =~ | !~ ...] [WHERE ...] [LIMIT n] [OFFSET n]`:
 * the names of the metrics the token may read (those with a series the condition
 * selects, when there is one), in the registry's order, as one result series
 * `measurements` (none when empty).
 * @throws CodedError FORBIDDEN, InputError TOO_MANY_SERIES (see `matchingSeries`).
 */
export async function showMeasurements(statement: Extract<Statement, { kind: 'showMeasurements' }>, context: ExecutionContext) {
  let metrics = await metricsOf([], context);
  const filter = statement.with;
  if (filter !== null) {
    const regex = filter.op === '=~' || filter.op === '!~' ? compile(filter.value) : null;
    metrics = metrics.filter((metric) => {
      if (filter.op === '=') return metric._id === filter.value;
      if (filter.op === '!=') return metric._id !== filter.value;
      return regex!.test(metric._id) === (filter.op === '=~');
    });
  }
  const { tags } = splitCondition(statement.condition, context.now);
  if (tags !== null) {
    const kept: MetricDocument[] = [];
    for (const metric of metrics) if ((await matchingSeries(metric, tags, context)).length > 0) kept.push(metric);
    metrics = kept;
  }
  const names = page(
    metrics.map((metric) => metric._id),
    statement.limit,
    statement.offset,
  );
  return names.length === 0 ? [] : [{ name: 'measurements', columns: ['name'], values: names.map((name) => [name]) }];
}

/**
 * `SHOW TAG KEYS [FROM ...] [WHERE ...] [LIMIT n] [OFFSET n]`: per metric, its tag keys
 * (those of the series the condition selects, when there is one), LIMIT and OFFSET per
 * metric, as InfluxDB pages them; a metric without keys gives no result series.
 * @throws CodedError FORBIDDEN, InputError TOO_MANY_SERIES (see `matchingSeries`).
 */
export async function showTagKeys(statement: Extract<Statement, { kind: 'showTagKeys' }>, context: ExecutionContext) {
  const { tags } = splitCondition(statement.condition, context.now);
  const series: ResultSeries[] = [];
  for (const metric of await metricsOf(statement.sources, context)) {
    let keys = [...metric.tagKeys].sort();
    if (tags !== null) {
      const found = new Set((await matchingSeries(metric, tags, context)).flatMap((entry) => Object.keys(entry.tags)));
      keys = keys.filter((key) => found.has(key));
    }
    keys = page(keys, statement.limit, statement.offset);
    if (keys.length > 0) series.push({ name: metric._id, columns: ['tagKey'], values: keys.map((key) => [key]) });
  }
  return series;
}

/**
 * `SHOW TAG VALUES [FROM ...] WITH KEY = | != | =~ | !~ ... [WHERE ...]`: per metric,
 * the `[key, value]` pairs of its series (those the condition selects), keys and then
 * values sorted, paged per metric.
 * @throws CodedError FORBIDDEN, InputError TOO_MANY_SERIES (see `matchingSeries`).
 */
export async function showTagValues(statement: Extract<Statement, { kind: 'showTagValues' }>, context: ExecutionContext) {
  const { tags } = splitCondition(statement.condition, context.now);
  const { key } = statement;
  const keyRegex = key.op === '=~' || key.op === '!~' ? compile(key.pattern) : null;
  const wanted = (metric: MetricDocument) =>
    metric.tagKeys.filter((tagKey) =>
      key.op === '='
        ? key.keys.includes(tagKey)
        : key.op === '!='
          ? !key.keys.includes(tagKey)
          : keyRegex!.test(tagKey) === (key.op === '=~'),
    );
  const series: ResultSeries[] = [];
  for (const metric of await metricsOf(statement.sources, context)) {
    const pairs: [string, string][] = [];
    const keys = wanted(metric).sort();
    if (keys.length === 0) continue;
    const filters = await tagFilters(tags, metric, context.engine);
    if (filters !== null) {
      for (const tagKey of keys) {
        for (const value of await context.engine.tagValues(metric._id, tagKey, filters)) pairs.push([tagKey, value]);
      }
    } else {
      const found = await matchingSeries(metric, tags, context);
      for (const tagKey of keys) {
        const values = new Set(found.flatMap((entry) => (entry.tags[tagKey] === undefined ? [] : [entry.tags[tagKey]!])));
        for (const value of [...values].sort()) pairs.push([tagKey, value]);
      }
    }
    const shown = page(pairs, statement.limit, statement.offset);
    if (shown.length > 0) series.push({ name: metric._id, columns: ['key', 'value'], values: shown });
  }
  return series;
}

/**
 * `SHOW FIELD KEYS [FROM ...] [LIMIT n] [OFFSET n]`: per metric, its fields sorted, each
 * of type `float` (every field value is stored as a double).
 * @throws CodedError FORBIDDEN for a named metric the token may not read.
 */
export async function showFieldKeys(statement: Extract<Statement, { kind: 'showFieldKeys' }>, context: ExecutionContext) {
  const series: ResultSeries[] = [];
  for (const metric of await metricsOf(statement.sources, context)) {
    const fields = page([...metric.fields].sort(), statement.limit, statement.offset);
    if (fields.length > 0)
      series.push({ name: metric._id, columns: ['fieldKey', 'fieldType'], values: fields.map((field) => [field, 'float']) });
  }
  return series;
}
