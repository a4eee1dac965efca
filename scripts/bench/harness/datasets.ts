/**
 * The two benchmark data sets, as plain readings in time order:
 * - dense: TSBS cpu-only (see `tsbs.ts`), default 100 hosts x 1 day every 10 s;
 * - sparse: real flights of `vega-datasets` `flights-3m.parquet`, default January 2001.
 */
import { readFlights3m } from '../../../src/importer/flights.ts';
import { sortTags } from '../../../src/model/series.ts';
import { type Reading, type ReadingInput, validateReadings } from '../../../src/record/validate.ts';
import { CPU_FIELDS, generateCpu, type PlainReading } from './tsbs.ts';

/** One reading of a data set: metric, sorted tags, time in ms since epoch (UTC), fields by name. */
export type { PlainReading };

/**
 * A plain reading as a client sends it (GraphQL `ReadingInput`): fields as a list of
 * `{name, value}`. Its `time` is a Date, which JSON turns into the ISO-8601 string the
 * API takes.
 */
export function readingInput(reading: PlainReading): ReadingInput {
  return {
    metric: reading.metric,
    tags: reading.tags,
    time: new Date(reading.time),
    fields: Object.entries(reading.fields).map(([name, value]) => ({ name, value })),
  };
}

/** A loaded data set and how to describe and query it. */
export interface DataSet {
  name: 'dense' | 'sparse';
  description: string;
  readings: PlainReading[];
  /** [first, last + 1 minute) of the readings, ms since epoch. */
  from: number;
  to: number;
  /** The tag that identifies "one host" / "one airport" in queries. */
  entityTag: 'hostname' | 'origin';
  /** Entities to query, most frequent first (hosts in order; airports by number of flights). */
  entities: string[];
  fields: string[];
}

function span(readings: readonly PlainReading[]): { from: number; to: number } {
  let from = Infinity;
  let to = -Infinity;
  for (const reading of readings) {
    if (reading.time < from) from = reading.time;
    if (reading.time > to) to = reading.time;
  }
  return { from: from - (from % 60_000), to: to - (to % 60_000) + 60_000 };
}

/** TSBS cpu-only: `hosts` hosts x `hours` hours (fractions allowed), one reading per host every 10 s. */
export function denseDataSet(hosts: number, hours: number): DataSet {
  const readings: PlainReading[] = [];
  for (const chunk of generateCpu({ hosts, durationMs: hours * 3_600_000 })) readings.push(...chunk);
  return {
    name: 'dense',
    description: `TSBS cpu-only, ${hosts} hosts x ${hours >= 1 ? `${hours} h` : `${Math.round(hours * 60)} min`} every 10 s (${readings.length.toLocaleString('en-US')} readings), 10 tags and 10 fields per reading`,
    readings,
    ...span(readings),
    entityTag: 'hostname',
    entities: Array.from({ length: hosts }, (_, i) => `host_${i}`),
    fields: [...CPU_FIELDS],
  };
}

/** Real flights from flights-3m.parquet before `before` (at most `rows` read), only those from `origins` when given. */
export async function sparseDataSet(before: Date, rows?: number, origins?: ReadonlySet<string>): Promise<DataSet> {
  const readings: PlainReading[] = [];
  for await (const chunk of readFlights3m({ before, limit: rows })) {
    for (const flight of chunk) {
      if (origins !== undefined && !origins.has(flight.origin)) continue;
      readings.push({
        metric: 'flights',
        tags: sortTags([
          { key: 'origin', value: flight.origin },
          { key: 'destination', value: flight.destination },
        ]),
        time: flight.time.getTime(),
        fields: { delay: flight.delay, distance: flight.distance },
      });
    }
  }
  const counts = new Map<string, number>();
  for (const reading of readings) {
    const origin = reading.tags.find((tag) => tag.key === 'origin')!.value;
    counts.set(origin, (counts.get(origin) ?? 0) + 1);
  }
  const { from, to } = span(readings);
  return {
    name: 'sparse',
    description: `flights-3m.parquet, ${readings.length.toLocaleString('en-US')} real US flights${origins === undefined ? '' : ` from ${[...origins].join(', ')}`} ${new Date(from).toISOString().slice(0, 10)} to ${new Date(to - 1).toISOString().slice(0, 10)}, tags origin and destination, fields delay and distance`,
    readings,
    from,
    to,
    entityTag: 'origin',
    entities: [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([origin]) => origin),
    fields: ['delay', 'distance'],
  };
}

/**
 * Plain readings validated as the record path does (series keys and ids computed),
 * ready for `recordBatch`; no batch size limit.
 * @throws Error when a reading is invalid.
 */
export const validated = (readings: readonly PlainReading[]): Reading[] =>
  validateReadings(readings.map(readingInput), { maxBatchSize: Infinity, receivedAt: 0 });
