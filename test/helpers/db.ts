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

/** Connects to the test server (see `global-setup.ts`) and picks a fresh database name. */
export async function openTestDatabase(label: string): Promise<TestDatabase> {
  const client = new MongoClient(inject('mongoUri'));
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
