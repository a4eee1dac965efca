/**
 * Imports real US flight records (npm package vega-datasets) into a running server
 * through GraphQL `recordReadings` mutations, with a progress bar (on a terminal; one
 * progress line every `--progress-every` seconds otherwise) and a final
 * readings-per-second figure.
 *
 *   npm run import:flights -- --file flights-20k
 *   npm run import:flights -- --file flights-3m --before 2001-02-01 --batch 1000
 *
 * Every batch carries a batch id derived from the file and its position, so an import
 * that was interrupted (Ctrl-C, a crash, the server going away) is completed by running
 * the same command again: batches already stored are not counted twice. Keep the same
 * `--batch` size when resuming (the ids depend on it).
 *
 * A server with AUTH=tokens needs a token of scope `write`: `--token` or TSGRAPH_TOKEN.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { importFlights } from '../src/importer/import.ts';
import { createImportProgress } from '../src/importer/progress.ts';

const positiveInt = (value: string) => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('expected a positive integer');
  return number;
};
const positiveSeconds = (value: string) => {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new InvalidArgumentError('expected a number of seconds above 0');
  return seconds;
};
const date = (value: string) => {
  const time = new Date(value);
  if (Number.isNaN(time.getTime())) throw new InvalidArgumentError('expected a date such as 2001-02-01');
  return time;
};

const program = new Command()
  .name('import-flights')
  .description('Import vega-datasets flights into a running server as metric "flights".')
  .addOption(new Option('--file <name>', 'which file').choices(['flights-20k', 'flights-3m']).default('flights-20k'))
  .option('--rows <n>', 'import at most n flights', positiveInt)
  .option('--before <date>', 'import only flights before this UTC date', date)
  .option('--batch <n>', 'readings per recordReadings call', positiveInt, 1000)
  .option('--concurrency <n>', 'requests in flight at once', positiveInt, 2)
  .option('--url <url>', 'GraphQL endpoint of the server', 'http://127.0.0.1:4000/graphql')
  .option('--token <token>', 'API token with the write scope (default: $TSGRAPH_TOKEN)', process.env.TSGRAPH_TOKEN)
  .option('--progress-every <seconds>', 'seconds between progress lines when the output is not a terminal', positiveSeconds, 5)
  .parse();

const options = program.opts<{
  file: 'flights-20k' | 'flights-3m';
  rows?: number;
  before?: Date;
  batch: number;
  concurrency: number;
  url: string;
  token?: string;
  progressEvery: number;
}>();

const progress = createImportProgress({ intervalMs: options.progressEvery * 1000 });
try {
  const result = await importFlights(options.url, {
    file: options.file,
    rows: options.rows,
    before: options.before,
    batchSize: options.batch,
    concurrency: options.concurrency,
    token: options.token,
    onProgress: (recorded, total) => progress.update(recorded, total),
  });
  progress.stop();
  console.log(
    `Imported ${result.recorded} readings from ${options.file} in ${result.seconds.toFixed(1)} s: ${Math.round(result.recorded / result.seconds)} readings/s (batches of ${options.batch}, ${options.concurrency} in flight).`,
  );
  if (result.alreadyApplied > 0)
    console.log(`${result.alreadyApplied} of them had been stored by an earlier run and were not counted again.`);
} catch (error) {
  progress.stop();
  console.error(`Import failed: ${(error as Error).message}`);
  process.exitCode = 1;
}
