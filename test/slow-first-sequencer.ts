import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Test files that take the longest here (25 s to 90 s each in a fresh clone,
 * 2026-11-27 and 2026-12-01), longest first, as paths under `test/` without `.test.ts`. A file that is
 * renamed or gone only loses its place.
 */
const SLOW_FIRST = [
  'integration/raw-form',
  'integration/flights-correctness',
  'integration/zones',
  'integration/statistics',
  'integration/bench',
  'fault/fold-steps',
  'integration/embedded-lifecycle',
  'fault/graceful-shutdown',
  'fault/exactly-once',
  'integration/zone-starts',
  'integration/compaction',
  'fault/scale-out',
  'integration/upgrade',
];

/** Where `spec` stands in {@link SLOW_FIRST}, or after all of them. */
function rank(spec: TestSpecification): number {
  const path = spec.moduleId.replaceAll('\\', '/');
  const index = SLOW_FIRST.findIndex((name) => path.endsWith(`/test/${name}.test.ts`));
  return index === -1 ? SLOW_FIRST.length : index;
}

/**
 * Starts the slowest test files first. Vitest orders files by the durations of the last
 * run, which it caches in `node_modules`; a fresh clone has no cache, and vitest then
 * starts the largest files first, so a slow small file (the benchmark's smoke test) could
 * start last and run alone while the other worker idles. Files not listed keep vitest's
 * order (the sort is stable).
 */
export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
