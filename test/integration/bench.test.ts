/**
 * Keeps the reads benchmark working: runs `scripts/bench/read-peers.ts` on a tiny data
 * set (1,500 flights, 2 TSBS hosts over an hour, one run) against the test database
 * server and checks that it asked every question of both data sets and that every
 * answer agreed with the plain loop. (Its timings at this size mean nothing and are not
 * asserted.)
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { testMongoUri } from '../helpers/db.ts';

const run = promisify(execFile);

describe('npm run bench:read-peers on a tiny data set', () => {
  it('asks every question of both sides and every answer agrees with the plain loop', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'scripts/bench/read-peers.ts', '--rows', '1500', '--hosts', '2', '--hours', '1', '--runs', '1'],
      { env: { ...process.env, MONGODB_URI: testMongoUri() }, maxBuffer: 16 * 1024 * 1024 },
    );
    // The question rows: name, description, the figures, then the check of the answers.
    const rows = stdout.split('\n').filter((line) => /^\| [a-z0-9_-]+: .*\| (agree|DIFFER)/.test(line));
    const names = rows.map((line) => line.slice(2, line.indexOf(':')));
    expect(names.filter((name) => name.startsWith('zoned-'))).toHaveLength(6);
    expect(names).toContain('top-10-origins');
    expect(names).toContain('double-groupby-all');
    expect(names).toContain('lastpoint');
    expect(names).toContain('last-hour-1-1');
    expect(names).toContain('minute-3h-5-origins');
    expect(rows).toHaveLength(28);
    expect(rows.filter((line) => !/\| agree \([0-9,]+ values(, the plain collection's)?\) \|$/.test(line))).toEqual([]);
    // Questions the project cannot ask say so, with the plain figure beside them.
    expect(stdout).toContain('- high-cpu-1: n/a for the project');
  }, 300_000);
});
