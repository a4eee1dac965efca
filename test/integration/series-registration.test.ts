/**
 * Registering the series a batch names, by writers that do not know of each other (each
 * store has its own cache of registered series): new series are inserted, a series
 * another writer inserted between this writer's read and its insert gets this batch's
 * fields added, and an existing series lacking a field gets it. Every series ends up
 * once in the registry, with every field any batch recorded for it.
 */
import { randomBytes } from 'node:crypto';
import type { Collection } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordBatch } from '../../src/engine/record-batch.ts';
import { validateReadings } from '../../src/record/validate.ts';
import { openStore, type SeriesDocument, type Store } from '../../src/storage/store.ts';
import { testMongoUri } from '../helpers/db.ts';

const METRIC = 'registration';
let stores: Store[] = [];

beforeAll(async () => {
  const name = `test_registration_${randomBytes(4).toString('hex')}`;
  // Three writers on one database, each with a cold cache of registered series.
  stores = [];
  for (let i = 0; i < 3; i++) stores.push(await openStore(testMongoUri(), name, {}));
});

afterAll(async () => {
  await stores[0]?.db.dropDatabase();
  for (const store of stores) await store.client.close();
});

/** Records one reading per host of `hosts`, each with the fields `fields` (value 1), at 2024-03-01 10:00 UTC. */
async function record(store: Store, hosts: string[], fields: string[]): Promise<number> {
  const receivedAt = Date.now();
  const inputs = hosts.map((host) => ({
    metric: METRIC,
    tags: [{ key: 'host', value: host }],
    time: new Date(Date.UTC(2024, 2, 1, 10)),
    fields: fields.map((name) => ({ name, value: 1 })),
  }));
  const outcome = await recordBatch(store, validateReadings(inputs, { maxBatchSize: 1000, receivedAt }), { receivedAt });
  return outcome.recorded;
}

const hostsFrom = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `s${from + i}`);

/** The registry's series of the metric, by host: `[key, tags, tagPairs, fields sorted]`. */
async function registry(store: Store): Promise<Map<string, [string, Record<string, string>, string[], string[]]>> {
  const docs = await store.series.find({ metric: METRIC }).toArray();
  return new Map(docs.map((doc) => [doc.tags.host!, [doc.key, { ...doc.tags }, doc.tagPairs, [...doc.fields].sort()]]));
}

describe('series registration by writers that do not know of each other', () => {
  it('inserts new series, adds fields to those a concurrent writer inserted first, and to existing ones', async () => {
    const [a, b, c] = stores as [Store, Store, Store];
    // B reads which series exist before A inserts any, and inserts after A has: its
    // insert of s0..s9 finds them taken, so it must add its field to A's documents.
    let found!: () => void;
    const bHasRead = new Promise<void>((done) => (found = done));
    let aDone!: () => void;
    const aHasInserted = new Promise<void>((done) => (aDone = done));
    const slowReads = new Proxy(b.series, {
      get(target, property, receiver) {
        if (property !== 'find') return Reflect.get(target, property, receiver);
        return (...args: Parameters<Collection<SeriesDocument>['find']>) => {
          const cursor = target.find(...args);
          return {
            toArray: async () => {
              const docs = await cursor.toArray();
              found();
              await aHasInserted;
              return docs;
            },
          };
        };
      },
    });
    const bRecords = record({ ...b, series: slowReads } as Store, hostsFrom(0, 15), ['w']);
    await bHasRead;
    expect(await record(a, hostsFrom(0, 10), ['v'])).toBe(10);
    aDone();
    expect(await bRecords).toBe(15);

    // C has not registered s0 in its cache: it reads it with fields v and w, and adds x.
    expect(await record(c, ['s0', 's20'], ['x'])).toBe(2);

    const expected = new Map<string, [string, Record<string, string>, string[], string[]]>();
    for (const host of [...hostsFrom(0, 15), 's20']) {
      const fields = new Set<string>();
      if (hostsFrom(0, 10).includes(host)) fields.add('v');
      if (hostsFrom(0, 15).includes(host)) fields.add('w');
      if (host === 's0' || host === 's20') fields.add('x');
      expected.set(host, [`${METRIC},host=${host}`, { host }, [`host=${host}`], [...fields].sort()]);
    }
    expect(await registry(a)).toEqual(expected);
    expect(await a.series.countDocuments({ metric: METRIC })).toBe(16);
  });
});
