/**
 * The benchmark harness. A benchmark imports what it needs from here:
 * - `database.ts`: the database measured (`MONGODB_URI` or a throw-away embedded
 *   SecantusDB), scratch stores, the server and machine a report names;
 * - `app.ts`: the GraphQL app in process, requests to it, serving it over HTTP;
 * - `commands.ts`: the commands a driver client sends (command monitoring);
 * - `datasets.ts`, `tsbs.ts`: the dense (TSBS cpu-only) and sparse (flights) data sets;
 * - `models.ts`: the storage models compared (ours, naive, time-series);
 * - `queries.ts`: the benchmark queries, as GraphQL and as pipelines, and their answers compared;
 * - `peers.ts`: the plain collection a user would build instead (one flat document per
 *   reading, `insertMany`, `$dateTrunc` pipelines), the plain loop that checks every
 *   answer, and answers compared (counts exactly, sums to a relative tolerance);
 * - `bulk-load.ts`: loading readings through the API with the server's folder, through the
 *   record path or in bulk, comparing stores;
 * - `forms.ts`: two document forms compared: databases built, bytes at rest, reads timed;
 * - `timing.ts`: warm-ups, repetitions, taking turns, medians and percentiles;
 * - `table.ts`: number formats, Markdown tables, targets, the JSON under `bench-results/`;
 * - `cli.ts`: option parsers and the progress log.
 *
 * A new benchmark is then a short file, for example:
 *
 *   const options = new Command().option('--reps <n>', 'timed runs', positiveInt, 5).parse().opts<{ reps: number }>();
 *   await withScratchStore('example', {}, async (store) => {
 *     const app = benchApp(store);
 *     const { p50, p99 } = await latency(() => postGraphql(app, '{ metrics { name } }'), options.reps);
 *     console.log(table(['query', 'p50 ms', 'p99 ms'], 'lrr', [['metrics', format.ms(p50), format.ms(p99)]]).join('\n'));
 *   });
 */
export * from './app.ts';
export * from './bulk-load.ts';
export * from './cli.ts';
export * from './commands.ts';
export * from './database.ts';
export * from './datasets.ts';
export * from './forms.ts';
export * from './models.ts';
export * from './peers.ts';
export * from './queries.ts';
export * from './table.ts';
export * from './timing.ts';
export * from './tsbs.ts';
