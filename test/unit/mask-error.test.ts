/**
 * What clients see of errors: driver errors meaning "database unreachable" become
 * UNAVAILABLE at the same path, anything unexpected stays masked.
 */
import { GraphQLError } from 'graphql';
import getPort from 'get-port';
import { MongoClient } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { CodedError, ErrorCode, InputError } from '../../src/errors.ts';
import { createMaskError } from '../../src/server/mask-error.ts';

/** A real driver error: an operation against a port nobody listens on. */
async function unreachableError(): Promise<Error> {
  const port = await getPort({ host: '127.0.0.1' });
  const client = new MongoClient(`mongodb://127.0.0.1:${port}/?directConnection=true`, { serverSelectionTimeoutMS: 300 });
  try {
    await client.db('x').collection('y').findOne({});
  } catch (error) {
    return error as Error;
  } finally {
    await client.close();
  }
  throw new Error('the operation unexpectedly succeeded');
}

describe('createMaskError', () => {
  it('turns an unreachable-database driver error of a field into UNAVAILABLE at that path and reports it', async () => {
    const driverError = await unreachableError();
    const reported: unknown[] = [];
    const mask = createMaskError({ onUnavailable: (error) => reported.push(error) });
    const wrapped = new GraphQLError(driverError.message, { path: ['metrics'], originalError: driverError });
    const masked = mask(wrapped, 'Unexpected error.') as GraphQLError;
    expect(masked.extensions).toEqual({ code: ErrorCode.UNAVAILABLE });
    expect(masked.path).toEqual(['metrics']);
    expect(masked.message).not.toMatch(/127\.0\.0\.1|Mongo|selection|ECONNREFUSED/i);
    expect(reported).toEqual([driverError]);
    // Thrown outside any field, too.
    expect((mask(driverError, 'Unexpected error.') as GraphQLError).extensions).toEqual({ code: ErrorCode.UNAVAILABLE });
    expect(reported).toHaveLength(2);
  });

  it('passes the abort of a request whose client went away unchanged, so it is not logged as an error', () => {
    const controller = new AbortController();
    controller.abort();
    const aborted = new GraphQLError('This operation was aborted', {
      path: ['aggregate'],
      originalError: controller.signal.reason as Error,
    });
    expect(createMaskError()(aborted, 'Unexpected error.')).toBe(aborted);
    const timedOut = new GraphQLError('timed out', {
      path: ['aggregate'],
      originalError: new DOMException('The operation timed out', 'TimeoutError'),
    });
    expect((createMaskError()(timedOut, 'Unexpected error.') as GraphQLError).extensions.code).toBe('INTERNAL_SERVER_ERROR');
  });

  it('masks other unexpected errors as INTERNAL_SERVER_ERROR and shows errors meant for the client with their code', () => {
    const reported: unknown[] = [];
    const mask = createMaskError({ onUnavailable: (error) => reported.push(error) });
    const bug = new GraphQLError('Cannot read properties of undefined', { path: ['buckets'], originalError: new TypeError('x') });
    const masked = mask(bug, 'Unexpected error.') as GraphQLError;
    expect([masked.message, masked.extensions.code, masked.path]).toEqual(['Unexpected error.', 'INTERNAL_SERVER_ERROR', ['buckets']]);
    const input = new InputError(ErrorCode.INVALID_NAME, 'bad name', 'metric');
    const shown = mask(input, 'Unexpected error.') as GraphQLError;
    expect(shown).toBeInstanceOf(GraphQLError);
    expect([shown.message, shown.extensions]).toEqual(['bad name', { code: 'INVALID_NAME', inputPath: 'metric' }]);
    const coded = new CodedError(ErrorCode.QUERY_TIMEOUT, 'too slow');
    const wrapped = new GraphQLError(coded.message, { path: ['buckets'], originalError: coded });
    const passed = mask(wrapped, 'Unexpected error.') as GraphQLError;
    expect([passed.message, passed.extensions, passed.path]).toEqual(['too slow', { code: 'QUERY_TIMEOUT' }, ['buckets']]);
    expect(reported).toEqual([]);
  });
});
