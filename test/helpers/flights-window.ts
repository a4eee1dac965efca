/**
 * Reads a time window of `flights-3m.parquet` straight from the file, for tests: only the
 * row groups whose `date` statistics (min/max) overlap the window are decoded, so a
 * fortnight in spring costs two of the file's eleven row groups instead of reading
 * the file from its start. Shares no code with the server.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';

/** A flight of flights-3m: scheduled departure (ms since epoch, the file's naive timestamps taken as UTC), delay, distance, airports. */
export interface WindowFlight {
  time: number;
  delay: number;
  distance: number;
  origin: string;
  destination: string;
}

const asMs = (value: unknown): number => (value instanceof Date ? value.getTime() : Number(value) / 1000);

/** The flights with `from <= time < to` (ms since epoch), optionally only from `origins`, in file (time) order. */
export async function readFlightsWindow(from: number, to: number, origins?: readonly string[]): Promise<WindowFlight[]> {
  const entry = createRequire(import.meta.url).resolve('vega-datasets');
  const file = await asyncBufferFromFile(join(dirname(entry), '..', 'data', 'flights-3m.parquet'));
  const metadata = await parquetMetadataAsync(file);
  const wanted = origins === undefined ? undefined : new Set(origins);
  const flights: WindowFlight[] = [];
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rows = Number(group.num_rows);
    const stats = group.columns.find((column) => column.meta_data?.path_in_schema[0] === 'date')?.meta_data?.statistics;
    const min = stats?.min_value ?? stats?.min;
    const max = stats?.max_value ?? stats?.max;
    const overlaps = min === undefined || max === undefined || (asMs(min) < to && asMs(max) >= from);
    if (overlaps) {
      const read = (await parquetReadObjects({ file, metadata, compressors, rowStart, rowEnd: rowStart + rows })) as {
        date: Date;
        delay: bigint | number;
        distance: bigint | number;
        origin: string;
        destination: string;
      }[];
      for (const row of read) {
        const time = row.date.getTime();
        if (time < from || time >= to || (wanted !== undefined && !wanted.has(row.origin))) continue;
        flights.push({ time, delay: Number(row.delay), distance: Number(row.distance), origin: row.origin, destination: row.destination });
      }
    }
    rowStart += rows;
  }
  return flights;
}
