import { MongoClient } from 'mongodb';
import { bucketsPipeline } from '../src/query/buckets-pipeline.ts';
import { granularity } from '../src/query/granularity.ts';
import { planSegments } from '../src/query/segments.ts';
import { validateReadings } from '../src/record/validate.ts';
import { recordReadings } from '../src/storage/record.ts';
import { openStore } from '../src/storage/store.ts';
import { readFlights20k, flightReading } from '../src/importer/flights.ts';
const uri = process.argv[2]!;
const store = await openStore(uri, 'probe');
if ((await store.buckets.estimatedDocumentCount()) === 0) {
  const flights = await readFlights20k();
  const t0 = performance.now();
  for (let i = 0; i < flights.length; i += 1000) {
    const readings = validateReadings(flights.slice(i, i + 1000).map(f => ({...flightReading(f), time: f.time})), { maxBatchSize: 1000, receivedAt: 0 });
    await recordReadings(store, readings);
  }
  console.log('load', (performance.now() - t0).toFixed(0), 'ms');
}
const series = (await store.series.find({ metric: 'flights', 'tags.origin': 'LAS' }).toArray()).map(d => d._id);
const q = { scope: { series }, field: 'delay', from: Date.parse('2001-01-14T17:45:00Z'), to: Date.parse('2001-03-03T06:06:00Z'), granularity: granularity('DAY'), grouping: { by: 'none' } } as const;
const time = async (label: string, p: any[]) => { const s = performance.now(); const r = await store.buckets.aggregate(p).toArray(); console.log(label, r.length, (performance.now() - s).toFixed(0), 'ms'); };
await time('full', bucketsPipeline(q));
for (const g of ['MINUTE','HOUR','DAY','MONTH'] as const) for (const [a,b] of [['2001-01-14T17:45:00Z','2001-01-16T06:06:00Z'],['2001-01-14T00:00:00Z','2001-01-16T00:00:00Z'],['2001-01-01T00:00:00Z','2001-04-01T00:00:00Z']]) {
  if (g==='MINUTE' && b.startsWith('2001-04')) continue;
  await time(`${g} ${a} ${b}`, bucketsPipeline({...q, granularity: granularity(g), from: Date.parse(a), to: Date.parse(b)}));
  await time(`${g} ${a} ${b} all`, bucketsPipeline({...q, scope: {metric: 'flights'}, granularity: granularity(g), from: Date.parse(a), to: Date.parse(b)}));
}

await store.client.close();
