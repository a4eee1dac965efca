import {
  MongoBulkWriteError,
  MongoClientClosedError,
  MongoError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerClosedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  MongoWriteConcernError,
} from 'mongodb';
import { ErrorCode, ServiceError } from '../errors.ts';

/**
 * True when `error` says the database could not be reached or did not confirm an
 * operation, so the operation may or may not have been applied: a network error or
 * time-out, no server to select, a closed client or topology, a write-concern failure,
 * or a bulk write that failed as a whole. The last one matters: when the connection
 * closes mid-`bulkWrite`, the driver throws `MongoBulkWriteError` with an EMPTY
 * `writeErrors` list; that is not "no write failed" but "unknown which were applied".
 */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoServerClosedError ||
    error instanceof MongoClientClosedError ||
    error instanceof MongoOperationTimeoutError ||
    error instanceof MongoWriteConcernError
  ) {
    return true;
  }
  if (error instanceof MongoBulkWriteError) {
    const writeErrors = [error.writeErrors].flat();
    return writeErrors.length === 0 || error.writeConcernError !== undefined || isUnavailable(error.cause);
  }
  if (error instanceof MongoError) {
    // Pool cleared, interrupted at shutdown, not primary: the driver labels these as retryable.
    return error.hasErrorLabel('RetryableWriteError') || error.hasErrorLabel('ResetPool') || isUnavailable(error.cause);
  }
  return false;
}

/**
 * True when the server stopped an operation at its `maxTimeMS` (code 50, MaxTimeMSExpired;
 * MongoDB manual, "Error Codes"), also a bulk write whose failed writes all stopped so
 * (or lost a first-insert race, 11000): what was not applied is known to be unapplied.
 */
export function isTimeLimitError(error: unknown): boolean {
  if (error instanceof MongoBulkWriteError) {
    const writeErrors = [error.writeErrors].flat();
    return (
      writeErrors.some((writeError) => writeError.code === 50) &&
      writeErrors.every((writeError) => writeError.code === 50 || writeError.code === 11000)
    );
  }
  return error instanceof MongoServerError && error.code === 50;
}

/**
 * The client-facing error for an operation the database did not complete or confirm:
 * ErrorCode.UNAVAILABLE with a plain message (no host names, no driver text).
 * @param what what could not be done, e.g. "The batch could not be stored".
 */
export function unavailable(what: string): ServiceError {
  return new ServiceError(
    ErrorCode.UNAVAILABLE,
    `${what}: the database is unavailable or did not confirm the operation. Retry later; writes with the same batchId are applied at most once.`,
  );
}
