/**
 * Ingest against `insertMany`: the write path measured end to end on one embedded
 * server with journaled writes (`{w: 1, journal: true}`) on a temporary data directory
 * on disk:
 *
 * 1. Acknowledgement through GraphQL: `recordReadings` of batches of 1,000 readings with
 *    batch ids (in process, no socket) of dense data, sparse data and of readings that
 *    mostly start new series, against `insertMany` of one flat document per
 *    reading into the plain collection a user would keep (`PlainCollection`, with the
 *    index `{hostname: 1, t: 1}` or `{origin: 1, t: 1}`, as `bench:read-peers` loads it)
 *    of the same batch; the two take turns.
 * 2. Folding: `foldAll` of everything acknowledged (folds of `FOLD_MAX_READINGS`
 *    readings), in readings per second, and the parts it wrote; the folded parts'
 *    readings are checked against the readings sent.
 * 3. Tail read: the same hourly `aggregate` over a day of dense data on two metrics with
 *    the same readings, one entirely folded and one whose last 1,000 readings are still
 *    in the log; medians of 7 runs taking turns.
 *
 * 4. With `--sustain S`: instead of 1 to 3, one writer (`--writers N`: N at once)
 *    acknowledges dense batches of 1,000 through GraphQL for S seconds as fast as the
 *    server takes them (waiting out
 *    INGEST_BACKLOG as asked) while the server's own fold job folds and compacts in the
 *    background; every 30 s it prints the readings acknowledged and folded and the
 *    backlog, then the totals (of the folds, and of the compactions: the documents they
 *    read and merged, their seconds) and the exactness of the folded documents.
 *
 *   npm run bench:ingest                     # 40,000 dense, 20,000 sparse and 20,000 new-series readings
 *   npm run bench:ingest -- --dense 10000 --sparse 5000 --new-series 5000
 *   npm run bench:ingest -- --sustain 600    # 10 minutes of dense ingest and folds
 *   npm run bench:ingest -- --sustain 600 --writers 4   # four writers at once
 *   npm run bench:ingest -- --sustain 600 --compact-after-folds 64   # compactions 8 times rarer
 *   npm run bench:ingest -- --sustain 600 --compact-fan-in 4   # runs merged four at a time
 *   npm run bench:ingest -- --sustain 600 --compact-seal-readings 0   # no run sealed
 *   npm run bench:ingest -- --sustain 600 --fold-delay   # look and fold when the server would (FOLD_INTERVAL_MS, FOLD_QUIET_MS, FOLD_MAX_DELAY_MS, FOLD_TAIL_READINGS)
 *   npm run bench:ingest -- --sketch-levels day,hour   # sketches of new metrics (default: the server's)
 *   npm run bench:ingest -- --sustain 300 --raw-readings 0   # every document in the slot form
 *   npm run bench:ingest -- --sustain 300 --packed-minutes 0   # no minutes packed
 *
 * Prints Markdown tables on stdout, progress on stderr; exits with 1 when a check fails.
 */
import { Command } from 'commander';
import type { Db } from 'mongodb';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { foldJob, foldJobSettings } from '../../src/jobs/fold-job.ts';
import { JobScheduler } from '../../src/jobs/scheduler.ts';
import { DEFAULT_STATISTICS, SLOT_LEVELS, type SlotLevel, type StatisticsSettings } from '../../src/model/statistics-settings.ts';
import { foldAll } from '../../src/storage/fold.ts';
import { measureBacklog } from '../../src/storage/ingest-log.ts';
import { readView, visibleIn } from '../../src/storage/fold-state.ts';
import { DEFAULT_PACKED_MINUTES, DEFAULT_RAW_READINGS } from '../../src/documents/series-day.ts';
import { openStore, type Store } from '../../src/storage/store.ts';
import {
  batches,
  benchApp,
  describeMachine,
  describeServer,
  format,
  generateCpu,
  graphqlBody,
  median,
  postGraphql,
  nonNegativeInt,
  PlainCollection,
  type PlainReading,
  plainDocument,
  positiveInt,
  progressLog,
  readingInput,
  sketchLevels,
  seededRandom,
  sparseDataSet,
  table,
  withBenchDatabase,
} from './harness/index.ts';

const given = new Command()
  .option('--dense <n>', 'dense readings (TSBS cpu-only, 20 hosts, 10 fields, every 10 s)', positiveInt, 40_000)
  .option('--sparse <n>', 'sparse readings (real flights from January 2001)', positiveInt, 20_000)
  .option(
    '--new-series <n>',
    'flights-like readings over 300 x 300 possible routes, most of a batch starting a new series',
    positiveInt,
    20_000,
  )
  .option('--sustain <seconds>', 'instead: dense ingest for this long with the fold job running', positiveInt)
  .option('--hosts <n>', 'hosts of the sustained dense data', positiveInt, 100)
  .option('--writers <n>', 'with --sustain: writers sending batches at once', positiveInt, 1)
  .option(
    '--fold-delay',
    'with --sustain: look and fold when the server would (FOLD_INTERVAL_MS, FOLD_QUIET_MS, FOLD_MAX_DELAY_MS, FOLD_TAIL_READINGS, from the environment or their defaults) instead of folding at every run of the fold job, every second',
  )
  .option('--compact-after-folds <n>', 'with --sustain: folds between two compactions (COMPACT_AFTER_FOLDS)', positiveInt, 8)
  .option('--compact-fan-in <n>', 'with --sustain: runs of one size a compaction merges at once (COMPACT_FAN_IN)', positiveInt, 2)
  .option(
    '--compact-seal-readings <n>',
    "with --sustain: readings per document on average that seal a run (COMPACT_SEAL_READINGS, the server's default; 0: none)",
    nonNegativeInt,
    2_000,
  )
  .option(
    '--raw-readings <n>',
    "most readings of a document written in the raw form (RAW_READINGS, the server's default; 0: never)",
    nonNegativeInt,
    DEFAULT_RAW_READINGS,
  )
  .option(
    '--packed-minutes <n>',
    "fewest minutes of an hour whose minute slots are written packed (PACKED_MINUTES, the server's default; 0: never)",
    nonNegativeInt,
    DEFAULT_PACKED_MINUTES,
  )
  .option(
    '--sketch-levels <levels>',
    `sketch levels of the metrics: a comma-separated subset of ${SLOT_LEVELS.join(',')}, or none`,
    sketchLevels,
  )
  .parse()
  .opts<{
    dense: number;
    sparse: number;
    newSeries: number;
    sustain?: number;
    hosts: number;
    compactAfterFolds: number;
    compactFanIn: number;
    compactSealReadings: number;
    rawReadings: number;
    packedMinutes: number;
    writers: number;
    foldDelay?: boolean;
    sketchLevels?: SlotLevel[];
  }>();
/** The statistics every metric of the run keeps. */
const statistics: StatisticsSettings = { ...DEFAULT_STATISTICS, sketchLevels: given.sketchLevels ?? DEFAULT_STATISTICS.sketchLevels };
const log = progressLog('ingest');
const BATCH = 1_000;
const failures: string[] = [];
/** When a server looks and folds (`foldJobSettings` of the environment's configuration, else its defaults), for `--fold-delay`. */
const serverFolds = foldJobSettings(loadConfig());

const RECORD = `mutation($readings: [ReadingInput!]!, $batchId: String) { recordReadings(readings: $readings, batchId: $batchId) { applied } }`;

/** The readings of a data set as GraphQL `ReadingInput` values (times as ISO strings). */
const inputs = (readings: readonly PlainReading[]) =>
  readings.map((reading) => {
    const input = readingInput(reading);
    return { ...input, time: (input.time as Date).toISOString() };
  });

/** `count` dense readings: TSBS cpu-only, 20 hosts, every 10 s from 2016-01-01 UTC, in time order. */
function denseReadings(count: number): PlainReading[] {
  const plain: PlainReading[] = [];
  for (const chunk of generateCpu({ hosts: 20, durationMs: Math.ceil(count / 20) * 10_000 })) plain.push(...chunk);
  return plain.slice(0, count);
}

/**
 * `count` flights-like readings (metric `routes`, tags origin and destination, fields
 * delay and distance) over 300 x 300 possible routes, a reading a second from
 * 2024-01-01 UTC: at 20,000 readings about 18,000 routes, so most readings of a batch
 * name a series not seen before (seeded, the same every run).
 */
function newSeriesReadings(count: number): PlainReading[] {
  const random = seededRandom(300);
  const start = Date.UTC(2024, 0, 1);
  return Array.from({ length: count }, (_, i) => ({
    metric: 'routes',
    tags: [
      { key: 'origin', value: `O${Math.floor(random() * 300)}` },
      { key: 'destination', value: `D${Math.floor(random() * 300)}` },
    ],
    time: start + i * 1000,
    fields: { delay: Math.round(random() * 200) - 40, distance: 100 + Math.round(random() * 2400) },
  }));
}

/** Acknowledges every batch through GraphQL and with insertMany, taking turns; returns the row and the store's readings. */
async function acknowledge(store: Store, db: Db, name: string, readings: PlainReading[], entityTag: string): Promise<string[]> {
  const app = benchApp(store);
  // The plain collection a user would keep instead (as `bench:read-peers` loads it).
  const plain = new PlainCollection(db, [{ [entityTag]: 1, t: 1 }], `plain_${name}`);
  await plain.reset();
  const ms = { graphql: 0, insertMany: 0 };
  for (const [i, batch] of batches(readings, BATCH).entries()) {
    const ways: [keyof typeof ms, () => Promise<unknown>][] = [
      ['graphql', () => graphqlBody(app, RECORD, { readings: inputs(batch), batchId: `${name}-${i}` })],
      ['insertMany', () => plain.insert(batch.map(plainDocument))],
    ];
    if (i % 2 === 1) ways.reverse();
    for (const [way, write] of ways) {
      const started = performance.now();
      await write();
      ms[way] += performance.now() - started;
    }
  }
  return [
    name,
    format.count(readings.length),
    format.rate(readings.length / (ms.graphql / 1000)),
    format.rate(readings.length / (ms.insertMany / 1000)),
    format.ratio(ms.insertMany / ms.graphql),
  ];
}

/** Folds everything acknowledged, checks the parts against the readings sent; returns the row. */
async function fold(store: Store, name: string, readings: number): Promise<string[]> {
  const started = performance.now();
  const folded = await foldAll(store, store.holder);
  const seconds = (performance.now() - started) / 1000;
  const parts = await store.seriesDays.countDocuments({});
  const [row] = await store.seriesDays
    .aggregate<{ readings: number }>([{ $group: { _id: null, readings: { $sum: '$readings' } } }])
    .toArray();
  const check = folded === readings && row?.readings === readings ? 'exact' : `MISMATCH: folded ${folded}, in parts ${row?.readings}`;
  if (check !== 'exact') failures.push(`${name} fold: ${check}`);
  return [name, format.count(folded), format.rate(folded / seconds), format.count(parts), check];
}

/** Times the hourly aggregate on a folded metric and on the same readings with a tail of `tail` readings; returns the row. */
async function tailRead(store: Store, readings: PlainReading[], tail: number): Promise<string[]> {
  const app = benchApp(store);
  const day = readings.filter((reading) => reading.time < readings[0]!.time + 86_400_000);
  const as = (metric: string) => day.map((reading) => ({ ...reading, metric }));
  for (const [i, batch] of batches(as('folded'), BATCH).entries())
    await graphqlBody(app, RECORD, { readings: inputs(batch), batchId: `f-${i}` });
  const withTail = as('withtail');
  for (const [i, batch] of batches(withTail.slice(0, withTail.length - tail), BATCH).entries()) {
    await graphqlBody(app, RECORD, { readings: inputs(batch), batchId: `t-${i}` });
  }
  await foldAll(store, store.holder);
  for (const [i, batch] of batches(withTail.slice(withTail.length - tail), BATCH).entries()) {
    await graphqlBody(app, RECORD, { readings: inputs(batch), batchId: `u-${i}` });
  }
  const from = new Date(Math.floor(day[0]!.time / 86_400_000) * 86_400_000);
  const query = (metric: string) =>
    `{ buckets(metric: "${metric}", field: "usage_user", granularity: HOUR, from: "${from.toISOString()}", to: "${new Date(from.getTime() + 86_400_000).toISOString()}", fill: NONE) { buckets { start count sum } } }`;
  const times: Record<string, number[]> = { folded: [], withtail: [] };
  const answers: Record<string, string> = {};
  for (let run = 0; run < 7; run++) {
    for (const metric of run % 2 === 0 ? ['folded', 'withtail'] : ['withtail', 'folded']) {
      const started = performance.now();
      const body = await graphqlBody<{ buckets: unknown[] }>(app, query(metric));
      times[metric]!.push(performance.now() - started);
      answers[metric] = JSON.stringify(body.data);
    }
  }
  // Counts exactly; sums to 1e-9 relative (the tail adds the same values in another order).
  const rows = (answer: string) =>
    (JSON.parse(answer) as { buckets: { buckets: { start: string; count: number; sum: number }[] }[] }).buckets[0]?.buckets ?? [];
  const [a, b] = [rows(answers.folded!), rows(answers.withtail!)];
  const equal =
    a.length === b.length &&
    a.every(
      (row, i) => row.start === b[i]!.start && row.count === b[i]!.count && Math.abs(row.sum - b[i]!.sum) <= 1e-9 * Math.abs(row.sum),
    );
  if (!equal) failures.push(`tail read: the answers differ:\n  folded    ${answers.folded}\n  with tail ${answers.withtail}`);
  const [withMs, foldedMs] = [median(times.withtail!), median(times.folded!)];
  return [
    format.count(tail),
    format.count(day.length - tail),
    format.ms(withMs),
    format.ms(foldedMs),
    format.ratio(withMs / foldedMs),
    equal ? 'equal (sums to 1e-9)' : 'DIFFER',
  ];
}

/**
 * Acknowledges dense batches for `seconds` while the fold job runs; prints the progress
 * every 30 s, then the totals, and checks the folded parts hold every reading sent.
 */
async function sustain(seconds: number): Promise<void> {
  await withBenchDatabase(
    async (database, client) => {
      const caption = `${new Date().toISOString().slice(0, 10)}; ${await describeServer(client, database.embedded)}, ${database.onDisk ? 'data directory on disk' : 'MONGODB_URI'}, writes journaled (w: 1, j: true); ${describeMachine()}`;
      const store = await openStore(database.uri, `bench_ingest_sustain_${Date.now()}`, {
        writeConcern: { w: 1, journal: true },
        defaultStatistics: statistics,
        rawReadings: given.rawReadings,
        packedMinutes: given.packedMinutes,
      });
      const app = benchApp(store);
      const folded = { readings: 0, folds: 0, seconds: 0 };
      /** Compactions made visible: how many, the documents they read and merged, their seconds, the longest. */
      const compacted = { compactions: 0, merged: 0, seconds: 0, longest: 0 };
      const jobs = new JobScheduler(pino({ level: 'silent' }));
      jobs.start(
        foldJob(store, {
          intervalMs: given.foldDelay === true ? serverFolds.intervalMs : 1_000,
          maxReadings: 20_000,
          compactAfterFolds: given.compactAfterFolds,
          compactFanIn: given.compactFanIn,
          compactSealReadings: given.compactSealReadings,
          compactGraceMs: 60_000,
          ...(given.foldDelay === true ? { delay: serverFolds.delay } : {}),
          onFold: (outcome, took) => {
            folded.readings += outcome.readings;
            folded.folds += 1;
            folded.seconds += took;
          },
          onCompact: (outcome, took) => {
            compacted.compactions += 1;
            compacted.merged += outcome.merged;
            compacted.seconds += took;
            compacted.longest = Math.max(compacted.longest, took);
          },
        }),
      );
      const rows: string[][] = [];
      const started = performance.now();
      let sent = 0;
      let refusals = 0;
      let maxBacklog = { readings: 0, seconds: 0 };
      let batch = 0;
      const elapsed = () => (performance.now() - started) / 1000;
      /** Dense batches of 1,000 in time order, shared by the writers (each takes the next). */
      const source = (function* () {
        for (const chunk of generateCpu({ hosts: given.hosts, durationMs: 365 * 86_400_000 })) yield* batches(chunk, BATCH);
      })();
      /** One writer: sends the next batch until the time is up, waiting out INGEST_BACKLOG refusals. */
      const writer = async () => {
        while (elapsed() < seconds) {
          const next = source.next();
          if (next.done) return;
          const id = batch++;
          for (;;) {
            const body = (await (await postGraphql(app, RECORD, { readings: inputs(next.value), batchId: `s-${id}` })).json()) as {
              errors?: { extensions?: { code?: string; retryAfterSeconds?: number } }[];
            };
            const error = body.errors?.[0];
            if (error === undefined) break;
            if (error.extensions?.code !== 'INGEST_BACKLOG') throw new Error(`batch ${id}: ${JSON.stringify(error)}`);
            refusals += 1;
            await new Promise((done) => setTimeout(done, 1_000 * (error.extensions?.retryAfterSeconds ?? 1)));
          }
          sent += next.value.length;
        }
      };
      /** Every 30 s while the writers run: what was acknowledged and folded, and the backlog. */
      const reporter = async () => {
        for (let at = 30; at < seconds; at += 30) {
          await new Promise((done) => setTimeout(done, Math.max(0, (at - elapsed()) * 1000)));
          const backlog = await measureBacklog(store);
          const age = backlog.oldest === null ? 0 : (Date.now() - backlog.oldest) / 1000;
          maxBacklog = { readings: Math.max(maxBacklog.readings, backlog.readings), seconds: Math.max(maxBacklog.seconds, age) };
          rows.push([format.count(at), format.count(sent), format.count(folded.readings), format.count(backlog.readings), age.toFixed(1)]);
          log(`${at} s: ${sent} acknowledged, ${folded.readings} folded, backlog ${backlog.readings} (${age.toFixed(1)} s)`);
        }
      };
      try {
        await Promise.all([...Array.from({ length: given.writers }, writer), reporter()]);
        const ackSeconds = (performance.now() - started) / 1000;
        await jobs.stop();
        const rest = await foldAll(store, store.holder);
        const [row] = await store.seriesDays
          .aggregate<{ readings: number; documents: number; seriesDays: unknown[]; firstDay: Date }>([
            { $match: { ...visibleIn(await readView(store)) } },
            {
              $group: {
                _id: null,
                readings: { $sum: '$readings' },
                documents: { $sum: 1 },
                seriesDays: { $addToSet: { s: '$series', d: '$date' } },
                firstDay: { $min: '$date' },
              },
            },
          ])
          .toArray();
        const check = row?.readings === sent ? 'exact' : `MISMATCH: sent ${sent}, in visible documents ${row?.readings}`;
        if (check !== 'exact') failures.push(`sustained: ${check}`);
        // What reads pay for the documents the compactions left: HOUR buckets of every
        // host over the first day (its documents are the largest), median of 5.
        const firstDay = row?.firstDay ?? new Date(0);
        const hourQuery = `{ buckets(metric: "cpu", field: "usage_user", granularity: HOUR, from: "${firstDay.toISOString()}", to: "${new Date(firstDay.getTime() + 86_400_000).toISOString()}", fill: NONE) { buckets { count } } }`;
        const readMs: number[] = [];
        for (let run = 0; run < 5; run++) {
          const readStarted = performance.now();
          await graphqlBody(app, hourQuery);
          readMs.push(performance.now() - readStarted);
        }
        console.log(`## Sustained ingest and folds\n\n_${caption}_\n`);
        console.log(
          `Folds ${given.foldDelay === true ? `when the server would (a look every ${serverFolds.intervalMs} ms; ${serverFolds.delay.quietMs} ms quiet, ${serverFolds.delay.maxDelayMs} ms at most, ${format.count(serverFolds.delay.tailReadings)} readings at most)` : 'at every run of the fold job (every second)'}; compaction after ${given.compactAfterFolds} folds, fan-in ${given.compactFanIn}, runs sealed at ${given.compactSealReadings === 0 ? 'none' : `${format.count(given.compactSealReadings)} readings a document`}; documents of at most ${given.rawReadings} readings in the raw form; ${given.packedMinutes === 0 ? 'no minutes packed' : `minutes packed in hours of at least ${given.packedMinutes}`}.\n`,
        );
        console.log(table(['s', 'acknowledged', 'folded', 'backlog readings', 'backlog age s'], 'rrrrr', rows).join('\n'));
        console.log(
          `\n${format.count(sent)} readings of ${given.hosts} hosts acknowledged by ${given.writers} writer${given.writers === 1 ? '' : 's'} in ${ackSeconds.toFixed(0)} s (${format.rate(sent / ackSeconds)} readings/s, ${refusals} INGEST_BACKLOG refusals waited out); ` +
            `the fold job folded ${format.count(folded.readings)} in ${folded.folds} folds taking ${folded.seconds.toFixed(0)} s (${format.rate(folded.readings / ackSeconds)} readings/s over the run, ${format.rate(folded.readings / Math.max(folded.seconds, 1e-9))} while folding); ` +
            `${format.count(compacted.compactions)} compactions read and merged ${format.count(compacted.merged)} documents in ${compacted.seconds.toFixed(0)} s (the longest ${compacted.longest.toFixed(1)} s); ` +
            `largest backlog seen ${format.count(maxBacklog.readings)} readings, ${maxBacklog.seconds.toFixed(1)} s; ${format.count(rest)} left at the end; documents ${check}: ` +
            `${format.count(row?.documents ?? 0)} documents for ${format.count(row?.seriesDays.length ?? 0)} series-days; HOUR buckets of every host over the first day in ${format.ms(median(readMs))} (median of 5).`,
        );
      } finally {
        await jobs.stop();
        await store.db.dropDatabase();
        await store.client.close();
      }
    },
    log,
    { onDisk: true },
  );
}

if (given.sustain !== undefined) {
  await sustain(given.sustain);
  if (failures.length > 0) {
    console.error(`Checks failed:\n${failures.join('\n')}`);
    process.exitCode = 1;
  }
  process.exit();
}

log(`generating ${given.dense} dense readings, loading ${given.sparse} flights`);
const dense = denseReadings(given.dense);
const sparse = (await sparseDataSet(new Date('2002-01-01T00:00:00Z'), given.sparse)).readings;
const newSeries = newSeriesReadings(given.newSeries);

await withBenchDatabase(
  async (database, client) => {
    const caption = `${new Date().toISOString().slice(0, 10)}; ${await describeServer(client, database.embedded)}, ${database.onDisk ? 'data directory on disk' : 'MONGODB_URI'}, writes journaled (w: 1, j: true); ${describeMachine()}`;
    const ack: string[][] = [];
    const folds: string[][] = [];
    for (const [name, readings, entityTag] of [
      ['dense', dense, 'hostname'],
      ['sparse', sparse, 'origin'],
      ['new-series', newSeries, 'origin'],
    ] as const) {
      const store = await openStore(database.uri, `bench_ingest_${name}_${Date.now()}`, {
        writeConcern: { w: 1, journal: true },
        defaultStatistics: statistics,
        ingest: { maxTailReadings: 0, maxTailSeconds: 0 },
        rawReadings: given.rawReadings,
        packedMinutes: given.packedMinutes,
      });
      try {
        log(`${name}: acknowledging ${readings.length} readings through GraphQL and insertMany`);
        ack.push(await acknowledge(store, store.db, name, [...readings], entityTag));
        log(`${name}: folding`);
        folds.push(await fold(store, name, readings.length));
      } finally {
        await store.db.dropDatabase();
        await store.client.close();
      }
    }
    const store = await openStore(database.uri, `bench_ingest_tail_${Date.now()}`, {
      writeConcern: { w: 1, journal: true },
      defaultStatistics: statistics,
      ingest: { maxTailReadings: 0, maxTailSeconds: 0 },
    });
    let tail: string[][];
    try {
      log('tail read');
      tail = [await tailRead(store, dense, 1_000)];
    } finally {
      await store.db.dropDatabase();
      await store.client.close();
    }
    console.log(`## Ingest against insertMany\n\n_${caption}; sketch levels ${statistics.sketchLevels.join(', ') || 'none'}_\n`);
    console.log('### Acknowledging batches of 1,000 readings\n');
    console.log(
      table(['data', 'readings', 'GraphQL readings/s', 'insertMany readings/s', 'GraphQL vs insertMany'], 'lrrrr', ack).join('\n'),
    );
    console.log('\n### Folding everything acknowledged\n');
    console.log(table(['data', 'readings', 'readings/s', 'parts', 'check'], 'lrrrl', folds).join('\n'));
    console.log('\n### An hourly query over a day of 20 dense hosts, with and without a tail\n');
    console.log(
      table(['tail readings', 'folded readings', 'with tail ms', 'all folded ms', 'ratio', 'answers'], 'rrrrrl', tail).join('\n'),
    );
  },
  log,
  { onDisk: true },
);
if (failures.length > 0) {
  console.error(`Checks failed:\n${failures.join('\n')}`);
  process.exitCode = 1;
}
