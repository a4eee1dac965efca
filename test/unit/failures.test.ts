/**
 * Which driver errors mean "the database did not confirm the operation": those must
 * fail a write with UNAVAILABLE, never be taken for success or for a duplicate key.
 */
import {
  MongoBulkWriteError,
  MongoNetworkError,
  MongoServerError,
  MongoServerSelectionError,
  type BulkWriteResult,
  type WriteError,
} from 'mongodb';
import { describe, expect, it } from 'vitest';
import { isUnavailable } from '../../src/storage/failures.ts';

const bulkError = (writeErrors: WriteError[]) =>
  new MongoBulkWriteError({ message: 'bulk write failed', code: 0, writeErrors }, {} as unknown as BulkWriteResult);
const duplicate = (index: number) => ({ code: 11000, index, errmsg: 'E11000 duplicate key error' }) as unknown as WriteError;

describe('isUnavailable', () => {
  it('holds for a bulk write error without write errors (the connection closed mid-write)', () => {
    expect(isUnavailable(bulkError([]))).toBe(true);
  });

  it('holds for network and server-selection errors', () => {
    expect(isUnavailable(new MongoNetworkError('connection 3 to 127.0.0.1:27017 closed'))).toBe(true);
    expect(
      isUnavailable(
        new MongoServerSelectionError('Server selection timed out after 1000 ms', { servers: new Map(), error: null } as never),
      ),
    ).toBe(true);
  });

  it('does not hold for duplicate keys, other server errors and non-driver errors', () => {
    expect(isUnavailable(bulkError([duplicate(0), duplicate(3)]))).toBe(false);
    expect(isUnavailable(new MongoServerError({ message: 'E11000', code: 11000 }))).toBe(false);
    expect(isUnavailable(new Error('boom'))).toBe(false);
    expect(isUnavailable('connection closed')).toBe(false);
  });
});
