/**
 * The demo data of `npm run demo`: flights-20k, loaded through the server's own GraphQL
 * endpoint as any client would, on first start (and completed after an interrupted one).
 */
import { CountFlightsDocument } from '../client/generated/graphql.ts';
import { request } from '../client/request.ts';
import type { Logger } from '../logger.ts';
import { importFlights } from './import.ts';

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
 * than the demo (another import) is left as it is.
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
  let reported = 0;
  const result = await importFlights(url, {
    file: 'flights-20k',
    batchSize: 1000,
    concurrency: 2,
    onProgress: (recorded) => {
      if (recorded - reported >= 5000 || recorded === DEMO_FLIGHTS) {
        reported = recorded;
        logger.info(`  ${recorded}/${DEMO_FLIGHTS} flights recorded`);
      }
    },
  });
  logger.info(
    `Loaded ${result.recorded} flights in ${result.seconds.toFixed(1)} s (${Math.round(result.recorded / result.seconds)} readings/s)`,
  );
}
