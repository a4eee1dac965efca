import { LRUCache } from 'lru-cache';
import { MongoClient, type Collection, type Db, type MongoClientOptions } from 'mongodb';
import type { BucketDocument, BucketLayout } from '../model/bucket-document.ts';
import type { TagMap } from '../model/series.ts';

/** Series registry entry: one document per series (collection `series`). */
export interface SeriesDocument {
  /** Series id (24 hex characters), as in bucket documents. */
  _id: string;
  /** Readable series key, e.g. `flights,destination=PHL,origin=LAS`. */
  key: string;
  metric: string;
  tags: TagMap;
  /** The tags as `key=value` strings (see `tagPair`), indexed with the metric for tag filters. */
  tagPairs: string[];
  /** Every field ever recorded for the series. */
  fields: string[];
}

/** Metric registry entry: one document per metric (collection `metrics`). */
export interface MetricDocument {
  /** The metric name. */
  _id: string;
  /** Every field ever recorded for the metric (at most `Limits.fieldsPerMetric`). */
  fields: string[];
  /** Every tag key ever used by the metric's series. */
  tagKeys: string[];
  /** How the metric's bucket documents are laid out, fixed when the metric is created. */
  layout: BucketLayout;
  createdAt: Date;
  /** Exact time of the earliest reading recorded (absent before the first write completes). */
  first?: Date;
  /** Exact time of the latest reading recorded. */
  last?: Date;
}

/** What this process remembers of the registries so a steady stream of writes skips them. */
export interface RegistryCache {
  /** Metric name -> its fields, tag keys and layout, as last seen in the database. */
  metrics: Map<string, { fields: Set<string>; tagKeys: Set<string>; layout: BucketLayout; first?: number; last?: number }>;
  /** Series id -> fields known to be registered. */
  series: LRUCache<string, Set<string>>;
  /** `${seriesId}:${dayMs}` of pre-allocated bucket documents known to exist. */
  skeletons: LRUCache<string, true>;
}

/** The storage layer's handle: the driver objects and the process-local caches. */
export interface Store {
  client: MongoClient;
  db: Db;
  /** Bucket documents (see `model/bucket-document.ts`). */
  buckets: Collection<BucketDocument>;
  series: Collection<SeriesDocument>;
  metrics: Collection<MetricDocument>;
  cache: RegistryCache;
  /** Layout given to metrics created from now on. */
  defaultLayout: BucketLayout;
}

/** Collection names, fixed so that `$unionWith` stages can name the bucket collection. */
export const CollectionName = { buckets: 'buckets', series: 'series', metrics: 'metrics' } as const;

/**
 * Creates the indexes the queries and the record path rely on (idempotent):
 * - `buckets {series, date}` unique: one document per series and day; it is what makes
 *   concurrent first writes to a new bucket safe (the loser gets error 11000 and retries
 *   as an update), and it serves every query scoped to series.
 * - `buckets {metric, date}`: queries over a whole metric.
 * - `buckets {metric, tagPairs, date}` (multikey): queries filtered by tags, one
 *   equality on a `key=value` string plus the day range.
 * - `series {metric, key}`: listing a metric's series in key order.
 * - `series {metric, tagPairs}`: finding the series of a tag filter on any tag key.
 */
export async function ensureIndexes(db: Db): Promise<void> {
  await db.collection(CollectionName.buckets).createIndexes([
    { key: { series: 1, date: 1 }, name: 'series_date', unique: true },
    { key: { metric: 1, date: 1 }, name: 'metric_date' },
    { key: { metric: 1, tagPairs: 1, date: 1 }, name: 'metric_tagPairs_date' },
  ]);
  await db.collection(CollectionName.series).createIndexes([
    { key: { metric: 1, key: 1 }, name: 'metric_key' },
    { key: { metric: 1, tagPairs: 1 }, name: 'metric_tagPairs' },
  ]);
}

/**
 * Connects to `uri`, checks the server answers, creates the indexes and returns a
 * {@link Store} on database `dbName`.
 * @throws Error "Cannot reach the database at …" when the server does not answer
 * within `serverSelectionTimeoutMS` (default 10 s).
 */
export async function openStore(
  uri: string,
  dbName: string,
  options: { defaultLayout?: BucketLayout; client?: MongoClientOptions } = {},
): Promise<Store> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10_000, ...options.client });
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
  } catch (error) {
    await client.close();
    throw new Error(`Cannot reach the database at ${redact(uri)}: ${(error as Error).message}`);
  }
  const db = client.db(dbName);
  await ensureIndexes(db);
  return {
    client,
    db,
    buckets: db.collection<BucketDocument>(CollectionName.buckets),
    series: db.collection<SeriesDocument>(CollectionName.series),
    metrics: db.collection<MetricDocument>(CollectionName.metrics),
    cache: {
      metrics: new Map(),
      series: new LRUCache({ max: 200_000 }),
      skeletons: new LRUCache({ max: 200_000 }),
    },
    defaultLayout: options.defaultLayout ?? 'sparse',
  };
}

/** Hides the password of a connection string, for messages and logs. */
export function redact(uri: string): string {
  return uri.replace(/\/\/([^:@/]+):([^@/]+)@/, '//$1:***@');
}
