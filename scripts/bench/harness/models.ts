/**
 * The storage models compared by the benchmark, all on the same database server:
 * - `ours` / `ours-preallocated`: the project's record path (sparse or pre-allocated
 *   day documents; a batch is acknowledged once it is in the ingest log, and folded into
 *   series-day documents by {@link OursModel.settle}) and its GraphQL API;
 * - `naive`: one document per reading, `insertMany` in batches;
 * - `timeseries`: a MongoDB native time-series collection.
 */
import type { Db, Document, MongoClient } from 'mongodb';
import type { DocumentLayout } from '../../../src/model/day-document.ts';
import { validateReadings, type Reading } from '../../../src/record/validate.ts';
import { recordBatch } from '../../../src/engine/record.ts';
import { foldAll } from '../../../src/storage/fold.ts';
import type { AppOptions } from '../../../src/server/yoga.ts';
import { CollectionName, ensureIndexes, openStore, type Store } from '../../../src/storage/store.ts';
import { type BenchApp, benchApp, graphqlBody, type GraphqlBody } from './app.ts';
import { CommandLog } from './commands.ts';
import { readingInput, type DataSet, type PlainReading } from './datasets.ts';
import type { BenchQuery } from './queries.ts';

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
 * SecantusDB reports the uncompressed BSON size as `storageSize`. `via` says which answered.
 */
export async function collectionSizes(
  db: Db,
  name: string,
): Promise<{ storage: number; index: number; count: number; via: 'collStats' | '$collStats' }> {
  try {
    const s = await db.command({ collStats: name });
    return { storage: Number(s.storageSize ?? 0), index: Number(s.totalIndexSize ?? 0), count: Number(s.count ?? 0), via: 'collStats' };
  } catch {
    const [stats] = await db
      .collection(name)
      .aggregate<{ storageStats: Document }>([{ $collStats: { storageStats: {} } }])
      .toArray();
    const s = stats?.storageStats ?? {};
    return { storage: Number(s.storageSize ?? 0), index: Number(s.totalIndexSize ?? 0), count: Number(s.count ?? 0), via: '$collStats' };
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

/** What {@link OursModel.open} may change beyond the layout: the store's rollup grace period, the app's options. */
export interface OursOptions {
  /** The rollup rebuild grace period, ms (the store's default when omitted). */
  rollupGraceMs?: number;
  /** App options over those of {@link benchApp} (request limits, live settings, …). */
  app?: Partial<Omit<AppOptions, 'store'>>;
}

/** The project's record path into its own database. */
export class OursModel implements Model {
  readonly name: ModelName;
  /** The commands the store's client sends, caught while {@link CommandLog.listen} runs. */
  readonly commands: CommandLog;
  private constructor(
    readonly store: Store,
    readonly app: BenchApp,
    layout: DocumentLayout,
  ) {
    this.name = layout === 'sparse' ? 'ours' : 'ours-preallocated';
    this.commands = new CommandLog(store.client);
  }

  get db(): Db {
    return this.store.db;
  }

  /**
   * Opens an empty database `dbName` on `uri` (dropped first) with metrics created in
   * `layout`, the driver's command monitoring on (`bytes-read.ts` and the rollup
   * benchmark catch the commands sent), and the GraphQL app over it. No folder runs in
   * the background: the benchmark folds with {@link settle} before it reads storage or
   * times queries, so the unfolded log is not bounded (no INGEST_BACKLOG while loading).
   * @throws Error when the database cannot be reached.
   */
  static async open(uri: string, dbName: string, layout: DocumentLayout = 'sparse', options: OursOptions = {}): Promise<OursModel> {
    const store = await openStore(uri, dbName, {
      defaultLayout: layout,
      client: { monitorCommands: true },
      ingest: { maxTailReadings: 0, maxTailSeconds: 0 },
      ...(options.rollupGraceMs === undefined ? {} : { rollupGraceMs: options.rollupGraceMs }),
    });
    await store.db.dropDatabase();
    await ensureIndexes(store.db);
    return new OursModel(store, benchApp(store, options.app), layout);
  }

  convert(readings: readonly PlainReading[]): Reading[] {
    return validateReadings(readings.map(readingInput), { maxBatchSize: Infinity, receivedAt: 0 });
  }

  /** Batches written so far, for their batch ids. */
  private written = 0;

  /**
   * Records a batch as a client should, with a batch id (so exactly once): acknowledged
   * once it is in the ingest log, folded by {@link settle}.
   */
  async write(batch: unknown[]): Promise<void> {
    this.written += 1;
    await recordBatch(this.store, batch as Reading[], { batchId: `bench-${this.written}`, receivedAt: Date.now() });
  }

  /**
   * Folds every acknowledged batch into series-day (and rollup) documents now
   * (`foldAll`), as the server's folder does in the background: what the benchmark does
   * after loading, before it reads storage or times queries (which would otherwise
   * answer from the log's tail).
   * @returns the readings folded.
   */
  settle(): Promise<number> {
    return foldAll(this.store, this.store.holder);
  }

  /**
   * Sends a GraphQL request through `yoga.fetch` (in process) and returns `data`.
   * @throws Error `GraphQL error: <message>` when the answer has errors.
   */
  async graphql<T>(query: string, variables?: Record<string, unknown>): Promise<T> {
    return (await graphqlBody<T>(this.app, query, variables)).data!;
  }

  /**
   * The same as {@link graphql}, with the whole body (`extensions.reads` among it).
   * @throws Error `GraphQL error: <message>` when the answer has errors.
   */
  graphqlBody<T>(query: string, variables?: Record<string, unknown>): Promise<GraphqlBody<T>> {
    return graphqlBody<T>(this.app, query, variables);
  }

  /**
   * Storage of the folded data (it folds first, see {@link settle}): the series-day
   * documents and the registries. The ingest log is left out: its entries are removed
   * `BATCH_RETENTION_HOURS` after their fold, so it holds no data at rest.
   */
  async storage(): Promise<StorageFigures> {
    await this.settle();
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

/** Drops a model's database and closes its client (a benchmark's clean-up). */
export async function dropAndClose(model: Model): Promise<void> {
  await model.db.dropDatabase();
  await model.close();
}

/**
 * Runs one benchmark query on a model, its answer normalized for comparison (see
 * `BenchQuery`): ours through its GraphQL request, a baseline by the query's pipeline on
 * its reading collection (`$dateTrunc` in it when `dateTrunc`).
 * @throws Error when ours answers with GraphQL errors.
 */
export async function answerQuery(model: Model, query: BenchQuery, dateTrunc: boolean): Promise<Map<string, number>> {
  if (model instanceof OursModel) return query.fromGraphql(await model.graphql(query.graphql));
  const baseline = model as BaselineModel;
  return query.fromRows(await baseline.db.collection(baseline.collection).aggregate(query.pipeline(dateTrunc)).toArray());
}
