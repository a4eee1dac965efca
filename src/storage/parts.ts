/**
 * Inserting what folds and compactions write: parts of series-day and rollup documents
 * and day summaries, each insert safe to repeat (a retried one finds its documents by
 * their ids).
 */
import type { Collection, Document } from 'mongodb';
import { CollectionName, type Store, documentForms } from './store.ts';
import type { DayContent } from '../documents/content.ts';
import { type DaySummary, storedSummaries } from '../documents/summaries.ts';
import { duplicateKeyIndexes } from './registration.ts';
import { faultArmed, faultPoint } from './fault-points.ts';
import { foldDocuments } from '../documents/encode.ts';
import { leaseLeft } from './lease.ts';

/**
 * Inserts documents that may exist already from an earlier attempt of the same fold,
 * compaction or deletion (same `_id`): one unordered `insertMany`, with a server-side
 * time limit when given (`maxTimeMS`: a folder passes its lease left, see
 * {@link LeaseLost}); duplicate keys (11000) are skipped (`duplicateKeyIndexes`).
 * @returns how many were inserted now.
 * @throws any other failure, and a bulk error without write errors (a connection lost
 * mid-write: unknown which landed; the next attempt completes it).
 */
export async function insertOnce(collection: Collection<Document>, docs: Document[], maxTimeMS?: number): Promise<number> {
  if (docs.length === 0) return 0;
  try {
    return (await collection.insertMany(docs, { ordered: false, ...(maxTimeMS === undefined ? {} : { maxTimeMS }) })).insertedCount;
  } catch (error) {
    return docs.length - duplicateKeyIndexes(error).length;
  }
}

/**
 * Inserts day summaries (each once, as {@link insertOnce}): their sketches first, then
 * the summaries (`storedSummaries`), so a summary a reader finds has its sketches unless
 * they were deleted after it.
 */
export async function insertSummaries(store: Store, summaries: readonly DaySummary[], maxTimeMS: number): Promise<void> {
  const stored = storedSummaries(summaries);
  await insertOnce(store.db.collection(CollectionName.sketches), stored.sketches, maxTimeMS);
  await insertOnce(store.db.collection(CollectionName.summaries), stored.summaries, maxTimeMS);
}

/**
 * Inserts a step's series-day documents with {@link insertOnce}, after renewing the
 * lease (`leaseLeft`): in one `insertMany`, or, when fault point `point` is armed (fault
 * tests only), half of them, then the point, then the rest.
 * @returns how many were inserted now.
 * @throws LeaseLost when another holder has the lease; driver errors.
 */
export async function insertParts(
  store: Store,
  holder: string,
  collection: Collection<Document>,
  docs: Document[],
  point: 'fold:mid-parts' | 'compact:mid-merge',
): Promise<number> {
  const half = faultArmed(point) ? Math.ceil(docs.length / 2) : docs.length;
  let inserted = await insertOnce(collection, half === docs.length ? docs : docs.slice(0, half), await leaseLeft(store, holder));
  if (half < docs.length) {
    await faultPoint(point);
    inserted += await insertOnce(collection, docs.slice(half), await leaseLeft(store, holder));
  }
  return inserted;
}

/**
 * Readings a slice of a fold's parts holds (about), for {@link insertFoldParts}: a fold of
 * 20,000 sparse readings (6,000 parts) goes in five or six slices, one of dense readings
 * (a few hundred readings a part) in about as many.
 */
export const PART_SLICE_READINGS = 4_000;

/**
 * Builds the parts of fold `seq` from its series-day `writes` (`foldDocuments`, in the
 * forms the store allows: `documentForms`) and
 * inserts them with {@link insertOnce}, in slices of about {@link PART_SLICE_READINGS}
 * readings: each slice is built while the one before is being inserted, and sent as soon
 * as it is built, so the database is not left idle while Node builds documents (building
 * 6,000 parts took 0.7 s of a 10 s fold on the embedded server). The lease is renewed
 * before each slice is built (`leaseLeft`), and the slice's insert is bounded by what is
 * left of it (`maxTimeMS`). When fault point `fold:mid-parts` is armed (fault tests
 * only): half of the parts, then the point, then the rest, one after another.
 * @returns the parts built (all of them, for the fold's day summaries) and how many were
 * inserted now (a retried fold finds some inserted already).
 * @throws LeaseLost when another holder has the lease; driver errors.
 */
export async function insertFoldParts(
  store: Store,
  holder: string,
  writes: readonly DayContent[],
  seq: number,
): Promise<{ docs: Record<string, unknown>[]; inserted: number }> {
  const forms = documentForms(store);
  const collection = store.seriesDays as unknown as Collection<Document>;
  if (faultArmed('fold:mid-parts')) {
    const docs = foldDocuments(writes, seq, forms);
    return { docs, inserted: await insertParts(store, holder, collection, docs, 'fold:mid-parts') };
  }
  const docs: Record<string, unknown>[] = [];
  const inserts: Promise<number>[] = [];
  let inserted = 0;
  let start = 0;
  while (start < writes.length) {
    // Renewed while the slice before is being inserted; the insert gets what is left.
    const left = await leaseLeft(store, holder);
    const renewed = Date.now();
    let end = start;
    let readings = 0;
    while (end < writes.length && (end === start || readings < PART_SLICE_READINGS)) readings += writes[end++]!.readings;
    const slice = foldDocuments(writes.slice(start, end), seq, forms);
    docs.push(...slice);
    // At most two slices in flight: the one the database inserts and the next, queued.
    if (inserts.length >= 2) inserted += await inserts.shift()!;
    const insert = insertOnce(collection, slice, Math.max(1, left - (Date.now() - renewed)));
    // Awaited in turn; a failure must not count as unhandled meanwhile.
    insert.catch(() => undefined);
    inserts.push(insert);
    start = end;
    // Let the insert's commands go out before building the next slice.
    await new Promise((resolve) => setImmediate(resolve));
  }
  for (const insert of inserts) inserted += await insert;
  return { docs, inserted };
}
