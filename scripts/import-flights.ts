/**
 * Imports real US flight records (npm package vega-datasets) into a running server
 * through GraphQL `recordReadings` mutations. Progress is one line: readings sent, rate
 * and time left, redrawn in place on standard error when it is a terminal; otherwise a
 * plain line on standard output every `--progress-every` seconds, e.g.
 * `flights-20k: 4000/20000 readings sent (20%) | 1875 readings/s | 9s left`. Then one
 * summary line on standard output: readings, batches, seconds, rate and how many
 * readings an earlier run had already stored.
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
import { createProgress } from '../src/cli/progress.ts';
import { importFlights, importSummary } from '../src/importer/import.ts';

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

// On a terminal the bar goes to stderr, off redirected output; elsewhere the plain lines
// go to stdout, beside the summary.
const progress = createProgress({
  label: options.file,
  unit: 'readings sent',
  rateUnit: 'readings',
  terminal: process.stderr.isTTY === true,
  say: (line) => console.log(line),
  intervalMs: options.progressEvery * 1000,
});
try {
  const result = await importFlights(options.url, {
    file: options.file,
    rows: options.rows,
    before: options.before,
    batchSize: options.batch,
    concurrency: options.concurrency,
    token: options.token,
    onProgress: progress.update,
  });
  progress.stop();
  console.log(importSummary(options.file, result));
} catch (error) {
  progress.stop();
  console.error(`Import failed: ${(error as Error).message}`);
  process.exitCode = 1;
}
