/**
 * Keeps the benchmark script working: runs `scripts/bench/main.ts --quick` against the test
 * database server and checks it compared every model's answers and reported every
 * figure. (Its timings at this size mean nothing and are not asserted.)
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { testMongoUri } from '../helpers/db.ts';

const run = promisify(execFile);

describe('npm run bench -- --quick', () => {
  it('runs every model on both data sets with agreeing answers', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'bench-')), 'quick.json');
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/bench/main.ts', '--quick', '--out', out], {
      env: { ...process.env, MONGODB_URI: testMongoUri() },
      maxBuffer: 16 * 1024 * 1024,
    });
    const report = JSON.parse(readFileSync(out, 'utf8')) as {
      results: {
        data: { name: string; readings: number };
        models: {
          name: string;
          available: boolean;
          ingest: { readingsPerSecond: number }[];
          storage?: { bytesPerReading: number };
          queries: Record<string, { p50: number }>;
        }[];
        queries: { name: string; agree: boolean }[];
        scaling: unknown[];
        overhead?: { buckets: number };
      }[];
    };
    expect(report.results.map((r) => r.data.name)).toEqual(['dense', 'sparse']);
    for (const result of report.results) {
      expect(result.queries.length).toBeGreaterThanOrEqual(5);
      expect(result.queries.filter((q) => !q.agree)).toEqual([]);
      const ours = result.models.find((m) => m.name === 'ours')!;
      const naive = result.models.find((m) => m.name === 'naive')!;
      expect(naive.available).toBe(true);
      for (const model of [ours, naive]) {
        expect(model.ingest.map((i) => i.readingsPerSecond > 0)).toEqual([true, true, true]);
        expect(model.storage!.bytesPerReading).toBeGreaterThan(0);
        expect(Object.keys(model.queries).sort()).toEqual(result.queries.map((q) => q.name).sort());
      }
      expect(result.scaling).toHaveLength(4);
      expect(result.overhead!.buckets).toBe(1440);
    }
    expect(stdout).toContain('**Targets**');
  }, 600_000);
});
