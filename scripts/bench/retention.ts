/**
 * What a retention pass costs and saves: records `--hosts` hosts x `--days` days (10), a reading of
 * two fields every 5 minutes (TSBS-like random walks), recorded in time-ordered batches
 * of 100, sets minutes 3 / hours 6 / days 8 days, and runs `applyRetention` as of the
 * end of the last day. Prints the series-day
 * documents' count and size (`$bsonSize`) before and after, what each level removed,
 * how long the pass took, and how long a second pass (nothing due) takes.
 *
 *   npm run bench:retention                  # 5 hosts (14,400 readings) on a throw-away embedded database
 *   npm run bench:retention -- --hosts 20
 *   MONGODB_URI=mongodb://host:27017 npm run bench:retention
 */
import { Command } from 'commander';
import { recordBatch } from '../../src/engine/record-batch.ts';
import { DAY_MS, MINUTE_MS } from '../../src/model/time.ts';
import { validateReadings, type ReadingInput } from '../../src/record/validate.ts';
import { applyRetention, setRetention } from '../../src/storage/expire.ts';
import { CollectionName } from '../../src/storage/store.ts';
import { collectionBytes, positiveInt, withScratchStore } from './harness/index.ts';

const options = new Command()
  .name('bench:retention')
  .option('--hosts <n>', 'hosts, each a series', positiveInt, 5)
  .option('--days <n>', 'days of readings (the policy keeps 3, 6 and 8 of them)', positiveInt, 10)
  .parse()
  .opts<{ hosts: number; days: number }>();

const START = Date.UTC(2024, 2, 1);
const DAYS = options.days;
const STEP_MS = 5 * MINUTE_MS;
const BATCH = 100;

/** Every reading of the data set in time order (all hosts at each time), as the GraphQL input. */
function readings(hosts: number): ReadingInput[] {
  const all: ReadingInput[] = [];
  let seed = 1;
  const random = () => {
    seed = (seed * 16_807) % 2_147_483_647;
    return seed / 2_147_483_647;
  };
  const user = Array.from({ length: hosts }, () => 50);
  const system = Array.from({ length: hosts }, () => 20);
  for (let t = START; t < START + DAYS * DAY_MS; t += STEP_MS) {
    for (let h = 0; h < hosts; h++) {
      user[h] = Math.min(100, Math.max(0, user[h]! + (random() - 0.5) * 4));
      system[h] = Math.min(100, Math.max(0, system[h]! + (random() - 0.5) * 2));
      all.push({
        metric: 'cpu',
        tags: [{ key: 'hostname', value: `host_${h}` }],
        time: new Date(t),
        fields: [
          { name: 'usage_user', value: user[h]! },
          { name: 'usage_system', value: system[h]! },
        ],
      });
    }
  }
  return all;
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

await withScratchStore('retention', { writeConcern: { w: 1, journal: false } }, async (store) => {
  const inputs = readings(options.hosts);
  const loadStarted = performance.now();
  // Batches of BATCH readings in time order, as a collector sends them.
  for (let i = 0; i < inputs.length; i += BATCH) {
    const batch = validateReadings(inputs.slice(i, i + BATCH), { maxBatchSize: BATCH, receivedAt: Date.now() });
    await recordBatch(store, batch, { receivedAt: Date.now() });
  }
  console.log(
    `Recorded ${inputs.length} readings (${options.hosts} hosts x ${DAYS} days, every 5 min) in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`,
  );
  const before = await collectionBytes(store.db, CollectionName.seriesDays);
  await setRetention(store, 'cpu', { minutes: 3, hours: 6, days: 8 });
  const now = START + DAYS * DAY_MS;
  const started = performance.now();
  const removed = await applyRetention(store, now);
  const passMs = performance.now() - started;
  const after = await collectionBytes(store.db, CollectionName.seriesDays);
  const againStarted = performance.now();
  const again = await applyRetention(store, now);
  const againMs = performance.now() - againStarted;
  console.log(`Before: ${before.documents} documents, ${kib(before.bytes)}`);
  for (const entry of removed) {
    console.log(`  ${entry.level.padEnd(6)} before ${entry.horizon.toISOString().slice(0, 10)}: ${entry.documents} documents`);
  }
  console.log(`After:  ${after.documents} documents, ${kib(after.bytes)} (${((100 * after.bytes) / before.bytes).toFixed(0)}% of before)`);
  console.log(`Pass: ${passMs.toFixed(0)} ms; a second pass (${again.length} levels due): ${againMs.toFixed(0)} ms`);
});
