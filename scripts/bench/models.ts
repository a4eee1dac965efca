/**
 * The storage models compared by the benchmark, all on the same database server:
 * - `ours` / `ours-preallocated`: the project's record path (sparse or pre-allocated
 *   day documents) and its GraphQL API;
 * - `naive`: one document per reading, `insertMany` in batches;
 * - `timeseries`: a MongoDB native time-series collection.
 */
import { pino } from 'pino';
import type { Db, Document, MongoClient } from 'mongodb';
import type { DocumentLayout } from '../../src/model/day-document.ts';
import { validateReadings, type Reading } from '../../src/record/validate.ts';
import { recordBatch } from '../../src/engine/record.ts';
import { CollectionName, ensureIndexes, openStore, type Store } from '../../src/storage/store.ts';
import { createApp } from '../../src/server/yoga.ts';
import { readingInput, type DataSet, type PlainReading } from './datasets.ts';

/** The models a run can hold (`ours-preallocated` only in the layout comparison). */
export type ModelName = 'ours' | 'ours-preallocated' | 'naive' | 'timeseries';

/** Bytes on disk and the largest document of a model's collections. */
export interface StorageFigures {
  /** `storageSize` of the data (compressed, on disk), bytes. */
  storageBytes: number;
  /** `totalIndexSize`, bytes. */
  indexBytes: number;
  documents: number;
  /** Largest BSON document, bytes; null when the server cannot tell. */
  largestDocument: number | null;
  /** How `largestDocument` was found. */
  largestNote: string;
}

/** A storage model: converts readings ahead of time (untimed), writes batches (timed). */
export interface Model {
  readonly name: ModelName;
  readonly db: Db;
  convert(readings: readonly PlainReading[]): unknown[];
  write(batch: unknown[]): Promise<void>;
  storage(): Promise<StorageFigures>;
  close(): Promise<void>;
}

/** Baseline models also answer aggregation pipelines on their reading collection. */
export interface BaselineModel extends Model {
  readonly collection: string;
}

/**
 * `storageSize` and `totalIndexSize` of one collection, from the `collStats` command
 * (deprecated but answered by MongoDB 7/8), else from the `$collStats` stage.
 * SecantusDB reports the uncompressed BSON size as `storageSize`.
 */
export async function collectionSizes(db: Db, name: string): Promise<{ storage: number; index: number; count: number }> {
  try {
    const s = await db.command({ collStats: name });
    return { storage: Number(s.storageSize ?? 0), index: Number(s.totalIndexSize ?? 0), count: Number(s.count ?? 0) };
  } catch {
    const [stats] = await db
      .collection(name)
      .aggregate<{ storageStats: Document }>([{ $collStats: { storageStats: {} } }])
      .toArray();
    const s = stats?.storageStats ?? {};
    return { storage: Number(s.storageSize ?? 0), index: Number(s.totalIndexSize ?? 0), count: Number(s.count ?? 0) };
  }
}

async function largestDocument(db: Db, collection: string, sample?: number): Promise<number | null> {
  try {
    const [row] = await db
      .collection(collection)
      .aggregate<{ max: number }>([
        ...(sample ? [{ $sample: { size: sample } }] : []),
        { $group: { _id: null, max: { $max: { $bsonSize: '$$ROOT' } } } },
      ])
      .toArray();
    return row?.max ?? null;
  } catch {
    return null;
  }
}

const tagObject = (reading: PlainReading) => Object.fromEntries(reading.tags.map((tag) => [tag.key, tag.value]));

/** The project's record path into its own database. */
export class OursModel implements Model {
  readonly name: ModelName;
  private constructor(
    readonly store: Store,
    readonly app: ReturnType<typeof createApp>,
    layout: DocumentLayout,
  ) {
    this.name = layout === 'sparse' ? 'ours' : 'ours-preallocated';
  }

  get db(): Db {
    return this.store.db;
  }

  /**
   * Opens an empty database `dbName` on `uri` with metrics created in `layout`, the
   * driver's command monitoring on (`bench/bytes-read.ts` catches the pipelines sent).
   */
  static async open(uri: string, dbName: string, layout: DocumentLayout): Promise<OursModel> {
    const store = await openStore(uri, dbName, { defaultLayout: layout, client: { monitorCommands: true } });
    await store.db.dropDatabase();
    await ensureIndexes(store.db);
    const app = createApp({
      store,
      logger: pino({ level: 'silent' }),
      limits: { maxBatchSize: 100_000, maxBuckets: 10_000_000 },
      // In-process benchmark client: no token.
      auth: { mode: 'off', corsOrigins: [] },
    });
    return new OursModel(store, app, layout);
  }

  convert(readings: readonly PlainReading[]): Reading[] {
    return validateReadings(readings.map(readingInput), { maxBatchSize: Infinity, receivedAt: 0 });
  }

  /** Batches written so far, for their batch ids. */
  private written = 0;

  /** Records a batch as a client should, with a batch id (so exactly once). */
  async write(batch: unknown[]): Promise<void> {
    this.written += 1;
    await recordBatch(this.store, batch as Reading[], { batchId: `bench-${this.written}`, receivedAt: 0 });
  }

  /** Sends a GraphQL request through `yoga.fetch` (in process) and returns `data`. */
  async graphql<T>(query: string, variables?: Record<string, unknown>): Promise<T> {
    const response = await this.app.fetch('http://bench/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: T; errors?: { message: string }[] };
    if (body.errors?.length) throw new Error(`GraphQL error: ${body.errors[0]!.message}`);
    return body.data!;
  }

  async storage(): Promise<StorageFigures> {
    let storageBytes = 0;
    let indexBytes = 0;
    let documents = 0;
    for (const name of Object.values(CollectionName)) {
      const sizes = await collectionSizes(this.db, name);
      storageBytes += sizes.storage;
      indexBytes += sizes.index;
      if (name === CollectionName.buckets) documents = sizes.count;
    }
    return {
      storageBytes,
      indexBytes,
      documents,
      largestDocument: await largestDocument(this.db, CollectionName.buckets),
      largestNote: 'all series-day documents',
    };
  }

  async close(): Promise<void> {
    await this.store.client.close();
  }
}

/** One document per reading: `{metric, tags, time, fields}`. */
export class NaiveModel implements BaselineModel {
  readonly name: ModelName = 'naive';
  readonly collection = 'readings';
  constructor(
    readonly client: MongoClient,
    readonly db: Db,
  ) {}

  /** Creates the collection with the indexes its queries need: `{metric, <entity tag>, time}` and `{metric, time}`. */
  static async open(client: MongoClient, dbName: string, data: DataSet): Promise<NaiveModel> {
    const db = client.db(dbName);
    await db.dropDatabase();
    await db
      .collection('readings')
      .createIndexes([{ key: { metric: 1, [`tags.${data.entityTag}`]: 1, time: 1 } }, { key: { metric: 1, time: 1 } }]);
    return new NaiveModel(client, db);
  }

  convert(readings: readonly PlainReading[]): Document[] {
    return readings.map((r) => ({ metric: r.metric, tags: tagObject(r), time: new Date(r.time), fields: r.fields }));
  }

  async write(batch: unknown[]): Promise<void> {
    await this.db.collection(this.collection).insertMany(batch as Document[], { ordered: false });
  }

  async storage(): Promise<StorageFigures> {
    const sizes = await collectionSizes(this.db, this.collection);
    return {
      storageBytes: sizes.storage,
      indexBytes: sizes.index,
      documents: sizes.count,
      largestDocument: await largestDocument(this.db, this.collection, 2000),
      largestNote: 'sample of 2,000 documents',
    };
  }

  async close(): Promise<void> {}
}

/** A native time-series collection: `timeField: time`, `metaField: tags`; written and queried like `naive`. */
export class TimeseriesModel extends NaiveModel {
  override readonly name: ModelName = 'timeseries';

  /**
   * Creates the time-series collection (granularity `seconds` for dense data, `minutes`
   * for flights) and a secondary index on the entity tag and time.
   * @throws Error when the server cannot create time-series collections.
   */
  static override async open(client: MongoClient, dbName: string, data: DataSet): Promise<TimeseriesModel> {
    const db = client.db(dbName);
    await db.dropDatabase();
    await db.createCollection('readings', {
      timeseries: { timeField: 'time', metaField: 'tags', granularity: data.name === 'dense' ? 'seconds' : 'minutes' },
    });
    await db.collection('readings').createIndex({ [`tags.${data.entityTag}`]: 1, time: 1 });
    return new TimeseriesModel(client, db);
  }

  override async storage(): Promise<StorageFigures> {
    const figures = await super.storage();
    const bucket = await largestDocument(this.db, `system.buckets.${this.collection}`);
    return bucket === null
      ? { ...figures, largestNote: 'sample of 2,000 measurements (bucket collection not readable)' }
      : { ...figures, largestDocument: bucket, largestNote: 'largest bucket in system.buckets' };
  }
}

/**
 * True when the server runs `$dateTrunc` (MongoDB 5.0+): the baselines' pipelines use it
 * when it is there, and compute bucket starts in milliseconds otherwise. Probes in a
 * scratch database `bench_probe`, dropped afterwards.
 */
export async function supportsDateTrunc(client: MongoClient): Promise<boolean> {
  const scratch = client.db('bench_probe').collection('probe');
  try {
    await scratch.insertOne({ time: new Date() });
    await scratch.aggregate([{ $project: { t: { $dateTrunc: { date: '$time', unit: 'minute' } } } }]).toArray();
    return true;
  } catch {
    return false;
  } finally {
    await client.db('bench_probe').dropDatabase();
  }
}
