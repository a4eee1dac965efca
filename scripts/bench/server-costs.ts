/**
 * What single operations cost on the database server: an update by the number of
 * paths it sets, an update by the size of the document it changes, reading one slot of
 * a large document, and inserts; then where the time of one batch of the record path
 * goes (client: validation, planning, BSON encoding; server: the bulkWrite). This is
 * the evidence behind the benchmark's ingest and fine-grained query figures (see
 * docs/performance.md).
 *
 *   npx tsx scripts/bench/server-costs.ts          # embedded SecantusDB
 *   MONGODB_URI=mongodb://... npx tsx scripts/bench/server-costs.ts
 */
import { BSON, Double, type Document } from 'mongodb';
import { dayUpdate, planWrites } from '../../src/record/plan.ts';
import { batches, denseDataSet, dropAndClose, latency, median, OursModel, pathsOf, withBenchDatabase } from './harness/index.ts';

await withBenchDatabase(async (embedded, client) => {
  const collection = client.db('server_costs').collection<Document>('c');
  await collection.deleteMany({});

  const time = async (run: () => Promise<unknown>) => (await latency(run, 7)).p50;

  console.log('| operation | median ms |\n| --- | ---: |');
  for (const paths of [15, 50, 150, 300, 600, 1200]) {
    const inc: Record<string, Double> = {};
    for (let i = 0; i < paths; i++)
      inc[`hours.${i % 24}.minutes.${Math.floor(i / 24) % 60}.f${i % 10}.v${Math.floor(i / 1440)}`] = new Double(1);
    await collection.insertOne({ _id: `paths-${paths}` } as Document);
    console.log(
      `| one update setting ${paths} paths ($inc) on a small document | ${(await time(() => collection.updateOne({ _id: `paths-${paths}` } as Document, { $inc: inc }))).toFixed(1)} |`,
    );
  }
  for (const minutes of [60, 360, 1440]) {
    const hours: Record<string, unknown> = {};
    for (let m = 0; m < minutes; m++) {
      hours[Math.floor(m / 60)] ??= { minutes: {} };
      const hour = hours[Math.floor(m / 60)] as { minutes: Record<string, unknown> };
      const fields: Record<string, unknown> = {};
      for (let f = 0; f < 10; f++) fields[`f${f}`] = { n: 1.5, sum: 1.5, min: 1.5, max: 1.5, sq: 1.5 };
      hour.minutes[m % 60] = fields;
    }
    const id = `size-${minutes}`;
    await collection.insertOne({ _id: id, hours } as Document);
    const [row] = await collection
      .aggregate<{ size: number }>([{ $match: { _id: id } }, { $project: { size: { $bsonSize: '$$ROOT' } } }])
      .toArray();
    const kib = ((row?.size ?? 0) / 1024).toFixed(0);
    console.log(
      `| one $inc of 1 path on a ${kib} KiB document (${minutes} minutes x 10 fields) | ${(await time(() => collection.updateOne({ _id: id } as Document, { $inc: { 'hours.0.minutes.0.f0.n': 1 } }))).toFixed(1)} |`,
    );
    console.log(`| findOne of that ${kib} KiB document | ${(await time(() => collection.findOne({ _id: id } as Document))).toFixed(1)} |`);
    const oneSlot = [{ $match: { _id: id } }, { $project: { slot: '$hours.0.minutes.0.f0' } }];
    console.log(
      `| aggregate reading one minute slot of that ${kib} KiB document | ${(await time(() => collection.aggregate(oneSlot).toArray())).toFixed(1)} |`,
    );
  }
  let next = 0;
  const docs = () =>
    Array.from({ length: 1000 }, () => ({
      _id: `insert-${next++}`,
      metric: 'cpu',
      time: new Date(),
      tags: { hostname: 'host_1', region: 'us-east-1' },
      fields: { usage_user: 1.5, usage_system: 2.5 },
    }));
  console.log(
    `| insertMany of 1,000 small documents (one per reading) | ${(await time(() => collection.insertMany(docs() as Document[]))).toFixed(1)} |`,
  );
  await client.db('server_costs').dropDatabase();

  // One batch of the record path, taken apart: TSBS cpu-only, 100 hosts, batches of 1,000
  // readings (10 per host, so 100 series-day documents of about 2 minutes each). The first
  // half of the hour is loaded first so the timed batches update existing documents.
  const ours = await OursModel.open(embedded.uri, 'server_costs_batch', 'sparse');
  const all = batches(ours.convert(denseDataSet(100, 1).readings), 1000);
  const half = Math.floor(all.length / 2);
  for (const batch of all.slice(0, half)) await ours.write(batch);
  const parts = { plan: [] as number[], encode: [] as number[], write: [] as number[], paths: [] as number[] };
  for (const batch of all.slice(half, half + 7)) {
    let started = performance.now();
    const plan = planWrites(batch);
    const updates = plan.buckets.map((write) => dayUpdate(write, true));
    parts.plan.push(performance.now() - started);
    started = performance.now();
    for (const update of updates) BSON.serialize(update);
    parts.encode.push(performance.now() - started);
    parts.paths.push(median(updates.map(pathsOf)));
    started = performance.now();
    await ours.write(batch);
    parts.write.push(performance.now() - started);
  }
  const writeMs = median(parts.write);
  console.log('\n| one batch of 1,000 TSBS readings (100 documents, 7 batches) | median ms |\n| --- | ---: |');
  console.log(`| client: group and merge (planWrites) and build the updates | ${median(parts.plan).toFixed(1)} |`);
  console.log(`| client: BSON-encode the 100 updates (about ${median(parts.paths)} paths each) | ${median(parts.encode).toFixed(1)} |`);
  console.log(`| whole record path (the above, registries, one bulkWrite) | ${writeMs.toFixed(1)} |`);
  console.log(
    `| the rest (server and round trips), per series-day document | ${((writeMs - median(parts.plan) - median(parts.encode)) / 100).toFixed(1)} |`,
  );
  await dropAndClose(ours);
});
