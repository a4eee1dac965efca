import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { UTCDate } from '@date-fns/utc';
import { parse } from 'date-fns';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';

/** One US domestic flight of the `vega-datasets` flight records (2001). */
export interface Flight {
  /** Scheduled departure, to the minute, taken as UTC. */
  time: Date;
  /** Departure delay in minutes (negative: early). */
  delay: number;
  /** Distance in miles. */
  distance: number;
  /** Origin airport code, e.g. `LAS`. */
  origin: string;
  /** Destination airport code, e.g. `PHL`. */
  destination: string;
}

/** The bundled flight files: 20,000 flights (Jan-Mar 2001, JSON) or 3 million (Jan-Jun 2001, Parquet). */
export type FlightFile = 'flights-20k' | 'flights-3m';

/** Absolute path of a data file shipped in the `vega-datasets` npm package. */
export function vegaDataPath(name: string): string {
  const entry = createRequire(import.meta.url).resolve('vega-datasets');
  return join(dirname(entry), '..', 'data', name);
}

/**
 * Reads `flights-20k.json`: its dates look like `2001/01/13 14:56`, parsed as UTC.
 * @param limit read at most this many flights (all when omitted).
 */
export async function readFlights20k(limit?: number): Promise<Flight[]> {
  const raw = JSON.parse(await readFile(vegaDataPath('flights-20k.json'), 'utf8')) as {
    date: string;
    delay: number;
    distance: number;
    origin: string;
    destination: string;
  }[];
  const reference = new UTCDate(0);
  return raw.slice(0, limit).map((row) => ({
    time: new Date(parse(row.date, 'yyyy/MM/dd HH:mm', reference).getTime()),
    delay: row.delay,
    distance: row.distance,
    origin: row.origin,
    destination: row.destination,
  }));
}

/**
 * The first row of the first row group of `metadata` that may hold a date at or after
 * `after`, from the row groups' `date` statistics (0 when they have none).
 */
function firstRowFrom(metadata: Awaited<ReturnType<typeof parquetMetadataAsync>>, after: Date): number {
  let row = 0;
  for (const group of metadata.row_groups) {
    const stats = group.columns.find((column) => column.meta_data?.path_in_schema[0] === 'date')?.meta_data?.statistics;
    const max = stats?.max_value ?? stats?.max;
    if (!(max instanceof Date) || max.getTime() >= after.getTime()) return row;
    row += Number(group.num_rows);
  }
  return row;
}

/**
 * Reads `flights-3m.parquet` (zstd) in chunks of row groups, yielding arrays of flights.
 * Its timestamps carry no time zone and are taken as UTC.
 * @param limit read at most this many flights (all 3 million when omitted).
 * @param before read only flights before this time (the file is in time order).
 * @param after read only flights at or after this time; row groups that end before it
 * are skipped by their statistics, not read.
 */
export async function* readFlights3m(options: { limit?: number; before?: Date; after?: Date } = {}): AsyncGenerator<Flight[]> {
  const file = await asyncBufferFromFile(vegaDataPath('flights-3m.parquet'));
  const metadata = await parquetMetadataAsync(file);
  const total = Math.min(Number(metadata.num_rows), options.limit ?? Infinity);
  const chunk = 100_000;
  const first = options.after === undefined ? 0 : firstRowFrom(metadata, options.after);
  for (let rowStart = first; rowStart < total; rowStart += chunk) {
    const rows = (await parquetReadObjects({
      file,
      metadata,
      compressors,
      rowStart,
      rowEnd: Math.min(total, rowStart + chunk),
    })) as { date: Date; delay: bigint | number; distance: bigint | number; origin: string; destination: string }[];
    const flights: Flight[] = [];
    for (const row of rows) {
      if (options.after && row.date < options.after) continue;
      if (options.before && row.date >= options.before) {
        if (flights.length > 0) yield flights;
        return;
      }
      flights.push({
        time: row.date,
        delay: Number(row.delay),
        distance: Number(row.distance),
        origin: row.origin,
        destination: row.destination,
      });
    }
    yield flights;
  }
}

/**
 * A flight as a reading of metric `flights`: tags `origin` and `destination`, fields
 * `delay` (minutes) and `distance` (miles), in the JSON shape of the GraphQL `ReadingInput`.
 */
export function flightReading(flight: Flight) {
  return {
    metric: 'flights',
    tags: [
      { key: 'origin', value: flight.origin },
      { key: 'destination', value: flight.destination },
    ],
    time: flight.time.toISOString(),
    fields: [
      { name: 'delay', value: flight.delay },
      { name: 'distance', value: flight.distance },
    ],
  };
}
