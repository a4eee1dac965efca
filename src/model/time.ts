/** Milliseconds in a minute, a quarter hour, an hour, a day and a week. All times in the code are UTC. */
export const MINUTE_MS = 60_000;
export const QUARTER_MS = 900_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
export const WEEK_MS = 7 * DAY_MS;

/** Rounds `ms` (milliseconds since the Unix epoch, UTC, >= 0) down to a multiple of `width` ms. */
export function floorTo(ms: number, width: number): number {
  return ms - (ms % width);
}

/** Rounds `ms` (>= 0) up to a multiple of `width` ms. */
export function ceilTo(ms: number, width: number): number {
  const rest = ms % width;
  return rest === 0 ? ms : ms + width - rest;
}
