/**
 * A small seeded generator for test data, so the data and any failure are reproducible.
 */

/**
 * mulberry32: a deterministic pseudo-random generator.
 * @param seed an integer (taken modulo 2^32); the same seed gives the same sequence.
 * @returns a function giving the next number of the sequence, uniform in [0, 1). Throws nothing.
 */
export function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
