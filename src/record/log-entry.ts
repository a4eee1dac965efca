/**
 * The ingest log entry of a batch: how an acknowledged batch is stored until it is
 * folded into series-day documents (see docs/ingest-design.md, "1. Acknowledge with one
 * durable write"), and how its readings are read back. Pure: no I/O.
 *
 * The layout is columnar, the measured choice (a third to half the bytes of an array of
 * reading objects, and faster to insert): each series once, then one array per column.
 * The columns are stored packed ({@link packColumns}): one deflated BSON binary, which
 * the database keeps as bytes instead of thousands of array elements.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { BSON } from 'mongodb';
import { seriesId, type Tag } from '../model/series.ts';
import type { Reading } from './validate.ts';

/** A series as an entry keeps it once: its key, metric and sorted tags. */
export interface LogSeries {
  /** Series key, e.g. `cpu,hostname=host_0` (see `model/series.ts`). */
  key: string;
  metric: string;
  /** Sorted by key. */
  tags: Tag[];
}

/** The readings of one batch, column by column. */
export interface LogColumns {
  /** Every series of the batch, once each. */
  series: LogSeries[];
  /** Per reading: its index in `series`. */
  s: number[];
  /** Per reading: its time, ms since the epoch (UTC). */
  t: number[];
  /** Every field name of the batch, once each. */
  fields: string[];
  /** Per field (in the order of `fields`): one value per reading, null where the reading lacks the field. */
  v: (number | null)[][];
  /** Per reading: 1 when the server set its time (the client sent none), else 0; absent when no reading's time was set. */
  serverTime?: number[];
}

/**
 * The readings of a batch as columns (see {@link LogColumns}), in the order sent, with
 * each reading's fields in their order of first appearance in the batch (the order of
 * a reading's fields does not change any statistic).
 */
export function toColumns(readings: readonly Reading[]): LogColumns {
  const seriesIndex = new Map<string, number>();
  const fieldIndex = new Map<string, number>();
  const columns: LogColumns = { series: [], s: [], t: [], fields: [], v: [] };
  readings.forEach((reading, row) => {
    let s = seriesIndex.get(reading.seriesKey);
    if (s === undefined) {
      s = columns.series.length;
      seriesIndex.set(reading.seriesKey, s);
      columns.series.push({ key: reading.seriesKey, metric: reading.metric, tags: reading.tags });
    }
    columns.s.push(s);
    columns.t.push(reading.time);
    for (const { name, value } of reading.fields) {
      let f = fieldIndex.get(name);
      if (f === undefined) {
        f = columns.fields.length;
        fieldIndex.set(name, f);
        columns.fields.push(name);
        columns.v.push(new Array<number | null>(readings.length).fill(null));
      }
      columns.v[f]![row] = value;
    }
  });
  if (readings.some((reading) => reading.timeFromServer)) columns.serverTime = readings.map((reading) => (reading.timeFromServer ? 1 : 0));
  return columns;
}

/** The readings of an entry's columns, in the order sent (the inverse of {@link toColumns}). */
export function fromColumns(columns: LogColumns): Reading[] {
  const ids = columns.series.map((series) => seriesId(series.key));
  return columns.t.map((time, row) => {
    const series = columns.series[columns.s[row]!]!;
    const fields: Reading['fields'] = [];
    columns.fields.forEach((name, f) => {
      const value = columns.v[f]![row];
      if (value !== null && value !== undefined) fields.push({ name, value });
    });
    return {
      metric: series.metric,
      tags: series.tags,
      seriesKey: series.key,
      seriesId: ids[columns.s[row]!]!,
      time,
      timeFromServer: columns.serverTime?.[row] === 1,
      fields,
    };
  });
}

/**
 * The columns of a batch as one block of bytes: the BSON document of `columns`,
 * deflated (raw DEFLATE, RFC 1951, zlib level 1). A log entry keeps this block instead
 * of the columns themselves, so the database parses, compares and rewrites an entry as a
 * handful of fields: on the embedded server (SecantusDB 0.7.0b3), for 60 entries of
 * 1,000 flights, inserting took 0.23x the time of the plain columns, a backlog
 * aggregation 0.02x, reading them 0.01x, and stamping them folded 0.15x, in 16% of the
 * bytes (docs/design.md, "The ingest log entry"). Costs Node about 4 ms to
 * pack and 8 ms to unpack per 1,000 readings.
 */
export function packColumns(columns: LogColumns): Uint8Array {
  return deflateRawSync(BSON.serialize(columns), { level: 1 });
}

/**
 * The columns a block made by {@link packColumns} holds.
 * @throws Error when `block` is not such a block (a corrupted entry).
 */
export function unpackColumns(block: Uint8Array): LogColumns {
  return BSON.deserialize(inflateRawSync(block)) as LogColumns;
}
