/**
 * Answers parsed InfluxQL statements (`parse.ts`) from the stored data, through the
 * query engine of the request (`engine/engine.ts`): a measurement is a metric, tags are
 * tags, fields are fields. Each statement gets one result in InfluxDB 1.x's shape
 * (`{statement_id, series: [{name, tags, columns, values}]}` or `{statement_id, error}`).
 *
 * **SELECT with GROUP BY time(interval[, offset]).** The intervals are InfluxQL's,
 * aligned to the Unix epoch plus the offset. They are read as bucket lists of the
 * coarsest granularity that divides them (`time(1h)` as HOUR buckets, `time(20m)` as
 * TEN_MINUTES buckets merged two by two); `tz()` uses the engine's time-zone buckets
 * (the interval must then be a granularity: 1m to 30m, 1h, 2h, 3h, 6h, 12h, 1d, 7d). Tag
 * conditions that are an AND of conditions on one tag key each, every one an OR of `=`
 * and `=~`, become the engine's tag filters and the query is one grouped bucket query,
 * as GraphQL's `buckets` (rollups and day summaries answer it where they can). Other
 * conditions (`!=`, `!~`, OR across keys) are evaluated on the series registry, and the
 * matching series' buckets are read and merged per group here.
 *
 * The aggregates, with InfluxQL's definitions: `mean`, `count`, `sum`, `min`, `max`,
 * `first`, `last` exact; `spread` is max - min; `stddev` is the sample standard
 * deviation (exact from one bucket list; merged from several buckets or series it is
 * equal to within floating-point rounding); `percentile(f, N)` is the value of
 * nearest rank `floor(count x N / 100 + 0.5) - 1` and `median` the middle value (the
 * mean of the two middle ones for an even count), both read from the merged quantile
 * sketches within 1% (null where a bucket has no complete sketch).
 */
import { mayTouchMetric, type Access } from '../auth/access.ts';
import type { ChartBucket, QueryEngine } from '../engine/engine.ts';
import { parseAggregateQuery, parseBucketsQuery, parseSeriesAggregateQuery, parseSeriesBucketsQuery } from '../engine/query.ts';
import { CodedError, ErrorCode } from '../errors.ts';
import type { AggregateResult } from '../query/shape.ts';
import type { Summary, TimedValue } from '../model/stats.ts';
import type { SketchBins } from '../model/sketch.ts';
import type { GranularityName } from '../query/granularity.ts';
import { formatLocal, normalizeTimeZone, UTC } from '../query/zone.ts';
import type { MetricDocument, SeriesDocument } from '../storage/store.ts';
import { valueAtRank } from '../promql/windows.ts';
import { WIDTHS } from '../promql/source.ts';
import type { Condition, Fill, Operand, SelectStatement, Source, Statement, ValueExpr } from './parse.ts';

/** A statement that parses but cannot be answered: its result's `error`. */
export class StatementError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StatementError';
  }
}

/** One series of a statement's result. */
export interface ResultSeries {
  name: string;
  tags?: Record<string, string>;
  columns: string[];
  values: unknown[][];
}

/** One statement's result. */
export interface StatementResult {
  statement_id: number;
  series?: ResultSeries[];
  error?: string;
}

/** What statements are answered with: the request's engine and access, the time of the request, how times are written. */
export interface ExecutionContext {
  engine: QueryEngine;
  access: Access;
  /** `now()`, ms since the epoch. */
  now: number;
  /** `epoch` of the request (`ns`, `u`, `ms`, `s`, `m`, `h`), or null for RFC 3339 text. */
  epoch: string | null;
  /** The `db` of the request (any name is accepted: one database holds every metric). */
  database: string;
  /** The scopes a statement needs, checked by the route: true when the token may write (CREATE DATABASE). */
  mayWrite: boolean;
}

/** The only retention policy: everything is kept as each metric's retention (`setRetention`) says. */
export const RETENTION_POLICY = 'autogen';

/** Aggregates this server computes, by InfluxQL name. */
const AGGREGATES = new Set(['mean', 'median', 'count', 'sum', 'min', 'max', 'first', 'last', 'spread', 'stddev', 'percentile']);

/** Milliseconds per unit of `epoch`. */
const EPOCH_UNITS: Record<string, number> = { ns: 1e-6, u: 1e-3, µ: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A time as the request wants it: an integer in the `epoch` unit, or RFC 3339 (with the zone's offset under `tz()`). */
function formatTime(ms: number, context: ExecutionContext, zone: string): number | string {
  if (context.epoch !== null) {
    const unit = EPOCH_UNITS[context.epoch]!;
    return unit < 1 ? ms * Math.round(1 / unit) : Math.floor(ms / unit);
  }
  if (zone !== UTC) return formatLocal(ms, zone);
  return new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
}

// ---------------------------------------------------------------------------------
// Conditions

/** The time bounds of a condition (`[from, to)`, ms; null where it sets none) and its tag condition. */
interface SplitCondition {
  from: number | null;
  to: number | null;
  tags: Condition | null;
}

const isTimeRef = (operand: Operand) => operand.kind === 'ref' && operand.name.toLowerCase() === 'time';

/** The instant of a time operand: `now()` plus or minus durations, a duration literal (ms since the epoch), a number (ns), or a time string. */
function instantOf(operand: Operand, now: number): number {
  switch (operand.kind) {
    case 'now':
      return now;
    case 'duration':
      return operand.ms;
    case 'number':
      return operand.value / 1e6;
    case 'string': {
      const text = /^\d{4}-\d{2}-\d{2}$/.test(operand.value) ? `${operand.value}T00:00:00Z` : operand.value.replace(' ', 'T');
      const ms = Date.parse(/[zZ]|[+-]\d{2}:\d{2}$/.test(text) ? text : `${text}Z`);
      if (Number.isNaN(ms)) throw new StatementError(`invalid time: '${operand.value}' (use RFC 3339, e.g. '2024-01-01T00:00:00Z')`);
      return ms;
    }
    case 'binary': {
      const lhs = instantOf(operand.lhs, now);
      const rhs = operand.rhs.kind === 'duration' ? operand.rhs.ms : instantOf(operand.rhs, now);
      return operand.op === '+' ? lhs + rhs : lhs - rhs;
    }
    default:
      throw new StatementError('a time must be compared with now(), a time literal or a time string');
  }
}

/**
 * Splits a WHERE condition into its time bounds (comparisons of `time` joined to the rest
 * by AND) and the condition on tags.
 * @throws StatementError for `time` under an OR, or compared with `=`/`!=`.
 */
export function splitCondition(condition: Condition | null, now: number): SplitCondition {
  const split: SplitCondition = { from: null, to: null, tags: null };
  const visit = (node: Condition): Condition | null => {
    if (node.kind === 'and') {
      const lhs = visit(node.lhs);
      const rhs = visit(node.rhs);
      return lhs === null ? rhs : rhs === null ? lhs : { kind: 'and', lhs, rhs };
    }
    if (node.kind === 'compare' && (isTimeRef(node.lhs) || isTimeRef(node.rhs))) {
      const flipped = isTimeRef(node.rhs);
      const other = flipped ? node.lhs : node.rhs;
      const at = instantOf(other, now);
      const op = flipped ? ({ '<': '>', '<=': '>=', '>': '<', '>=': '<=' } as Record<string, string>)[node.op] : node.op;
      if (op === '>=' || op === '>') {
        const from = op === '>' ? at + 1 : at;
        split.from = split.from === null ? from : Math.max(split.from, from);
      } else if (op === '<=' || op === '<') {
        const to = op === '<=' ? at + 1 : at;
        split.to = split.to === null ? to : Math.min(split.to, to);
      } else throw new StatementError(`time can only be compared with <, <=, > and >=, not ${node.op}`);
      return null;
    }
    if (containsTime(node)) throw new StatementError('time conditions must be joined to the others with AND, not OR');
    return node;
  };
  split.tags = condition === null ? null : visit(condition);
  return split;
}

function containsTime(node: Condition): boolean {
  if (node.kind === 'compare') return isTimeRef(node.lhs) || isTimeRef(node.rhs);
  return containsTime(node.lhs) || containsTime(node.rhs);
}

/** A tag comparison's key and what it compares with. */
function tagComparison(node: Extract<Condition, { kind: 'compare' }>, metric: MetricDocument | null) {
  if (node.lhs.kind !== 'ref') throw new StatementError('a condition compares a tag key with a string or a regular expression');
  const key = node.lhs.name;
  if (metric?.fields.includes(key) && !metric.tagKeys.includes(key)) {
    throw new StatementError(`conditions on fields ("${key}") are not supported: only tags and time can be compared`);
  }
  if (node.op === '=~' || node.op === '!~') {
    if (node.rhs.kind !== 'regex') throw new StatementError(`${node.op} compares with a regular expression (/.../)`);
    return { key, op: node.op, regex: compile(node.rhs.pattern), value: null };
  }
  if (node.op !== '=' && node.op !== '!=') throw new StatementError(`tags can be compared with =, !=, =~ and !~, not ${node.op}`);
  if (node.rhs.kind !== 'string' && node.rhs.kind !== 'ref')
    throw new StatementError(`a tag is compared with a string ('value'), not ${node.rhs.kind}`);
  return { key, op: node.op, regex: null, value: node.rhs.kind === 'string' ? node.rhs.value : node.rhs.name };
}

/** A regular expression of InfluxQL (Go RE2 syntax, unanchored) as a JavaScript one. */
function compile(pattern: string): RegExp {
  try {
    return new RegExp(pattern, 'u');
  } catch (error) {
    throw new StatementError(`invalid regular expression /${pattern}/: ${(error as Error).message}`);
  }
}

/** Whether a series' tags satisfy a tag condition (a tag the series lacks has the value `''`, as in InfluxDB). */
export function tagsMatch(condition: Condition | null, tags: Record<string, string>, metric: MetricDocument | null = null): boolean {
  if (condition === null) return true;
  if (condition.kind !== 'compare') {
    const lhs = tagsMatch(condition.lhs, tags, metric);
    return condition.kind === 'and' ? lhs && tagsMatch(condition.rhs, tags, metric) : lhs || tagsMatch(condition.rhs, tags, metric);
  }
  const { key, op, regex, value } = tagComparison(condition, metric);
  const actual = tags[key] ?? '';
  if (op === '=') return actual === value;
  if (op === '!=') return actual !== value;
  if (op === '=~') return regex!.test(actual);
  return !regex!.test(actual);
}

/**
 * The engine's tag filters for a tag condition when it is an AND of conditions on one
 * key each, each an OR of `=` (a non-empty value) and `=~` (resolved against the key's
 * values in the registry); null when it is not of that form.
 */
async function tagFilters(
  condition: Condition | null,
  metric: MetricDocument,
  engine: QueryEngine,
): Promise<{ key: string; in: string[] }[] | null> {
  if (condition === null) return [];
  const clauses: Condition[] = [];
  const flatten = (node: Condition) => {
    if (node.kind === 'and') {
      flatten(node.lhs);
      flatten(node.rhs);
    } else clauses.push(node);
  };
  flatten(condition);
  const filters = new Map<string, Set<string>>();
  for (const clause of clauses) {
    const alternatives: Extract<Condition, { kind: 'compare' }>[] = [];
    const collect = (node: Condition): boolean => {
      if (node.kind !== 'compare') return node.kind === 'or' && collect(node.lhs) && collect(node.rhs);
      alternatives.push(node);
      return true;
    };
    if (!collect(clause)) return null;
    const parts = alternatives.map((node) => tagComparison(node, metric));
    const key = parts[0]!.key;
    if (parts.some((part) => part.key !== key || part.op === '!=' || part.op === '!~' || part.value === '')) return null;
    if (parts.some((part) => part.regex?.test(''))) return null;
    if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(key)) return null;
    const values = new Set<string>();
    const needsValues = parts.some((part) => part.regex !== null);
    const known = needsValues ? await engine.tagValues(metric._id, key, []) : [];
    for (const part of parts) {
      if (part.regex === null) values.add(part.value!);
      else for (const value of known) if (part.regex.test(value)) values.add(value);
    }
    const previous = filters.get(key);
    filters.set(key, previous === undefined ? values : new Set([...previous].filter((value) => values.has(value))));
  }
  return [...filters].map(([key, values]) => ({ key, in: [...values].sort() }));
}

// ---------------------------------------------------------------------------------
// Measurements

/** The metrics a FROM clause names that the token may read (a named one it may not: FORBIDDEN). */
async function metricsOf(sources: readonly Source[], context: ExecutionContext): Promise<MetricDocument[]> {
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
async function matchingSeries(metric: MetricDocument, condition: Condition | null, context: ExecutionContext): Promise<SeriesDocument[]> {
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
const page = <T>(list: readonly T[], limit: number | null, offset: number) =>
  list.slice(offset, limit === null ? undefined : offset + limit);

async function showMeasurements(statement: Extract<Statement, { kind: 'showMeasurements' }>, context: ExecutionContext) {
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

async function showTagKeys(statement: Extract<Statement, { kind: 'showTagKeys' }>, context: ExecutionContext) {
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

async function showTagValues(statement: Extract<Statement, { kind: 'showTagValues' }>, context: ExecutionContext) {
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

async function showFieldKeys(statement: Extract<Statement, { kind: 'showFieldKeys' }>, context: ExecutionContext) {
  const series: ResultSeries[] = [];
  for (const metric of await metricsOf(statement.sources, context)) {
    const fields = page([...metric.fields].sort(), statement.limit, statement.offset);
    if (fields.length > 0)
      series.push({ name: metric._id, columns: ['fieldKey', 'fieldType'], values: fields.map((field) => [field, 'float']) });
  }
  return series;
}

// ---------------------------------------------------------------------------------
// SELECT

/** What is merged per group and interval: a bucket's statistics, or several buckets' merged. */
interface Acc {
  n: number;
  sum: number;
  min: number;
  max: number;
  mean: number;
  /** Sum of squared deviations from the mean (population variance x n). */
  m2: number;
  /** The sample standard deviation as the engine computed it, while this holds one bucket; null once merged. */
  sampleStddev: number | null;
  parts: number;
  first: TimedValue | null;
  last: TimedValue | null;
  /** Null when a part had no complete sketch. */
  sketch: SketchBins | null;
}

const before = (a: TimedValue, b: TimedValue) => a.t < b.t || (a.t === b.t && a.v < b.v);

function accOf(summary: Summary): Acc {
  return {
    n: summary.count,
    sum: summary.sum ?? 0,
    min: summary.min ?? Infinity,
    max: summary.max ?? -Infinity,
    mean: summary.avg ?? 0,
    m2: (summary.variance ?? 0) * summary.count,
    sampleStddev: summary.sampleStddev,
    parts: 1,
    first: summary.first,
    last: summary.last,
    sketch: summary.sketch,
  };
}

/** Merges `b` into `a` (Chan et al.'s parallel update for the squared deviations). */
function mergeAcc(a: Acc, b: Acc): void {
  const n = a.n + b.n;
  const delta = b.mean - a.mean;
  a.m2 = a.m2 + b.m2 + (n === 0 ? 0 : (delta * delta * a.n * b.n) / n);
  a.mean = n === 0 ? 0 : a.mean + (delta * b.n) / n;
  a.n = n;
  a.sum += b.sum;
  a.min = Math.min(a.min, b.min);
  a.max = Math.max(a.max, b.max);
  a.parts += b.parts;
  a.sampleStddev = null;
  a.first = a.first === null || b.first === null ? null : before(b.first, a.first) ? b.first : a.first;
  a.last = a.last === null || b.last === null ? null : before(a.last, b.last) ? b.last : a.last;
  if (a.sketch === null || b.sketch === null) a.sketch = null;
  else {
    const merged = new Map(a.sketch);
    for (const [key, count] of b.sketch) merged.set(key, (merged.get(key) ?? 0) + count);
    a.sketch = merged;
  }
}

/** The value of aggregate `name` (with `percent` for percentile) of an interval's statistics; null for an empty one (count: 0). */
export function aggregateValue(name: string, acc: Acc | undefined, percent = 50): number | null {
  if (acc === undefined || acc.n === 0) return null;
  switch (name) {
    case 'count':
      return acc.n;
    case 'sum':
      return acc.sum;
    case 'mean':
      return acc.sum / acc.n;
    case 'min':
      return acc.min;
    case 'max':
      return acc.max;
    case 'spread':
      return acc.max - acc.min;
    case 'first':
      return acc.first?.v ?? null;
    case 'last':
      return acc.last?.v ?? null;
    case 'stddev':
      if (acc.n < 2) return null;
      return acc.parts === 1 && acc.sampleStddev !== null ? acc.sampleStddev : Math.sqrt(Math.max(0, acc.m2) / (acc.n - 1));
    case 'median': {
      if (acc.sketch === null) return null;
      const summary = { sketch: acc.sketch, min: acc.min, max: acc.max };
      const lower = valueAtRank(summary, acc.n, Math.floor((acc.n - 1) / 2));
      const upper = valueAtRank(summary, acc.n, Math.ceil((acc.n - 1) / 2));
      return lower === null || upper === null ? null : (lower + upper) / 2;
    }
    case 'percentile': {
      if (acc.sketch === null) return null;
      const rank = Math.floor((acc.n * percent) / 100 + 0.5) - 1;
      if (rank < 0 || rank >= acc.n) return null;
      return valueAtRank({ sketch: acc.sketch, min: acc.min, max: acc.max }, acc.n, rank);
    }
    default:
      throw new StatementError(`unsupported aggregate ${name}()`);
  }
}

/** One aggregate call of a SELECT: its function, field and percentile. */
interface Call {
  name: string;
  field: string;
  percent: number;
}

/** The calls of a field expression, checked: an aggregate of one field (percentile with a number from 0 to 100). */
function callsOf(expr: ValueExpr, found: Call[]): Call[] {
  switch (expr.kind) {
    case 'call': {
      if (!AGGREGATES.has(expr.name)) {
        throw new StatementError(
          `${expr.name}() is not supported: the aggregates are mean, median, count, sum, min, max, first, last, spread, stddev and percentile`,
        );
      }
      const [field, percent] = expr.args;
      if (field?.kind !== 'ref') throw new StatementError(`${expr.name}() takes a field key (${expr.name}("value"))`);
      if (expr.name === 'percentile') {
        if (expr.args.length !== 2 || percent?.kind !== 'number' || percent.value < 0 || percent.value > 100) {
          throw new StatementError('percentile() takes a field key and a number from 0 to 100 (percentile("value", 95))');
        }
      } else if (expr.args.length !== 1) throw new StatementError(`${expr.name}() takes one field key`);
      found.push({ name: expr.name, field: field.name, percent: percent?.kind === 'number' ? percent.value : 50 });
      return found;
    }
    case 'binary':
      callsOf(expr.lhs, found);
      return callsOf(expr.rhs, found);
    case 'number':
      return found;
    default:
      throw new StatementError('mixing aggregate and non-aggregate queries is not supported: give every field an aggregate such as mean()');
  }
}

/** The value of a field expression for one interval, from its calls' values (null propagates). */
function fieldValue(expr: ValueExpr, values: Map<string, number | null>): number | null {
  switch (expr.kind) {
    case 'call':
      return values.get(callKey(expr)) ?? null;
    case 'number':
      return expr.value;
    case 'binary': {
      const lhs = fieldValue(expr.lhs, values);
      const rhs = fieldValue(expr.rhs, values);
      if (lhs === null || rhs === null) return null;
      const result = expr.op === '+' ? lhs + rhs : expr.op === '-' ? lhs - rhs : expr.op === '*' ? lhs * rhs : rhs === 0 ? null : lhs / rhs;
      return result;
    }
    default:
      return null;
  }
}

const callKey = (expr: Extract<ValueExpr, { kind: 'call' }>) =>
  `${expr.name}(${(expr.args[0] as { name: string }).name}${expr.args[1]?.kind === 'number' ? `,${expr.args[1].value}` : ''})`;

/** A column's name as InfluxDB gives it: the alias, else the first function's name, else the field's. */
function columnNames(fields: SelectStatement['fields']): string[] {
  const names: string[] = [];
  const taken = new Map<string, number>();
  for (const { expr, alias } of fields) {
    let name = alias;
    if (name === null) {
      const first = (function find(node: ValueExpr): string | null {
        if (node.kind === 'call') return node.name;
        if (node.kind === 'ref') return node.name;
        if (node.kind === 'binary') return find(node.lhs) ?? find(node.rhs);
        return null;
      })(expr);
      name = first ?? 'value';
    }
    const seen = taken.get(name) ?? 0;
    taken.set(name, seen + 1);
    names.push(seen === 0 ? name : `${name}_${seen}`);
  }
  return names;
}

/** The granularity an InfluxQL interval is read at, and how many of its buckets make one interval. */
function readWidth(intervalMs: number, offsetMs: number, zone: string): { name: GranularityName; ms: number; weekStart?: 'THURSDAY' } {
  if (intervalMs < 60_000 || intervalMs % 60_000 !== 0) {
    throw new StatementError(
      `GROUP BY time(${intervalMs / 1000}s): intervals are whole minutes, one minute at least (the finest stored level); use time(1m) or coarser, and set the data source's "Min time interval" to 1m`,
    );
  }
  const widths: { name: GranularityName; ms: number; weekStart?: 'THURSDAY' }[] = [
    ...WIDTHS,
    { name: 'WEEK', ms: 7 * 86_400_000, weekStart: 'THURSDAY' },
  ];
  const mod = (value: number, width: number) => ((value % width) + width) % width;
  const fitting = widths.filter((width) => intervalMs % width.ms === 0 && mod(offsetMs, width.ms) === 0);
  const width = fitting[fitting.length - 1]!;
  if (zone !== UTC && (width.ms !== intervalMs || offsetMs !== 0)) {
    throw new StatementError(
      `tz() works with GROUP BY time intervals of 1m, 2m, 5m, 10m, 15m, 30m, 1h, 2h, 3h, 6h, 12h, 1d or 7d without offset`,
    );
  }
  return width;
}

/** A group of a SELECT's answer: its tags (those of GROUP BY), and the statistics of each field by interval start. */
interface Group {
  tags: Record<string, string>;
  byField: Map<string, Map<number, Acc>>;
}

/** The interval start holding `ms`: InfluxQL's epoch-aligned intervals shifted by the offset. */
const intervalStart = (ms: number, intervalMs: number, offsetMs: number) =>
  Math.floor((ms - offsetMs) / intervalMs) * intervalMs + offsetMs;

/** Adds a bucket's statistics into a group's field at its interval. */
function addBucket(group: Group, field: string, start: number, summary: Summary): void {
  if (summary.count === 0) return;
  let intervals = group.byField.get(field);
  if (intervals === undefined) {
    intervals = new Map();
    group.byField.set(field, intervals);
  }
  const acc = intervals.get(start);
  if (acc === undefined) intervals.set(start, accOf(summary));
  else mergeAcc(acc, accOf(summary));
}

const groupKey = (tags: Record<string, string>, keys: readonly string[]) => JSON.stringify(keys.map((key) => tags[key] ?? ''));

/**
 * The range of a SELECT, `[from, to)` in ms: the condition's bounds, or without them the
 * metric's first reading and its last (no later than now); null when it holds nothing.
 */
async function rangeOf(
  split: SplitCondition,
  metric: MetricDocument,
  context: ExecutionContext,
): Promise<{ from: number; to: number } | null> {
  let from = split.from;
  if (from === null) {
    const first = await context.engine.metricReadingTime(metric._id, 'first');
    if (first === null) return null;
    from = first.getTime();
  }
  const minute = 60_000;
  let to = split.to;
  if (to === null) {
    const last = await context.engine.metricReadingTime(metric._id, 'last');
    if (last === null) return null;
    to = Math.min(context.now, last.getTime()) + 1;
  }
  // An upper bound inside a minute takes the whole minute (readings are grouped by
  // minute; Grafana's bound is "now", after which there is nothing); one on a minute's
  // first millisecond (Grafana's `time <= Xms` of a whole-minute range) ends before it.
  if (((to % minute) + minute) % minute > 1) to = Math.ceil(to / minute) * minute;
  const floor = (ms: number) => Math.floor(ms / minute) * minute;
  if (floor(Math.max(0, from)) >= floor(to)) return null;
  return { from: Math.max(0, from), to };
}

/**
 * The groups of a SELECT on one metric: the buckets of each field over the range, merged
 * per group of the GROUP BY tags and per interval (`interval` null: one interval, the range).
 */
async function readGroups(
  metric: MetricDocument,
  statement: SelectStatement,
  calls: readonly Call[],
  range: { from: number; to: number },
  tagCondition: Condition | null,
  groupKeys: readonly string[],
  zone: string,
  context: ExecutionContext,
  intervals: Set<number>,
): Promise<Group[]> {
  const fields = [...new Set(calls.map((call) => call.field))].filter((field) => metric.fields.includes(field));
  const wants = { firstLast: calls.some((call) => call.name === 'first' || call.name === 'last'), counter: false };
  const sketchFields = new Set(calls.filter((call) => call.name === 'median' || call.name === 'percentile').map((call) => call.field));
  const time = statement.groupByTime;
  const width = time === null ? null : readWidth(time.intervalMs, time.offsetMs, zone);
  const groups = new Map<string, Group>();
  const groupOf = (tags: Record<string, string>) => {
    const key = groupKey(tags, groupKeys);
    let group = groups.get(key);
    if (group === undefined) {
      group = { tags: Object.fromEntries(groupKeys.map((tagKey) => [tagKey, tags[tagKey] ?? ''])), byField: new Map() };
      groups.set(key, group);
    }
    return group;
  };
  // Buckets of the interval's own width are its intervals (local ones under tz()); narrower ones are merged into epoch-aligned intervals.
  const startOf = (bucketStart: number) =>
    time === null
      ? 0
      : width!.ms === time.intervalMs && time.offsetMs === 0
        ? bucketStart
        : intervalStart(bucketStart, time.intervalMs, time.offsetMs);
  const args = (field: string) => ({
    field,
    from: range.from,
    to: range.to,
    timeZone: zone,
    ...(width === null ? {} : { granularity: width.name, weekStart: width.weekStart ?? null }),
  });
  const where = await tagFilters(tagCondition, metric, context.engine);
  if (where !== null && groupKeys.every((key) => /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key))) {
    await Promise.all(
      fields.map(async (field) => {
        const selected = { ...wants, sketch: sketchFields.has(field) };
        if (width === null) {
          const results: AggregateResult[] = await context.engine.aggregate(
            parseAggregateQuery({ metric: metric._id, where, groupBy: [...groupKeys], ...args(field) }, selected),
          );
          for (const result of results)
            addBucket(groupOf(Object.fromEntries(result.tags.map((tag) => [tag.key, tag.value]))), field, 0, result);
          return;
        }
        const lists = await context.engine.buckets(
          parseBucketsQuery({ metric: metric._id, where, groupBy: [...groupKeys], fill: 'NULL', ...args(field) }, selected),
        );
        for (const list of lists) {
          const group = groupOf(Object.fromEntries(list.tags.map((tag) => [tag.key, tag.value])));
          for (const bucket of list.buckets) {
            intervals.add(startOf(bucket.start.getTime()));
            addBucket(group, field, startOf(bucket.start.getTime()), bucket);
          }
        }
      }),
    );
  } else {
    const series = await matchingSeries(metric, tagCondition, context);
    await Promise.all(
      series.flatMap((entry) =>
        fields
          .filter((field) => entry.fields.includes(field))
          .map(async (field) => {
            const selected = { ...wants, sketch: sketchFields.has(field) };
            const group = groupOf(entry.tags);
            if (width === null) {
              addBucket(group, field, 0, await context.engine.seriesAggregate(entry, parseSeriesAggregateQuery(args(field), selected)));
              return;
            }
            const buckets: ChartBucket[] = await context.engine.seriesBuckets(
              entry,
              parseSeriesBucketsQuery({ ...args(field), fill: 'NULL' }, selected),
            );
            for (const bucket of buckets) {
              intervals.add(startOf(bucket.start.getTime()));
              addBucket(group, field, startOf(bucket.start.getTime()), bucket);
            }
          }),
      ),
    );
  }
  return [...groups.values()].filter((group) => group.byField.size > 0);
}

/**
 * Applies `fill` to the rows of one series (time first, then one value per column):
 * `none` drops the intervals without readings, a number, `previous` and `linear` fill
 * each column's nulls as InfluxQL does, and `null` leaves them, but for `count`, whose
 * empty intervals count 0 (InfluxDB's rule for `count` under `fill(null)`).
 */
function fillRows(
  rows: (number | null)[][],
  fill: Fill,
  empty: readonly boolean[],
  countColumns: ReadonlySet<number>,
): (number | null)[][] {
  if (fill.kind === 'none') return rows.filter((_row, i) => !empty[i]);
  const columns = rows[0]?.length ?? 0;
  for (let column = 1; column < columns; column++) {
    if (fill.kind === 'null') {
      if (countColumns.has(column)) for (const row of rows) row[column] ??= 0;
    } else if (fill.kind === 'number') {
      for (const row of rows) if (row[column] === null) row[column] = fill.value;
    } else if (fill.kind === 'previous') {
      let previous: number | null = null;
      for (const row of rows) {
        if (row[column] === null) row[column] = previous;
        else previous = row[column]!;
      }
    } else {
      let last = -1;
      for (let i = 0; i < rows.length; i++) {
        if (rows[i]![column] === null) continue;
        if (last >= 0 && i - last > 1) {
          const [t0, v0, t1, v1] = [rows[last]![0]!, rows[last]![column]!, rows[i]![0]!, rows[i]![column]!];
          for (let j = last + 1; j < i; j++) rows[j]![column] = v0 + ((v1 - v0) * (rows[j]![0]! - t0)) / (t1 - t0);
        }
        last = i;
      }
    }
  }
  return rows;
}

async function select(statement: SelectStatement, context: ExecutionContext): Promise<ResultSeries[]> {
  const zone = statement.timeZone === null ? UTC : zoneOf(statement.timeZone);
  const split = splitCondition(statement.condition, context.now);
  const metrics = await metricsOf(statement.sources, context);
  const isRaw = statement.fields.every(({ expr }) => expr.kind === 'ref' || expr.kind === 'wildcard');
  if (isRaw) return rawSelect(statement, metrics, split, zone, context);
  const calls = statement.fields.flatMap(({ expr }) => callsOf(expr, []));
  const columns = ['time', ...columnNames(statement.fields)];
  const countColumns = new Set(statement.fields.flatMap(({ expr }, i) => (expr.kind === 'call' && expr.name === 'count' ? [i + 1] : [])));
  const out: ResultSeries[] = [];
  for (const metric of metrics) {
    const range = await rangeOf(split, metric, context);
    if (range === null) continue;
    const groupKeys = statement.groupByAll ? [...metric.tagKeys].sort() : statement.groupByTags;
    const intervals = new Set<number>();
    const groups = await readGroups(metric, statement, calls, range, split.tags, groupKeys, zone, context, intervals);
    const time = statement.groupByTime;
    for (const group of groups.sort((a, b) => (groupKey(a.tags, groupKeys) < groupKey(b.tags, groupKeys) ? -1 : 1))) {
      const starts = time === null ? [0] : [...intervals].sort((a, b) => a - b);
      const empty = starts.map((start) => [...group.byField.values()].every((byStart) => !byStart.has(start)));
      let rows: (number | null)[][] = starts.map((start) => {
        const values = new Map<string, number | null>();
        for (const { expr } of statement.fields) {
          (function collect(node: ValueExpr) {
            if (node.kind === 'call') {
              const call = callsOf(node, [])[0]!;
              values.set(callKey(node), aggregateValue(call.name, group.byField.get(call.field)?.get(start), call.percent));
            } else if (node.kind === 'binary') {
              collect(node.lhs);
              collect(node.rhs);
            }
          })(expr);
        }
        return [start, ...statement.fields.map(({ expr }) => fieldValue(expr, values))];
      });
      if (time === null) {
        const single =
          statement.fields.length === 1 && statement.fields[0]!.expr.kind === 'call'
            ? (statement.fields[0]!.expr as { name: string }).name
            : null;
        const call = single === 'first' || single === 'last' ? callsOf(statement.fields[0]!.expr, [])[0]! : null;
        const acc = call === null ? undefined : group.byField.get(call.field)?.get(0);
        const at = acc !== undefined ? (call!.name === 'first' ? acc.first?.t : acc.last?.t) : undefined;
        rows[0]![0] = at ?? (split.from === null ? 0 : range.from);
      } else rows = fillRows(rows, statement.fill, empty, countColumns);
      if (statement.descending) rows.reverse();
      rows = page(rows, statement.limit, statement.offset);
      if (rows.length === 0) continue;
      out.push({
        name: metric._id,
        ...(groupKeys.length > 0 ? { tags: group.tags } : {}),
        columns,
        values: rows.map(([at, ...values]) => [formatTime(at!, context, zone), ...values]),
      });
    }
  }
  return page(out, statement.slimit, statement.soffset);
}

function zoneOf(name: string): string {
  try {
    return normalizeTimeZone(name);
  } catch {
    throw new StatementError(`unable to find time zone ${name}`);
  }
}

/**
 * A SELECT of fields and tags without aggregates: answered from each series' latest
 * readings (the newest readings the documents keep, `Series.latest`), oldest first,
 * when they hold every reading of the range; otherwise an error that says to add an
 * aggregate and GROUP BY time().
 */
async function rawSelect(
  statement: SelectStatement,
  metrics: readonly MetricDocument[],
  split: SplitCondition,
  zone: string,
  context: ExecutionContext,
): Promise<ResultSeries[]> {
  if (statement.groupByTime !== null)
    throw new StatementError('GROUP BY time() needs an aggregate: select mean("field") (or another aggregate) instead of "field"');
  const out: ResultSeries[] = [];
  const latestCount = 50;
  for (const metric of metrics) {
    const wildcard = statement.fields.some(({ expr }) => expr.kind === 'wildcard');
    const names = wildcard
      ? [...metric.fields].sort().concat([...metric.tagKeys].sort())
      : statement.fields.map(({ expr }) => (expr as { name: string }).name);
    const columns = ['time', ...(wildcard ? names : columnNames(statement.fields))];
    const groupKeys = statement.groupByAll ? [...metric.tagKeys].sort() : statement.groupByTags;
    const series = await matchingSeries(metric, split.tags, context);
    const from = split.from ?? -Infinity;
    const to = split.to ?? context.now + 1;
    const rowsByGroup = new Map<string, { tags: Record<string, string>; rows: { t: number; values: (number | string | null)[] }[] }>();
    await Promise.all(
      series.map(async (entry) => {
        const readings = await context.engine.latestReadings(entry._id, latestCount);
        const oldest = readings[readings.length - 1];
        if (oldest !== undefined && oldest.t >= from && readings.length > 0) {
          const [first] = await context.engine.readingTimes([entry._id], 'first');
          if (first === null || first === undefined || first.getTime() < oldest.t) {
            throw new StatementError(
              `this server keeps each series' latest ${latestCount} readings only, and the range reaches further back: select an aggregate with GROUP BY time(), e.g. SELECT mean("${names.find((name) => metric.fields.includes(name)) ?? 'value'}") ... GROUP BY time(1m)`,
            );
          }
        }
        const key = groupKey(entry.tags, groupKeys);
        let group = rowsByGroup.get(key);
        if (group === undefined) {
          group = { tags: Object.fromEntries(groupKeys.map((tagKey) => [tagKey, entry.tags[tagKey] ?? ''])), rows: [] };
          rowsByGroup.set(key, group);
        }
        for (const reading of readings) {
          if (reading.t < from || reading.t >= to) continue;
          const values = names.map((name) => (metric.fields.includes(name) ? (reading.f[name] ?? null) : (entry.tags[name] ?? null)));
          if (!values.some((value, i) => value !== null && metric.fields.includes(names[i]!))) continue;
          group.rows.push({ t: reading.t, values });
        }
      }),
    );
    for (const [key, group] of [...rowsByGroup].sort(([a], [b]) => (a < b ? -1 : 1))) {
      void key;
      let rows = group.rows.sort((a, b) => a.t - b.t);
      if (statement.descending) rows.reverse();
      rows = page(rows, statement.limit, statement.offset);
      if (rows.length === 0) continue;
      out.push({
        name: metric._id,
        ...(groupKeys.length > 0 ? { tags: group.tags } : {}),
        columns,
        values: rows.map((row) => [formatTime(row.t, context, zone), ...row.values]),
      });
    }
  }
  return page(out, statement.slimit, statement.soffset);
}

/**
 * Answers one statement.
 * @throws StatementError (its result's error); CodedError FORBIDDEN, InputError TOO_MANY_*,
 * DETAIL_EXPIRED, ServiceError QUERY_TIMEOUT as the engine raises them.
 */
export async function executeStatement(statement: Statement, context: ExecutionContext): Promise<ResultSeries[]> {
  switch (statement.kind) {
    case 'select':
      return select(statement, context);
    case 'showMeasurements':
      return showMeasurements(statement, context);
    case 'showTagKeys':
      return showTagKeys(statement, context);
    case 'showTagValues':
      return showTagValues(statement, context);
    case 'showFieldKeys':
      return showFieldKeys(statement, context);
    case 'showRetentionPolicies':
      return [
        {
          name: '',
          columns: ['name', 'duration', 'shardGroupDuration', 'replicaN', 'default'],
          values: [[RETENTION_POLICY, '0s', '168h0m0s', 1, true]],
        },
      ];
    case 'showDatabases':
      return [{ name: 'databases', columns: ['name'], values: [[context.database]] }];
    case 'createDatabase':
      if (!context.mayWrite) throw new CodedError(ErrorCode.FORBIDDEN, 'CREATE DATABASE needs the "write" scope');
      return [];
  }
}
