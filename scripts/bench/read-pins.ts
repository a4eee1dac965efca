/**
 * What the parts a compaction replaced cost reads while they are kept (docs/ingest-design.md,
 * "Compaction"): the same readings written the same way into two databases of one
 * embedded server, as the load test writes them (hosts in turn, a reading every 7 s,
 * batches of 100 through the record path), folded every `--fold-every` batches and
 * compacted as the fold job does (a day once 8 folds wrote to it). In the first the
 * replaced parts are kept, as for the grace period after each compaction; in the second
 * they are deleted, as the fold job does once no read pins a view from before the
 * compaction (`compactOnce` with `pinned`). Then a per-host aggregate over the whole range
 * and HOUR buckets of two hosts, through the GraphQL app, medians of alternating runs.
 * Both databases must answer the same counts and sums as a plain loop over the readings.
 *
 *   npm run bench:read-pins                       # 50 hosts, 270 batches of 100
 *   npm run bench:read-pins -- --batches 540 --reps 9
 */
import { Command } from 'commander';
import { recordBatch } from '../../src/engine/record-batch.ts';
import { validateReadings } from '../../src/record/validate.ts';
import { foldOnce } from '../../src/storage/fold.ts';
import type { Store } from '../../src/storage/store.ts';
import {
  alternating,
  benchApp,
  describeMachine,
  describeServer,
  format,
  graphqlBody,
  positiveInt,
  progressLog,
  table,
  withScratchStores,
} from './harness/index.ts';
import { compactOnce } from '../../src/storage/compaction.ts';

const options = new Command()
  .name('bench:read-pins')
  .option('--hosts <n>', 'hosts (series)', positiveInt, 50)
  .option('--batches <n>', 'batches of 100 readings', positiveInt, 270)
  .option('--fold-every <n>', 'batches per fold', positiveInt, 13)
  .option('--reps <n>', 'timed runs of each query on each database', positiveInt, 7)
  .parse()
  .opts<{ hosts: number; batches: number; foldEvery: number; reps: number }>();

const BATCH = 100;
const START = Date.UTC(2024, 0, 1);
/** A grace period the run never reaches: only `pinned` deletes. */
const LONG_GRACE = 3_600_000;
const log = progressLog('bench:read-pins');

/** Reading `k`: host `k mod hosts`, 7 s after the one before, an integer value (exact sums). */
const readingAt = (k: number) => ({
  metric: 'load',
  tags: [{ key: 'host', value: `h${k % options.hosts}` }],
  time: new Date(START + k * 7000),
  fields: [{ name: 'v', value: (k * 31) % 101 }],
});

/** Writes every batch, folding every `--fold-every` batches and compacting as the fold job does (the last batches stay in the tail). */
async function build(store: Store): Promise<void> {
  for (let b = 0; b < options.batches; b++) {
    const inputs = Array.from({ length: BATCH }, (_, i) => readingAt(b * BATCH + i));
    const receivedAt = Date.now();
    await recordBatch(store, validateReadings(inputs, { maxBatchSize: BATCH, receivedAt }), { receivedAt });
    if ((b + 1) % options.foldEvery === 0 && b + 1 < options.batches) {
      await foldOnce(store, store.holder);
      while ((await compactOnce(store, store.holder, { afterFolds: 8, graceMs: LONG_GRACE })).compaction !== null);
    }
  }
}

const PER_HOST = `query($from: Time!, $to: Time!) { aggregate(metric: "load", field: "v", from: $from, to: $to, groupBy: ["host"]) { tags { value } count sum } }`;
const HOURS = `query($from: Time!, $to: Time!) { buckets(metric: "load", field: "v", granularity: HOUR, from: $from, to: $to, where: [{ key: "host", in: ["h1", "h2"] }]) { buckets { start count sum } } }`;

await withScratchStores(
  ['pins_kept', 'pins_dropped'],
  { ingest: { maxTailReadings: 0, maxTailSeconds: 0 } },
  async (stores, database) => {
    const dropped = stores[1]!;
    for (const store of stores) {
      await build(store);
      log(`built ${store.db.databaseName}`);
    }
    const cleanup = await compactOnce(dropped, dropped.holder, { afterFolds: 1_000_000, graceMs: LONG_GRACE, pinned: true });
    log(`deleted ${cleanup.deleted} replaced parts in the second database`);

    const readings = options.batches * BATCH;
    const count = readings;
    let sum = 0;
    for (let k = 0; k < readings; k++) sum += readingAt(k).fields[0]!.value;
    const range = { from: new Date(START).toISOString(), to: new Date(START + readings * 7000).toISOString() };
    const apps = stores.map((store) => benchApp(store));
    for (const app of apps) {
      const body = await graphqlBody<{ aggregate: { count: number; sum: number }[] }>(app, PER_HOST, range);
      const total = body.data!.aggregate.reduce((acc, row) => ({ count: acc.count + row.count, sum: acc.sum + row.sum }), {
        count: 0,
        sum: 0,
      });
      if (total.count !== count || total.sum !== sum) {
        throw new Error(`Answers differ from the plain loop: ${JSON.stringify(total)} against ${JSON.stringify({ count, sum })}`);
      }
    }

    const rows: string[][] = [];
    for (const [name, query] of [
      ['aggregate per host, whole range', PER_HOST],
      ['HOUR buckets of 2 hosts', HOURS],
    ] as const) {
      const [keptMs, droppedMs] = await alternating(
        () => graphqlBody(apps[0]!, query, range),
        () => graphqlBody(apps[1]!, query, range),
        options.reps,
      );
      rows.push([name, format.ms(keptMs), format.ms(droppedMs), format.ratio(keptMs / droppedMs)]);
    }
    const documents = await Promise.all(stores.map((store) => store.seriesDays.countDocuments({})));
    console.log(`## Reads with and without the parts compactions replaced\n`);
    console.log(
      `_${new Date().toISOString().slice(0, 10)}; ${await describeServer(stores[0]!.client, database.embedded)}; ${describeMachine()}._ ` +
        `${readings.toLocaleString('en-US')} readings of ${options.hosts} hosts, folded every ${options.foldEvery} batches of ${BATCH}; ` +
        `series-day documents: ${documents[0]!.toLocaleString('en-US')} with the replaced parts kept, ${documents[1]!.toLocaleString('en-US')} once they are deleted. ` +
        `Medians of ${options.reps} alternating runs; both answer the plain loop's count and sum.\n`,
    );
    for (const line of table(['query', 'parts kept ms', 'parts deleted ms', 'kept / deleted'], 'lrrr', rows)) console.log(line);
  },
  log,
);
