/**
 * The pure parts of the PromQL subset: parsing with Prometheus' grammar into the
 * evaluator's tree and the refusals, durations as Grafana sends them, the value format
 * of the API, the choice of bucket width, the window of buckets answering a range, and
 * histogram_quantile against the plain rule of Prometheus' documentation.
 */
import { describe, expect, it } from 'vitest';
import { bucketQuantile, evaluate, type SelectedSeries } from '../../src/promql/evaluate.ts';
import { parseDuration, parsePromQL, PromQLError } from '../../src/promql/parse.ts';
import { chooseWidth, formatValue } from '../../src/promql/query.ts';
import { rangeFunction, windowCells, type Cell } from '../../src/promql/windows.ts';
import { refHistogramQuantile } from '../helpers/promql-reference.ts';
import { random } from '../helpers/random.ts';

describe('parsePromQL', () => {
  it("Grafana's builder queries become the evaluator's tree", () => {
    expect(parsePromQL('sum by(path) (rate(http_requests_total{job="api", code!~"5.."}[1m0s] offset 5m))')).toEqual({
      kind: 'aggregate',
      op: 'sum',
      param: null,
      grouping: { without: false, labels: ['path'] },
      expr: {
        kind: 'call',
        func: 'rate',
        args: [
          {
            kind: 'matrix',
            rangeMs: 60_000,
            selector: {
              kind: 'vector',
              offsetMs: 300_000,
              matchers: [
                { name: '__name__', op: '=', value: 'http_requests_total' },
                { name: 'job', op: '=', value: 'api' },
                { name: 'code', op: '!~', value: '5..' },
              ],
            },
          },
        ],
      },
    });
    expect(parsePromQL('a / ignoring(code) b')).toMatchObject({ kind: 'binary', op: '/', matching: { on: false, labels: ['code'] } });
    expect(parsePromQL('1 + 2 * 3')).toMatchObject({ kind: 'binary', op: '+', rhs: { kind: 'binary', op: '*' } });
    expect(parsePromQL('-x')).toMatchObject({ kind: 'unary', op: '-' });
    expect(parsePromQL('{"utf8.name"}')).toMatchObject({ kind: 'vector', matchers: [{ name: '__name__', value: 'utf8.name' }] });
  });

  it.each([
    ['rate(x[5m', /parse error at char 10/],
    ['x[5m:1m]', /subquery/],
    ['x @ 100', /`@` modifier/],
    ['a + on(b) group_left c', /group_left/],
    ['stddev(x)', /aggregation stddev/],
    ['predict_linear(x[5m], 1)', /predict_linear/],
    ['rate(x)', /expected type range vector in call to function "rate", got instant vector/],
    ['x[5m]', /invalid expression type "range vector"/],
    ['{a=""}', /at least one non-empty matcher/],
    ['1 > 2', /BOOL modifier/],
    ['x{a=~"("}', /invalid regular expression/],
  ])('refuses %s', (text, message) => {
    expect(() => parsePromQL(text)).toThrow(PromQLError);
    expect(() => parsePromQL(text)).toThrow(message);
  });

  it('durations as Go writes them and numbers of seconds', () => {
    expect(parseDuration('1m0s')).toBe(60_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('15')).toBe(15_000);
    expect(parseDuration('0.5')).toBe(500);
    expect(() => parseDuration('5 minutes')).toThrow(PromQLError);
  });
});

describe('formatValue: Go strconv.FormatFloat(v, f, -1, 64)', () => {
  it.each([
    [2, '2'],
    [0.1, '0.1'],
    [1e-7, '0.0000001'],
    [1.5e-10, '0.00000000015'],
    [1e21, '1000000000000000000000'],
    [-2.5e22, '-25000000000000000000000'],
    [NaN, 'NaN'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
  ])('%s', (value, text) => expect(formatValue(value)).toBe(text));
});

describe('chooseWidth', () => {
  const needs = { increase: false, sketch: false };
  it('the coarsest width dividing the step, start, range and offset', () => {
    expect(
      chooseWidth({ start: 3_600_000, end: 7_200_000, stepMs: 3_600_000 }, { rangeMs: 3_600_000, needs, offsetMs: 0, series: 1 }, 1e6),
    ).toMatchObject({
      width: { name: 'HOUR' },
      aligned: true,
    });
    expect(chooseWidth({ start: 0, end: 600_000, stepMs: 60_000 }, { rangeMs: 300_000, needs, offsetMs: 0, series: 1 }, 1e6)).toMatchObject(
      {
        width: { name: 'MINUTE' },
        aligned: true,
      },
    );
    expect(chooseWidth({ start: 0, end: 0, stepMs: 0 }, { rangeMs: 600_000, needs, offsetMs: 0, series: 1 }, 1e6)).toMatchObject({
      width: { name: 'TEN_MINUTES' },
      aligned: true,
    });
  });
  it('the finest that fits the budget when none divides (a 15 s step), quarter hours at least for sketches', () => {
    expect(
      chooseWidth({ start: 15_000, end: 86_400_000, stepMs: 15_000 }, { rangeMs: 60_000, needs, offsetMs: 0, series: 10 }, 1e6),
    ).toMatchObject({
      width: { name: 'MINUTE' },
      aligned: false,
    });
    expect(
      chooseWidth({ start: 15_000, end: 86_400_000, stepMs: 15_000 }, { rangeMs: 60_000, needs, offsetMs: 0, series: 10 }, 10_000),
    ).toMatchObject({
      width: { name: 'TWO_MINUTES' },
      aligned: false,
    });
    expect(
      chooseWidth(
        { start: 0, end: 3_600_000, stepMs: 60_000 },
        { rangeMs: 3_600_000, needs: { increase: false, sketch: true }, offsetMs: 0, series: 1 },
        1e6,
      ),
    ).toMatchObject({ width: { name: 'FIFTEEN_MINUTES' }, aligned: false });
  });
});

describe('windows of buckets', () => {
  const cell = (start: number, samples: [number, number][]): Cell => ({
    start,
    n: samples.length,
    sum: samples.reduce((a, [, v]) => a + v, 0),
    min: Math.min(...samples.map(([, v]) => v)),
    max: Math.max(...samples.map(([, v]) => v)),
    first: { t: samples[0]![0], v: samples[0]![1] },
    last: { t: samples.at(-1)![0], v: samples.at(-1)![1] },
    inside: null,
    sketch: null,
  });
  it('a window on bucket boundaries takes whole buckets; a sample exactly at its end counts, one at its start does not', () => {
    const cells = [cell(0, [[0, 1]]), cell(60_000, [[60_000, 2]]), cell(120_000, [[120_000, 3]]), cell(180_000, [[190_000, 4]])];
    expect(windowCells(cells, 120_000, 60_000)).toEqual({ from: 2, to: 3, cut: false });
    expect(rangeFunction('sum_over_time', cells, 120_000, 120_000)).toBe(5);
    expect(rangeFunction('count_over_time', cells, 180_000, 180_000)).toBe(2);
  });
  it('a bucket holding readings on both sides of the start is taken whole, one with readings after t is left out', () => {
    const cells = [
      cell(0, [
        [10_000, 1],
        [50_000, 2],
      ]),
      cell(60_000, [
        [70_000, 3],
        [110_000, 4],
      ]),
    ];
    expect(windowCells(cells, 90_000, 60_000)).toEqual({ from: 0, to: 1, cut: true });
  });
});

describe('label sets', () => {
  const one = (name: string, value: number): SelectedSeries => ({
    labels: { __name__: name, job: 'x' },
    cells: [
      {
        start: 0,
        n: 1,
        sum: value,
        min: value,
        max: value,
        first: { t: 10_000, v: value },
        last: { t: 10_000, v: value },
        inside: null,
        sketch: null,
      },
    ],
  });
  it('two series that differ only by the name dropped are refused, as Prometheus refuses them', () => {
    const expr = parsePromQL('last_over_time({__name__=~"a|b"}[5m]) * 2');
    if (expr.kind !== 'binary' || expr.lhs.kind !== 'call' || expr.lhs.args[0]!.kind !== 'matrix') throw new Error('unexpected tree');
    const selected = new Map([[expr.lhs.args[0]!.selector, [one('a', 1), one('b', 2)]]]);
    expect(() => evaluate(expr, { times: [60_000], selected })).toThrow(/same labelset/);
    const kept = evaluate(parsePromQL('1'), { times: [60_000], selected: new Map() });
    expect(kept).toEqual({ type: 'scalar', values: [1] });
  });
});

describe("histogram_quantile: Prometheus' BucketQuantile", () => {
  it('equals the documented interpolation over random cumulative buckets', () => {
    const next = random(7);
    for (let round = 0; round < 200; round++) {
      const bounds = [0.05, 0.1, 0.25, 0.5, 1, 2.5, Infinity];
      let count = 0;
      const buckets = bounds.map((le) => {
        count += Math.floor(next() * 30);
        return { le, count };
      });
      const q = next();
      const expected = refHistogramQuantile(q, buckets);
      const actual = bucketQuantile(
        q,
        buckets.map((bucket) => ({ upperBound: bucket.le, count: bucket.count })),
      );
      if (Number.isNaN(expected)) expect(actual).toBeNaN();
      else expect(actual).toBeCloseTo(expected, 12);
    }
    expect(bucketQuantile(0.5, [{ upperBound: 1, count: 3 }])).toBeNaN();
    expect(bucketQuantile(1.5, [{ upperBound: Infinity, count: 3 }])).toBe(Infinity);
  });
});
