/**
 * Comparing two document forms (settings of the store such as `RAW_READINGS` or
 * `PACKED_MINUTES`) on the same readings: each database built to the state a day ends
 * in, its bytes at rest, and the same reads timed on both with their counts checked.
 */
import { recordBatch } from '../../../src/engine/record-batch.ts';
import type { Reading } from '../../../src/record/validate.ts';
import { foldAll } from '../../../src/storage/fold.ts';
import { CollectionName, type Store } from '../../../src/storage/store.ts';
import { type BenchApp, graphqlBody } from './app.ts';
import type { DataSet } from './datasets.ts';
import { collectionSizes, NaiveModel, type StorageFigures } from './models.ts';
import { format } from './table.ts';
import { alternating, batches } from './timing.ts';
import { compactOnce } from '../../../src/storage/compaction.ts';

/** Records `readings` into `store` in batches of 1,000, folds them all and compacts every day to one document per series. */
export async function recordFoldCompact(store: Store, readings: readonly Reading[]): Promise<void> {
  for (const batch of batches(readings, 1000)) await recordBatch(store, batch, { receivedAt: Date.now() });
  await foldAll(store, store.holder);
  for (;;) {
    const outcome = await compactOnce(store, store.holder, { afterFolds: 1, graceMs: 0 });
    if (outcome.compaction === null) break;
  }
  // Once more: deletes the parts the last compaction replaced.
  await compactOnce(store, store.holder, { afterFolds: 1, graceMs: 0 });
}

/**
 * Bytes (`collStats` storage and index sizes) of the series-day documents (`data`,
 * `index`) and of every collection at rest but the ingest log, whose entries go hours
 * after their fold (`all`: registries and day summaries too).
 */
export async function bytesAtRest(store: Store): Promise<{ data: number; index: number; all: number }> {
  const buckets = await collectionSizes(store.db, CollectionName.seriesDays);
  let all = 0;
  for (const name of Object.values(CollectionName)) {
    const figures = await collectionSizes(store.db, name);
    all += figures.storage + figures.index;
  }
  return { data: buckets.storage, index: buckets.index, all };
}

/** The readings an answer counts: every bucket of every group (`buckets { count }`), or every group of an aggregate (`aggregate { count }`). */
export function readingsCounted(body: { data?: Record<string, unknown> }): number {
  const answer = body.data ?? {};
  if ('aggregate' in answer) return (answer.aggregate as { count: number }[]).reduce((sum, group) => sum + group.count, 0);
  return (answer.buckets as { buckets: { count: number }[] }[])
    .flatMap((group) => group.buckets)
    .reduce((sum, bucket) => sum + bucket.count, 0);
}

/** A read timed by {@link timedReads}: its name, query, variables, and the readings a plain loop counts in its range. */
export interface CountedRead {
  name: string;
  query: string;
  variables: Record<string, unknown>;
  count: number;
}

/**
 * Each read on the two apps: first checks that both count the plain loop's readings
 * (throws an Error naming the read and the database otherwise), then times `reps`
 * alternating runs. Returns the table rows: name, readings, median ms of each, and the
 * second's time over the first's.
 */
export async function timedReads(
  apps: readonly [BenchApp, BenchApp],
  names: readonly [string, string],
  reads: readonly CountedRead[],
  reps: number,
): Promise<string[][]> {
  const rows: string[][] = [];
  for (const { name, query, variables, count } of reads) {
    for (const [i, app] of apps.entries()) {
      const answered = readingsCounted(await graphqlBody<Record<string, unknown>>(app, query, variables));
      if (answered !== count) throw new Error(`${name}: ${answered} readings counted in ${names[i]}, the plain loop ${count}`);
    }
    const [firstMs, secondMs] = await alternating(
      () => graphqlBody(apps[0], query, variables),
      () => graphqlBody(apps[1], query, variables),
      reps,
    );
    rows.push([name, format.count(count), format.ms(firstMs), format.ms(secondMs), format.ratio(secondMs / firstMs)]);
  }
  return rows;
}

/**
 * The bytes of `data` stored as one document per reading (`insertMany` in batches of
 * 1,000, with the indexes `npm run bench` gives that model) in a scratch database beside
 * `store`'s, dropped afterwards.
 */
export async function oneDocumentPerReading(store: Store, data: DataSet): Promise<StorageFigures> {
  const naive = await NaiveModel.open(store.client, `${store.db.databaseName}_naive`, data);
  try {
    for (const batch of batches(naive.convert(data.readings), 1000)) await naive.write(batch);
    return await naive.storage();
  } finally {
    await naive.db.dropDatabase().catch(() => undefined);
  }
}

/**
 * The table row of one document per reading (`one`, see {@link oneDocumentPerReading})
 * for a table of bytes per reading whose columns after the first three are data,
 * indexes, both, at rest and the ratio, with `trailing` empty cells after them.
 */
export function oneDocumentRow(one: StorageFigures, readings: number, trailing = 0): string[] {
  const perReading = (bytes: number) => format.count(Math.round(bytes / readings));
  const total = one.storageBytes + one.indexBytes;
  return [
    'one document per reading',
    format.count(one.documents),
    '',
    perReading(one.storageBytes),
    perReading(one.indexBytes),
    perReading(total),
    perReading(total),
    '1.00x',
    ...Array.from({ length: trailing }, () => ''),
  ];
}
