import type { Summary, TimedValue } from '../model/stats.ts';
import type { SketchBins } from '../model/sketch.ts';
import { valueAtRank } from '../promql/windows.ts';
import type { SelectStatement, ValueExpr } from './parse.ts';
import { StatementError } from './context.ts';

/** Aggregates this server computes, by InfluxQL name. */
export const AGGREGATES = new Set(['mean', 'median', 'count', 'sum', 'min', 'max', 'first', 'last', 'spread', 'stddev', 'percentile']);

/** What is merged per group and interval: a bucket's statistics, or several buckets' merged. */
export interface Acc {
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

/**
 * One bucket's statistics (`Summary`, as the engine answers a bucket) as an {@link Acc}
 * to merge: an empty bucket gives count 0 and neutral minimum and maximum (Infinity,
 * -Infinity), and its squared deviations are the population variance times the count.
 */
export function accOf(summary: Summary): Acc {
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
export function mergeAcc(a: Acc, b: Acc): void {
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
export interface Call {
  name: string;
  field: string;
  percent: number;
}

/** The calls of a field expression, checked: an aggregate of one field (percentile with a number from 0 to 100). */
export function callsOf(expr: ValueExpr, found: Call[]): Call[] {
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
export function fieldValue(expr: ValueExpr, values: Map<string, number | null>): number | null {
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

/** The key of an aggregate call among a statement's calls: its function, field and percentile, e.g. `percentile("f",95)`. */
export const callKey = (expr: Extract<ValueExpr, { kind: 'call' }>) =>
  `${expr.name}(${(expr.args[0] as { name: string }).name}${expr.args[1]?.kind === 'number' ? `,${expr.args[1].value}` : ''})`;

/** A column's name as InfluxDB gives it: the alias, else the first function's name, else the field's. */
export function columnNames(fields: SelectStatement['fields']): string[] {
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
