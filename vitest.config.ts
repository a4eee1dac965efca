import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

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
  },
});
