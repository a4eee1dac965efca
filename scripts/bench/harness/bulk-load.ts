/**
 * Loading readings into our storage: through the API as a client sends them
 * (`recordThroughApi`, with the server's folder running: `serverFolder`, then
 * `settleLikeServer`), through the record path (`recordBatch`, batch by batch, then
 * folded by `foldAll`) or bulk-loaded (the same
 * series-day parts planned per fold by the fold's own planner and inserted, without the
 * ingest log and the per-batch registry writes), and comparing two databases'
 * collections document by document, to check that both ways store the same.
 */
import { Double, Int32, Long, type Db, type Document } from 'mongodb';
import { pino } from 'pino';
import { loadConfig } from '../../../src/config.ts';
import { recordBatch } from '../../../src/engine/record.ts';
import { foldJob, foldJobSettings } from '../../../src/jobs/fold.ts';
import { JobScheduler } from '../../../src/jobs/scheduler.ts';
import { NO_HORIZONS } from '../../../src/model/retention.ts';
import { foldDocuments, planReadings } from '../../../src/record/fold-plan.ts';
import type { MetricWrite, SeriesWrite } from '../../../src/record/plan.ts';
import type { Reading, ReadingInput } from '../../../src/record/validate.ts';
import { compactOnce, DEFAULT_FOLD_MAX_READINGS, foldAll } from '../../../src/storage/fold.ts';
import type { Store } from '../../../src/storage/store.ts';
import { FOLDS_ID, foldState } from '../../../src/storage/visibility.ts';
import { type BenchApp, postGraphql } from './app.ts';
import { batches } from './timing.ts';

/** Readings per batch of the benchmarks' loaders (batch ids, the baselines' `insertMany`), as `import:flights` sends them. */
export const LOAD_BATCH = 1000;

/**
 * Writes readings through `recordBatch` in batches of `size` with batch ids `bench-1`,
 * `bench-2`, … (as the benchmark's loader does), each received a millisecond after the
 * one before at least (so folds take them in the order sent), then folds them all
 * (`foldAll`, as the server's folder would): the store holds their series-day documents
 * when it returns.
 * @returns the readings folded.
 */
export async function recordAll(store: Store, readings: readonly Reading[], size: number): Promise<number> {
  let receivedAt = 0;
  for (const [index, batch] of batches(readings, size).entries()) {
    receivedAt = Math.max(Date.now(), receivedAt + 1);
    await recordBatch(store, batch, { batchId: `bench-${index + 1}`, receivedAt });
  }
  return foldAll(store, store.holder);
}

/** What a bulk load did: readings loaded, series-day documents inserted, seconds it took. */
export interface BulkLoad {
  readings: number;
  documents: number;
  seconds: number;
}

/**
 * Loads readings as {@link recordAll} stores them in batches of `LOAD_BATCH`, without the
 * record path's cost per batch (log entries, registry writes): the batches are grouped
 * into the folds `foldAll` would make of them (whole batches, up to
 * `DEFAULT_FOLD_MAX_READINGS` readings, at least one), each fold's readings planned by
 * the fold's planner (`planReadings`, with the store's default statistics, as for a new
 * metric, and no retention horizons) into the parts that fold writes (`foldDocuments`:
 * `_id` `<series>:<day>:<fold>`, `f`), numbered after the folds already visible and
 * inserted with `insertMany`; then the fold state is made visible up to the last of them
 * (one compare-and-set: nothing may be folding meanwhile), and the series and metrics
 * registries get the record path's upserts. No log entries are written, so the batch ids
 * of the load are not known as sent. The record path may add values in another order,
 * so fractional sums may differ in the last bits. `log` hears how long each phase took.
 * @throws Error when the fold state changed during the load.
 */
export async function bulkLoad(store: Store, readings: readonly Reading[], log: (message: string) => void = () => {}): Promise<BulkLoad> {
  const begun = performance.now();
  const state = await foldState(store.db).findOne({ _id: FOLDS_ID });
  if (state === null || state.running !== null) throw new Error('bulkLoad: the store has no fold state, or a fold is under way');
  const folds: Reading[][] = [];
  let fold: Reading[] = [];
  for (const batch of batches(readings, LOAD_BATCH)) {
    if (fold.length > 0 && fold.length + batch.length > DEFAULT_FOLD_MAX_READINGS) {
      folds.push(fold);
      fold = [];
    }
    fold.push(...batch);
  }
  if (fold.length > 0) folds.push(fold);
  const series = new Map<string, SeriesWrite>();
  const metrics = new Map<string, MetricWrite>();
  let documents = 0;
  const phases = { plan: 0, insert: 0, registries: 0 };
  let mark = performance.now();
  const phase = (name: keyof typeof phases) => {
    const now = performance.now();
    phases[name] += (now - mark) / 1000;
    mark = now;
  };
  for (const [index, foldReadings] of folds.entries()) {
    const plan = planReadings(foldReadings, { settingsOf: () => store.defaultStatistics, horizonsOf: () => NO_HORIZONS });
    const docs = foldDocuments(plan.buckets, state.visible + index + 1);
    phase('plan');
    for (const chunk of batches(docs, 500)) await store.buckets.insertMany(chunk as never[], { ordered: false });
    phase('insert');
    documents += docs.length;
    for (const write of plan.series) {
      const known = series.get(write.id);
      if (known === undefined) series.set(write.id, { ...write, fields: new Set(write.fields) });
      else for (const field of write.fields) known.fields.add(field);
    }
    for (const write of plan.metrics) {
      const known = metrics.get(write.name);
      if (known === undefined) {
        metrics.set(write.name, { ...write, fields: new Set(write.fields), tagKeys: new Set(write.tagKeys) });
        continue;
      }
      for (const field of write.fields) known.fields.add(field);
      for (const key of write.tagKeys) known.tagKeys.add(key);
      known.first = Math.min(known.first, write.first);
      known.last = Math.max(known.last, write.last);
    }
  }
  if (folds.length > 0) {
    const flipped = await foldState(store.db).updateOne(
      { _id: FOLDS_ID, visible: state.visible, running: null },
      { $set: { visible: state.visible + folds.length } },
    );
    if (flipped.modifiedCount !== 1) throw new Error('bulkLoad: the fold state changed during the load');
  }
  // The registries, with the record path's updates (storage/record.ts).
  for (const chunk of batches([...series.values()], 1000)) {
    await store.series.bulkWrite(
      chunk.map((write) => ({
        updateOne: {
          filter: { _id: write.id },
          update: {
            $setOnInsert: { key: write.key, metric: write.metric, tags: write.tags, tagPairs: write.tagPairs },
            $addToSet: { fields: { $each: [...write.fields] } },
          },
          upsert: true,
        },
      })),
      { ordered: false },
    );
  }
  for (const write of metrics.values()) {
    await store.metrics.updateOne(
      { _id: write.name },
      {
        $addToSet: { fields: { $each: [...write.fields] }, tagKeys: { $each: [...write.tagKeys] } },
        $setOnInsert: { layout: store.defaultLayout, statistics: store.defaultStatistics, createdAt: new Date() },
        $min: { first: new Date(write.first) },
        $max: { last: new Date(write.last) },
      },
      { upsert: true },
    );
  }
  phase('registries');
  log(
    `bulk load of ${readings.length} readings in ${folds.length} folds: ${documents} documents planned in ${phases.plan.toFixed(1)} s, inserted in ${phases.insert.toFixed(1)} s, registries ${phases.registries.toFixed(1)} s`,
  );
  return { readings: readings.length, documents, seconds: (performance.now() - begun) / 1000 };
}

/**
 * A stored value in a comparable form: BSON types kept apart (double, int32, int64,
 * date), embedded documents with sorted keys, lists of strings sorted (registries add
 * to sets) and `recent` lists sorted by time and content (ties in time may be kept in
 * either order). Doubles are rounded to 12 significant digits, so sums added in
 * another order compare equal.
 */
function comparable(value: unknown, key = ''): unknown {
  if (value instanceof Double) return `d:${Number(value.value.toPrecision(12))}`;
  if (value instanceof Int32) return `i:${value.value}`;
  if (value instanceof Long) return `l:${value.toString()}`;
  if (value instanceof Date) return `t:${value.getTime()}`;
  if (typeof value === 'number') return `n:${Number(value.toPrecision(12))}`;
  if (Array.isArray(value)) {
    const items = value.map((item) => comparable(item));
    if (key === 'recent' || key === 'fields' || key === 'tagKeys') return items.map((item) => JSON.stringify(item)).sort();
    return items;
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, comparable((value as Document)[k], k)]),
    );
  }
  return value;
}

/**
 * Compares a collection of two databases, document by document in `key` order,
 * leaving out `ignore` (fields that differ by construction, such as `_id`).
 * @returns the documents of each side and up to 3 differences described.
 */
export async function compareCollection(a: Db, b: Db, name: string, key: Document, ignore: readonly string[]) {
  const read = (db: Db) => db.collection(name).find({}, { promoteValues: false, promoteLongs: false }).sort(key).toArray();
  const [left, right] = await Promise.all([read(a), read(b)]);
  const differences: string[] = [];
  if (left.length !== right.length) differences.push(`${name}: ${left.length} documents vs ${right.length}`);
  for (let i = 0; i < Math.min(left.length, right.length) && differences.length < 3; i++) {
    const strip = (doc: Document) => Object.fromEntries(Object.entries(doc).filter(([k]) => !ignore.includes(k)));
    const x = JSON.stringify(comparable(strip(left[i]!)));
    const y = JSON.stringify(comparable(strip(right[i]!)));
    if (x !== y) {
      let at = 0;
      while (at < x.length && x[at] === y[at]) at++;
      differences.push(`${name} #${i}: …${x.slice(Math.max(0, at - 60), at + 60)}… vs …${y.slice(Math.max(0, at - 60), at + 60)}…`);
    }
  }
  return { documents: [left.length, right.length] as const, differences };
}

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
 * Brings `store` to the state a server reaches once writes stop: every acknowledged
 * batch folded (`foldAll`), then the compactions the fold job would make (tiered, with
 * the configuration's `COMPACT_*` settings) until none is due and the parts they
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
