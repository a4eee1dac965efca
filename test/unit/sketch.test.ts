import { describe, expect, it } from 'vitest';
import {
  addToSketch,
  binValue,
  mergeSketch,
  SKETCH_ACCURACY,
  SKETCH_GAMMA,
  type SketchBins,
  sketchCount,
  sketchKey,
  sketchQuantile,
} from '../../src/model/sketch.ts';
import { random as mulberry32 } from '../helpers/random.ts';

const QUANTILES = [0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 1];

/** Relative slack on the accuracy bound for rounding in logarithms and powers. */
const ROUNDING = 1e-9;

/** A standard normal deviate from two uniform ones (Box-Muller). */
function normal(random: () => number): number {
  const u = 1 - random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/** `n` values from `draw`. */
function generate(n: number, draw: () => number): number[] {
  return Array.from({ length: n }, draw);
}

/** Uniform floats in [0, 100). */
function uniform(seed: number, n: number): number[] {
  const random = mulberry32(seed);
  return generate(n, () => random() * 100);
}

/** Integer delays in minutes, -60..1000, most of them small and repeated many times. */
function delays(seed: number, n: number): number[] {
  const random = mulberry32(seed);
  return generate(n, () => {
    const kind = random();
    if (kind < 0.6) return Math.floor(random() * 36) - 20;
    if (kind < 0.95) return Math.min(1000, Math.floor(-Math.log(1 - random()) * 60));
    return Math.floor(random() * 1061) - 60;
  });
}

/** Log-normal-ish values with magnitudes from 1e-6 to 1e9. */
function logNormal(seed: number, n: number): number[] {
  const random = mulberry32(seed);
  return generate(n, () => 10 ** Math.min(9, Math.max(-6, 1.5 + 2.5 * normal(random))));
}

/** Negative values only, magnitudes log-uniform from 1e-3 to 1e6. */
function allNegative(seed: number, n: number): number[] {
  const random = mulberry32(seed);
  return generate(n, () => -(10 ** (-3 + 9 * random())));
}

/** Half exact zeros (some of them -0), the rest of either sign with magnitudes from 1e-4 to 1e4. */
function withZeros(seed: number, n: number): number[] {
  const random = mulberry32(seed);
  return generate(n, () => {
    const kind = random();
    if (kind < 0.4) return 0;
    if (kind < 0.5) return -0;
    const magnitude = 10 ** (-4 + 8 * random());
    return random() < 0.5 ? -magnitude : magnitude;
  });
}

/** Powers of gamma (bin boundaries) and their neighbours, of either sign. */
function boundaries(): number[] {
  const values: number[] = [];
  for (let k = -300; k <= 300; k += 1) {
    const power = SKETCH_GAMMA ** k;
    values.push(power, power * (1 + 1e-15), power * (1 - 1e-15), -power);
  }
  return values;
}

/** Extreme but accepted magnitudes, up to 1e150, with a few zeros. */
function extremes(seed: number, n: number): number[] {
  const random = mulberry32(seed);
  const values = generate(n, () => {
    const magnitude = 10 ** (-300 + 450 * random());
    return random() < 0.5 ? -magnitude : magnitude;
  });
  return [...values, 1e150, -1e150, 1e-300, -1e-300, 0, 0];
}

const DATA_SETS: Record<string, number[]> = {
  'uniform 0..100': uniform(1, 5000),
  'integer delays -60..1000': delays(2, 5000),
  'log-normal 1e-6..1e9': logNormal(3, 5000),
  'all negative': allNegative(4, 3000),
  'many exact zeros': withZeros(5, 4000),
  'bin boundaries': boundaries(),
  'extreme magnitudes': extremes(6, 2000),
  'one value': [42.5],
  'one negative value': [-3.7],
  'one zero': [0],
  'two values': [3, 1e6],
  'two values of opposite sign': [5, -2],
  'small run': [1, 2, 3, 4, 5],
};

/** The element of rank floor(q * (n - 1)) of the values sorted in ascending order. */
function exactQuantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(q * (sorted.length - 1))]!;
}

/** A sketch of `values`. */
function sketchOf(values: Iterable<number>): SketchBins {
  const bins: SketchBins = new Map();
  for (const value of values) addToSketch(bins, value);
  return bins;
}

/** The entries of a sketch in key order, for comparing two sketches. */
function entries(bins: SketchBins): [string, number][] {
  return [...bins.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Asserts the relative-error guarantee of `estimate` for the exact answer `exact`. */
function expectAccurate(estimate: number | null, exact: number): void {
  expect(estimate).not.toBeNull();
  if (exact === 0) {
    expect(estimate).toBe(0);
    return;
  }
  expect(Math.abs(estimate! - exact)).toBeLessThanOrEqual(SKETCH_ACCURACY * Math.abs(exact) * (1 + ROUNDING));
}

describe('sketch constants', () => {
  it('derives gamma from the relative accuracy', () => {
    expect(SKETCH_ACCURACY).toBe(0.01);
    expect(SKETCH_GAMMA).toBe(1.01 / 0.99);
  });
});

describe('sketchKey', () => {
  it('puts 0 and -0 in the zero bin', () => {
    expect(sketchKey(0)).toBe('z');
    expect(sketchKey(-0)).toBe('z');
  });

  it('writes the sign as p or m and the index in plain decimal', () => {
    expect(sketchKey(1)).toBe('p0');
    expect(sketchKey(-1)).toBe('m0');
    expect(sketchKey(0.9999999)).toBe('p0');
    expect(sketchKey(-0.9999999)).toBe('m0');
    expect(sketchKey(1.01)).toBe('p1');
    expect(sketchKey(0.5)).toMatch(/^p-[1-9][0-9]*$/);
    expect(sketchKey(-1e6)).toMatch(/^m[1-9][0-9]*$/);
  });

  it('gives every finite non-zero value, however small, a bin of its own sign', () => {
    expect(sketchKey(Number.MIN_VALUE)).toMatch(/^p-[1-9][0-9]*$/);
    expect(sketchKey(-Number.MIN_VALUE)).toMatch(/^m-[1-9][0-9]*$/);
    expect(sketchKey(1e-300)).not.toBe(sketchKey(1e-299));
    expect(sketchKey(Number.MAX_VALUE)).toMatch(/^p[1-9][0-9]*$/);
  });

  it('puts each value in a bin whose representative is within the accuracy', () => {
    const random = mulberry32(7);
    for (let i = 0; i < 5000; i += 1) {
      const magnitude = 10 ** (-300 + 450 * random());
      for (const value of [magnitude, -magnitude]) {
        const estimate = binValue(sketchKey(value));
        expect(Math.abs(estimate - value)).toBeLessThanOrEqual(SKETCH_ACCURACY * Math.abs(value) * (1 + ROUNDING));
      }
    }
  });

  it('rejects NaN and infinities', () => {
    expect(() => sketchKey(Number.NaN)).toThrow(Error);
    expect(() => sketchKey(Number.POSITIVE_INFINITY)).toThrow(Error);
    expect(() => sketchKey(Number.NEGATIVE_INFINITY)).toThrow(Error);
  });
});

describe('binValue', () => {
  it('is 0 for the zero bin and 2 gamma^i / (gamma + 1) for the others', () => {
    expect(binValue('z')).toBe(0);
    expect(binValue('p0')).toBeCloseTo(2 / (SKETCH_GAMMA + 1), 15);
    expect(binValue('p3') / (2 / (SKETCH_GAMMA + 1)) / SKETCH_GAMMA ** 3).toBeCloseTo(1, 12);
    expect(binValue('p-12') / (2 / (SKETCH_GAMMA + 1)) / SKETCH_GAMMA ** -12).toBeCloseTo(1, 12);
    expect(binValue('m3')).toBe(-binValue('p3'));
    expect(binValue('m-12')).toBe(-binValue('p-12'));
  });

  it('rejects malformed keys', () => {
    for (const key of ['', 'x1', 'p', 'm', 'p-', 'p-0', 'p01', 'p+1', 'p1.5', 'p1e3', 'z1', ' p1', 'p1 ', 'P1', 'p9007199254740993']) {
      expect(() => binValue(key), key).toThrow(Error);
    }
  });
});

describe('sketchQuantile accuracy against sorted values', () => {
  for (const [name, values] of Object.entries(DATA_SETS)) {
    it(`stays within the relative accuracy for ${name}`, () => {
      const bins = sketchOf(values);
      for (const q of QUANTILES) expectAccurate(sketchQuantile(bins, q), exactQuantile(values, q));
    });

    it(`stays within the relative accuracy for ${name} with exact bounds, and returns them at q = 0 and 1`, () => {
      const bins = sketchOf(values);
      const bounds = { min: exactQuantile(values, 0), max: exactQuantile(values, 1) };
      for (const q of QUANTILES) expectAccurate(sketchQuantile(bins, q, bounds), exactQuantile(values, q));
      expect(sketchQuantile(bins, 0, bounds)).toBe(bounds.min);
      expect(sketchQuantile(bins, 1, bounds)).toBe(bounds.max);
    });
  }

  it('accepts a list of [key, count] pairs, with repeated keys adding up', () => {
    const values = delays(8, 1000);
    const pairs = values.map((value): [string, number] => [sketchKey(value), 1]);
    for (const q of QUANTILES) expectAccurate(sketchQuantile(pairs, q), exactQuantile(values, q));
  });
});

describe('sketchCount', () => {
  it('counts every value exactly', () => {
    for (const values of Object.values(DATA_SETS)) expect(sketchCount(sketchOf(values))).toBe(values.length);
  });

  it('is 0 for an empty sketch', () => {
    expect(sketchCount(new Map())).toBe(0);
  });
});

describe('mergeSketch', () => {
  for (const [name, values] of Object.entries(DATA_SETS)) {
    it(`merges the sketches of two halves of ${name} into the sketch of the whole`, () => {
      const middle = Math.floor(values.length / 2);
      const whole = sketchOf(values);
      const merged = sketchOf(values.slice(0, middle));
      mergeSketch(merged, sketchOf(values.slice(middle)));
      expect(entries(merged)).toEqual(entries(whole));
      expect(sketchCount(merged)).toBe(values.length);
      for (const q of QUANTILES) expect(sketchQuantile(merged, q)).toBe(sketchQuantile(whole, q));
    });
  }

  it('gives the same sketch whatever the grouping and order of the parts', () => {
    const values = logNormal(9, 3000);
    const parts = [values.slice(0, 700), values.slice(700, 1900), values.slice(1900)].map((part) => sketchOf(part));
    const forward: SketchBins = new Map();
    for (const part of parts) mergeSketch(forward, part);
    const backward: SketchBins = new Map();
    for (const part of [...parts].reverse()) mergeSketch(backward, part);
    expect(entries(forward)).toEqual(entries(sketchOf(values)));
    expect(entries(backward)).toEqual(entries(forward));
  });
});

describe('sketchQuantile edge cases', () => {
  it('is null for an empty sketch', () => {
    expect(sketchQuantile(new Map(), 0.5)).toBeNull();
    expect(sketchQuantile([], 0)).toBeNull();
    expect(sketchQuantile(new Map(), 1, { min: 1, max: 2 })).toBeNull();
  });

  it('rejects a quantile outside [0, 1]', () => {
    const bins = sketchOf([1, 2, 3]);
    for (const q of [-0.01, 1.01, -1, 2, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => sketchQuantile(bins, q), String(q)).toThrow(RangeError);
    }
    expect(() => sketchQuantile(new Map(), 1.5)).toThrow(RangeError);
  });

  it('rejects keys that are not bin keys', () => {
    expect(() =>
      sketchQuantile(
        new Map([
          ['p1', 2],
          ['count', 3],
        ]),
        0.5,
      ),
    ).toThrow(Error);
  });

  it('clamps estimates into the bounds', () => {
    // 1.02 lies just below the upper boundary of its bin (1, gamma], gamma being about
    // 1.0202, so the bin's representative (1.01) is below it.
    const bins = sketchOf([1.02, 1.02, 1.02, 1.02, 1.02]);
    expect(sketchQuantile(bins, 0.5)!).toBeLessThan(1.02);
    expect(sketchQuantile(bins, 0.5, { min: 1.02, max: 1.02 })).toBe(1.02);
    expect(sketchQuantile(sketchOf([-1.02, -1.02, -1.02]), 0.5, { min: -1.02, max: -1.02 })).toBe(-1.02);
  });
});
