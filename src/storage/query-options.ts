import { MongoOperationTimeoutError, MongoServerError } from 'mongodb';
import { ErrorCode, ServiceError } from '../errors.ts';

/**
 * How long the client waits past `maxTimeMS` before it gives up on its own: a server
 * checks its time limit at points of its choosing (SecantusDB between pipeline stages
 * and every 64 documents of a scan), so it may answer late.
 */
export const CLIENT_GRACE_MS = 1_000;

/** Limits of the database reads of one request. */
export interface QueryOptions {
  /**
   * Time limit of each read, in milliseconds: sent as `maxTimeMS`, and the client stops
   * waiting {@link CLIENT_GRACE_MS} later. Unset: no limit.
   */
  maxTimeMS?: number;
  /** Aborts the reads when the request is gone (the client disconnected). */
  signal?: AbortSignal;
}

/** The driver options of one read under `options`: `maxTimeMS`, and a signal that fires on abort or when the client gives up. */
export function driverOptions(options: QueryOptions): { maxTimeMS?: number; signal?: AbortSignal } {
  const signals: AbortSignal[] = [];
  if (options.signal) signals.push(options.signal);
  if (options.maxTimeMS !== undefined) signals.push(AbortSignal.timeout(options.maxTimeMS + CLIENT_GRACE_MS));
  return {
    ...(options.maxTimeMS === undefined ? {} : { maxTimeMS: options.maxTimeMS }),
    ...(signals.length === 0 ? {} : { signal: signals.length === 1 ? signals[0] : AbortSignal.any(signals) }),
  };
}

/**
 * True when `error` says a read ran out of time: the server stopped it at its
 * `maxTimeMS` (code 50 MaxTimeMSExpired), the client gave up waiting (the
 * `AbortSignal.timeout` of {@link driverOptions} fired: a `TimeoutError`), or the driver
 * timed the operation out.
 */
export function isQueryTimeout(error: unknown): boolean {
  if (error instanceof MongoServerError) return error.code === 50;
  if (error instanceof MongoOperationTimeoutError) return true;
  return error instanceof Error && error.name === 'TimeoutError';
}

/**
 * True when `error` is the abort of a read by the request's own signal
 * ({@link driverOptions}): the client went away. A time-out is a `TimeoutError` instead
 * ({@link isQueryTimeout}).
 */
export function isClientAbort(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}

/** The client-facing QUERY_TIMEOUT error for a read that took longer than `maxTimeMS` milliseconds. */
export function queryTimeout(maxTimeMS: number | undefined): ServiceError {
  const limit = maxTimeMS === undefined ? '' : ` of ${maxTimeMS.toLocaleString('en-US')} ms`;
  return new ServiceError(
    ErrorCode.QUERY_TIMEOUT,
    `The query ran longer than the time limit${limit} and was stopped. Ask for a shorter range, a coarser granularity, fewer series or fewer fields.`,
  );
}

/**
 * Runs one read with the limits of `options` (`read` receives the driver options to
 * pass on) and turns a time-out into ServiceError QUERY_TIMEOUT. Every other error,
 * including the abort of a request whose client went away, propagates unchanged.
 * @throws ServiceError QUERY_TIMEOUT when the read ran out of time.
 */
export async function limitedRead<T>(
  options: QueryOptions,
  read: (driver: { maxTimeMS?: number; signal?: AbortSignal }) => Promise<T>,
): Promise<T> {
  try {
    return await read(driverOptions(options));
  } catch (error) {
    if (isQueryTimeout(error)) throw queryTimeout(options.maxTimeMS);
    throw error;
  }
}
