/**
 * What a fold costs the server's own process, without a database: planning a fold's
 * readings into series-day writes (`planReadings`, every level, the default statistics
 * settings) and making the part documents of those writes (`foldDocuments`, the server's
 * default document forms), then encoding them to BSON as the driver does before an
 * insert, and adding up the fold's day summaries with their day sketches
 * (`summarizeDays`; their BSON sizes, summaries and sketches apart, are printed). Dense TSBS cpu-only readings (10 fields each, every 10 s) of `--hosts` hosts, as
 * many as one fold takes by default (`FOLD_MAX_READINGS`, 20,000), in time order, so 20
 * hosts make parts of 1,000 readings and 100 hosts parts of 200. Medians of `--reps` runs
 * after one warm-up, in ms per fold and in readings per second of the four steps
 * together: the bound the process puts on the fold's rate whatever the database's speed.
 *
 *   npm run bench:fold-plan                          # 20 and 100 hosts, 20,000 readings
 *   npm run bench:fold-plan -- --hosts 20,100,1000 --readings 20000 --reps 9
 */
import { serialize } from 'bson';
import { Command } from 'commander';
import { NO_HORIZONS } from '../../src/model/retention-policy.ts';
import { DEFAULT_STATISTICS } from '../../src/model/statistics-settings.ts';
import { describeMachine, format, generateCpu, type PlainReading, positiveInt, table, validated, warmedRuns } from './harness/index.ts';
import { DEFAULT_PACKED_MINUTES, DEFAULT_RAW_READINGS } from '../../src/documents/series-day.ts';
import { summarizeDays, type SummarizedDocument, storedSummaries } from '../../src/documents/summaries.ts';
import { foldDocuments } from '../../src/documents/encode.ts';
import { planReadings } from '../../src/documents/from-readings.ts';

/** Parses `--hosts`: positive integers separated by commas. */
const hostCounts = (value: string): number[] => value.split(',').map((count) => positiveInt(count.trim()));

const given = new Command()
  .name('bench:fold-plan')
  .description("A fold's planning, part documents and BSON encoding in the server's process, per fold of dense readings.")
  .option('--hosts <list>', 'host counts to measure, separated by commas', hostCounts, [20, 100])
  .option('--readings <n>', 'readings per fold (FOLD_MAX_READINGS)', positiveInt, 20_000)
  .option('--reps <n>', 'timed runs per host count (after one warm-up)', positiveInt, 9)
  .parse()
  .opts<{ hosts: number[]; readings: number; reps: number }>();

const settings = { settingsOf: () => DEFAULT_STATISTICS, horizonsOf: () => NO_HORIZONS };
const forms = { rawReadings: DEFAULT_RAW_READINGS, packedMinutes: DEFAULT_PACKED_MINUTES };

const rows: string[][] = [];
for (const hosts of given.hosts) {
  const plain: PlainReading[] = [];
  for (const chunk of generateCpu({ hosts, durationMs: Math.ceil(given.readings / hosts) * 10_000 })) plain.push(...chunk);
  const readings = validated(plain.slice(0, given.readings));
  const plan = await warmedRuns(() => planReadings(readings, settings), given.reps);
  const documents = await warmedRuns(() => foldDocuments(plan.result.days, 1, forms), given.reps);
  const bson = await warmedRuns(() => documents.result.reduce((bytes, doc) => bytes + serialize(doc).length, 0), given.reps);
  const summaries = await warmedRuns(() => summarizeDays(documents.result as unknown as SummarizedDocument[], 1), given.reps);
  const stored = storedSummaries(summaries.result);
  const bytesOf = (docs: readonly object[]) => docs.reduce((bytes, doc) => bytes + serialize(doc).length, 0);
  const total = plan.median + documents.median + bson.median + summaries.median;
  rows.push([
    format.count(hosts),
    format.count(readings.length),
    format.count(documents.result.length),
    format.bytes(bson.result / documents.result.length),
    format.ms(plan.median),
    format.ms(documents.median),
    format.ms(bson.median),
    format.ms(summaries.median),
    format.bytes(bytesOf(stored.summaries)),
    format.bytes(bytesOf(stored.sketches)),
    format.rate((readings.length / total) * 1000),
  ]);
}

console.log(
  `## A fold's work in the server's process\n\n_${new Date().toISOString().slice(0, 10)}; ${describeMachine()}; medians of ${given.reps} runs_\n`,
);
console.log(
  table(
    [
      'hosts',
      'readings',
      'parts',
      'BSON per part',
      'plan ms',
      'documents ms',
      'BSON ms',
      'day summary ms',
      'summary bytes',
      'day sketches bytes',
      'readings/s of the four',
    ],
    'rrrrrrrrrrr',
    rows,
  ).join('\n'),
);
