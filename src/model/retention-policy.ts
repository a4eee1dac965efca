import { ErrorCode, InputError } from '../errors.ts';
import { DAY_MS, floorTo } from './time.ts';

/**
 * How long a metric keeps each level of its series-day documents (see
 * `documents/series-day.ts`), in whole UTC days; null keeps the level forever:
 * - `minutes`: the minute slots (`hours.<h>.minutes`, with their first/last readings
 *   and the minute sketches `q.hours.<h>.minutes`), and the quarter-hour sketches
 *   (`q.hours.<h>.quarters`), which answer only beside the minute slots;
 * - `hours`: the hour slots (`hours`, which hold the minutes too, and `q.hours`);
 * - `days`: the whole document (day totals, latest readings, batch marks), and the
 *   metric's rollup documents of the day.
 * A level cannot outlive the one that holds it: `minutes <= hours <= days`, null
 * counting as forever. This is the seeds' way of keeping coarse data after the fine data
 * expires ("Schema Design for Time Series Data in MongoDB": keep copies at several
 * granularities, drop old ones).
 */
export interface RetentionPolicy {
  minutes: number | null;
  hours: number | null;
  days: number | null;
}

/** The stored levels retention removes, finest first. */
export const RETENTION_LEVELS = ['minute', 'hour', 'day'] as const;
export type RetentionLevel = (typeof RETENTION_LEVELS)[number];

/**
 * Per level, the UTC midnight (ms since epoch) before which the level is gone: documents
 * whose `date` is earlier have lost it. Null: nothing removed at that level.
 */
export type Horizons = Record<RetentionLevel, number | null>;

/** No level removed anywhere. */
export const NO_HORIZONS: Horizons = { minute: null, hour: null, day: null };

/** Keep everything forever: the policy of a metric that has none. */
export const KEEP_FOREVER: RetentionPolicy = { minutes: null, hours: null, days: null };

/** Longest duration a policy may name, in days (100 years): keeps every horizon a valid date. */
export const MAX_RETENTION_DAYS = 36_525;

/** The policy's duration of each level. */
const durationOf = (policy: RetentionPolicy, level: RetentionLevel) =>
  level === 'minute' ? policy.minutes : level === 'hour' ? policy.hours : policy.days;

/** A problem with a policy: the argument at fault and why. */
export interface PolicyProblem {
  argument: 'minutes' | 'hours' | 'days';
  message: string;
}

/**
 * The first problem of a policy, or null when it is valid: each duration null or a whole
 * number of days from 1 to {@link MAX_RETENTION_DAYS}, and `minutes <= hours <= days`
 * with null as forever (minutes live inside hours, hours inside the day document).
 */
export function policyProblem(policy: RetentionPolicy): PolicyProblem | null {
  for (const argument of ['minutes', 'hours', 'days'] as const) {
    const value = policy[argument];
    if (value !== null && !(Number.isInteger(value) && value >= 1 && value <= MAX_RETENTION_DAYS)) {
      return {
        argument,
        message: `${argument} must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or null (forever); got ${value}`,
      };
    }
  }
  const longer = (a: number | null, b: number | null) => (a === null ? b !== null : b !== null && a > b);
  if (longer(policy.minutes, policy.hours)) {
    return {
      argument: 'hours',
      message: `hours (${policy.hours ?? 'forever'}) must be at least minutes (${policy.minutes ?? 'forever'}): minute slots live inside hour slots`,
    };
  }
  if (longer(policy.hours, policy.days)) {
    return {
      argument: 'days',
      message: `days (${policy.days ?? 'forever'}) must be at least hours (${policy.hours ?? 'forever'}): hour slots live inside the day documents`,
    };
  }
  return null;
}

/**
 * A policy from the arguments of `setRetention` (absent arguments: null, forever).
 * @throws InputError INVALID_ARGUMENT (inputPath the argument at fault) when {@link policyProblem} finds one.
 */
export function parseRetentionPolicy(args: { minutes?: number | null; hours?: number | null; days?: number | null }): RetentionPolicy {
  const policy = { minutes: args.minutes ?? null, hours: args.hours ?? null, days: args.days ?? null };
  const problem = policyProblem(policy);
  if (problem !== null) throw new InputError(ErrorCode.INVALID_ARGUMENT, problem.message, problem.argument);
  return policy;
}

/**
 * The horizon of keeping a level `keepDays` days at `now` (ms since epoch, UTC): the UTC
 * midnight `keepDays` days before today's, so the day that ended most recently among
 * those removed ended at least `keepDays` days ago, and today plus `keepDays` whole
 * earlier days keep the level. Null when `keepDays` is null (forever).
 *
 * Example: keeping minutes 30 days at 2024-03-31T10:00Z gives 2024-03-01: documents of
 * February 29 and earlier lose their minutes.
 */
export function horizonAt(keepDays: number | null, now: number): number | null {
  return keepDays === null ? null : floorTo(now, DAY_MS) - keepDays * DAY_MS;
}

/** The later of two horizons (null: none). */
const later = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));

/**
 * The horizons retention is to reach at `now`: per level the policy's horizon, never
 * earlier than `applied` (what is gone stays gone when a policy is lengthened).
 */
export function targetHorizons(policy: RetentionPolicy, applied: Horizons, now: number): Horizons {
  const target = { ...NO_HORIZONS };
  for (const level of RETENTION_LEVELS) target[level] = later(applied[level], horizonAt(durationOf(policy, level), now));
  return target;
}

/**
 * Where each level's detail begins for queries: a minute slot exists only on days no
 * level of which is gone (the minute horizon, or a coarser one if later), an hour slot
 * only where neither hours nor whole days are gone. Null: from the beginning.
 */
export function detailFrom(horizons: Horizons): Horizons {
  const day = horizons.day;
  const hour = later(horizons.hour, day);
  return { minute: later(horizons.minute, hour), hour, day };
}

/** A piece of a query's range read from one stored level (as `query/segments.ts` plans it), ms since epoch. */
export interface LevelRead {
  level: RetentionLevel;
  from: number;
  to: number;
}

/**
 * The first read of `reads` that needs a minute or hour slot retention has removed, with
 * the time that level's detail begins; null when every read is kept. Day totals are never
 * refused: a day before the day horizon has no document, and reads nothing.
 */
export function firstExpiredRead(
  reads: readonly LevelRead[],
  horizons: Horizons,
): { level: 'minute' | 'hour'; from: number; availableFrom: number } | null {
  const kept = detailFrom(horizons);
  for (const read of reads) {
    if (read.level === 'day') continue;
    const availableFrom = kept[read.level];
    if (availableFrom !== null && read.from < availableFrom) return { level: read.level, from: read.from, availableFrom };
  }
  return null;
}

/** Horizons as stored in the metric registry: UTC midnights as dates, null (or absent) for none. */
export type StoredHorizons = Partial<Record<RetentionLevel, Date | null>>;

/**
 * A metric's retention as kept in its registry entry (`MetricDocument.retention`):
 * - `policy` and when an admin set it;
 * - `horizons`: what queries honour. A retention pass raises them (never lowers them)
 *   before it removes anything, so no query reads a level while it is being removed;
 * - `removed`: how far each level's removal has completed; a pass starts from there, so
 *   an interrupted pass is finished by the next one and a finished one is not redone.
 */
export interface StoredRetention {
  policy: RetentionPolicy;
  setAt: Date;
  horizons?: StoredHorizons;
  removed?: StoredHorizons;
}

/** Stored horizons as milliseconds (absent levels: null). */
export function horizonsOf(stored: StoredHorizons | undefined): Horizons {
  const horizons = { ...NO_HORIZONS };
  for (const level of RETENTION_LEVELS) horizons[level] = stored?.[level]?.getTime() ?? null;
  return horizons;
}

/** How a query avoids a level's removed slots, for the refusal's message. */
const COARSER: Record<'minute' | 'hour', string> = {
  minute: 'HOUR or coarser, with range edges on whole hours',
  hour: 'DAY or coarser in UTC, with range edges on whole UTC days',
};

/**
 * The refusal of a query of `metric` that needs removed slots (see {@link firstExpiredRead}):
 * DETAIL_EXPIRED with inputPath `from`, and in its extensions the `level` (`MINUTE` or
 * `HOUR`) and `availableFrom`, the earliest time that level exists (ISO 8601, UTC).
 */
export function detailExpired(metric: string, expired: { level: 'minute' | 'hour'; from: number; availableFrom: number }): InputError {
  const from = new Date(expired.availableFrom).toISOString();
  const error = new InputError(
    ErrorCode.DETAIL_EXPIRED,
    `Metric "${metric}" keeps ${expired.level} detail from ${from} on (its retention policy removed the older ${expired.level} slots), and this query needs ${expired.level} slots from ${new Date(expired.from).toISOString()}: ask from ${from} on, or at ${COARSER[expired.level]}.`,
    'from',
  );
  error.extensions.level = expired.level.toUpperCase();
  error.extensions.availableFrom = from;
  return error;
}
