import type { ChartBucket } from '../engine/engine.ts';
import { parseAggregateQuery, parseBucketsQuery, parseSeriesAggregateQuery, parseSeriesBucketsQuery } from '../engine/query.ts';
import { CodedError, ErrorCode } from '../errors.ts';
import type { AggregateResult } from '../query/shape.ts';
import type { Summary } from '../model/stats.ts';
import type { GranularityName } from '../query/granularity.ts';
import { formatLocal, normalizeTimeZone, UTC } from '../query/zone.ts';
import type { MetricDocument } from '../storage/store.ts';
import { WIDTHS } from '../promql/source.ts';
import type { Condition, Fill, SelectStatement, Statement, ValueExpr } from './parse.ts';
import { type Acc, type Call, accOf, aggregateValue, callKey, callsOf, columnNames, fieldValue, mergeAcc } from './aggregates.ts';
import { type ExecutionContext, RETENTION_POLICY, type ResultSeries, StatementError } from './context.ts';
import { type SplitCondition, splitCondition, tagFilters } from './conditions.ts';
import { matchingSeries, metricsOf, page, showFieldKeys, showMeasurements, showTagKeys, showTagValues } from './show.ts';

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
