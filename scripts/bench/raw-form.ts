/**
 * What the raw form of series-day documents (`SeriesDayDocument.r`, `RAW_READINGS`) saves and
 * costs on the embedded server (or `MONGODB_URI`). The first `--flights` real flights of
 * flights-3m (January 2001 on) are recorded through the record path in batches of 1,000
 * into two databases, one with `RAW_READINGS` 0 (every document in the slot form) and
 * one with `--raw`, each folded and compacted to one document per series-day (the state
 * a day ends in); and into a third as one document per reading (`insertMany`, with the
 * indexes `npm run bench` gives that model). Prints:
 *
 * - bytes per reading of the series-day documents and of their indexes (`collStats`;
 *   SecantusDB reports uncompressed BSON), of everything a database holds at rest (the
 *   registries and the day summaries too; the ingest log, emptied hours after the fold,
 *   left out), and the ratio to one document per reading: the target of
 *   docs/ingest-design.md, "Store less", is at most 2x for sparse data;
 * - reads through the GraphQL app, medians of alternating runs on the two databases,
 *   every answer's count checked against a plain loop over the flights.
 *
 * The reads over every day take the app's 30 s query limit at about 200,000 flights.
 *
 *   npm run bench:raw-form                       # 50,000 flights, raw up to 16 readings
 *   npm run bench:raw-form -- --flights 20000 --raw 8 --reps 5
 */
import { Command } from 'commander';
import {
  bytesAtRest,
  benchApp,
  describeMachine,
  describeServer,
  format,
  oneDocumentPerReading,
  oneDocumentRow,
  positiveInt,
  progressLog,
  recordFoldCompact,
  sparseDataSet,
  table,
  timedReads,
  validated,
  withScratchStores,
} from './harness/index.ts';

const options = new Command()
  .name('bench:raw-form')
  .option('--flights <n>', 'real flights to record, from 2001-01-01 on', positiveInt, 50_000)
  .option('--raw <n>', 'RAW_READINGS of the second database', positiveInt, 16)
  .option('--reps <n>', 'timed runs of each query on each database', positiveInt, 7)
  .parse()
  .opts<{ flights: number; raw: number; reps: number }>();

const log = progressLog('bench:raw-form');
const data = await sparseDataSet(new Date('2002-01-01T00:00:00Z'), options.flights);
const readings = validated(data.readings);
const DAY = 86_400_000;
const HOUR = 3_600_000;

const first = Math.floor(readings.reduce((least, r) => Math.min(least, r.time), Infinity) / DAY) * DAY;
/** The minute after the last reading's: queries take ranges in whole minutes (the end floored to its minute). */
const end = Math.floor(readings.reduce((most, r) => Math.max(most, r.time), -Infinity) / 60_000) * 60_000 + 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const origin = (r: (typeof readings)[number]) => r.tags.find((tag) => tag.key === 'origin')!.value;
const within = (from: number, to: number, where?: string) =>
  readings.filter((r) => r.time >= from && r.time < to && (where === undefined || origin(r) === where)).length;

/** The reads timed: a query, its variables, and the readings a plain loop counts in its range. */
const QUERIES = [
  {
    name: 'HOUR buckets of every route over the first day',
    query: `query($from: Time!, $to: Time!) { buckets(metric: "flights", field: "delay", granularity: HOUR, from: $from, to: $to) { buckets { count avg } } }`,
    variables: { from: iso(first), to: iso(first + DAY) },
    count: within(first, first + DAY),
  },
  {
    name: 'HOUR buckets of ATL with p90 over every day',
    query: `query($from: Time!, $to: Time!) { buckets(metric: "flights", field: "delay", granularity: HOUR, from: $from, to: $to, where: [{ key: "origin", in: ["ATL"] }]) { buckets { count avg p90 } } }`,
    variables: { from: iso(first), to: iso(end) },
    count: within(first, end, 'ATL'),
  },
  {
    name: 'MINUTE buckets of ATL over three hours',
    query: `query($from: Time!, $to: Time!) { buckets(metric: "flights", field: "delay", granularity: MINUTE, from: $from, to: $to, where: [{ key: "origin", in: ["ATL"] }]) { buckets { count max } } }`,
    variables: { from: iso(first + 15 * HOUR), to: iso(first + 18 * HOUR) },
    count: within(first + 15 * HOUR, first + 18 * HOUR, 'ATL'),
  },
  {
    name: 'DAY buckets in Asia/Kathmandu by origin over every day',
    query: `query($from: Time!, $to: Time!) { buckets(metric: "flights", field: "delay", granularity: DAY, from: $from, to: $to, groupBy: ["origin"], timeZone: "Asia/Kathmandu") { buckets { count avg } } }`,
    variables: { from: iso(first), to: iso(end) },
    count: within(first, end),
  },
  {
    name: 'mean delay per origin, 13:13 on the first day to the end',
    query: `query($from: Time!, $to: Time!) { aggregate(metric: "flights", field: "delay", from: $from, to: $to, groupBy: ["origin"]) { count avg } }`,
    variables: { from: iso(first + 13 * HOUR + 13 * 60_000), to: iso(end) },
    count: within(first + 13 * HOUR + 13 * 60_000, end),
  },
];

await withScratchStores(
  ['raw_none', `raw_${options.raw}`],
  { ingest: { maxTailReadings: 0, maxTailSeconds: 0 } },
  async (stores, database) => {
    // The store's setting is read by every fold and compaction (`Store.rawReadings`).
    stores[0]!.rawReadings = 0;
    stores[1]!.rawReadings = options.raw;
    const figures: { data: number; index: number; all: number; documents: number; raw: number; rawReadings: number }[] = [];
    for (const store of stores) {
      const started = performance.now();
      await recordFoldCompact(store, readings);
      log(`${store.db.databaseName}: recorded, folded and compacted in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      const docs = await store.seriesDays.find({}, { projection: { readings: 1, 'r.t': 1 } }).toArray();
      const raw = docs.filter((doc) => Array.isArray(doc.r));
      figures.push({
        ...(await bytesAtRest(store)),
        documents: docs.length,
        raw: raw.length,
        rawReadings: raw.reduce((sum, doc) => sum + (doc.readings ?? 0), 0),
      });
    }
    const one = await oneDocumentPerReading(stores[0]!, data);
    const perReading = (bytes: number) => format.count(Math.round(bytes / readings.length));
    const oneTotal = one.storageBytes + one.indexBytes;
    const sizeRows = figures.map((f, i) => [
      i === 0 ? 'slot form only (RAW_READINGS 0)' : `raw up to ${options.raw} readings`,
      format.count(f.documents),
      `${format.count(f.raw)} (${format.count(f.rawReadings)} readings)`,
      perReading(f.data),
      perReading(f.index),
      perReading(f.data + f.index),
      perReading(f.all),
      format.ratio(f.all / oneTotal),
    ]);
    sizeRows.push(oneDocumentRow(one, readings.length));

    const apps = [benchApp(stores[0]!), benchApp(stores[1]!)] as const;
    const names = [stores[0]!.db.databaseName, stores[1]!.db.databaseName] as const;
    const readRows = await timedReads(apps, names, QUERIES, options.reps);

    const day = new Date().toISOString().slice(0, 10);
    console.log(`\n## The raw form of series-day documents\n`);
    console.log(
      `_${day}; ${await describeServer(stores[0]!.client, database.embedded)}; ${describeMachine()}._ ` +
        `${format.count(readings.length)} real flights (${data.description.replace(/^flights-3m.parquet, [\d,]+ real US flights /, '')}), ` +
        `recorded in batches of 1,000, folded and compacted to one document per series-day. Bytes per reading (uncompressed BSON on the embedded server); ` +
        `"at rest": every collection but the ingest log (registries and day summaries too).\n`,
    );
    console.log(
      table(
        [
          'documents written',
          'series-day documents',
          'in the raw form',
          'data B/reading',
          'indexes B/reading',
          'both',
          'at rest',
          'at rest / one per reading',
        ],
        'lrrrrrrr',
        sizeRows,
      ).join('\n'),
    );
    console.log(`\nReads through the GraphQL app, medians of ${options.reps} alternating runs; both answer the plain loop's count.\n`);
    console.log(table(['query', 'readings', 'slot form ms', `raw up to ${options.raw} ms`, 'raw / slot'], 'lrrrr', readRows).join('\n'));
  },
  log,
);
