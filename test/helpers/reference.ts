/**
 * Independent reference computations for the tests: plain loops over the raw data,
 * sharing no code with the server.
 */
import { expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type GranularityName =
  | 'MINUTE'
  | 'TWO_MINUTES'
  | 'FIVE_MINUTES'
  | 'TEN_MINUTES'
  | 'FIFTEEN_MINUTES'
  | 'THIRTY_MINUTES'
  | 'HOUR'
  | 'TWO_HOURS'
  | 'THREE_HOURS'
  | 'SIX_HOURS'
  | 'TWELVE_HOURS'
  | 'DAY'
  | 'WEEK'
  | 'MONTH'
  | 'QUARTER'
  | 'YEAR';

/** The start of the bucket holding `ms`, from calendar fields (UTC). */
export function referenceStart(ms: number, name: GranularityName): number {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const mo = d.getUTCMonth();
  const day = d.getUTCDate();
  const h = d.getUTCHours();
  const mi = d.getUTCMinutes();
  switch (name) {
    case 'MINUTE':
      return Date.UTC(y, mo, day, h, mi);
    case 'TWO_MINUTES':
      return Date.UTC(y, mo, day, h, mi - (mi % 2));
    case 'FIVE_MINUTES':
      return Date.UTC(y, mo, day, h, mi - (mi % 5));
    case 'TEN_MINUTES':
      return Date.UTC(y, mo, day, h, mi - (mi % 10));
    case 'FIFTEEN_MINUTES':
      return Date.UTC(y, mo, day, h, mi - (mi % 15));
    case 'THIRTY_MINUTES':
      return Date.UTC(y, mo, day, h, mi - (mi % 30));
    case 'HOUR':
      return Date.UTC(y, mo, day, h);
    case 'TWO_HOURS':
      return Date.UTC(y, mo, day, h - (h % 2));
    case 'THREE_HOURS':
      return Date.UTC(y, mo, day, h - (h % 3));
    case 'SIX_HOURS':
      return Date.UTC(y, mo, day, h - (h % 6));
    case 'TWELVE_HOURS':
      return Date.UTC(y, mo, day, h - (h % 12));
    case 'DAY':
      return Date.UTC(y, mo, day);
    case 'WEEK':
      return Date.UTC(y, mo, day - ((d.getUTCDay() + 6) % 7));
    case 'MONTH':
      return Date.UTC(y, mo, 1);
    case 'QUARTER':
      return Date.UTC(y, mo - (mo % 3), 1);
    case 'YEAR':
      return Date.UTC(y, 0, 1);
  }
}

/** A flight of flights-20k, parsed here without the server's code. */
export interface RawFlight {
  time: number;
  delay: number;
  distance: number;
  origin: string;
  destination: string;
}

/** Reads flights-20k.json straight from node_modules; `2001/01/13 14:56` is taken as UTC. */
export function loadFlights20k(): RawFlight[] {
  const path = fileURLToPath(new URL('../../node_modules/vega-datasets/data/flights-20k.json', import.meta.url));
  const rows = JSON.parse(readFileSync(path, 'utf8')) as {
    date: string;
    delay: number;
    distance: number;
    origin: string;
    destination: string;
  }[];
  return rows.map((row) => {
    const [datePart, timePart] = row.date.split(' ') as [string, string];
    const [y, mo, d] = datePart.split('/').map(Number) as [number, number, number];
    const [h, mi] = timePart.split(':').map(Number) as [number, number];
    return {
      time: Date.UTC(y, mo - 1, d, h, mi),
      delay: row.delay,
      distance: row.distance,
      origin: row.origin,
      destination: row.destination,
    };
  });
}

/** Reference statistics: count, sum, min, max, mean and population/sample standard deviation by two passes. */
export interface ReferenceStats {
  count: number;
  sum: number | null;
  min: number | null;
  max: number | null;
  avg: number | null;
  stddev: number | null;
  sampleStddev: number | null;
}

export function referenceStats(values: readonly number[]): ReferenceStats {
  if (values.length === 0) return { count: 0, sum: null, min: null, max: null, avg: null, stddev: null, sampleStddev: null };
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const mean = sum / values.length;
  let squares = 0;
  for (const v of values) squares += (v - mean) ** 2;
  return {
    count: values.length,
    sum,
    min,
    max,
    avg: mean,
    stddev: Math.sqrt(squares / values.length),
    sampleStddev: values.length > 1 ? Math.sqrt(squares / (values.length - 1)) : null,
  };
}

/** Asserts `actual` equals `expected` to `tolerance` relative (absolute near zero); nulls must match. */
export function closeTo(actual: number | null | undefined, expected: number | null, tolerance = 1e-9): boolean {
  if (expected === null) return actual === null;
  if (actual === null || actual === undefined) return false;
  return Math.abs(actual - expected) <= tolerance * Math.max(1, Math.abs(expected));
}

/**
 * Asserts two GraphQL answers are equal, deeply, where numbers that are not integers
 * may differ by 1e-9 relative ({@link closeTo}): sums and means added up in another order
 * (two forms of the same documents read by their own pipelines). `at` names the place
 * in the failure message.
 */
export function expectSameAnswer(actual: unknown, expected: unknown, at: string): void {
  if (typeof expected === 'number' && typeof actual === 'number' && !Number.isInteger(expected)) {
    expect(closeTo(actual, expected), `${at}: ${actual} vs ${expected}`).toBe(true);
    return;
  }
  if (Array.isArray(expected)) {
    expect(Array.isArray(actual), at).toBe(true);
    expect((actual as unknown[]).length, `${at}: length`).toBe(expected.length);
    for (const [i, item] of expected.entries()) expectSameAnswer((actual as unknown[])[i], item, `${at}[${i}]`);
    return;
  }
  if (expected !== null && typeof expected === 'object') {
    expect(Object.keys(actual as object).sort(), `${at}: keys`).toEqual(Object.keys(expected).sort());
    for (const [key, value] of Object.entries(expected)) expectSameAnswer((actual as Record<string, unknown>)[key], value, `${at}.${key}`);
    return;
  }
  expect(actual, at).toEqual(expected);
}

/**
 * Flights as the `recordReadings` mutation takes them (`ReadingInput`): metric `metric`,
 * tags `origin` and `destination`, fields `delay` and `distance`, time as ISO text.
 */
export const flightInputs = (flights: readonly RawFlight[], metric = 'flights') =>
  flights.map((f) => ({
    metric,
    tags: [
      { key: 'origin', value: f.origin },
      { key: 'destination', value: f.destination },
    ],
    time: new Date(f.time).toISOString(),
    fields: [
      { name: 'delay', value: f.delay },
      { name: 'distance', value: f.distance },
    ],
  }));
