/**
 * Brings the server's stored data to the explicit form of the current layout (see
 * `migrateLayout` in src/storage/migrate.ts): series-day documents written before
 * layout version 2 get `v: 1`, metric registry entries without optional statistics get
 * the configured default (SKETCH_LEVELS, LATEST_READINGS). Safe while the server runs;
 * running it again changes nothing.
 *
 *   npm run migrate                  # migrate, with progress, then print the report
 *   npm run migrate -- --dry-run     # layout versions and what would change; writes nothing
 *   npm run migrate -- --json        # the report as one JSON object
 *
 * Reaches the database like `npm run token`: MONGODB_URI (+ MONGODB_DB) when set;
 * otherwise the embedded database of a server running on EMBEDDED_DATA_DIR, or the
 * embedded database started for this command. Progress goes to stderr (a bar on a
 * terminal, a line every few seconds otherwise), the report to stdout.
 */
import { Command, InvalidArgumentError } from 'commander';
import { openToolStore, type ToolStore } from '../src/cli/database.ts';
import { createProgress } from '../src/cli/progress.ts';
import { ConfigError, loadConfig } from '../src/config.ts';
import { DEFAULT_MIGRATION_BATCH_SIZE, migrateLayout, pendingMigration } from '../src/storage/migrate.ts';

const positiveInt = (value: string) => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('expected a positive integer');
  return number;
};

const options = new Command()
  .name('migrate')
  .description('Stamp series-day documents with their layout version and give metrics explicit statistics settings.')
  .option('--dry-run', 'report layout versions and what would change; write nothing')
  .option('--batch <n>', 'series-day documents stamped per write', positiveInt, DEFAULT_MIGRATION_BATCH_SIZE)
  .option('--json', 'print the report as one JSON object')
  .parse()
  .opts<{ dryRun?: boolean; batch: number; json?: boolean }>();

const say = (message: string) => console.error(message);
const versionsText = (versions: Record<string, number>) =>
  Object.keys(versions).length === 0
    ? 'no series-day documents'
    : Object.entries(versions)
        .map(([version, count]) => `version ${version}: ${count}`)
        .join(', ');

let tool: ToolStore | undefined;
const bar = createProgress({ label: 'migrate', unit: 'documents stamped', say });
try {
  tool = await openToolStore(loadConfig(), say);
  if (options.dryRun) {
    const pending = await pendingMigration(tool.store);
    if (options.json) console.log(JSON.stringify({ dryRun: true, ...pending }));
    else {
      console.log(`Series-day documents in ${tool.where}: ${versionsText(pending.versions)}.`);
      console.log(`A migration would give ${pending.unstamped} documents without a layout version "v: 1" (their statistics unchanged)`);
      console.log(
        `and ${pending.metricsWithoutStatistics} metrics without statistics settings the configured default. Nothing was changed.`,
      );
    }
  } else {
    const report = await migrateLayout(tool.store, { batchSize: options.batch, onProgress: bar.update });
    bar.stop();
    if (options.json) console.log(JSON.stringify(report));
    else {
      console.log(`Migrated ${tool.where} in ${(report.elapsedMs / 1000).toFixed(1)} s:`);
      console.log(`  series-day documents before: ${versionsText(report.before)}`);
      console.log(`  series-day documents after:  ${versionsText(report.after)}`);
      console.log(`  stamped "v: 1": ${report.stamped} documents (statistics unchanged)`);
      console.log(`  given explicit statistics settings: ${report.metricsGivenStatistics} metrics`);
      console.log('Version-1 documents keep null first, last and percentiles: their readings were not stored, only aggregates.');
    }
  }
} catch (error) {
  bar.stop();
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exitCode = 2;
  } else {
    console.error(`migrate: ${(error as Error).message}`);
    process.exitCode = 1;
  }
} finally {
  await tool?.close();
}
