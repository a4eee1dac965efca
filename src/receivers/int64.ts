/**
 * 64-bit integers of decoded protobuf messages (timestamps in nanoseconds, counts) as
 * JavaScript numbers. Pure.
 */

/** A 64-bit integer as protobufjs gives it: a `Long` (with the `long` package, as here), or a number or decimal string from JSON. */
export type Int64 = number | string | { low: number; high: number; unsigned?: boolean; toString(): string };

const TWO_32 = 4_294_967_296n;

/**
 * A 64-bit integer as a bigint: a Long's two halves, a JSON number or a decimal string.
 * @throws SyntaxError for a string that is not an integer.
 */
export function int64ToBigInt(value: Int64): bigint {
  if (typeof value === 'number') return BigInt(Math.trunc(value));
  if (typeof value === 'string') return BigInt(value);
  const low = BigInt(value.low >>> 0);
  if (value.unsigned || value.high >= 0) return BigInt(value.high >>> 0) * TWO_32 + low;
  return BigInt(value.high) * TWO_32 + low;
}

/** A 64-bit integer as a number (exact up to 2^53). */
export function int64ToNumber(value: Int64): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Number(value);
  return value.unsigned || value.high >= 0 ? (value.high >>> 0) * 4_294_967_296 + (value.low >>> 0) : Number(int64ToBigInt(value));
}

/** Nanoseconds since the Unix epoch as milliseconds, rounded down (exact: computed on bigints). */
export function nanosToMs(value: Int64): number {
  const nanos = int64ToBigInt(value);
  const ms = nanos / 1_000_000n;
  // bigint division truncates toward zero; times before the epoch round down.
  return Number(nanos < 0n && nanos % 1_000_000n !== 0n ? ms - 1n : ms);
}
