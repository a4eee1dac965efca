/**
 * A batch that reaches its rollup writes late (its series-day writes were slow) must not
 * be counted twice in a rollup whose day another batch marked dirty and a rebuild
 * rewrote meanwhile: past half the grace period it marks its days dirty instead of
 * writing the rollup, and the next rebuild makes the rollup exact again.
 */
import type { Collection } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordBatch } from '../../src/engine/record.ts';
import type { DayDocument } from '../../src/model/day-document.ts';
import { dayKey } from '../../src/model/rollup.ts';
import { validateReadings } from '../../src/record/validate.ts';
import { backfillRollup, createRollup, findRollups, markDirty, rebuildRollupDay } from '../../src/storage/rollups.ts';
import { openStore, type Store } from '../../src/storage/store.ts';
import { testMongoUri } from '../helpers/db.ts';

const DAY = Date.UTC(2024, 0, 1);
const GRACE_MS = 600;

/** `count` readings of `v` = 1..count on three hosts, one a minute from minute `seed` of DAY. */
const batchOf = (count: number, seed: number) =>
  validateReadings(
    Array.from({ length: count }, (_, i) => ({
      metric: 'late',
      tags: [{ key: 'host', value: `h${(seed + i) % 3}` }],
      time: new Date(DAY + (seed + i) * 60_000),
      fields: [{ name: 'v', value: i + 1 }],
    })),
    { maxBatchSize: 1000, receivedAt: 0 },
  );

/** The same store, but each series-day bulk write returns `delayMs` after it was applied (a stalled process, a slow network). */
function slowedSeriesWrites(store: Store, delayMs: number): Store {
  const buckets = new Proxy(store.buckets, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (property !== 'bulkWrite' || typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        await new Promise((done) => setTimeout(done, delayMs));
        return result;
      };
    },
  }) as Collection<DayDocument>;
  return { ...store, buckets };
}

describe('a batch that reaches its rollup writes after half the grace period', () => {
  let store: Store;

  beforeAll(async () => {
    store = await openStore(testMongoUri(), `test_late_${Date.now().toString(36)}`, {
      writeConcern: { w: 1, journal: false },
      rollupGraceMs: GRACE_MS,
    });
  });

  afterAll(async () => {
    await store.db.dropDatabase();
    await store.client.close();
  });

  it('marks its days dirty instead of writing the rollup, and is counted once', async () => {
    const first = batchOf(10, 0);
    const slow = batchOf(10, 100);
    await recordBatch(store, first, { batchId: 'first', receivedAt: 0 });
    const rollup = await createRollup(store, { metric: 'late', name: 'all', tagKeys: [] });
    await backfillRollup(store, 'late', 'all', { graceMs: 0 });
    expect((await findRollups(store))[0]!.state).toBe('ready');

    const pending = recordBatch(slowedSeriesWrites(store, 2 * GRACE_MS), slow, { batchId: 'slow', receivedAt: 0 });
    // While the slow batch stalls after its series-day writes: another batch's retry marks
    // the day dirty, and a rebuild reads the series-day documents, the slow batch's among them.
    await new Promise((done) => setTimeout(done, GRACE_MS));
    await markDirty(store, [{ rollup, days: [DAY] }]);
    expect(await rebuildRollupDay(store, rollup._id, DAY, 0)).toBe('rebuilt');
    await pending;

    // The slow batch found the day clean but wrote it late: the day is dirty again.
    expect(Object.keys((await findRollups(store))[0]!.dirty ?? {})).toEqual([dayKey(DAY)]);
    expect(await rebuildRollupDay(store, rollup._id, DAY, 0)).toBe('rebuilt');

    // Plain loop over what was sent.
    let count = 0;
    let sum = 0;
    for (const reading of [...first, ...slow]) {
      for (const field of reading.fields) {
        count += 1;
        sum += field.value;
      }
    }
    const documents = await store.db
      .collection<DayDocument>(rollup.collection)
      .find({ date: new Date(DAY) })
      .toArray();
    expect(documents).toHaveLength(1);
    expect(documents[0]!.fields.v!.n).toBe(count);
    expect(documents[0]!.fields.v!.sum).toBe(sum);
  });

  it('writes the rollup in the same batch when it is on time', async () => {
    const rollup = (await findRollups(store))[0]!;
    await recordBatch(store, batchOf(5, 300), { batchId: 'quick', receivedAt: 0 });
    expect((await findRollups(store))[0]!.dirty ?? {}).toEqual({});
    const documents = await store.db
      .collection<DayDocument>(rollup.collection)
      .find({ date: new Date(DAY) })
      .toArray();
    expect(documents[0]!.fields.v!.n).toBe(25);
    expect(documents[0]!.fields.v!.sum).toBe(55 + 55 + 15);
  });
});
