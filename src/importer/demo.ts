/**
 * The demo data of `npm run demo`: flights-20k, loaded through the server's own GraphQL
 * endpoint as any client would, on first start (and completed after an interrupted one).
 */
import { createProgress } from '../cli/progress.ts';
import { CountFlightsDocument } from '../client/generated/graphql.ts';
import { request } from '../client/request.ts';
import type { Logger } from '../logger.ts';
import { importFlights, importSummary } from './import.ts';

/** Flights in flights-20k. */
export const DEMO_FLIGHTS = 20_000;

/**
 * Counts the flights already recorded (metric `flights`, all time) with the `CountFlights`
 * query of `operations.graphql` to `url`.
 * @throws Error when the server answers with errors.
 */
async function recordedFlights(url: string): Promise<number> {
  try {
    const { aggregate } = await request(CountFlightsDocument, {}, { url });
    return aggregate[0]?.count ?? 0;
  } catch (error) {
    throw new Error(`Could not count the demo flights: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Loads flights-20k through the GraphQL endpoint `url` unless it is loaded already.
 * Batch ids make the import resumable: after an interrupted first start, loading again
 * completes the demo without counting a flight twice. A database holding more flights
 * than the demo (another import) is left as it is. While loading it shows one progress
 * line (readings sent, rate, time left; see `cli/progress.ts`): redrawn on standard error
 * when it is a terminal, otherwise logged every 5 seconds. Then it logs the summary:
 * readings, batches, seconds, rate and how many an interrupted start had already stored.
 * @throws Error when the flights cannot be counted, SendError when a batch is refused.
 */
export async function loadDemoData(url: string, logger: Logger): Promise<void> {
  const already = await recordedFlights(url);
  if (already === DEMO_FLIGHTS) {
    logger.info(`Demo data already loaded: ${already} flights`);
    return;
  }
  if (already > DEMO_FLIGHTS) {
    logger.warn(
      `The database holds ${already} flights, more than the ${DEMO_FLIGHTS} of the demo; left as is. Stop the server and delete the embedded data directory to load the demo afresh.`,
    );
    return;
  }
  logger.info(
    already > 0
      ? `Completing the demo data: ${already} of ${DEMO_FLIGHTS} flights are loaded (an earlier start was interrupted)`
      : `Loading ${DEMO_FLIGHTS} real US flights (vega-datasets flights-20k, Jan-Mar 2001) through ${url}`,
  );
  // The log lines above are written by the logger's worker: let them out before a bar is drawn.
  if (process.stderr.isTTY) await new Promise<void>((done) => logger.flush(() => done()));
  const progress = createProgress({
    label: 'flights-20k',
    unit: 'readings sent',
    rateUnit: 'readings',
    say: (line) => logger.info(line),
  });
  try {
    const result = await importFlights(url, { file: 'flights-20k', batchSize: 1000, concurrency: 2, onProgress: progress.update });
    progress.stop();
    logger.info(importSummary('flights-20k', result));
  } finally {
    progress.stop();
  }
}
