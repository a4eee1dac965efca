/**
 * Defines, lists, builds and removes rollups (see docs/rollups.md).
 *
 *   npm run rollups -- list
 *   npm run rollups -- define flights by_origin origin      # tag keys after the name; none: the whole metric
 *   npm run rollups -- backfill flights by_origin           # build it from the stored data now, with progress
 *   npm run rollups -- rebuild                              # one maintenance pass: build and rebuild what is due
 *   npm run rollups -- drop flights by_origin
 *
 * A running server builds defined rollups and rebuilds dirty days on its own every
 * ROLLUP_REBUILD_SECONDS; `backfill` does it at once and shows progress (a bar on a
 * terminal, a line every few seconds otherwise). It first waits ROLLUP_REBUILD_GRACE_MS
 * after the definition, so batches that started before the rollup existed have finished.
 * Reaches the database like `npm run migrate`.
 */
import { Command } from 'commander';
import { withToolStore, type ToolStore } from '../src/cli/database.ts';
import { createProgress } from '../src/cli/progress.ts';
import { loadConfig } from '../src/config.ts';
import { parseRollupDefinition } from '../src/engine/query.ts';
import { backfillRollup, createRollup, dropRollup, findRollups, rebuildDirtyDays } from '../src/storage/rollups.ts';

const config = loadConfig();
const say = (message: string) => console.error(message);

/** Runs one command on the store (see `withToolStore`). */
const run = (work: (tool: ToolStore) => Promise<void>) => withToolStore('rollups', config, say, work);

const program = new Command().name('rollups').description('Define, build, list and remove rollups.');

program
  .command('list')
  .description('every rollup: metric, name, tag keys, state and dirty days')
  .action(() =>
    run(async ({ store }) => {
      const rollups = await findRollups(store);
      if (rollups.length === 0) console.log('No rollups.');
      for (const rollup of rollups) {
        const dirty = Object.keys(rollup.dirty ?? {}).length;
        console.log(
          `${rollup.metric}/${rollup.name} [${rollup.tagKeys.join(', ')}] ${rollup.state}, ${dirty} dirty days, collection ${rollup.collection}`,
        );
      }
    }),
  );

program
  .command('define <metric> <name> [tagKeys...]')
  .description('define a rollup of <metric> over [tagKeys] (none: the whole metric); build it with `backfill`')
  .action((metric: string, name: string, tagKeys: string[]) =>
    run(async ({ store }) => {
      const rollup = await createRollup(store, parseRollupDefinition({ metric, name, tagKeys }));
      console.log(`Defined ${rollup._id} over [${rollup.tagKeys.join(', ')}]; it is building until backfilled.`);
    }),
  );

program
  .command('backfill <metric> <name>')
  .description('build the rollup from the stored data now and make it ready')
  .action((metric: string, name: string) =>
    run(async ({ store }) => {
      const started = performance.now();
      const bar = createProgress({ label: 'rollups', unit: 'days rebuilt', say });
      const outcome = await backfillRollup(store, metric, name, { graceMs: config.ROLLUP_REBUILD_GRACE_MS, onProgress: bar.update });
      bar.stop();
      console.log(
        `Backfilled ${metric}/${name} in ${((performance.now() - started) / 1000).toFixed(1)} s: ${outcome.rebuilt} days built, ${outcome.dirty} still dirty (marked by recent batches; the server rebuilds them).`,
      );
    }),
  );

program
  .command('rebuild')
  .description('one maintenance pass: backfill building rollups, rebuild dirty days that have rested')
  .action(() =>
    run(async ({ store }) => {
      const outcome = await rebuildDirtyDays(store, config.ROLLUP_REBUILD_GRACE_MS);
      console.log(`${outcome.rebuilt} days rebuilt, ${outcome.dirty} still dirty.`);
    }),
  );

program
  .command('drop <metric> <name>')
  .description('remove the rollup and its documents')
  .action((metric: string, name: string) =>
    run(async ({ store }) => {
      console.log((await dropRollup(store, metric, name)) ? `Dropped ${metric}/${name}.` : `No rollup ${metric}/${name}.`);
    }),
  );

await program.parseAsync();
