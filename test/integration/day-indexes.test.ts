/**
 * The parts index `{series, date, f}` is not unique: start-up makes the unique one of
 * earlier versions not unique in `buckets` and in every rollup collection (in place on
 * MongoDB 6.0 and later, by building it again on the embedded server) and keeps every
 * document.
 */
import type { Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureIndexes } from '../../src/storage/store.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';

let database: TestDatabase;
let db: Db;
const ROLLUP = 'rollup_cpu_by_host';
const DAY = new Date(Date.UTC(2024, 0, 1));

/** A part as a fold writes it, without its statistics (what the indexes read). */
const part = (series: string, f: number) => ({
  _id: `${series}:${DAY.getTime()}:${f}`,
  series,
  metric: 'cpu',
  tagPairs: [`host=${series}`],
  date: DAY,
  f,
});

beforeAll(async () => {
  database = await openTestDatabase('day_indexes');
  db = database.db;
  // A database of the previous version: the unique parts index, one rollup defined.
  for (const name of ['buckets', ROLLUP]) {
    await db.collection(name).createIndex({ series: 1, date: 1, f: 1 }, { name: 'series_date_f', unique: true });
    await db.collection(name).createIndex({ metric: 1, date: 1 }, { name: 'metric_date' });
    await db.collection(name).insertMany([part('a', 1), part('a', 2), part('b', 1)] as never[]);
  }
  await db.collection('rollups').insertOne({ _id: 'cpu/by_host', metric: 'cpu', name: 'by_host', collection: ROLLUP } as never);
});

afterAll(async () => {
  await database?.drop();
});

describe('the parts index', () => {
  it('start-up renames buckets to series_days and makes the index not unique there and in rollup collections, keeping every document', async () => {
    await ensureIndexes(db);
    // Twice: idempotent once replaced.
    await ensureIndexes(db);
    const names = (await db.listCollections().toArray()).map((collection) => collection.name);
    expect(names).not.toContain('buckets');
    for (const name of ['series_days', ROLLUP]) {
      const indexes = await db.collection(name).listIndexes().toArray();
      const parts = indexes.find((index) => index.name === 'series_date_f');
      expect(parts?.key, name).toEqual({ series: 1, date: 1, f: 1 });
      expect(parts?.unique, name).toBeUndefined();
      expect(
        indexes.filter((index) => index.unique === true).map((index) => index.name),
        name,
      ).toEqual([]);
      expect(await db.collection(name).countDocuments({}), name).toBe(3);
    }
  });

  it('start-up replaces the whole-metric index {metric, date} by {metric, date, last}', async () => {
    for (const name of ['series_days', ROLLUP]) {
      const indexes = await db.collection(name).listIndexes().toArray();
      expect(indexes.find((index) => index.name === 'metric_date_last')?.key, name).toEqual({ metric: 1, date: 1, last: 1 });
      expect(
        indexes.map((index) => index.name),
        name,
      ).not.toContain('metric_date');
    }
  });
});
