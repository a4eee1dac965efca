import { createHash } from 'node:crypto';

/** A tag: a key (a valid name) and a non-empty string value, e.g. `{key: "origin", value: "LAS"}`. */
export interface Tag {
  key: string;
  value: string;
}

/** Tags keyed by tag key, as stored in documents: `{origin: "LAS", destination: "PHL"}`. */
export type TagMap = Record<string, string>;

/**
 * The identity of a series: its metric plus its tag set (InfluxDB's "series key",
 * the article "Time series in MongoDB"). Tags are sorted by key, so the same set in any order is the same series.
 */
export interface SeriesIdentity {
  metric: string;
  /** Sorted by key, keys unique. */
  tags: readonly Tag[];
}

const escapeTagValue = (value: string) => value.replace(/[\\,= ]/g, (c) => `\\${c}`);

/**
 * The readable series key, in InfluxDB line-protocol form:
 * `flights,destination=PHL,origin=LAS` (`\`, `,`, `=` and space in values escaped
 * with `\`). This is the GraphQL `Series.id`.
 */
export function seriesKey(series: SeriesIdentity): string {
  let key = series.metric;
  for (const tag of series.tags) key += `,${tag.key}=${escapeTagValue(tag.value)}`;
  return key;
}

/**
 * The compact series id stored in every series-day document: the first 96 bits of the
 * SHA-1 of the series key, as 24 hex characters. Fixed length keeps series-day documents
 * and index entries small however many tags a series has.
 */
export function seriesId(key: string): string {
  return createHash('sha1').update(key).digest('hex').slice(0, 24);
}

/** Sorts tags by key (a new array); the input must not repeat a key. */
export function sortTags(tags: readonly Tag[]): Tag[] {
  return [...tags].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** `[{key, value}]` to `{key: value}`, built without a prototype so any key is safe. */
export function tagMap(tags: readonly Tag[]): TagMap {
  const map: TagMap = Object.create(null) as TagMap;
  for (const tag of tags) map[tag.key] = tag.value;
  return map;
}

/** `{key: value}` to `[{key, value}]`, sorted by key. */
export function tagList(map: TagMap): Tag[] {
  return sortTags(Object.entries(map).map(([key, value]) => ({ key, value })));
}

/**
 * A tag as one indexable string, `key=value` (the attribute pattern of MongoDB's schema
 * design patterns): one multikey index on these serves filters on any tag key. Keys
 * cannot contain `=`, so the first `=` separates key and value.
 */
export function tagPair(key: string, value: string): string {
  return `${key}=${value}`;
}
