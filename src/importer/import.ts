import { flightReading, readFlights20k, readFlights3m, type Flight, type FlightFile } from './flights.ts';
import { sendAll } from './send.ts';

/** What {@link importFlights} did. */
export interface ImportResult {
  /** Readings recorded, all of them stored. */
  recorded: number;
  /** Readings among them that an earlier run had already applied (not counted twice). */
  alreadyApplied: number;
  /** `recordReadings` requests that succeeded. */
  batches: number;
  /** Wall-clock seconds from the start to the last answer. */
  seconds: number;
}

/** Options of {@link importFlights}. */
export interface ImportOptions {
  file: FlightFile;
  /** Import at most this many flights (the whole file when omitted). */
  rows?: number;
  /** Import only flights before this time (flights-3m is in time order). */
  before?: Date;
  /** Readings per `recordReadings` call. */
  batchSize: number;
  /** Requests in flight at once. */
  concurrency: number;
  /** API token with scope `write` (needed unless the server runs with AUTH=off). */
  token?: string;
  /** Called with the number recorded so far and the total expected (when known): once with 0 at the start, then after every batch. */
  onProgress?: (recorded: number, total: number | undefined) => void;
}

async function* flightChunks(options: ImportOptions): AsyncGenerator<Flight[]> {
  if (options.file === 'flights-20k') {
    const flights = await readFlights20k(options.rows);
    yield options.before ? flights.filter((flight) => flight.time < options.before!) : flights;
    return;
  }
  yield* readFlights3m({ limit: options.rows, before: options.before });
}

/**
 * Imports flights from a `vega-datasets` file into the server at `url` as metric
 * `flights` (tags origin and destination, fields delay and distance) through
 * `recordReadings` mutations over HTTP. Every batch carries a deterministic batch id
 * (`<file>:<index of its first flight>+<size>`), so running an interrupted import again
 * with the same options completes it without counting any flight twice.
 * @returns readings recorded (all of them stored), how many of them an earlier run had
 * already applied, the batches sent and the wall-clock seconds it took.
 * @throws SendError when the server refuses a batch or stays unavailable (earlier
 * batches stay recorded; run the import again to complete it).
 */
export async function importFlights(url: string, options: ImportOptions): Promise<ImportResult> {
  const started = performance.now();
  const total = options.file === 'flights-20k' ? Math.min(20_000, options.rows ?? 20_000) : options.rows;
  let recorded = 0;
  let alreadyApplied = 0;
  let batches = 0;
  options.onProgress?.(0, total);
  for await (const flights of flightChunks(options)) {
    const base = recorded;
    const sent = await sendAll(url, flights.map(flightReading), {
      batchSize: options.batchSize,
      concurrency: options.concurrency,
      idPrefix: options.file,
      firstIndex: base,
      token: options.token,
      onProgress: (done) => options.onProgress?.(base + done, total),
    });
    recorded += sent.recorded;
    alreadyApplied += sent.alreadyApplied;
    batches += sent.batches;
  }
  return { recorded, alreadyApplied, batches, seconds: (performance.now() - started) / 1000 };
}

/**
 * The one line that sums up an import, e.g. `Imported 20000 readings from flights-20k in
 * 48.2 s: 20 batches, 415 readings/s, 0 already stored by an earlier run`.
 * @param what the name of what was imported (a file name such as `flights-20k`).
 */
export function importSummary(what: string, result: ImportResult): string {
  const rate = result.seconds > 0 ? Math.round(result.recorded / result.seconds) : 0;
  return `Imported ${result.recorded} readings from ${what} in ${result.seconds.toFixed(1)} s: ${result.batches} batches, ${rate} readings/s, ${result.alreadyApplied} already stored by an earlier run`;
}
