/**
 * What packed minutes (`PackedMinutes`, `PACKED_MINUTES`) save and cost on the embedded
 * server (or `MONGODB_URI`), on dense data. TSBS cpu-only readings (`--hosts` hosts,
 * `--hours` hours every 10 s, 10 tags and 10 fields each) are recorded through the record
 * path in batches of 1,000 into two databases, one with `PACKED_MINUTES` 0 (every hour's
 * minutes as objects) and one with `--packed` (the server's default), each folded and
 * compacted to one document per series-day; and into a third as one document per
 * reading (`insertMany`, with the indexes `npm run bench` gives that model). Prints:
 *
 * - bytes per reading of the series-day documents and of their indexes (`collStats`;
 *   SecantusDB reports uncompressed BSON), of everything a database holds at rest (the
 *   registries and the day summaries too; the ingest log, emptied hours after the fold,
 *   left out), and the ratio to one document per reading: the target of
 *   docs/ingest-design.md, "Store less", is at most 0.3x for dense data;
 * - reads through the GraphQL app, medians of alternating runs on the two databases,
 *   every answer's count checked against a plain loop over the readings.
 *
 *   npm run bench:dense-minutes                      # 20 hosts x 24 h (172,800 readings: whole host-days)
 *   npm run bench:dense-minutes -- --hosts 10 --hours 6 --reps 5
 */
import { Command } from 'commander';
import {
  bytesAtRest,
  benchApp,
  denseDataSet,
  describeMachine,
  describeServer,
  format,
  oneDocumentPerReading,
  oneDocumentRow,
  positiveInt,
  progressLog,
  recordFoldCompact,
  table,
  timedReads,
  validated,
  withScratchStores,
} from './harness/index.ts';
import { DEFAULT_PACKED_MINUTES } from '../../src/documents/series-day.ts';

const options = new Command()
  .name('bench:dense-minutes')
  .option('--hosts <n>', 'TSBS hosts', positiveInt, 20)
  .option('--hours <n>', 'hours of readings every 10 s from 2016-01-01T00:00Z (at most 24: one day)', positiveInt, 24)
  .option('--packed <n>', 'PACKED_MINUTES of the second database', positiveInt, DEFAULT_PACKED_MINUTES)
  .option('--reps <n>', 'timed runs of each query on each database', positiveInt, 7)
  .parse()
  .opts<{ hosts: number; hours: number; packed: number; reps: number }>();

const log = progressLog('bench:dense-minutes');
const data = denseDataSet(options.hosts, Math.min(24, options.hours));
const readings = validated(data.readings);
const HOUR = 3_600_000;
const MINUTE = 60_000;

const first = data.from;
const end = data.to;
const iso = (ms: number) => new Date(ms).toISOString();
const host = (r: (typeof readings)[number]) => r.tags.find((tag) => tag.key === 'hostname')!.value;
const within = (from: number, to: number, hosts?: readonly string[]) =>
  readings.filter((r) => r.time >= from && r.time < to && (hosts === undefined || hosts.includes(host(r)))).length;
const EIGHT = data.entities.slice(0, 8);
const hostFilter = (hosts: readonly string[]) => `[{ key: "hostname", in: ${JSON.stringify(hosts)} }]`;
/** The middle hour of the data, where the minute queries look. */
const middle = first + Math.floor((end - first) / 2 / HOUR) * HOUR;

/** The reads timed (after TSBS's devops queries where they fit): a query, its variables, and the readings a plain loop counts in its range. */
const QUERIES = [
  {
    name: 'MINUTE max of one field, one host, one hour (single-groupby-1-1-1)',
    query: `query($from: Time!, $to: Time!) { buckets(metric: "cpu", field: "usage_user", granularity: MINUTE, from: $from, to: $to, where: ${hostFilter(['host_0'])}) { buckets { count max } } }`,
    variables: { from: iso(middle), to: iso(middle + HOUR) },
    count: within(middle, middle + HOUR, ['host_0']),
  },
  {
    name: 'MINUTE max of one field, 8 hosts, one hour (single-groupby-1-8-1)',
    query: `query($from: Time!, $to: Time!) { buckets(metric: "cpu", field: "usage_user", granularity: MINUTE, from: $from, to: $to, where: ${hostFilter(EIGHT)}) { buckets { count max } } }`,
    variables: { from: iso(middle), to: iso(middle + HOUR) },
    count: within(middle, middle + HOUR, EIGHT),
  },
  {
    name: 'MINUTE max per host, every host, the last 5 minutes',
    query: `query($from: Time!, $to: Time!) { buckets(metric: "cpu", field: "usage_user", granularity: MINUTE, from: $from, to: $to, groupBy: ["hostname"]) { buckets { count max } } }`,
    variables: { from: iso(end - 5 * MINUTE), to: iso(end) },
    count: within(end - 5 * MINUTE, end),
  },
  {
    name: 'HOUR mean per host, every host, every hour (double-groupby-1; hour slots only)',
    query: `query($from: Time!, $to: Time!) { buckets(metric: "cpu", field: "usage_user", granularity: HOUR, from: $from, to: $to, groupBy: ["hostname"]) { buckets { count avg } } }`,
    variables: { from: iso(first), to: iso(end) },
    count: within(first, end),
  },
  {
    name: 'HOUR buckets in Asia/Kolkata of 8 hosts, every hour (minutes at each :30)',
    query: `query($from: Time!, $to: Time!) { buckets(metric: "cpu", field: "usage_system", granularity: HOUR, from: $from, to: $to, where: ${hostFilter(EIGHT)}, timeZone: "Asia/Kolkata") { buckets { count avg stddev first { value } last { value } } } }`,
    variables: { from: iso(first), to: iso(end) },
    count: within(first, end, EIGHT),
  },
  {
    name: 'mean per host over a ragged range (minutes at both edges)',
    query: `query($from: Time!, $to: Time!) { aggregate(metric: "cpu", field: "usage_idle", from: $from, to: $to, groupBy: ["hostname"]) { count avg } }`,
    variables: { from: iso(first + HOUR + 13 * MINUTE), to: iso(end - HOUR - 17 * MINUTE) },
    count: within(first + HOUR + 13 * MINUTE, end - HOUR - 17 * MINUTE),
  },
];

await withScratchStores(
  ['packed_none', `packed_${options.packed}`],
  { ingest: { maxTailReadings: 0, maxTailSeconds: 0 } },
  async (stores, database) => {
    // The store's setting is read by every fold and compaction (`Store.packedMinutes`).
    stores[0]!.packedMinutes = 0;
    stores[1]!.packedMinutes = options.packed;
    const figures: { data: number; index: number; all: number; documents: number; hours: number; packed: number; seconds: number }[] = [];
    for (const store of stores) {
      const started = performance.now();
      await recordFoldCompact(store, readings);
      const seconds = (performance.now() - started) / 1000;
      log(`${store.db.databaseName}: recorded, folded and compacted in ${seconds.toFixed(1)} s`);
      const docs = await store.seriesDays.find({}, { projection: { hours: 1 } }).toArray();
      const hours = docs.flatMap((doc) => Object.values(doc.hours ?? {}));
      figures.push({
        ...(await bytesAtRest(store)),
        documents: docs.length,
        hours: hours.length,
        packed: hours.filter((hour) => hour.mc !== undefined).length,
        seconds,
      });
    }
    const one = await oneDocumentPerReading(stores[0]!, data);
    const perReading = (bytes: number) => format.count(Math.round(bytes / readings.length));
    const oneTotal = one.storageBytes + one.indexBytes;
    const sizeRows = figures.map((f, i) => [
      i === 0 ? 'minutes as objects (PACKED_MINUTES 0)' : `packed from ${options.packed} minutes an hour`,
      format.count(f.documents),
      `${format.count(f.packed)} of ${format.count(f.hours)}`,
      perReading(f.data),
      perReading(f.index),
      perReading(f.data + f.index),
      perReading(f.all),
      // Three decimals: the target (0.3x) is close.
      `${(f.all / oneTotal).toFixed(3)}x`,
      `${f.seconds.toFixed(1)} s`,
    ]);
    sizeRows.push(oneDocumentRow(one, readings.length, 1));

    const apps = [benchApp(stores[0]!), benchApp(stores[1]!)] as const;
    const names = [stores[0]!.db.databaseName, stores[1]!.db.databaseName] as const;
    const readRows = await timedReads(apps, names, QUERIES, options.reps);

    const day = new Date().toISOString().slice(0, 10);
    console.log(`\n## Packed minutes of dense series-day documents\n`);
    console.log(
      `_${day}; ${await describeServer(stores[0]!.client, database.embedded)}; ${describeMachine()}._ ` +
        `${data.description}, recorded in batches of 1,000, folded and compacted to one document per series-day. ` +
        `Bytes per reading (uncompressed BSON on the embedded server); "at rest": every collection but the ingest log ` +
        `(registries and day summaries too); "built": recording, folding and compacting.\n`,
    );
    console.log(
      table(
        [
          'documents written',
          'series-day documents',
          'hours packed',
          'data B/reading',
          'indexes B/reading',
          'both',
          'at rest',
          'at rest / one per reading',
          'built',
        ],
        'lrrrrrrrr',
        sizeRows,
      ).join('\n'),
    );
    console.log(`\nReads through the GraphQL app, medians of ${options.reps} alternating runs; both answer the plain loop's count.\n`);
    console.log(table(['query', 'readings', 'objects ms', 'packed ms', 'packed / objects'], 'lrrrr', readRows).join('\n'));
  },
  log,
);
