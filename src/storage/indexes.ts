/**
 * Reading and dropping indexes at start-up, for the collections whose indexes change
 * between versions (`ensureDayIndexes` in `store.ts`, `ensureIngestLogIndexes` in
 * `ingest-log.ts`).
 */
import { MongoServerError, type Db } from 'mongodb';

/** An index as `listIndexes` describes it (MongoDB manual, "listIndexes"): the fields read here. */
export interface IndexDescription {
  name?: string;
  key?: Record<string, unknown>;
  unique?: boolean;
}

/**
 * The indexes of `collection`, `_id` included; none when there is no such collection.
 * @throws driver errors but NamespaceNotFound (26).
 */
export async function indexesOf(db: Db, collection: string): Promise<IndexDescription[]> {
  try {
    return await db.collection(collection).listIndexes().toArray();
  } catch (error) {
    // 26 NamespaceNotFound: no collection, no index.
    if (error instanceof MongoServerError && error.code === 26) return [];
    throw error;
  }
}

/**
 * Drops index `name` of `collection` when it exists: nothing happens when there is no
 * such index (IndexNotFound, 27) or collection (NamespaceNotFound, 26), nor when the
 * server says so in its message only (the embedded server's wording).
 * @throws driver errors otherwise.
 */
export async function dropIndexIfPresent(db: Db, collection: string, name: string): Promise<void> {
  try {
    await db.collection(collection).dropIndex(name);
  } catch (error) {
    if (!(error instanceof MongoServerError && (error.code === 27 || error.code === 26))) {
      if (!/not found|doesn't exist|does not exist/i.test((error as Error).message)) throw error;
    }
  }
}
