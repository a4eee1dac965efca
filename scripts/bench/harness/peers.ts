/**
 * The peer a user would build instead of the project: a plain collection of one flat
 * document per reading (`{t, <tag>: value, ..., <field>: value, ...}`) with the index
 * the user would create, loaded with `insertMany`, and asked with a `$match`/`$group`
 * pipeline on `$dateTrunc`. Beside it, the plain loop over the readings in Node that
 * both answers are checked against, and the comparison of answers.
 *
 * Answers of every side are normalized to the same {@link Answers}:
 * `<field>|<group>|<bucket start ms or "all">|<statistic> -> number`.
 */
import { TZDate } from '@date-fns/tz';
import type { Db, Document, WriteConcern } from 'mongodb';
import type { PlainReading } from './tsbs.ts';
import { collectionSizes } from './database.ts';

/** Normalized answer values: `<field>|<group>|<bucket start ms or "all">|<statistic>` to the value. */
export type Answers = Map<string, number>;

/** The statistics the reads compare: those of a bucket (`count`, `sum`, `min`, `max`, `avg`). */
export type PeerStat = 'count' | 'sum' | 'min' | 'max' | 'avg';

/** The key of one value of {@link Answers}. */
export const answerKey = (field: string, group: string, bucket: number | 'all', stat: string) => `${field}|${group}|${bucket}|${stat}`;

/** A flat document of one reading: `t` (a Date), each tag and each field at the top level. */
export function plainDocument(reading: PlainReading): Document {
  const doc: Document = { t: new Date(reading.time) };
  for (const tag of reading.tags) doc[tag.key] = tag.value;
  Object.assign(doc, reading.fields);
  return doc;
}

/** A plain collection of one document per reading (see {@link plainDocument}), as a user would keep it. */
export class PlainCollection {
  /**
   * @param db the database holding it (beside the project's, on the same server).
   * @param indexes the indexes a user would create, e.g. `[{origin: 1, t: 1}]`.
   */
  constructor(
    readonly db: Db,
    readonly indexes: readonly Document[],
    readonly name = 'readings',
  ) {}

  /** Drops the collection and creates it again with its indexes (before loading). */
  async reset(): Promise<void> {
    await this.db
      .collection(this.name)
      .drop()
      .catch(() => undefined);
    await this.db.createCollection(this.name);
    for (const key of this.indexes) await this.db.collection(this.name).createIndex(key);
  }

  /** Inserts one batch (`insertMany`, unordered, with `writeConcern`: use the project's, so both sides pay the same). */
  async insert(docs: Document[], writeConcern?: WriteConcern): Promise<void> {
    await this.db.collection(this.name).insertMany(docs, { ordered: false, ...(writeConcern ? { writeConcern } : {}) });
  }

  /** Documents stored. */
  count(): Promise<number> {
    return this.db.collection(this.name).countDocuments();
  }

  /** Runs a pipeline on the collection. */
  aggregate(pipeline: Document[]): Promise<Document[]> {
    return this.db.collection(this.name).aggregate(pipeline, { allowDiskUse: true }).toArray();
  }

  /** `storageSize` + `totalIndexSize` of the collection, in bytes, and which command answered. */
  async bytes(): Promise<{ data: number; index: number; via: string }> {
    const sizes = await collectionSizes(this.db, this.name);
    return { data: sizes.storage, index: sizes.index, via: sizes.via };
  }
}

/** A bucket unit of the reads (UTC or zoned). */
export type PeerUnit = 'minute' | 'hour' | 'day' | 'week';

/**
 * The `$dateTrunc` of `$t` a user writes for `unit`, in `timeZone` when it is not UTC;
 * weeks start on Monday (the project's default, ISO 8601).
 */
export function dateTrunc(unit: PeerUnit, timeZone = 'UTC'): Document {
  const spec: Document = { date: '$t', unit };
  if (timeZone !== 'UTC') spec.timezone = timeZone;
  if (unit === 'week') spec.startOfWeek = 'monday';
  return { $dateTrunc: spec };
}

const UNIT_MS = { minute: 60_000, hour: 3_600_000 } as const;

/**
 * Start (ms since epoch) of the `unit` bucket of `timeZone` holding `time`, computed
 * from the local calendar date (`TZDate`), not from the project's code: minutes and
 * hours as UTC multiples (every zone here is offset by whole quarter hours, and the
 * hour questions are asked in UTC), days at local midnight, weeks at the local
 * midnight of the Monday on or before the date.
 */
export function bucketStart(time: number, unit: PeerUnit, timeZone = 'UTC'): number {
  if (unit === 'minute' || unit === 'hour') {
    if (timeZone !== 'UTC' && unit === 'hour') throw new Error('bucketStart: zoned hours are not a question here');
    return time - (time % UNIT_MS[unit]);
  }
  const local = new TZDate(time, timeZone);
  const back = unit === 'week' ? (local.getDay() + 6) % 7 : 0;
  return new TZDate(local.getFullYear(), local.getMonth(), local.getDate() - back, timeZone).getTime();
}

/** What the plain loop asks of the readings: those of `filter` in `[from, to)`, grouped by a tag, in buckets. */
export interface LoopQuestion {
  fields: readonly string[];
  stats: readonly PeerStat[];
  from: number;
  to: number;
  /** Keep readings whose tag `key` has one of `values`; all when omitted. */
  filter?: { key: string; values: readonly string[] };
  /** Group by this tag's value; one group `''` when omitted. */
  groupBy?: string;
  /** Buckets of this unit (in `timeZone`); one `all` bucket over the range when omitted. */
  unit?: PeerUnit;
  timeZone?: string;
}

/**
 * The answer of a plain loop over `readings` (count, sum, min and max added up reading
 * by reading, `avg` = sum / count), normalized as {@link Answers}.
 */
export function loopAnswer(readings: readonly PlainReading[], question: LoopQuestion): Answers {
  const values = question.filter ? new Set(question.filter.values) : null;
  const acc = new Map<string, { count: number; sum: number; min: number; max: number }>();
  for (const reading of readings) {
    if (reading.time < question.from || reading.time >= question.to) continue;
    if (values !== null && !values.has(tagValue(reading, question.filter!.key) ?? '')) continue;
    const group = question.groupBy ? (tagValue(reading, question.groupBy) ?? '') : '';
    const bucket = question.unit ? bucketStart(reading.time, question.unit, question.timeZone) : 'all';
    for (const field of question.fields) {
      const value = reading.fields[field];
      if (value === undefined) continue;
      const key = `${field}|${group}|${bucket}`;
      const a = acc.get(key);
      if (a === undefined) acc.set(key, { count: 1, sum: value, min: value, max: value });
      else {
        a.count += 1;
        a.sum += value;
        if (value < a.min) a.min = value;
        if (value > a.max) a.max = value;
      }
    }
  }
  const answers: Answers = new Map();
  for (const [key, a] of acc) {
    const stats = { ...a, avg: a.sum / a.count };
    for (const stat of question.stats) answers.set(`${key}|${stat}`, stats[stat]);
  }
  return answers;
}

/** The value of tag `key` of a reading, undefined when it has none. */
export const tagValue = (reading: PlainReading, key: string) => reading.tags.find((tag) => tag.key === key)?.value;

/** Statistics compared with a relative tolerance (fractional sums added in another order); every other one exactly. */
const TOLERANT = new Set(['sum', 'avg']);

/**
 * Compares two answers: the same keys; counts, minima, maxima, times and values equal
 * exactly; sums and means within `tolerance` relative (1e-9: float sums added in
 * another order differ in the last bits).
 * @returns null when they agree, else the first difference in words.
 */
export function compareAnswerMaps(a: Answers, b: Answers, tolerance = 1e-9): string | null {
  if (a.size !== b.size) {
    const missing = [...a.keys()].find((key) => !b.has(key)) ?? [...b.keys()].find((key) => !a.has(key));
    return `${a.size} values against ${b.size} (first not in both: ${missing})`;
  }
  for (const [key, value] of a) {
    const other = b.get(key);
    if (other === undefined) return `${key} missing`;
    const stat = key.slice(key.lastIndexOf('|') + 1);
    const equal = TOLERANT.has(stat) ? Math.abs(value - other) <= tolerance * Math.max(1, Math.abs(value)) : value === other;
    if (!equal) return `${key}: ${value} against ${other}`;
  }
  return null;
}
