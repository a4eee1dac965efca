/**
 * One PromQL query from text to values: parse (`parse.ts`), find the series of every
 * selector and read their buckets at the width that answers the query's windows
 * (`source.ts`), evaluate at every evaluation time (`evaluate.ts`), and shape the
 * answer as Prometheus' HTTP API does (`resultType` and `result`).
 *
 * **The width of the buckets.** A selector is read in buckets of one width for the
 * whole query, from one minute to one day ({@link WIDTHS}). When the evaluation times
 * (start and step), the selector's range (or the 5-minute lookback of an instant
 * selector) and its offset are all whole multiples of a width, every window is a run of
 * whole buckets, and the answer is Prometheus' own (see `windows.ts`): the coarsest such
 * width is read, the cheapest. A reading exactly on a bucket's start with others after
 * it in the same bucket would be cut by a window ending there: the selector is read
 * again in minutes then, the finest stored level. When no width fits (a step of 15 s, an
 * instant query at a time within a minute), windows are answered from the buckets of
 * one minute covering them, the finest, or from the finest width whose buckets fit the
 * request's budget.
 */
import { ErrorCode, InputError } from '../errors.ts';
import { FUNCTIONS } from './functions.ts';
import { evaluate, labelsKey, selectorsOf, type Labels, type SelectedSeries, type Value } from './evaluate.ts';
import { parsePromQL, type VectorSelector } from './parse.ts';
import { WIDTHS, type MatchedSeries, type PromSource } from './source.ts';

/** The evaluation times of a query: one for an instant query (`stepMs` 0), else `start, start + step, ... <= end` (ms). */
export interface QueryTimes {
  start: number;
  end: number;
  stepMs: number;
}

/** Grafana's and Prometheus' limit on the points of one series of a range query. */
export const MAX_POINTS = 11_000;

/** The evaluation times of `range`. */
export function timesOf(range: QueryTimes): number[] {
  if (range.stepMs === 0) return [range.start];
  const times: number[] = [];
  for (let time = range.start; time <= range.end; time += range.stepMs) times.push(time);
  return times;
}

const floorTo = (ms: number, width: number) => Math.floor(ms / width) * width;

/** How many buckets reading `series` series over `[from, to)` at `width` reserves (a counter's increase counts twice, a sketch ten times). */
function costOf(series: number, from: number, to: number, width: number, needs: { increase: boolean; sketch: boolean }) {
  return series * Math.ceil((to - from) / width) * (needs.increase ? 2 : 1) * (needs.sketch ? 10 : 1);
}

/** One selector of the query with the window it is read for, the series it matched and what its function needs. */
interface Planned {
  selector: VectorSelector;
  rangeMs: number;
  matched: MatchedSeries[];
  needs: { increase: boolean; sketch: boolean };
}

/** Smallest width a sketch-reading selector is read at: quarter hours keep sketches (docs/statistics.md). */
const SKETCH_WIDTH_MS = 15 * 60_000;

/**
 * The width a selector is read at and whether its windows fall on bucket boundaries
 * (see the module comment): the coarsest width dividing the step, start, range and
 * offset; else the finest whose buckets fit `budget` (at least quarter hours for sketches).
 */
export function chooseWidth(
  times: QueryTimes,
  plan: Pick<Planned, 'rangeMs' | 'needs'> & { offsetMs: number; series: number },
  budget: number,
): { width: (typeof WIDTHS)[number]; aligned: boolean } {
  const candidates = WIDTHS.filter((width) => !plan.needs.sketch || width.ms >= SKETCH_WIDTH_MS);
  const divides = (width: number) =>
    times.stepMs % width === 0 && times.start % width === 0 && plan.rangeMs % width === 0 && plan.offsetMs % width === 0;
  const aligned = candidates.filter((width) => divides(width.ms));
  if (aligned.length > 0) return { width: aligned[aligned.length - 1]!, aligned: true };
  const { from, to } = readRange(times, plan.rangeMs, plan.offsetMs, candidates[0]!.ms);
  const fitting = candidates.find((width) => costOf(plan.series, from, to, width.ms, plan.needs) <= budget);
  return { width: fitting ?? candidates[0]!, aligned: false };
}

/** The span of buckets a selector reads: from the bucket holding its first window's start to the one holding its last window's end. */
function readRange(times: QueryTimes, rangeMs: number, offsetMs: number, width: number) {
  const from = floorTo(times.start - offsetMs - rangeMs, width);
  const to = floorTo(times.end - offsetMs, width) + width;
  return { from: Math.max(0, from), to: Math.max(0, to) };
}

/** True when a bucket's first reading lies exactly at its start and it holds more (a window ending there cuts it). */
const cutAtStart = (series: readonly SelectedSeries[]) =>
  series.some((entry) => entry.cells.some((cell) => cell.n > 1 && cell.first.t === cell.start));

/**
 * Evaluates PromQL `text` at the times of `range` over the data of `source`.
 * @throws PromQLError for a query that does not parse or is not supported; CodedError
 * FORBIDDEN, InputError TOO_MANY_SERIES, TOO_MANY_BUCKETS, DETAIL_EXPIRED, ServiceError QUERY_TIMEOUT.
 */
export async function runPromQL(source: PromSource, text: string, range: QueryTimes): Promise<{ value: Value; times: number[] }> {
  const expr = parsePromQL(text);
  const times = timesOf(range);
  const wanted = selectorsOf(expr);
  const plans: Planned[] = await Promise.all(
    wanted.map(async ({ selector, rangeMs, func }) => {
      const needs = FUNCTIONS[func ?? '']?.needs;
      return {
        selector,
        rangeMs,
        matched: await source.select(selector.matchers),
        needs: { increase: needs === 'increase', sketch: needs === 'sketch' },
      };
    }),
  );
  const selected = new Map<VectorSelector, SelectedSeries[]>();
  const reads = plans.map((plan) => {
    const { width, aligned } = chooseWidth(
      range,
      { rangeMs: plan.rangeMs, needs: plan.needs, offsetMs: plan.selector.offsetMs, series: plan.matched.length },
      source.engine.budget.remaining('buckets'),
    );
    const span = readRange(range, plan.rangeMs, plan.selector.offsetMs, width.ms);
    return { plan, width, aligned, span };
  });
  await Promise.all(
    reads.map(async ({ plan, width, aligned, span }) => {
      let series = await source.cells(plan.matched, { ...span, granularity: width.name }, plan.needs);
      const minute = WIDTHS[0]!;
      if (aligned && width.ms > minute.ms && !plan.needs.sketch && cutAtStart(series)) {
        const finer = readRange(range, plan.rangeMs, plan.selector.offsetMs, minute.ms);
        if (costOf(plan.matched.length, finer.from, finer.to, minute.ms, plan.needs) <= source.engine.budget.remaining('buckets')) {
          series = await source.cells(plan.matched, { ...finer, granularity: minute.name }, plan.needs);
        }
      }
      selected.set(plan.selector, series);
    }),
  );
  return { value: evaluate(expr, { times, selected }), times };
}

/** A float as Prometheus writes sample values: Go's `strconv.FormatFloat(v, 'f', -1, 64)` (no exponent), `NaN`, `+Inf`, `-Inf`. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  const text = String(value);
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (match === null) return text;
  const [, sign, lead, rest = '', exponentText] = match;
  const digits = lead! + rest;
  const exponent = Number(exponentText);
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  return `${sign}${digits}${'0'.repeat(Math.max(0, exponent - rest.length))}`;
}

/** Labels with their names sorted, as Prometheus lists them. */
function sortedLabels(labels: Labels): Labels {
  return Object.fromEntries(
    Object.keys(labels)
      .sort()
      .map((name) => [name, labels[name]!]),
  );
}

/** Compares label sets as Prometheus orders the series of a matrix. */
const compareLabels = (a: Labels, b: Labels) => {
  const x = labelsKey(a);
  const y = labelsKey(b);
  return x < y ? -1 : x > y ? 1 : 0;
};

/** The `data` of a range query: a matrix, every series with its samples (`[seconds, "value"]`), sorted by labels. */
export function matrixData(value: Value, times: readonly number[]) {
  if (value.type === 'string') throw new InputError(ErrorCode.INVALID_ARGUMENT, 'a string cannot be the value of a range query');
  const series =
    value.type === 'scalar'
      ? [{ metric: {}, values: value.values.map((v, i) => [times[i]! / 1000, formatValue(v)]) }]
      : value.series
          .map((entry) => ({
            metric: sortedLabels(entry.labels),
            values: entry.values.flatMap((v, i) => (v === undefined ? [] : [[times[i]! / 1000, formatValue(v)]])),
          }))
          .filter((entry) => entry.values.length > 0)
          .sort((a, b) => compareLabels(a.metric, b.metric));
  return { resultType: 'matrix', result: series };
}

/** The `data` of an instant query: a vector (`value: [seconds, "value"]` per series) or a scalar. */
export function instantData(value: Value, time: number) {
  if (value.type === 'scalar') return { resultType: 'scalar', result: [time / 1000, formatValue(value.values[0]!)] };
  if (value.type === 'string') return { resultType: 'string', result: [time / 1000, value.value] };
  return {
    resultType: 'vector',
    result: value.series
      .filter((entry) => entry.values[0] !== undefined)
      .map((entry) => ({ metric: sortedLabels(entry.labels), value: [time / 1000, formatValue(entry.values[0]!)] })),
  };
}
