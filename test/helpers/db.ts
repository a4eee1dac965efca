import { randomBytes } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { inject } from 'vitest';

/** A database of its own for one test file, on the run's test server. */
export interface TestDatabase {
  client: MongoClient;
  db: Db;
  /** Drops the database and closes the client. */
  drop(): Promise<void>;
}

/**
 * The connection string of this test worker's database server: the run starts one per
 * worker (see `global-setup.ts`), and a worker (`VITEST_POOL_ID`, 1-based) keeps to its
 * own, so two test files running at once do not queue behind each other.
 */
export function testMongoUri(): string {
  const uris = inject('mongoUris');
  const worker = Math.max(1, Number(process.env.VITEST_POOL_ID ?? 1));
  return uris[(worker - 1) % uris.length]!;
}

/** Connects to the test server (see `global-setup.ts`) and picks a fresh database name. */
export async function openTestDatabase(label: string): Promise<TestDatabase> {
  const client = new MongoClient(testMongoUri());
  await client.connect();
  const db = client.db(`test_${label}_${randomBytes(4).toString('hex')}`);
  return {
    client,
    db,
    async drop() {
      await db.dropDatabase();
      await client.close();
    },
  };
}
