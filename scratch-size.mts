import { BSON } from 'mongodb';
import { benchDatabase } from './scripts/bench/harness/database.ts';
import { openStore } from './src/storage/store.ts';
import { findRollups } from './src/storage/rollups.ts';
const db = await benchDatabase(() => {}, { dataDir: '/tmp/rp/db' });
const store = await openStore(db.uri, 'read_peers_sparse');
const [r] = (await findRollups(store, ['flights'])).filter((x) => x.name === 'auto_origin');
const coll = store.db.collection(r!.collection);
const sizes = { total: 0, q: 0, hours: 0, quarters: 0, fields: 0, n: 0 };
for await (const doc of coll.find({})) {
  sizes.n++;
  sizes.total += BSON.calculateObjectSize(doc);
  sizes.q += doc.q ? BSON.calculateObjectSize(doc.q) : 0;
  let quarters = 0;
  for (const h of Object.values(doc.hours ?? {}) as any[]) if (h.quarters) quarters += BSON.calculateObjectSize(h.quarters);
  sizes.quarters += quarters;
  sizes.hours += doc.hours ? BSON.calculateObjectSize(doc.hours) - quarters : 0;
  sizes.fields += BSON.calculateObjectSize(doc.fields ?? {});
}
console.log(sizes, 'per doc', Object.fromEntries(Object.entries(sizes).map(([k, v]) => [k, Math.round(v / sizes.n)])));
const ord = await coll.findOne({ 'tags.origin': 'ORD' });
console.log('ORD doc', BSON.calculateObjectSize(ord!), 'q', BSON.calculateObjectSize(ord!.q ?? {}));
console.log(JSON.stringify(ord!.hours['12']).slice(0, 600));
await store.client.close(); await db.stop();
