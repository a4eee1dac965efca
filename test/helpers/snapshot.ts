import { EJSON } from 'bson';
import type { Db } from 'mongodb';
import { READ_PINS_COLLECTION } from '../../src/storage/read-pins.ts';

/**
 * Every document of every collection of `db` but the read pins, in a canonical order and
 * text (canonical Extended JSON, so types such as int vs double count): two equal
 * snapshots mean no data was written in between. The read pins (`read_pins`, see
 * `src/storage/read-pins.ts`) are the reads' own bookkeeping, written around any read,
 * so they are left out.
 */
export async function databaseSnapshot(db: Db): Promise<string> {
  const collections = (await db.listCollections().toArray()).filter(({ name }) => name !== READ_PINS_COLLECTION);
  const all: Record<string, unknown[]> = {};
  for (const { name } of collections.sort((a, b) => a.name.localeCompare(b.name))) {
    all[name] = await db.collection(name).find({}).sort({ _id: 1 }).toArray();
  }
  return EJSON.stringify(all, { relaxed: false });
}
