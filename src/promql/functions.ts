/**
 * The PromQL functions this server evaluates, as data (Prometheus' `parser/functions.go`
 * is the model): each name with the types of its parameters and of its value. The
 * parser checks calls against this table; the evaluator (`evaluate.ts`) has one
 * implementation per entry. A function missing here is refused by the parser with a
 * message naming it.
 */

/** The types of PromQL values. */
export type ValueType = 'scalar' | 'vector' | 'matrix' | 'string';

/** One function: its parameters (the last `optional` may be left out) and its value's type. */
export interface FunctionDefinition {
  params: ValueType[];
  optional?: number;
  returns: ValueType;
  /**
   * For functions of a range vector: what the data read for their selector must hold
   * (a counter's increase between readings, or the merged sketches for quantiles).
   */
  needs?: 'increase' | 'sketch';
}

/** Functions of one range vector, answered from the buckets of each window (see `windows.ts`). */
export const RANGE_FUNCTIONS = [
  'rate',
  'increase',
  'irate',
  'delta',
  'resets',
  'avg_over_time',
  'sum_over_time',
  'min_over_time',
  'max_over_time',
  'count_over_time',
  'last_over_time',
  'quantile_over_time',
] as const;

/** The name of a {@link RANGE_FUNCTIONS} entry. */
export type RangeFunction = (typeof RANGE_FUNCTIONS)[number];

/** Every supported function by name. */
export const FUNCTIONS: Record<string, FunctionDefinition> = {
  rate: { params: ['matrix'], returns: 'vector', needs: 'increase' },
  increase: { params: ['matrix'], returns: 'vector', needs: 'increase' },
  irate: { params: ['matrix'], returns: 'vector', needs: 'increase' },
  delta: { params: ['matrix'], returns: 'vector' },
  resets: { params: ['matrix'], returns: 'vector', needs: 'increase' },
  avg_over_time: { params: ['matrix'], returns: 'vector' },
  sum_over_time: { params: ['matrix'], returns: 'vector' },
  min_over_time: { params: ['matrix'], returns: 'vector' },
  max_over_time: { params: ['matrix'], returns: 'vector' },
  count_over_time: { params: ['matrix'], returns: 'vector' },
  last_over_time: { params: ['matrix'], returns: 'vector' },
  quantile_over_time: { params: ['scalar', 'matrix'], returns: 'vector', needs: 'sketch' },
  histogram_quantile: { params: ['scalar', 'vector'], returns: 'vector' },
  abs: { params: ['vector'], returns: 'vector' },
  clamp_min: { params: ['vector', 'scalar'], returns: 'vector' },
  clamp_max: { params: ['vector', 'scalar'], returns: 'vector' },
  round: { params: ['vector', 'scalar'], optional: 1, returns: 'vector' },
  label_replace: { params: ['vector', 'string', 'string', 'string', 'string'], returns: 'vector' },
  vector: { params: ['scalar'], returns: 'vector' },
  scalar: { params: ['vector'], returns: 'scalar' },
  time: { params: [], returns: 'scalar' },
};
