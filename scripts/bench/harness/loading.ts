/**
 * Loading readings into the project's storage: through the API as a client sends them
 * (`recordThroughApi`, with the server's folder running: `serverFolder`, then
 * `settleLikeServer`), or through the record path to the state a day ends in
 * (`recordFoldCompact`); and the bytes the project then holds at rest (`bytesAtRest`).
 */
import { pino } from 'pino';
import { loadConfig } from '../../../src/config.ts';
import { recordBatch } from '../../../src/engine/record-batch.ts';
import { foldJob, foldJobSettings } from '../../../src/jobs/fold-job.ts';
import { JobScheduler } from '../../../src/jobs/scheduler.ts';
import type { Reading, ReadingInput } from '../../../src/record/validate.ts';
import { foldAll } from '../../../src/storage/fold.ts';
import { CollectionName, type Store } from '../../../src/storage/store.ts';
import { type BenchApp, postGraphql } from './app.ts';
import { collectionSizes } from './database.ts';
import { batches } from './timing.ts';
import { compactOnce } from '../../../src/storage/compaction.ts';
import { findRollups } from '../../../src/storage/rollups.ts';

/** Readings per batch of the benchmarks' loaders (batch ids, the baselines' `insertMany`), as `import:flights` sends them. */
export const LOAD_BATCH = 1000;

/** The mutation a client records a batch with (as `import:flights` sends it). */
const RECORD = `mutation($readings: [ReadingInput!]!, $batchId: String) { recordReadings(readings: $readings, batchId: $batchId) { applied } }`;

/**
 * Records one batch through the app's GraphQL `recordReadings` with batch id `batchId`,
 * as a client does (`import:flights`): readings as `ReadingInput` values, and after an
 * INGEST_BACKLOG refusal the same batch again after the `retryAfterSeconds` it asks for.
 * @returns the refusals waited out.
 * @throws Error with the first GraphQL error of any other code.
 */
export async function recordThroughApi(app: BenchApp, readings: readonly ReadingInput[], batchId: string): Promise<number> {
  for (let refusals = 0; ; refusals++) {
    const body = (await (await postGraphql(app, RECORD, { readings, batchId })).json()) as {
      errors?: { message: string; extensions?: { code?: string; retryAfterSeconds?: number } }[];
    };
    const error = body.errors?.[0];
    if (error === undefined) return refusals;
    if (error.extensions?.code !== 'INGEST_BACKLOG') throw new Error(`batch ${batchId}: ${error.extensions?.code ?? ''} ${error.message}`);
    await new Promise((done) => setTimeout(done, 1000 * (error.extensions?.retryAfterSeconds ?? 1)));
  }
}

/**
 * The server's folder over `store`, as `npm start` runs it: the fold job with the
 * settings of the environment's configuration (`foldJobSettings`), in the background
 * until `stop` is called.
 */
export function serverFolder(store: Store): { stop: () => Promise<void> } {
  const jobs = new JobScheduler(pino({ level: 'silent' }));
  jobs.start(foldJob(store, foldJobSettings(loadConfig())));
  return { stop: () => jobs.stop() };
}

/**
 * Brings `store` to the state a server reaches once writes stopped for
 * `COMPACT_QUIET_MS`: every acknowledged batch folded (`foldAll`), then the compactions
 * the fold job would make by then (tiered, with the configuration's `COMPACT_*`
 * settings, every day of two folds or more quiet) until none is due and the parts they
 * replaced are deleted (no read pins them).
 * @returns the readings folded and the compactions made.
 */
export async function settleLikeServer(store: Store): Promise<{ folded: number; compactions: number }> {
  const settings = foldJobSettings(loadConfig());
  const folded = await foldAll(store, store.holder);
  let compactions = 0;
  for (;;) {
    const outcome = await compactOnce(store, store.holder, {
      afterFolds: settings.compactAfterFolds,
      quietMs: 0,
      graceMs: settings.compactGraceMs,
      tiered: true,
      fanIn: settings.compactFanIn,
      sealReadings: settings.compactSealReadings,
      pinned: true,
    });
    if (outcome.compaction === null && outcome.deleted === 0) break;
    if (outcome.compaction !== null) compactions += 1;
  }
  return { folded, compactions };
}

/** Records `readings` into `store` in batches of {@link LOAD_BATCH} through the record path, folds them all and compacts every day to one document per series (the state a day ends in). */
export async function recordFoldCompact(store: Store, readings: readonly Reading[]): Promise<void> {
  for (const batch of batches(readings, LOAD_BATCH)) await recordBatch(store, batch, { receivedAt: Date.now() });
  await foldAll(store, store.holder);
  for (;;) {
    const outcome = await compactOnce(store, store.holder, { afterFolds: 1, graceMs: 0 });
    if (outcome.compaction === null) break;
  }
  // Once more: deletes the parts the last compaction replaced.
  await compactOnce(store, store.holder, { afterFolds: 1, graceMs: 0 });
}

/** Bytes at rest of one collection of the project: documents, `storageSize` and `totalIndexSize`. */
export interface CollectionBytes {
  name: string;
  documents: number;
  data: number;
  index: number;
}

/**
 * Bytes at rest of every collection of the project's database but the ingest log (its
 * entries are removed `BATCH_RETENTION_HOURS` after their fold, so it holds no data at
 * rest), rollup collections included, from `collStats` (or `$collStats`: `via` says which answered). SecantusDB
 * reports the uncompressed BSON size as `storageSize`.
 */
export async function bytesAtRest(store: Store): Promise<{ collections: CollectionBytes[]; total: number; via: string }> {
  const collections: CollectionBytes[] = [];
  let via = '';
  for (const name of Object.values(CollectionName)) {
    if (name === CollectionName.batches) continue;
    const sizes = await collectionSizes(store.db, name);
    collections.push({ name, documents: sizes.count, data: sizes.storage, index: sizes.index });
    via = sizes.via;
  }
  // Each rollup's documents, automatic ones included, in the collection its definition names.
  for (const rollup of await findRollups(store)) {
    const sizes = await collectionSizes(store.db, rollup.collection);
    collections.push({ name: rollup.collection, documents: sizes.count, data: sizes.storage, index: sizes.index });
  }
  return { collections, total: collections.reduce((sum, c) => sum + c.data + c.index, 0), via };
}
