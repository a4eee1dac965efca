/**
 * Read limits without a database: which errors count as a time-out, the driver options
 * of a read, and the planning tracker the bucket loader waits on.
 */
import { MongoServerError } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { CodedError } from '../../src/errors.ts';
import { Planning } from '../../src/engine/planning.ts';
import { CLIENT_GRACE_MS, driverOptions, isQueryTimeout, limitedRead } from '../../src/storage/query-options.ts';

describe('query time-outs', () => {
  it("maps the server's MaxTimeMSExpired and the client's own time-out to QUERY_TIMEOUT, nothing else", async () => {
    const expired = new MongoServerError({ ok: 0, code: 50, codeName: 'MaxTimeMSExpired', errmsg: 'operation exceeded time limit' });
    const clientGaveUp = AbortSignal.timeout(0);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(isQueryTimeout(expired)).toBe(true);
    expect(isQueryTimeout(clientGaveUp.reason)).toBe(true);
    expect(isQueryTimeout(new MongoServerError({ ok: 0, code: 11000, errmsg: 'duplicate key' }))).toBe(false);
    const aborted = new AbortController();
    aborted.abort();
    expect(isQueryTimeout(aborted.signal.reason)).toBe(false);
    expect(isQueryTimeout(new Error('boom'))).toBe(false);

    const refused = await limitedRead({ maxTimeMS: 30 }, () => Promise.reject(expired)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CodedError);
    expect((refused as CodedError).code).toBe('QUERY_TIMEOUT');
    const other = new Error('boom');
    expect(await limitedRead({ maxTimeMS: 30 }, () => Promise.reject(other)).catch((error: unknown) => error)).toBe(other);
  });

  it('sends maxTimeMS and gives up on the client side a grace period later', async () => {
    expect(driverOptions({})).toEqual({});
    const options = driverOptions({ maxTimeMS: 20 });
    expect(options.maxTimeMS).toBe(20);
    expect(options.signal?.aborted).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 20 + CLIENT_GRACE_MS + 50));
    expect(options.signal?.aborted).toBe(true);
    expect(isQueryTimeout(options.signal?.reason)).toBe(true);
  });

  it('aborts a read when the request is aborted', () => {
    const request = new AbortController();
    const options = driverOptions({ maxTimeMS: 60_000, signal: request.signal });
    request.abort();
    expect(options.signal?.aborted).toBe(true);
    expect(isQueryTimeout(options.signal?.reason)).toBe(false);
  });
});

describe('planning', () => {
  it('is idle only once every tracked look-up settled and what it started has run', async () => {
    const planning = new Planning();
    const events: string[] = [];
    let finish!: (value: number) => void;
    const lookUp = planning.track(new Promise<number>((resolve) => (finish = resolve)));
    // What a resolver does with the look-up's result: start more work in a continuation.
    void lookUp.then(() => Promise.resolve()).then(() => events.push('continuation'));
    const idle = planning.idle().then(() => events.push('idle'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(events).toEqual([]);
    finish(1);
    await idle;
    expect(events).toEqual(['continuation', 'idle']);
  });

  it('counts a failed look-up as settled', async () => {
    const planning = new Planning();
    await expect(planning.track(Promise.reject(new Error('gone')))).rejects.toThrow('gone');
    const waited = new Promise((resolve) => setTimeout(() => resolve('still waiting'), 1_000));
    expect(await Promise.race([planning.idle().then(() => 'idle'), waited])).toBe('idle');
  });
});
