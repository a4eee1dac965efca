/**
 * The benchmark harness. A benchmark imports what it needs from here:
 * - `database.ts`: the database measured (`MONGODB_URI` or an embedded SecantusDB,
 *   thrown away or kept in a directory), scratch stores, collection sizes, the server
 *   and machine a report names;
 * - `app.ts`: the GraphQL app in process, requests to it, `extensions.reads` in words;
 * - `datasets.ts`, `tsbs.ts`: the dense (TSBS cpu-only) and sparse (flights) data sets;
 * - `loading.ts`: loading readings through the API with the server's folder, or through
 *   the record path to the state a day ends in, and the project's bytes at rest;
 * - `peers.ts`: the plain collection a user would build instead (one flat document per
 *   reading, `insertMany`, `$dateTrunc` pipelines), the plain loop that checks every
 *   answer, and answers compared (counts exactly, sums to a relative tolerance);
 * - `timing.ts`: taking turns, warm-ups, medians and percentiles;
 * - `table.ts`: number formats and Markdown tables;
 * - `cli.ts`: option parsers, the data set option and the progress log.
 *
 * A new benchmark is then a short file, for example:
 *
 *   const options = new Command().option('--runs <n>', 'timed runs', positiveInt, 5).parse().opts<{ runs: number }>();
 *   await withScratchStore('example', {}, async (store) => {
 *     const app = benchApp(store);
 *     const { a } = await takingTurns(() => graphqlBody(app, '{ metrics { name } }'), async () => null, options.runs);
 *     console.log(table(['query', 'median ms'], 'lr', [['metrics', format.ms(a!.median)]]).join('\n'));
 *   });
 */
export * from './app.ts';
export * from './cli.ts';
export * from './database.ts';
export * from './datasets.ts';
export * from './loading.ts';
export * from './peers.ts';
export * from './table.ts';
export * from './timing.ts';
export * from './tsbs.ts';
