/**
 * Brings the server's stored data to the explicit form of the current layout (see
 * `migrateLayout` in src/storage/migrate.ts): series-day documents written before
 * layout version 2 get `v: 1`, metric registry entries without optional statistics get
 * the configured default (SKETCH_LEVELS, LATEST_READINGS), and a database written before
 * the ingest log has its batch claims carried into the log and its batch marks removed
 * (src/storage/migrate-claims.ts). Safe while servers of this version run; stop the
 * servers of the version before the ingest log first. Running it again changes nothing.
 *
 *   npm run migrate                  # migrate, with progress, then print the report
 *   npm run migrate -- --dry-run     # layout versions, claims and what would change; writes nothing
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
import type { ClaimInProgress } from '../src/storage/migrate-claims.ts';

const positiveInt = (value: string) => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('expected a positive integer');
  return number;
};

const options = new Command()
  .name('migrate')
  .description(
    'Stamp series-day documents with their layout version, give metrics explicit statistics settings, and carry batch claims of the write path before the ingest log into the log.',
  )
  .option('--dry-run', 'report layout versions and what would change; write nothing')
  .option('--batch <n>', 'series-day documents stamped (or cleaned of batch marks) per write', positiveInt, DEFAULT_MIGRATION_BATCH_SIZE)
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

const decisionText: Record<ClaimInProgress['decision'], string> = {
  partial: 'carried as partly applied: a resend stores the readings of the other series-days',
  dropped: 'no document applied it: not carried, a resend stores the whole batch',
  inLog: 'the ingest log has an entry for this id already: left to it',
};
const inProgressLines = (claims: readonly ClaimInProgress[]) =>
  claims.map(
    (claim) =>
      `    ${claim.id} (received ${claim.receivedAt.toISOString()}, ${claim.readings} readings, applied by ${claim.documents} series-day documents): ${decisionText[claim.decision]}`,
  );

let tool: ToolStore | undefined;
const bar = createProgress({ label: 'migrate', unit: 'documents stamped', say });
const marksBar = createProgress({ label: 'migrate', unit: 'documents cleaned of batch marks', say });
try {
  tool = await openToolStore(loadConfig(), say);
  if (options.dryRun) {
    const pending = await pendingMigration(tool.store);
    if (options.json) console.log(JSON.stringify({ dryRun: true, ...pending }));
    else {
      console.log(`Series-day documents in ${tool.where}: ${versionsText(pending.versions)}.`);
      console.log(`A migration would give ${pending.unstamped} documents without a layout version "v: 1" (their statistics unchanged)`);
      console.log(`and ${pending.metricsWithoutStatistics} metrics without statistics settings the configured default.`);
      const { claims } = pending;
      console.log(
        `Batch claims of the write path before the ingest log: ${claims.claims}; a migration would carry ${claims.applied} of applied batches into the log (a resend answers alreadyApplied)${claims.inLog > 0 ? `, and leave ${claims.inLog} whose id the log holds already` : ''}.`,
      );
      if (claims.inProgress.length > 0) {
        console.log(`  ${claims.inProgress.length} claims in progress:`);
        for (const line of inProgressLines(claims.inProgress)) console.log(line);
      }
      console.log(`Series-day documents with batch marks to remove: ${claims.markedDocuments}. Nothing was changed.`);
    }
  } else {
    const report = await migrateLayout(tool.store, {
      batchSize: options.batch,
      onProgress: bar.update,
      onMarksProgress: (done, total) => {
        bar.stop();
        marksBar.update(done, total);
      },
    });
    bar.stop();
    marksBar.stop();
    if (options.json) console.log(JSON.stringify(report));
    else {
      console.log(`Migrated ${tool.where} in ${(report.elapsedMs / 1000).toFixed(1)} s:`);
      console.log(`  series-day documents before: ${versionsText(report.before)}`);
      console.log(`  series-day documents after:  ${versionsText(report.after)}`);
      console.log(`  stamped "v: 1": ${report.stamped} documents (statistics unchanged)`);
      console.log(`  given explicit statistics settings: ${report.metricsGivenStatistics} metrics`);
      const { claims } = report;
      console.log(
        `  batch claims carried into the ingest log: ${claims.carriedApplied} applied, ${claims.carriedPartial} partly applied; ${claims.dropped} in progress with nothing applied dropped; ${claims.inLog} already in the log; ${claims.claimsRemoved} claims removed`,
      );
      for (const line of inProgressLines(claims.inProgress)) console.log(line);
      if (claims.rollupDaysMarkedDirty > 0) console.log(`  rollup days marked dirty for a rebuild: ${claims.rollupDaysMarkedDirty}`);
      console.log(`  batch marks removed from ${report.marksRemoved} series-day documents`);
      console.log('Version-1 documents keep null first, last and percentiles: their readings were not stored, only aggregates.');
    }
  }
} catch (error) {
  bar.stop();
  marksBar.stop();
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
