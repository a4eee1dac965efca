/**
 * What the compaction policy (`tieredFrom` and `runsAfter` in src/storage/fold.ts;
 * docs/ingest-design.md, "Sealed runs") makes a compaction rewrite over one whole day
 * of one dense series, for several `COMPACT_SEAL_READINGS`: the policy's own functions
 * applied to a day of folds, no database. A series writes a reading every `--every`
 * seconds, the folder folds every `--fold-every` seconds (each fold writes one part per
 * series-day) and compacts the day once `--after-folds` folds wrote to it. Per
 * setting it prints, for one series-day: the documents at the end of the day (one per
 * run, plus the parts of the folds after the last compaction), the most readings one
 * compaction rewrites (what it reads and writes back; a compaction rewrites that many for
 * every series of the day, so this bounds how long it holds the folds back), and how
 * many times a reading is rewritten on average and at most. Exact counts, the same on
 * every machine.
 *
 * With `--reads`, also what the sealed runs cost reads on the embedded server (or
 * `MONGODB_URI`): the same day of TSBS cpu-only readings (`--hosts` hosts, every 10 s)
 * recorded in batches of `--batch` readings into two databases, each batch folded and the day
 * compacted as the fold job does (`compactOnce` in tiers after 8 folds), one without
 * sealing and one with `--seal`; then HOUR buckets of every host over the day and
 * MINUTE buckets of two hosts over an hour, through the GraphQL app, medians of
 * alternating runs. Both must answer the plain loop's count.
 *
 *   npm run bench:compaction-policy                                  # 10 s readings, a fold every 5 s
 *   npm run bench:compaction-policy -- --every 1 --fold-every 1
 *   npm run bench:compaction-policy -- --reads --hosts 10 --seal 2000
 */
import { Command } from 'commander';
import { recordBatch } from '../../src/engine/record-batch.ts';
import { foldOnce } from '../../src/storage/fold.ts';
import type { Store } from '../../src/storage/store.ts';
import {
  alternating,
  benchApp,
  describeMachine,
  describeServer,
  format,
  generateCpu,
  graphqlBody,
  positiveInt,
  progressLog,
  table,
  validated,
  withScratchStores,
} from './harness/index.ts';
import type { CompactionRun } from '../../src/storage/fold-state.ts';
import { compactOnce, runsAfter, tieredFrom } from '../../src/storage/compaction.ts';

const options = new Command()
  .name('bench:compaction-policy')
  .option('--every <seconds>', 'seconds between two readings of the series', positiveInt, 10)
  .option('--fold-every <seconds>', 'seconds between two folds (FOLD_MAX_DELAY_MS under steady writes)', positiveInt, 5)
  .option('--after-folds <n>', 'folds that wrote to a day before it is compacted (COMPACT_AFTER_FOLDS)', positiveInt, 8)
  .option('--fan-in <n>', 'runs of one size merged at once (COMPACT_FAN_IN)', positiveInt, 2)
  .option('--reads', 'also measure reads of a day compacted without and with --seal on the database')
  .option('--hosts <n>', 'with --reads: hosts of the day of TSBS readings', positiveInt, 10)
  .option('--seal <n>', 'with --reads: COMPACT_SEAL_READINGS of the second database', positiveInt, 2_000)
  .option('--batch <n>', 'with --reads: readings per batch, each batch folded', positiveInt, 250)
  .option('--reps <n>', 'with --reads: timed runs of each query on each database', positiveInt, 7)
  .parse()
  .opts<{
    every: number;
    foldEvery: number;
    afterFolds: number;
    fanIn: number;
    reads?: boolean;
    hosts: number;
    seal: number;
    batch: number;
    reps: number;
  }>();

/** What one day of the policy did to one series-day. */
interface DayOutcome {
  documents: number;
  largest: number;
  meanRewrites: number;
  maxRewrites: number;
}

/**
 * Runs one UTC day of folds and compactions through the policy with `seal` readings per
 * document sealing a run (0: none). Fold numbers and compaction numbers share one
 * sequence, as in the fold state. Each fold carries the readings of its seconds.
 */
function day(seal: number): DayOutcome {
  const daySeconds = 86_400;
  const folds = Math.ceil(daySeconds / options.foldEvery);
  /** Readings per fold number (compaction numbers carry none). */
  const readingsOf = new Map<number, number>();
  /** Rewrites per fold number. */
  const rewrites = new Map<number, number>();
  let runs: CompactionRun[] | undefined;
  let last: number | undefined;
  let seq = 0;
  let touched = 0;
  /** Folds since the last compaction that wrote a part of the series-day (had a reading of it). */
  let parts = 0;
  let largest = 0;
  let lastReadingAt = -options.every;
  for (let fold = 0; fold < folds; fold++) {
    const end = Math.min(daySeconds, (fold + 1) * options.foldEvery);
    let readings = 0;
    while (lastReadingAt + options.every < end) {
      lastReadingAt += options.every;
      readings += 1;
    }
    const f = ++seq;
    readingsOf.set(f, readings);
    rewrites.set(f, 0);
    // Every fold counts for the day (other series write to it), only those with a reading write a part.
    touched += 1;
    if (readings > 0) parts += 1;
    if (touched < options.afterFolds) continue;
    const c = ++seq;
    const from = tieredFrom(runs, last, touched, options.fanIn, seal);
    let rewritten = 0;
    for (const [number, count] of readingsOf) {
      if (number < from) continue;
      rewritten += count;
      rewrites.set(number, (rewrites.get(number) ?? 0) + 1);
    }
    largest = Math.max(largest, rewritten);
    runs = runsAfter(runs, from, touched, { documents: 1, readings: rewritten });
    last = c;
    touched = 0;
    parts = 0;
  }
  const total = [...readingsOf.values()].reduce((a, b) => a + b, 0);
  let weighted = 0;
  let maxRewrites = 0;
  for (const [number, count] of readingsOf) {
    weighted += count * (rewrites.get(number) ?? 0);
    if (count > 0) maxRewrites = Math.max(maxRewrites, rewrites.get(number) ?? 0);
  }
  return { documents: (runs?.length ?? 0) + parts, largest, meanRewrites: weighted / total, maxRewrites };
}

const rows = [0, 500, 1_000, 2_000, 4_000].map((seal) => {
  const outcome = day(seal);
  return [
    seal === 0 ? 'none (0)' : format.count(seal),
    format.count(outcome.documents),
    format.count(outcome.largest),
    outcome.meanRewrites.toFixed(1),
    format.count(outcome.maxRewrites),
  ];
});
console.log(
  `## One series-day through the compaction policy\n\nA reading every ${options.every} s (${format.count(Math.floor(86_400 / options.every))} a day), a fold every ${options.foldEvery} s, a compaction after ${options.afterFolds} folds, fan-in ${options.fanIn}; computed from the policy's functions.\n`,
);
console.log(
  table(
    [
      'COMPACT_SEAL_READINGS',
      'documents at the end of the day',
      'most readings one compaction rewrites',
      'rewrites per reading, mean',
      'most',
    ],
    'lrrrr',
    rows,
  ).join('\n'),
);

/**
 * Records the day of `readings` into `store` in batches of `--batch`, folds after each batch
 * and compacts as the fold job does, with `seal`; the seconds the compactions took (each
 * call also deletes the parts earlier compactions replaced, its grace period being 0, as
 * the fold job's calls do once no read pins them), in all and the longest.
 */
async function build(store: Store, readings: ReturnType<typeof validated>, seal: number): Promise<{ seconds: number; longest: number }> {
  const compacting = { seconds: 0, longest: 0 };
  const compact = { afterFolds: options.afterFolds, tiered: true, fanIn: options.fanIn, sealReadings: seal, graceMs: 0 };
  for (let at = 0; at < readings.length; at += options.batch) {
    await recordBatch(store, readings.slice(at, at + options.batch), { receivedAt: Date.now() });
    await foldOnce(store, store.holder);
    for (;;) {
      const started = performance.now();
      const outcome = await compactOnce(store, store.holder, compact);
      if (outcome.compaction === null) break;
      const took = (performance.now() - started) / 1000;
      compacting.seconds += took;
      compacting.longest = Math.max(compacting.longest, took);
    }
  }
  return compacting;
}

if (options.reads === true) {
  const log = progressLog('bench:compaction-policy');
  const plain = [];
  for (const chunk of generateCpu({ hosts: options.hosts, durationMs: 86_400_000 })) plain.push(...chunk);
  const readings = validated(plain);
  const dayStart = Math.floor(readings[0]!.time / 86_400_000) * 86_400_000;
  const scratch = { ingest: { maxTailReadings: 0, maxTailSeconds: 0 } };
  await withScratchStores(
    ['seal_none', 'seal_on'],
    scratch,
    async (stores, database) => {
      const seconds: { seconds: number; longest: number }[] = [];
      for (const [i, seal] of [0, options.seal].entries()) {
        seconds.push(await build(stores[i]!, readings, seal));
        log(`built ${stores[i]!.db.databaseName}`);
      }
      const wholeDay = { from: new Date(dayStart).toISOString(), to: new Date(dayStart + 86_400_000).toISOString() };
      const hour = { from: new Date(dayStart + 12 * 3_600_000).toISOString(), to: new Date(dayStart + 13 * 3_600_000).toISOString() };
      const queries = [
        {
          name: 'HOUR buckets of every host over the day',
          query: `query($from: Time!, $to: Time!) { buckets(metric: "cpu", field: "usage_user", granularity: HOUR, from: $from, to: $to) { buckets { count } } }`,
          range: wholeDay,
          count: readings.length,
        },
        {
          name: 'MINUTE buckets of 2 hosts over an hour',
          query: `query($from: Time!, $to: Time!) { buckets(metric: "cpu", field: "usage_user", granularity: MINUTE, from: $from, to: $to, where: [{ key: "hostname", in: ["host_0", "host_1"] }]) { buckets { count } } }`,
          range: hour,
          count: readings.filter(
            (r) =>
              r.tags.some((tag) => tag.key === 'hostname' && ['host_0', 'host_1'].includes(tag.value)) &&
              r.time >= dayStart + 12 * 3_600_000 &&
              r.time < dayStart + 13 * 3_600_000,
          ).length,
        },
      ];
      const apps = stores.map((store) => benchApp(store));
      const readRows: string[][] = [];
      for (const { name, query, range, count } of queries) {
        for (const app of apps) {
          const body = await graphqlBody<{ buckets: { buckets: { count: number }[] }[] }>(app, query, range);
          const answered = (body.data?.buckets ?? []).flatMap((group) => group.buckets).reduce((sum, bucket) => sum + bucket.count, 0);
          if (answered !== count) throw new Error(`${name}: ${answered} readings counted, the plain loop ${count}`);
        }
        const [openMs, sealedMs] = await alternating(
          () => graphqlBody(apps[0]!, query, range),
          () => graphqlBody(apps[1]!, query, range),
          options.reps,
        );
        readRows.push([name, format.ms(openMs), format.ms(sealedMs), format.ratio(sealedMs / openMs)]);
      }
      const documents = await Promise.all(stores.map((store) => store.seriesDays.countDocuments({ metric: 'cpu' })));
      console.log(`\n## Reads of a day compacted without and with sealed runs\n`);
      console.log(
        `_${new Date().toISOString().slice(0, 10)}; ${await describeServer(stores[0]!.client, database.embedded)}; ${describeMachine()}._ ` +
          `${format.count(readings.length)} readings of ${options.hosts} hosts over one day, in batches of ${format.count(options.batch)}, each folded, compacted after ${options.afterFolds} folds. ` +
          `Series-day documents: ${format.count(documents[0]!)} without sealing, ${format.count(documents[1]!)} sealed at ${format.count(options.seal)}; ` +
          `compactions took ${seconds[0]!.seconds.toFixed(1)} s (the longest ${seconds[0]!.longest.toFixed(1)} s) and ${seconds[1]!.seconds.toFixed(1)} s (the longest ${seconds[1]!.longest.toFixed(1)} s). Medians of ${options.reps} alternating runs; both answer the plain loop's count.\n`,
      );
      console.log(
        table(['query', 'no sealing ms', `sealed at ${format.count(options.seal)} ms`, 'sealed / not'], 'lrrr', readRows).join('\n'),
      );
    },
    log,
  );
}
