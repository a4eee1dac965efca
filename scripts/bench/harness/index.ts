/**
 * The benchmark harness: the database measured (`database.ts`), the app in process
 * (`app.ts`), loading and comparing stores (`bulk-load.ts`), the commands a client sends (`commands.ts`), the data sets (`datasets.ts`,
 * `tsbs.ts`), the storage models compared (`models.ts`), the benchmark queries
 * (`queries.ts`), timing (`timing.ts`), tables and results (`table.ts`) and the command
 * line (`cli.ts`). A benchmark imports what it needs from here.
 */
export * from './app.ts';
export * from './bulk-load.ts';
export * from './cli.ts';
export * from './commands.ts';
export * from './database.ts';
export * from './datasets.ts';
export * from './models.ts';
export * from './queries.ts';
export * from './table.ts';
export * from './timing.ts';
export * from './tsbs.ts';
