/**
 * Storage per reading: the same readings kept by the project and by the plain collection
 * a user would keep instead, on the same database server. The project records them
 * through the record path in batches of 1,000, folds them all and compacts every day to
 * one document per series (the state a day ends in); the plain collection holds one
 * flat document per reading (`insertMany`) with the user's index (`{origin: 1, t: 1}`,
 * `{hostname: 1, t: 1}`), as `bench:read-peers` loads it. Prints, per collection of the
 * project (the ingest log left out: its entries go hours after their fold) and for the
 * plain collection, the documents and the bytes per reading of data and of indexes
 * (`storageSize` and `totalIndexSize`: SecantusDB reports uncompressed BSON), the ratio of
 * the totals, and the largest series-day document. The store's document forms and
 * statistics can be set as the server's settings set them, to compare one run with
 * another.
 *
 *   npm run bench:storage                                   # the January month of flights, TSBS 100 hosts x 1 day
 *   npm run bench:storage -- --dataset sparse --rows 50000 --raw-readings 0
 *   npm run bench:storage -- --dataset dense --hosts 20 --packed-minutes 0
 *   npm run bench:storage -- --sketch-levels day,hour
 *   MONGODB_URI=mongodb://host:27017 npm run bench:storage
 */
import { Command } from 'commander';
import { DEFAULT_PACKED_MINUTES, DEFAULT_RAW_READINGS } from '../../src/documents/series-day.ts';
import { DEFAULT_STATISTICS, type SlotLevel } from '../../src/model/statistics-settings.ts';
import { CollectionName } from '../../src/storage/store.ts';
import {
  batches,
  bytesAtRest,
  type DataChoice,
  datasetOption,
  datasetsOf,
  denseDataSet,
  describeMachine,
  describeServer,
  format,
  LOAD_BATCH,
  nonNegativeInt,
  PlainCollection,
  plainDocument,
  positiveInt,
  progressLog,
  recordFoldCompact,
  sketchLevels,
  sparseDataSet,
  table,
  validated,
  withScratchStore,
} from './harness/index.ts';

const options = new Command()
  .addOption(datasetOption())
  .option('--rows <n>', 'sparse: at most n flights of the month', positiveInt)
  .option('--hosts <n>', 'dense: hosts', positiveInt, 100)
  .option('--hours <n>', 'dense: hours of readings', positiveInt, 24)
  .option(
    '--raw-readings <n>',
    'most readings of a document kept in the raw form (RAW_READINGS; 0: never)',
    nonNegativeInt,
    DEFAULT_RAW_READINGS,
  )
  .option('--packed-minutes <n>', 'fewest minutes of an hour packed (PACKED_MINUTES; 0: never)', nonNegativeInt, DEFAULT_PACKED_MINUTES)
  .option('--sketch-levels <levels>', 'sketch levels of the metric, comma-separated, or none (default: the server default)', sketchLevels)
  .parse()
  .opts<{
    dataset: DataChoice;
    rows?: number;
    hosts: number;
    hours: number;
    rawReadings: number;
    packedMinutes: number;
    sketchLevels?: SlotLevel[];
  }>();
const log = progressLog('storage');
const statistics = { ...DEFAULT_STATISTICS, sketchLevels: options.sketchLevels ?? DEFAULT_STATISTICS.sketchLevels };

for (const name of datasetsOf(options.dataset)) {
  const data =
    name === 'sparse' ? await sparseDataSet(new Date('2001-02-01T00:00:00Z'), options.rows) : denseDataSet(options.hosts, options.hours);
  const n = data.readings.length;
  await withScratchStore(
    `storage_${name}`,
    { defaultStatistics: statistics, rawReadings: options.rawReadings, packedMinutes: options.packedMinutes },
    async (store, database) => {
      log(`${name}: recording, folding and compacting ${n} readings`);
      await recordFoldCompact(store, validated(data.readings));
      log(`${name}: the plain collection`);
      const plain = new PlainCollection(store.client.db(`${store.db.databaseName}_plain`), [{ [data.entityTag]: 1, t: 1 }]);
      try {
        await plain.reset();
        for (const batch of batches(data.readings, LOAD_BATCH)) await plain.insert(batch.map(plainDocument));
        const project = await bytesAtRest(store);
        const plainBytes = await plain.bytes();
        const [largest] = await store.seriesDays
          .aggregate<{ max: number }>([{ $group: { _id: null, max: { $max: { $bsonSize: '$$ROOT' } } } }])
          .toArray();
        const perReading = (bytes: number) => (bytes / n).toFixed(1);
        const plainTotal = plainBytes.data + plainBytes.index;
        console.log(`## ${name}: ${data.description}\n`);
        console.log(
          `${new Date().toISOString().slice(0, 10)}; ${await describeServer(store.client, database.embedded)}; ${describeMachine()}; RAW_READINGS ${options.rawReadings}, PACKED_MINUTES ${options.packedMinutes}, sketch levels ${statistics.sketchLevels.join(', ') || 'none'}; sizes from \`${project.via}\`.\n`,
        );
        console.log(
          [
            ...table(['collection', 'documents', 'data B/reading', 'indexes B/reading', 'B/reading'], 'lrrrr', [
              ...project.collections
                .filter((c) => c.documents > 0)
                .map((c) => [
                  `project: ${c.name}`,
                  format.count(c.documents),
                  perReading(c.data),
                  perReading(c.index),
                  perReading(c.data + c.index),
                ]),
              ['**project, all**', '', '', '', `**${perReading(project.total)}**`],
              [
                `**plain collection**, index ${JSON.stringify(plain.indexes[0])}`,
                format.count(n),
                perReading(plainBytes.data),
                perReading(plainBytes.index),
                `**${perReading(plainTotal)}**`,
              ],
            ]),
            '',
            `Project / plain, indexes included: ${format.ratio(project.total / plainTotal)}. Largest series-day document: ${format.bytes(largest?.max ?? 0)}; ${format.count(project.collections.find((c) => c.name === CollectionName.seriesDays)!.documents)} series-day documents hold ${format.count(n)} readings.`,
            '',
          ].join('\n'),
        );
      } finally {
        await plain.db.dropDatabase().catch(() => undefined);
      }
    },
    log,
  );
}
