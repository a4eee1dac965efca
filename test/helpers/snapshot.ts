import { EJSON } from 'bson';
import type { Db } from 'mongodb';

/** Every document of every collection of `db`, in a canonical order and text, to compare before and after a request. */
export async function snapshotDatabase(db: Db): Promise<string> {
  const collections = await db.listCollections().toArray();
  const all: Record<string, unknown[]> = {};
  for (const { name } of collections.sort((a, b) => a.name.localeCompare(b.name))) {
    all[name] = await db.collection(name).find({}).sort({ _id: 1 }).toArray();
  }
  return EJSON.stringify(all, { relaxed: false });
}
