import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/slow-first-sequencer.ts';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 ships CommonJS (main) and ESM (module) builds. Node, and so the
    // server, graphql-yoga and Pothos, load the CommonJS one; Vite would hand the tests
    // the ESM one, and errors or schemas from one copy are not `instanceof` the other.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 600_000,
    maxWorkers: 2,
    // Each worker runs its test files one after the other in one process, importing the
    // server's modules once instead of once per file: about 12% off a whole run here
    // (460 s against 526 s of vitest, the same suite). Test files share no state through
    // modules: each opens its own database (a unique name) and closes what it opens.
    isolate: false,
    // The slowest files first, also on a fresh clone without vitest's cache of durations.
    sequence: { sequencer: SlowFirstSequencer },
  },
});
