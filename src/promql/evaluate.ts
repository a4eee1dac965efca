/**
 * Evaluation of a PromQL expression over the evaluation times of a query (pure: the
 * data comes in as {@link SelectedSeries}, read beforehand by `source.ts`). Every node
 * is evaluated at every time at once, as Prometheus' range evaluation does step by
 * step: a scalar is one number per time, an instant vector a set of series with one
 * value or none per time. Aggregations, binary operators with one-to-one matching and
 * the functions follow Prometheus' definitions (`promql/engine.go`, `functions.go`,
 * `quantile.go`), on the values the range functions give from buckets (`windows.ts`).
 */
import type { AggregateOp, BinaryOp, Expr, MatrixSelector, VectorSelector } from './parse.ts';
import { isComparison, PromQLError } from './parse.ts';
import { RANGE_FUNCTIONS, type RangeFunction } from './functions.ts';
import { instantValue, rangeFunction, type Cell } from './windows.ts';

/** A series' labels, `__name__` among them when it has a name. */
export type Labels = Record<string, string>;

/** One series of an instant vector: its labels and its value at each evaluation time (undefined: no sample there). */
export interface SeriesValues {
  labels: Labels;
  values: (number | undefined)[];
}

/** The value of an expression at every evaluation time. */
export type Value = { type: 'scalar'; values: number[] } | { type: 'vector'; series: SeriesValues[] } | { type: 'string'; value: string };

/** The series a selector matched, each with its buckets in time order. */
export interface SelectedSeries {
  labels: Labels;
  cells: Cell[];
}

/** How long an instant selector looks back for a sample: Prometheus' default `--query.lookback-delta`, 5 minutes. */
export const LOOKBACK_MS = 5 * 60_000;

/** What an evaluation needs: the evaluation times (ms), and the series each selector of the expression matched. */
export interface Evaluation {
  times: readonly number[];
  selected: ReadonlyMap<VectorSelector, readonly SelectedSeries[]>;
}

/** The selectors of an expression with the window each is read for: a range, or the lookback of an instant selector. */
export function selectorsOf(
  expr: Expr,
  found: { selector: VectorSelector; rangeMs: number; func: string | null }[] = [],
  func: string | null = null,
) {
  switch (expr.kind) {
    case 'vector':
      found.push({ selector: expr, rangeMs: LOOKBACK_MS, func: null });
      break;
    case 'matrix':
      found.push({ selector: expr.selector, rangeMs: expr.rangeMs, func });
      break;
    case 'call':
      for (const arg of expr.args) selectorsOf(arg, found, expr.func);
      break;
    case 'aggregate':
      if (expr.param !== null) selectorsOf(expr.param, found);
      selectorsOf(expr.expr, found);
      break;
    case 'binary':
      selectorsOf(expr.lhs, found);
      selectorsOf(expr.rhs, found);
      break;
    case 'unary':
      selectorsOf(expr.expr, found);
      break;
    default:
      break;
  }
  return found;
}

/** A label set as a key: its pairs sorted by name, `__name__` included. */
export function labelsKey(labels: Labels): string {
  return JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((name) => [name, labels[name]]),
  );
}

/** `labels` without `__name__`. */
function withoutName(labels: Labels): Labels {
  const { __name__: _name, ...rest } = labels;
  return rest;
}

/** Every function but these drops the metric name of its series (Prometheus' `functions.go`). */
const KEEPS_NAME = new Set(['last_over_time', 'label_replace']);

class Evaluator {
  constructor(private readonly context: Evaluation) {}

  private get steps(): number {
    return this.context.times.length;
  }

  private scalar(value: number): Value {
    return { type: 'scalar', values: this.context.times.map(() => value) };
  }

  evaluate(expr: Expr): Value {
    switch (expr.kind) {
      case 'number':
        return this.scalar(expr.value);
      case 'string':
        return { type: 'string', value: expr.value };
      case 'vector':
        return this.instant(expr);
      case 'matrix':
        throw new PromQLError('a range vector cannot be evaluated on its own here: give it to a function such as rate()');
      case 'unary': {
        const value = this.evaluate(expr.expr);
        if (expr.op === '+') return value;
        if (value.type === 'scalar') return { type: 'scalar', values: value.values.map((v) => -v) };
        if (value.type !== 'vector') throw new PromQLError('unary minus needs a number or an instant vector');
        return {
          type: 'vector',
          series: value.series.map((series) => ({
            labels: withoutName(series.labels),
            values: series.values.map((v) => (v === undefined ? undefined : -v)),
          })),
        };
      }
      case 'binary':
        return this.binary(expr);
      case 'aggregate':
        return this.aggregate(expr);
      case 'call':
        return this.call(expr);
    }
  }

  private selected(selector: VectorSelector): readonly SelectedSeries[] {
    return this.context.selected.get(selector) ?? [];
  }

  /** An instant selector: each series' latest sample within the lookback of every time (minus the offset). */
  private instant(selector: VectorSelector): Value {
    return {
      type: 'vector',
      series: this.selected(selector).map((series) => ({
        labels: series.labels,
        values: this.context.times.map((time) => instantValue(series.cells, time - selector.offsetMs, LOOKBACK_MS)),
      })),
    };
  }

  private range(func: RangeFunction, matrix: MatrixSelector, q: number[] | null): Value {
    const keep = KEEPS_NAME.has(func);
    return this.checked({
      type: 'vector',
      series: this.selected(matrix.selector).map((series) => ({
        labels: keep ? series.labels : withoutName(series.labels),
        values: this.context.times.map((time, i) =>
          rangeFunction(func, series.cells, time - matrix.selector.offsetMs, matrix.rangeMs, q === null ? 0 : q[i]!),
        ),
      })),
    });
  }

  /** `value` once no two of its series with the same labels have a value at the same time (series of two names, the names dropped). */
  private checked(value: Extract<Value, { type: 'vector' }>): Value {
    checkDuplicates(value.series, this.steps);
    return value;
  }

  private vectorOf(expr: Expr): SeriesValues[] {
    const value = this.evaluate(expr);
    if (value.type !== 'vector') throw new PromQLError('expected an instant vector');
    return value.series;
  }

  private scalarOf(expr: Expr): number[] {
    const value = this.evaluate(expr);
    if (value.type !== 'scalar') throw new PromQLError('expected a scalar');
    return value.values;
  }

  private stringOf(expr: Expr): string {
    const value = this.evaluate(expr);
    if (value.type !== 'string') throw new PromQLError('expected a string');
    return value.value;
  }

  /** A function applied value by value to every series, dropping the metric name. */
  private mapValues(series: SeriesValues[], map: (value: number, step: number) => number): Value {
    return this.checked({
      type: 'vector',
      series: series.map((entry) => ({
        labels: withoutName(entry.labels),
        values: entry.values.map((value, step) => (value === undefined ? undefined : map(value, step))),
      })),
    });
  }

  private call(expr: Extract<Expr, { kind: 'call' }>): Value {
    const { func, args } = expr;
    if ((RANGE_FUNCTIONS as readonly string[]).includes(func)) {
      if (func === 'quantile_over_time') return this.range(func, args[1] as MatrixSelector, this.scalarOf(args[0]!));
      return this.range(func as RangeFunction, args[0] as MatrixSelector, null);
    }
    switch (func) {
      case 'abs':
        return this.mapValues(this.vectorOf(args[0]!), Math.abs);
      case 'clamp_min': {
        const bound = this.scalarOf(args[1]!);
        return this.mapValues(this.vectorOf(args[0]!), (value, step) => Math.max(value, bound[step]!));
      }
      case 'clamp_max': {
        const bound = this.scalarOf(args[1]!);
        return this.mapValues(this.vectorOf(args[0]!), (value, step) => Math.min(value, bound[step]!));
      }
      case 'round': {
        const nearest = args.length > 1 ? this.scalarOf(args[1]!) : this.context.times.map(() => 1);
        // Prometheus: math.Floor(v*toNearestInverse+0.5) / toNearestInverse.
        return this.mapValues(this.vectorOf(args[0]!), (value, step) => {
          const inverse = 1 / nearest[step]!;
          return Math.floor(value * inverse + 0.5) / inverse;
        });
      }
      case 'vector': {
        const values = this.scalarOf(args[0]!);
        return { type: 'vector', series: [{ labels: {}, values: [...values] }] };
      }
      case 'scalar': {
        const series = this.vectorOf(args[0]!);
        const values = this.context.times.map((_time, step) => {
          const present = series.filter((entry) => entry.values[step] !== undefined);
          return present.length === 1 ? present[0]!.values[step]! : NaN;
        });
        return { type: 'scalar', values };
      }
      case 'time':
        return { type: 'scalar', values: this.context.times.map((time) => time / 1000) };
      case 'label_replace':
        return this.labelReplace(args);
      case 'histogram_quantile':
        return this.histogramQuantile(this.scalarOf(args[0]!), this.vectorOf(args[1]!));
      default:
        throw new PromQLError(`function ${func}() is not supported`);
    }
  }

  /** `label_replace(v, dst, replacement, src, regex)`: Prometheus' rule, `$1`/`${name}` expanded; an empty value removes the label. */
  private labelReplace(args: Expr[]): Value {
    const series = this.vectorOf(args[0]!);
    const destination = this.stringOf(args[1]!);
    const replacement = this.stringOf(args[2]!);
    const source = this.stringOf(args[3]!);
    const pattern = this.stringOf(args[4]!);
    let regex: RegExp;
    try {
      regex = new RegExp(`^(?:${pattern})$`, 'u');
    } catch (error) {
      throw new PromQLError(`invalid regular expression in label_replace(): ${pattern}: ${(error as Error).message}`);
    }
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(destination))
      throw new PromQLError(`invalid destination label name in label_replace(): ${destination}`);
    const out = series.map((entry) => {
      const match = regex.exec(entry.labels[source] ?? '');
      if (match === null) return entry;
      const value = replacement.replace(
        /\$(\$|\{(\w+)\}|(\d+)|(\w+))/g,
        (_all, dollar: string, braced?: string, digits?: string, word?: string) => {
          if (dollar === '$') return '$';
          const name = braced ?? digits ?? word!;
          if (/^\d+$/.test(name)) return match[Number(name)] ?? '';
          return match.groups?.[name] ?? '';
        },
      );
      const labels = { ...entry.labels };
      if (value === '') delete labels[destination];
      else labels[destination] = value;
      return { labels, values: entry.values };
    });
    checkDuplicates(out, this.steps);
    return { type: 'vector', series: out };
  }

  /**
   * `histogram_quantile(φ, v)` over classic histograms: the series of `v` grouped by
   * their labels but `le` (and the name), each group's buckets sorted by `le`, and
   * Prometheus' `BucketQuantile`: linear interpolation inside the bucket holding rank
   * φ x count, counts made monotonic first, NaN without a `+Inf` bucket.
   */
  private histogramQuantile(q: number[], series: SeriesValues[]): Value {
    const groups = new Map<string, { labels: Labels; buckets: { le: number; values: (number | undefined)[] }[] }>();
    for (const entry of series) {
      const text = entry.labels.le;
      if (text === undefined) continue;
      const le = text === '+Inf' || text === 'Inf' || text === '+inf' ? Infinity : Number(text);
      if (Number.isNaN(le)) continue;
      const { le: _le, ...rest } = withoutName(entry.labels);
      const key = labelsKey(rest);
      let group = groups.get(key);
      if (group === undefined) {
        group = { labels: rest, buckets: [] };
        groups.set(key, group);
      }
      group.buckets.push({ le, values: entry.values });
    }
    const out: SeriesValues[] = [];
    for (const group of groups.values()) {
      const values = this.context.times.map((_time, step) => {
        const buckets = group.buckets.flatMap((bucket) =>
          bucket.values[step] === undefined ? [] : [{ upperBound: bucket.le, count: bucket.values[step]! }],
        );
        if (buckets.length === 0) return undefined;
        return bucketQuantile(q[step]!, buckets);
      });
      if (values.some((value) => value !== undefined)) out.push({ labels: group.labels, values });
    }
    return { type: 'vector', series: out };
  }

  private aggregate(expr: Extract<Expr, { kind: 'aggregate' }>): Value {
    const series = this.vectorOf(expr.expr);
    const param = expr.param === null ? null : this.scalarOf(expr.param);
    const groupLabels = (labels: Labels): Labels => {
      if (expr.grouping === null) return {};
      const { without, labels: names } = expr.grouping;
      if (without) {
        const kept = withoutName(labels);
        for (const name of names) delete kept[name];
        return kept;
      }
      return Object.fromEntries(names.flatMap((name) => (labels[name] === undefined ? [] : [[name, labels[name]!]])));
    };
    const groups = new Map<string, { labels: Labels; members: SeriesValues[] }>();
    for (const entry of series) {
      const labels = groupLabels(entry.labels);
      const key = labelsKey(labels);
      const group = groups.get(key);
      if (group === undefined) groups.set(key, { labels, members: [entry] });
      else group.members.push(entry);
    }
    if (expr.op === 'topk' || expr.op === 'bottomk') return this.ranked(expr.op, [...groups.values()], param!);
    const out: SeriesValues[] = [];
    for (const group of groups.values()) {
      const op = expr.op;
      const values = this.context.times.map((_time, step) => aggregateStep(op, group.members, step));
      out.push({ labels: group.labels, values });
    }
    return { type: 'vector', series: out.filter((entry) => entry.values.some((value) => value !== undefined)) };
  }

  /** `topk`/`bottomk`: per time, the k largest (smallest) present values of each group, series keeping their labels. */
  private ranked(op: 'topk' | 'bottomk', groups: { members: SeriesValues[] }[], param: number[]): Value {
    const kept = new Map<SeriesValues, (number | undefined)[]>();
    for (const group of groups) {
      for (let step = 0; step < this.steps; step++) {
        const k = Math.floor(param[step]!);
        if (!(k >= 1)) continue;
        const present = group.members.filter((entry) => entry.values[step] !== undefined);
        // Prometheus orders NaN below every number for topk and above for bottomk.
        const ordered = present.sort((a, b) => {
          const x = a.values[step]!;
          const y = b.values[step]!;
          if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) ? (Number.isNaN(y) ? 0 : 1) : -1;
          return op === 'topk' ? y - x : x - y;
        });
        for (const entry of ordered.slice(0, k)) {
          let values = kept.get(entry);
          if (values === undefined) {
            values = this.context.times.map(() => undefined);
            kept.set(entry, values);
          }
          values[step] = entry.values[step];
        }
      }
    }
    return { type: 'vector', series: [...kept].map(([entry, values]) => ({ labels: entry.labels, values })) };
  }

  private binary(expr: Extract<Expr, { kind: 'binary' }>): Value {
    const lhs = this.evaluate(expr.lhs);
    const rhs = this.evaluate(expr.rhs);
    const { op } = expr;
    if (lhs.type === 'scalar' && rhs.type === 'scalar') {
      return { type: 'scalar', values: lhs.values.map((x, step) => scalarOp(op, x, rhs.values[step]!, true)!) };
    }
    if (lhs.type === 'vector' && rhs.type === 'scalar') return this.vectorScalar(op, lhs.series, rhs.values, false, expr.bool);
    if (lhs.type === 'scalar' && rhs.type === 'vector') return this.vectorScalar(op, rhs.series, lhs.values, true, expr.bool);
    if (lhs.type === 'vector' && rhs.type === 'vector') return this.vectorVector(expr, lhs.series, rhs.series);
    throw new PromQLError('binary expression must contain only scalar and instant vector types');
  }

  private vectorScalar(op: BinaryOp, series: SeriesValues[], scalar: number[], scalarLeft: boolean, bool: boolean): Value {
    const comparison = isComparison(op);
    const out = series.map((entry) => ({
      labels: comparison && !bool ? entry.labels : withoutName(entry.labels),
      values: entry.values.map((value, step) => {
        if (value === undefined) return undefined;
        const [x, y] = scalarLeft ? [scalar[step]!, value] : [value, scalar[step]!];
        const result = scalarOp(op, x, y, bool);
        if (!comparison || bool) return result;
        // A filtering comparison keeps the vector's own value.
        return result === undefined ? undefined : value;
      }),
    }));
    return this.checked({ type: 'vector', series: out.filter((entry) => entry.values.some((value) => value !== undefined)) });
  }

  /** Binary operators between two instant vectors, one-to-one on the labels `on` names (or all but `ignoring`'s and the name). */
  private vectorVector(expr: Extract<Expr, { kind: 'binary' }>, lhs: SeriesValues[], rhs: SeriesValues[]): Value {
    const { op, matching } = expr;
    const signature = (labels: Labels): string => {
      if (matching?.on)
        return labelsKey(
          Object.fromEntries(matching.labels.flatMap((name) => (labels[name] === undefined ? [] : [[name, labels[name]!]]))),
        );
      const rest = withoutName(labels);
      for (const name of matching?.labels ?? []) delete rest[name];
      return labelsKey(rest);
    };
    const bySignature = (side: SeriesValues[]) => {
      const map = new Map<string, SeriesValues[]>();
      for (const entry of side) {
        const key = signature(entry.labels);
        const list = map.get(key);
        if (list === undefined) map.set(key, [entry]);
        else list.push(entry);
      }
      return map;
    };
    const right = bySignature(rhs);
    if (op === 'and' || op === 'unless') {
      const out = lhs.map((entry) => {
        const others = right.get(signature(entry.labels)) ?? [];
        return {
          labels: entry.labels,
          values: entry.values.map((value, step) => {
            const present = others.some((other) => other.values[step] !== undefined);
            return (op === 'and' ? present : !present) ? value : undefined;
          }),
        };
      });
      return { type: 'vector', series: out.filter((entry) => entry.values.some((value) => value !== undefined)) };
    }
    if (op === 'or') {
      const left = bySignature(lhs);
      // One series per label set over the whole range: a series of the right side with the
      // labels of one on the left fills the times the left one has no value.
      const out = new Map<string, SeriesValues>(
        lhs.map((entry) => [labelsKey(entry.labels), { labels: entry.labels, values: [...entry.values] }]),
      );
      for (const entry of rhs) {
        const others = left.get(signature(entry.labels)) ?? [];
        const values = entry.values.map((value, step) => (others.some((other) => other.values[step] !== undefined) ? undefined : value));
        const same = out.get(labelsKey(entry.labels));
        if (same === undefined) out.set(labelsKey(entry.labels), { labels: entry.labels, values });
        else
          values.forEach((value, step) => {
            if (value !== undefined) same.values[step] = value;
          });
      }
      return { type: 'vector', series: [...out.values()].filter((entry) => entry.values.some((value) => value !== undefined)) };
    }
    const comparison = isComparison(op);
    const results = new Map<string, SeriesValues>();
    const left = bySignature(lhs);
    for (const [key, leftSeries] of left) {
      const rightSeries = right.get(key);
      if (rightSeries === undefined) continue;
      for (let step = 0; step < this.steps; step++) {
        const l = leftSeries.filter((entry) => entry.values[step] !== undefined);
        const r = rightSeries.filter((entry) => entry.values[step] !== undefined);
        if (l.length === 0 || r.length === 0) continue;
        if (r.length > 1) {
          throw new PromQLError(
            'found duplicate series for the match group on the right hand-side of the operation: many-to-many matching not allowed: matching labels must be unique on one side',
          );
        }
        if (l.length > 1) {
          throw new PromQLError('multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)');
        }
        const [x, y] = [l[0]!.values[step]!, r[0]!.values[step]!];
        const result = scalarOp(op, x, y, expr.bool);
        if (result === undefined) continue;
        let labels = l[0]!.labels;
        if (matching?.on)
          labels = Object.fromEntries(matching.labels.flatMap((name) => (labels[name] === undefined ? [] : [[name, labels[name]!]])));
        else if (matching !== null) {
          labels = { ...labels };
          for (const name of matching.labels) delete labels[name];
        }
        if (!comparison || expr.bool) labels = withoutName(labels);
        const outKey = labelsKey(labels);
        let outSeries = results.get(outKey);
        if (outSeries === undefined) {
          outSeries = { labels, values: this.context.times.map(() => undefined) };
          results.set(outKey, outSeries);
        }
        if (outSeries.values[step] !== undefined) {
          throw new PromQLError('vector cannot contain metrics with the same labelset');
        }
        outSeries.values[step] = comparison && !expr.bool ? x : result;
      }
    }
    return { type: 'vector', series: [...results.values()] };
  }
}

/**
 * `op` between two numbers: arithmetic, or a comparison's 0/1 with `bool`, or for a
 * filtering comparison 1 when it holds and undefined when not (the caller keeps its own
 * value). Division by zero and `%` follow IEEE 754 and Go (`math.Mod`), as in Prometheus.
 */
function scalarOp(op: BinaryOp, x: number, y: number, bool: boolean): number | undefined {
  switch (op) {
    case '+':
      return x + y;
    case '-':
      return x - y;
    case '*':
      return x * y;
    case '/':
      return x / y;
    case '%':
      return x % y;
    case '^':
      return x ** y;
    default: {
      const holds = op === '==' ? x === y : op === '!=' ? x !== y : op === '>' ? x > y : op === '<' ? x < y : op === '>=' ? x >= y : x <= y;
      if (bool) return holds ? 1 : 0;
      return holds ? 1 : undefined;
    }
  }
}

/** One aggregation of the present values of a group at one time; undefined when none is present. */
function aggregateStep(op: Exclude<AggregateOp, 'topk' | 'bottomk'>, members: readonly SeriesValues[], step: number): number | undefined {
  let count = 0;
  let sum = 0;
  let compensation = 0;
  let min = NaN;
  let max = NaN;
  let mean = 0;
  for (const member of members) {
    const value = member.values[step];
    if (value === undefined) continue;
    count += 1;
    // Kahan-Neumaier summation, as Prometheus sums (`kahansum.go`).
    const total = sum + value;
    if (Math.abs(sum) >= Math.abs(value)) compensation += sum - total + value;
    else compensation += value - total + sum;
    sum = total;
    // As Prometheus: a NaN is replaced by any later value, so NaN only when every value is.
    if (count === 1 || min > value || Number.isNaN(min)) min = value;
    if (count === 1 || max < value || Number.isNaN(max)) max = value;
    mean += (value - mean) / count;
  }
  if (count === 0) return undefined;
  switch (op) {
    case 'sum':
      return sum + compensation;
    case 'count':
      return count;
    case 'avg':
      return Number.isFinite(sum + compensation) ? (sum + compensation) / count : mean;
    case 'min':
      return min;
    case 'max':
      return max;
  }
}

/** Prometheus' `BucketQuantile` (`promql/quantile.go`) for one group of classic-histogram buckets at one time. */
export function bucketQuantile(q: number, input: readonly { upperBound: number; count: number }[]): number {
  if (Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  const sorted = [...input].sort((a, b) => a.upperBound - b.upperBound);
  if (sorted[sorted.length - 1]!.upperBound !== Infinity) return NaN;
  // Buckets with the same bound add up.
  const buckets: { upperBound: number; count: number }[] = [];
  for (const bucket of sorted) {
    const last = buckets[buckets.length - 1];
    if (last !== undefined && last.upperBound === bucket.upperBound) last.count += bucket.count;
    else buckets.push({ ...bucket });
  }
  // Counts made monotonic (a decrease is removed); differences within 1e-12 relative ignored.
  let previous = buckets[0]!.count;
  for (let i = 1; i < buckets.length; i++) {
    const current = buckets[i]!.count;
    if (current === previous) continue;
    if (almostEqual(previous, current, 1e-12) || current < previous) {
      buckets[i]!.count = previous;
      continue;
    }
    previous = current;
  }
  if (buckets.length < 2) return NaN;
  const observations = buckets[buckets.length - 1]!.count;
  if (observations === 0) return NaN;
  let rank = q * observations;
  let b = 0;
  while (b < buckets.length - 1 && !(buckets[b]!.count >= rank)) b++;
  if (b === buckets.length - 1) return buckets[buckets.length - 2]!.upperBound;
  if (b === 0 && buckets[0]!.upperBound <= 0) return buckets[0]!.upperBound;
  let bucketStart = 0;
  const bucketEnd = buckets[b]!.upperBound;
  let count = buckets[b]!.count;
  if (b > 0) {
    bucketStart = buckets[b - 1]!.upperBound;
    count -= buckets[b - 1]!.count;
    rank -= buckets[b - 1]!.count;
  }
  return bucketStart + (bucketEnd - bucketStart) * (rank / count);
}

/** Prometheus' `almost.Equal`: equal within `epsilon` relative to the sum of magnitudes. */
function almostEqual(a: number, b: number, epsilon: number): boolean {
  if (a === b) return true;
  const minNormal = 2.2250738585072014e-308;
  const absSum = Math.abs(a) + Math.abs(b);
  const diff = Math.abs(a - b);
  if (a === 0 || b === 0 || absSum < minNormal) return diff < epsilon * minNormal;
  return diff / Math.min(absSum, Number.MAX_VALUE) < epsilon;
}

/** Refuses two series with the same labels at the same time (Prometheus: "vector cannot contain metrics with the same labelset"). */
function checkDuplicates(series: readonly SeriesValues[], steps: number): void {
  const byKey = new Map<string, SeriesValues[]>();
  for (const entry of series) {
    const key = labelsKey(entry.labels);
    const list = byKey.get(key);
    if (list === undefined) byKey.set(key, [entry]);
    else list.push(entry);
  }
  for (const list of byKey.values()) {
    if (list.length < 2) continue;
    for (let step = 0; step < steps; step++) {
      if (list.filter((entry) => entry.values[step] !== undefined).length > 1)
        throw new PromQLError('vector cannot contain metrics with the same labelset');
    }
  }
}

/**
 * Evaluates `expr` at every time of `context.times`.
 * @throws PromQLError for what Prometheus refuses at evaluation (many-to-many matching, duplicate label sets).
 */
export function evaluate(expr: Expr, context: Evaluation): Value {
  return new Evaluator(context).evaluate(expr);
}
