/**
 * What single operations cost on the database server: an update by the number of
 * paths it sets, an update by the size of the document it changes, and inserts. This is
 * the evidence behind the benchmark's ingest figures (see README "Performance").
 *
 *   npx tsx scripts/bench/server-costs.ts          # embedded SecantusDB
 *   MONGODB_URI=mongodb://... npx tsx scripts/bench/server-costs.ts
 */
import { Double, MongoClient, type Document } from 'mongodb';
import { loadConfig } from '../../src/config.ts';
import { ensureSecantusInstalled, startSecantus } from '../../src/embedded/secantus.ts';
import { latency } from './measure.ts';

const config = loadConfig();
const embedded = config.MONGODB_URI
  ? undefined
  : await startSecantus({ binary: await ensureSecantusInstalled(config.EMBEDDED_VENV_DIR, config.PYTHON, () => {}), dataDir: ':memory:', say: () => {} });
const client = new MongoClient(config.MONGODB_URI ?? embedded!.uri);
await client.connect();
const collection = client.db('server_costs').collection<Document>('c');
await collection.deleteMany({});

const time = async (run: () => Promise<unknown>) => (await latency(run, 7)).p50;

console.log('| operation | median ms |\n| --- | ---: |');
for (const paths of [15, 50, 150, 300, 600, 1200]) {
  const inc: Record<string, Double> = {};
  for (let i = 0; i < paths; i++) inc[`hours.${i % 24}.minutes.${Math.floor(i / 24) % 60}.f${i % 10}.v${Math.floor(i / 1440)}`] = new Double(1);
  await collection.insertOne({ _id: `paths-${paths}` } as Document);
  console.log(`| one update setting ${paths} paths ($inc) on a small document | ${(await time(() => collection.updateOne({ _id: `paths-${paths}` } as Document, { $inc: inc }))).toFixed(1)} |`);
}
for (const minutes of [60, 360, 1440]) {
  const hours: Record<string, unknown> = {};
  for (let m = 0; m < minutes; m++) {
    const hour = (hours[Math.floor(m / 60)] ??= { minutes: {} }) as { minutes: Record<string, unknown> };
    const fields: Record<string, unknown> = {};
    for (let f = 0; f < 10; f++) fields[`f${f}`] = { n: 1.5, sum: 1.5, min: 1.5, max: 1.5, sq: 1.5 };
    hour.minutes[m % 60] = fields;
  }
  const id = `size-${minutes}`;
  await collection.insertOne({ _id: id, hours } as Document);
  const [row] = await collection.aggregate<{ size: number }>([{ $match: { _id: id } }, { $project: { size: { $bsonSize: '$$ROOT' } } }]).toArray();
  const kib = ((row?.size ?? 0) / 1024).toFixed(0);
  console.log(`| one $inc of 1 path on a ${kib} KiB document (${minutes} minutes x 10 fields) | ${(await time(() => collection.updateOne({ _id: id } as Document, { $inc: { 'hours.0.minutes.0.f0.n': 1 } }))).toFixed(1)} |`);
  console.log(`| findOne of that ${kib} KiB document | ${(await time(() => collection.findOne({ _id: id } as Document))).toFixed(1)} |`);
}
let next = 0;
const docs = () => Array.from({ length: 1000 }, () => ({ _id: `insert-${next++}`, metric: 'cpu', time: new Date(), tags: { hostname: 'host_1', region: 'us-east-1' }, fields: { usage_user: 1.5, usage_system: 2.5 } }));
console.log(`| insertMany of 1,000 small documents (one per reading) | ${(await time(() => collection.insertMany(docs() as Document[]))).toFixed(1)} |`);
await client.db('server_costs').dropDatabase();
await client.close();
await embedded?.stop();
