/**
 * Shows and applies the metrics' retention policies (see docs/retention.md).
 *
 *   npm run retention -- list                          # every metric's policy and where each level begins
 *   npm run retention -- set cpu --minutes 30 --hours 365   # omitted levels: forever
 *   npm run retention -- apply                         # one retention pass now, over every metric
 *   npm run retention -- apply --metric cpu            # only this metric
 *
 * A running server applies the policies on its own every RETENTION_SECONDS; `apply` does
 * it at once (with RETENTION_SECONDS=0, it is the only way). Reaches the database like
 * `npm run migrate`.
 */
import { Command } from 'commander';
import { withToolStore, type ToolStore } from '../src/cli/database.ts';
import { loadConfig } from '../src/config.ts';
import { parseMetricName } from '../src/engine/query.ts';
import { detailFrom, horizonsOf, parseRetentionPolicy } from '../src/model/retention-policy.ts';
import { applyRetention, setRetention } from '../src/storage/expire.ts';

const config = loadConfig();
const say = (message: string) => console.error(message);

/** Runs one command on the store (see `withToolStore`). */
const run = (work: (tool: ToolStore) => Promise<void>) => withToolStore('retention', config, say, work);

const days = (value: number | null) => (value === null ? 'forever' : `${value} d`);
const since = (ms: number | null) => (ms === null ? 'all kept' : `from ${new Date(ms).toISOString().slice(0, 10)}`);
const wholeDays = (text: string) => {
  const value = Number(text);
  if (!Number.isInteger(value)) throw new Error(`"${text}" is not a whole number of days`);
  return value;
};

const program = new Command().name('retention').description("Show, set and apply the metrics' retention policies.");

program
  .command('list')
  .description('every metric with a policy: minutes, hours and days kept, and where each level begins')
  .action(() =>
    run(async ({ store }) => {
      const metrics = await store.metrics
        .find({ retention: { $exists: true } })
        .sort({ _id: 1 })
        .toArray();
      if (metrics.length === 0) console.log('No retention policies: every metric keeps everything.');
      for (const metric of metrics) {
        const { policy, horizons } = metric.retention!;
        const from = detailFrom(horizonsOf(horizons));
        console.log(
          `${metric._id}: minutes ${days(policy.minutes)} (${since(from.minute)}), hours ${days(policy.hours)} (${since(from.hour)}), days ${days(policy.days)} (${since(from.day)})`,
        );
      }
    }),
  );

program
  .command('set <metric>')
  .description('set the policy of <metric>; levels not given are kept forever')
  .option('--minutes <days>', 'days the minute slots are kept', wholeDays)
  .option('--hours <days>', 'days the hour slots are kept', wholeDays)
  .option('--days <days>', 'days the day documents are kept', wholeDays)
  .action((metric: string, options: { minutes?: number; hours?: number; days?: number }) =>
    run(async ({ store }) => {
      const policy = parseRetentionPolicy(options);
      await setRetention(store, parseMetricName(metric, 'metric'), policy);
      console.log(
        `${metric}: minutes ${days(policy.minutes)}, hours ${days(policy.hours)}, days ${days(policy.days)}; applied by the next pass.`,
      );
    }),
  );

program
  .command('apply')
  .description('one retention pass now: remove what the policies no longer keep')
  .option('--metric <metric>', 'only this metric')
  .action((options: { metric?: string }) =>
    run(async ({ store }) => {
      const started = performance.now();
      const metric = options.metric === undefined ? undefined : parseMetricName(options.metric, 'metric');
      const removed = await applyRetention(store, Date.now(), { metric });
      for (const entry of removed) {
        console.log(
          `${entry.metric} ${entry.level}: before ${entry.horizon.toISOString().slice(0, 10)}, ${entry.documents} documents, ${entry.rollupDocuments} rollup documents`,
        );
      }
      console.log(`${removed.length === 0 ? 'Nothing due' : 'Done'} in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
    }),
  );

await program.parseAsync();
