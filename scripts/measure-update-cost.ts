/**
 * Measures what one series-day document update costs the database: unordered
 * `bulkWrite`s of the record path's upserts (`dayOperations`: `dayUpdate` with a batch
 * mark, default statistics settings) on a collection with the `buckets` indexes, for
 * two kinds of documents:
 * - flights-like: 200 routes (2 tags, fields delay and distance), one reading per route
 *   and round, so a route-day holds a handful of readings as in flights-3m;
 * - TSBS-like: 100 hosts (10 tags, 10 fields), one minute of readings (6 per host) per
 *   round, so host-day documents grow minute by minute.
 * The first round creates the documents (upserts that insert), the next ones update
 * them; each round is one `bulkWrite`, or `--concurrency` of them at once on disjoint
 * documents. Prints a Markdown table: ms per document update (wall time / documents)
 * and document updates per second, what a single database server sustains for this
 * kind of document (see docs/scaling-out.md).
 *
 *   npx tsx scripts/measure-update-cost.ts                      # embedded SecantusDB, in memory
 *   MONGODB_URI=mongodb://host:27017 npx tsx scripts/measure-update-cost.ts --concurrency 1,4,16
 */
import { cpus, loadavg } from 'node:os';
import { Command } from 'commander';
import { BSON, type AnyBulkWriteOperation, type Document } from 'mongodb';
import { batchMark } from '../src/model/batch.ts';
import { dayOperations, planWrites } from '../src/record/plan.ts';
import { validateReadings, type ReadingInput } from '../src/record/validate.ts';
import { ensureRollupIndexes } from '../src/storage/rollups.ts';
import { benchDatabase, connect, format, generateCpu, median, pathsOf, positiveInt, readingInput } from './bench/harness/index.ts';

const cli = new Command()
  .name('bench:update-cost')
  .option('--rounds <n>', 'timed update rounds per kind of document and concurrency', positiveInt, 8)
  .option('--concurrency <list>', 'bulkWrites at once, comma-separated', '1,4')
  .option('--no-journal', 'writes do not wait for the journal (j: false)')
  .parse();
const options = cli.opts<{ rounds: number; concurrency: string; journal: boolean }>();
const concurrencies = options.concurrency.split(',').map((value) => positiveInt(value.trim()));

const DAY = Date.UTC(2024, 0, 15);
const AIRPORTS = ['ATL', 'ORD', 'DFW', 'LAX', 'DEN', 'PHX', 'LAS', 'DTW', 'MSP', 'IAH', 'SFO', 'EWR', 'STL', 'BOS', 'CLT', 'SEA', 'MIA'];

/** Round `round` of the flights-like data: one flight on each of 200 routes (distinct pairs of 17 airports), at scattered minutes of one day. */
function flightsRound(round: number): ReadingInput[] {
  const readings: ReadingInput[] = [];
  for (let route = 0; route < 200; route++) {
    const origin = AIRPORTS[route % AIRPORTS.length]!;
    const destination = AIRPORTS[(route + 1 + Math.floor(route / AIRPORTS.length)) % AIRPORTS.length]!;
    const minute = (route * 37 + round * 211) % 1440;
    readings.push({
      metric: 'flights',
      tags: [
        { key: 'destination', value: destination },
        { key: 'origin', value: origin },
      ],
      time: new Date(DAY + minute * 60_000),
      fields: [
        { name: 'delay', value: ((route * 13 + round * 5) % 120) - 20 },
        { name: 'distance', value: 200 + ((route * 97) % 2400) },
      ],
    });
  }
  return readings;
}

/** Round `round` of the TSBS-like data: minute `round` of 100 hosts, 6 readings each. */
const tsbsMinutes = [...generateCpu({ hosts: 100, durationMs: (options.rounds + 2) * 60_000, start: DAY })];
const tsbsRound = (round: number): ReadingInput[] =>
  tsbsMinutes.slice(round * 6, round * 6 + 6).flatMap((chunk) => chunk.map(readingInput));

const KINDS = [
  { key: 'flights', name: 'flights-like route-day (2 tags, 2 fields; 1 reading per update)', round: flightsRound },
  { key: 'tsbs', name: 'TSBS-like host-day (10 tags, 10 fields; 1 minute = 6 readings per update)', round: tsbsRound },
];

/** The record path's operations for one round: one upsert per series-day document, with a batch mark. */
function operationsOf(readings: ReadingInput[], batchId: string): AnyBulkWriteOperation<Document>[] {
  const plan = planWrites(validateReadings(readings, { maxBatchSize: 100_000, receivedAt: Date.now() }));
  return dayOperations(plan, batchMark(batchId)).map((operation) => ({
    updateOne: { filter: operation.filter as Document, update: operation.upsert as Document, upsert: true },
  }));
}

const database = await benchDatabase();
const client = await connect(database.uri, { writeConcern: { w: 'majority', journal: options.journal } });
const db = client.db(`measure_update_cost_${process.pid}`);

console.log(
  `Unordered bulkWrites of series-day upserts, w: majority, j: ${options.journal}; ${options.rounds} timed rounds after 1 creating round; ` +
    `${process.env.MONGODB_URI ? 'MONGODB_URI' : 'embedded SecantusDB (one Python process, in memory)'}; ` +
    `${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)} at the start\n`,
);
console.log(
  '| documents | concurrency | document size (median) | paths per update | ms per bulkWrite (median) | ms per document update | document updates/s |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const kind of KINDS) {
  for (const concurrency of concurrencies) {
    const collection = db.collection(`${kind.key}_${concurrency}`);
    // A rollup collection's indexes are the series-day collection's (`series_date` unique, `metric_date`, `metric_tagPairs_date`).
    await ensureRollupIndexes(db, collection.collectionName);
    /** Runs one round as `concurrency` bulkWrites over disjoint slices; returns wall ms and documents. */
    const runRound = async (round: number) => {
      const operations = operationsOf(kind.round(round), `${kind.name}-${concurrency}-${round}`);
      const slice = Math.ceil(operations.length / concurrency);
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, (_, i) =>
          collection.bulkWrite(operations.slice(i * slice, (i + 1) * slice), { ordered: false }),
        ),
      );
      return { ms: performance.now() - started, documents: operations.length, operations };
    };
    const created = await runRound(0);
    const rounds: { ms: number; documents: number }[] = [];
    let paths: number[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      const result = await runRound(round);
      rounds.push(result);
      paths = result.operations.map((operation) => pathsOf((operation as { updateOne: { update: Document } }).updateOne.update));
    }
    const sizes = (await collection.find({}).toArray()).map((doc) => BSON.calculateObjectSize(doc));
    const ms = rounds.reduce((sum, round) => sum + round.ms, 0);
    const documents = rounds.reduce((sum, round) => sum + round.documents, 0);
    const perUpdate = ms / documents;
    console.log(
      `| ${kind.name} | ${concurrency} | ${format.bytes(median(sizes))} | ${median(paths)} | ${format.ms(median(rounds.map((round) => round.ms)))} | ${format.ms(perUpdate)} | ${format.rate(1000 / perUpdate)} |`,
    );
    console.log(
      `| the same, creating the ${created.documents} documents (first round) | ${concurrency} | | | ${format.ms(created.ms)} | ${format.ms(created.ms / created.documents)} | ${format.rate((1000 * created.documents) / created.ms)} |`,
    );
  }
}
console.log(`\nLoad average ${loadavg()[0]!.toFixed(1)} at the end.`);
await db.dropDatabase();
await client.close();
await database.stop();
