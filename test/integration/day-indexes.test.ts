/**
 * The parts index `{series, date, f}` is not unique: start-up makes the unique one of
 * earlier versions not unique in `buckets` and in every rollup collection (in place on
 * MongoDB 6.0 and later, by building it again on the embedded server) and keeps every
 * document. The whole-metric and tag indexes of earlier versions give way to the same
 * keys followed by `last`, and the first `$match` of one day of one tag value is a range of
 * the new tag index that fetches only the documents reaching into the range; of several
 * tag values, a range of `{metric, date, tagPairs}` that fetches that day of those series.
 */
import type { Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectionStages } from '../../src/documents/selection.ts';
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
    await db.collection(name).createIndex({ metric: 1, tagPairs: 1, date: 1 }, { name: 'metric_tagPairs_date' });
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

  it('start-up replaces {metric, date} by {metric, date, last} and {metric, tagPairs, date} by {metric, tagPairs, date, last}', async () => {
    for (const name of ['series_days', ROLLUP]) {
      const indexes = await db.collection(name).listIndexes().toArray();
      expect(indexes.find((index) => index.name === 'metric_date_last')?.key, name).toEqual({ metric: 1, date: 1, last: 1 });
      expect(indexes.find((index) => index.name === 'metric_tagPairs_date_last')?.key, name).toEqual({
        metric: 1,
        tagPairs: 1,
        date: 1,
        last: 1,
      });
      const names = indexes.map((index) => index.name);
      expect(names, name).not.toContain('metric_date');
      expect(names, name).not.toContain('metric_tagPairs_date');
    }
  });
});

describe('the first $match of one day', () => {
  it('is an index range of metric_tagPairs_date_last that fetches only the documents reaching into the span', async () => {
    const hour = (h: number) => new Date(DAY.getTime() + h * 3_600_000);
    // Five runs of one series over the day, each two hours long, ending at these hours.
    const runs = [2, 6, 12, 18, 23].map((h, i) => ({ ...part('c', 10 + i), first: hour(h - 2), last: hour(h) }));
    await db.collection('series_days').insertMany(runs as never[]);
    const span = { from: hour(17).getTime(), to: hour(20).getTime() };
    const { match } = selectionStages({
      scope: { metric: 'cpu', tagPairs: [['host=c']] },
      days: { from: DAY.getTime(), to: DAY.getTime() + 86_400_000 },
      span,
      fields: ['x'],
      paths: ['date'],
    });
    const explained = await db.collection('series_days').find(match[0]?.$match).explain('executionStats');
    expect(explained.queryPlanner.winningPlan.inputStage.indexName).toBe('metric_tagPairs_date_last');
    const reaching = runs.filter((run) => run.last.getTime() >= span.from);
    expect(reaching.map((run) => run._id)).toEqual([runs[3]?._id, runs[4]?._id]);
    expect(explained.executionStats.totalDocsExamined).toBe(reaching.length);
  });

  it('of several tag values is an index range of metric_date_tagPairs that fetches those series of that day only', async () => {
    const next = new Date(DAY.getTime() + 86_400_000);
    const docs = ['e', 'f', 'g'].flatMap((series) => [
      { ...part(series, 1), first: DAY, last: DAY },
      { ...part(series, 1), _id: `${series}:${next.getTime()}:1`, date: next, first: next, last: next },
    ]);
    await db.collection('series_days').insertMany(docs as never[]);
    const { match } = selectionStages({
      scope: { metric: 'cpu', tagPairs: [['host=e', 'host=f']] },
      days: { from: DAY.getTime(), to: DAY.getTime() + 86_400_000 },
      span: { from: DAY.getTime(), to: DAY.getTime() + 3_600_000 },
      fields: ['x'],
      paths: ['date'],
    });
    const explained = await db.collection('series_days').find(match[0]?.$match).explain('executionStats');
    expect(explained.queryPlanner.winningPlan.inputStage.indexName).toBe('metric_date_tagPairs');
    const wanted = docs.filter((doc) => ['e', 'f'].includes(doc.series) && doc.date.getTime() === DAY.getTime());
    expect(wanted).toHaveLength(2);
    expect(explained.executionStats.totalDocsExamined).toBe(wanted.length);
  });
});
