/**
 * The progress display of the flights importer, the demo and the database tools
 * (src/cli/progress.ts) when its output is not a terminal: a plain line every few
 * seconds (here every few milliseconds) with the readings sent, the rate and the time
 * left; then `npm run import:flights` prints one summary line. Lines of a piped run of
 * `npm run import:flights -- --rows 4000 --progress-every 2` after an earlier run had
 * stored the first 3000 flights:
 *
 *   flights-20k: 0/4000 readings sent (0%) | 0 readings/s | ? left
 *   flights-20k: 3000/4000 readings sent (75%) | 1499 readings/s | 1s left
 *   flights-20k: 3000/4000 readings sent (75%) | 748 readings/s | 1s left
 *   flights-20k: 3000/4000 readings sent (75%) | 499 readings/s | 2s left
 *   flights-20k: 4000/4000 readings sent (100%) | 640 readings/s | 0s left
 *   Imported 4000 readings from flights-20k in 6.2 s: 4 batches, 640 readings/s, 3000 already stored by an earlier run
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProgress, formatDuration } from '../../src/cli/progress.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A progress line of a known total: `flights-20k: 4000/20000 readings sent (20%) | 1875 readings/s | 9s left`. */
const LINE = /^flights-20k: (\d+)\/(\d+) readings sent \((\d+)%\) \| (\d+) readings\/s \| (\?|\d+s|\d+m \d\ds|\d+h \d\dm) left$/;

/** The summary line of `npm run import:flights`. */
const SUMMARY =
  /^Imported (\d+) readings from flights-20k in (\d+\.\d) s: (\d+) batches, (\d+) readings\/s, (\d+) already stored by an earlier run$/;

/** The escape character that starts every terminal control sequence (cursor moves, colours). */
const ESC = String.fromCharCode(27);

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('progress on a stream that is not a terminal', () => {
  it('writes a plain line per interval, then the final state, without terminal escapes', async () => {
    const stream = new PassThrough();
    let output = '';
    stream.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const progress = createProgress({ label: 'flights-20k', unit: 'readings sent', rateUnit: 'readings', stream, intervalMs: 30 });
    const started = performance.now();
    for (let recorded = 0; recorded <= 1000; recorded += 100) {
      progress.update(recorded, 1000);
      await sleep(20);
    }
    progress.stop();
    progress.stop();
    const elapsed = performance.now() - started;

    expect(output.includes(ESC)).toBe(false); // no cursor movement or colours
    const lines = output.split('\n');
    expect(lines.pop()).toBe(''); // ends with a newline, no empty line before it
    // The first state, at least two lines of the timer, the last state; the timer never
    // writes faster than its interval of 30 ms (11 updates in about 220 ms, longer on a
    // busy machine: at most one timer line per 30 ms that passed).
    expect(lines.length).toBeGreaterThanOrEqual(4);
    expect(lines.length).toBeLessThanOrEqual(2 + Math.floor(elapsed / 30));
    expect(lines[0]).toBe('flights-20k: 0/1000 readings sent (0%) | 0 readings/s | ? left');
    let previous = -1;
    for (const line of lines) {
      const match = LINE.exec(line);
      expect(match, line).not.toBeNull();
      const [recorded, total, percent] = [Number(match![1]), Number(match![2]), Number(match![3])];
      expect(total).toBe(1000);
      expect(percent).toBe(Math.floor((recorded * 100) / total));
      expect(recorded).toBeGreaterThanOrEqual(previous);
      previous = recorded;
    }
    expect(lines.at(-1)).toMatch(/^flights-20k: 1000\/1000 readings sent \(100%\) \| \d+ readings\/s \| 0s left$/);
  });

  it('leaves the percentage and the time left out when the total is unknown', () => {
    const lines: string[] = [];
    const progress = createProgress({ unit: 'readings sent', rateUnit: 'readings', terminal: false, say: (line) => lines.push(line) });
    progress.update(500, undefined);
    progress.stop();
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).toMatch(/^500 readings sent \| \d+ readings\/s$/);
  });

  it('writes only the counts without a rate unit, and nothing while the total is 0', () => {
    const lines: string[] = [];
    const progress = createProgress({ label: 'migrate', unit: 'documents stamped', terminal: false, say: (line) => lines.push(line) });
    progress.update(0, 0);
    progress.update(0, 3);
    progress.update(3, 3);
    progress.stop();
    expect(lines).toEqual(['migrate: 0/3 documents stamped', 'migrate: 3/3 documents stamped']);

    const idle = createProgress({ label: 'migrate', unit: 'documents stamped', terminal: false, say: (line) => lines.push(line) });
    idle.update(0, 0);
    idle.stop();
    expect(lines).toHaveLength(2);
  });

  it('writes durations as people read them', () => {
    expect([9, 59.6, 245, 7380, Number.POSITIVE_INFINITY].map(formatDuration)).toEqual(['9s', '1m 00s', '4m 05s', '2h 03m', '?']);
  });
});

describe('progress on a terminal', () => {
  it('redraws one line in place, within the width of the terminal, and erases it at the end', async () => {
    const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 120 });
    let output = '';
    stream.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const progress = createProgress({ label: 'flights-20k', unit: 'readings sent', rateUnit: 'readings', stream });
    progress.update(0, 1000);
    progress.update(500, 1000); // within 100 ms of the first draw: drawn a moment later
    await sleep(250);
    progress.update(1000, 1000);
    progress.stop();
    progress.stop();

    expect(output.includes('\n')).toBe(false); // one line, never a new one
    const draws = output.split('\r').filter((draw) => draw !== '');
    expect(draws.at(-1)).toBe(`${ESC}[K`); // erased, for the summary to take its place
    const lines = draws.slice(0, -1).map((draw) => draw.replace(`${ESC}[K`, ''));
    expect(lines[0]).toBe(`${'\u2591'.repeat(24)} flights-20k: 0/1000 readings sent (0%) | 0 readings/s | ? left`);
    expect(lines[1]).toMatch(/^\u2588{12}\u2591{12} flights-20k: 500\/1000 readings sent \(50%\) \| \d+ readings\/s \| \d+s left$/);
    expect(lines.at(-1)).toMatch(/^\u2588{24} flights-20k: 1000\/1000 readings sent \(100%\) \| \d+ readings\/s \| 0s left$/);
    // No saved and restored cursor position, which lines written meanwhile by others would make wrong.
    expect(output.includes(`${ESC}7`) || output.includes(`${ESC}8`)).toBe(false);

    const narrow = Object.assign(new PassThrough(), { isTTY: true, columns: 40 });
    let cut = '';
    narrow.on('data', (chunk: Buffer) => {
      cut += chunk.toString();
    });
    const small = createProgress({ label: 'flights-20k', unit: 'readings sent', rateUnit: 'readings', stream: narrow });
    small.update(10, 1000);
    small.stop();
    // No room for the bar: the line alone, cut to 39 characters, so it does not wrap.
    expect(cut.split('\r')[1]).toBe(`flights-20k: 10/1000 readings sent (1%)${ESC}[K`);
  });
});

describe('npm run import:flights with its output piped', () => {
  let t: TestApp;
  let server: Server;
  let url: string;
  beforeAll(async () => {
    t = await openTestApp('import_progress', { journal: false });
    server = createServer((request, response) => void t.app(request, response));
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  });
  afterAll(async () => {
    await new Promise((closed) => server.close(closed));
    await t.close();
  });

  /** Runs `npm run import:flights` for the first `rows` flights, its output piped; resolves with its exit code and output. */
  async function runImport(rows: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'scripts/import-flights.ts',
        '--rows',
        String(rows),
        '--batch',
        '100',
        '--concurrency',
        '1',
        '--url',
        url,
        '--progress-every',
        '0.02',
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TSGRAPH_TOKEN: '' } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    return { code, stdout, stderr };
  }

  /** The numbers of a summary line: readings, seconds, batches, rate, already stored. @throws when `line` is no summary. */
  function summaryOf(line: string): [number, number, number, number, number] {
    const match = SUMMARY.exec(line);
    if (!match) throw new Error(`not a summary line: ${line}`);
    const [recorded, seconds, batches, rate, already] = match.slice(1).map(Number) as [number, number, number, number, number];
    // The seconds are rounded to a tenth: the rate lies between the bounds they allow.
    expect(rate).toBeGreaterThanOrEqual(Math.floor(recorded / (seconds + 0.05)));
    if (seconds > 0.05) expect(rate).toBeLessThanOrEqual(Math.ceil(recorded / (seconds - 0.05)));
    return [recorded, seconds, batches, rate, already];
  }

  it('prints progress lines while importing, then the summary, and stores every flight', async () => {
    const rows = 400;
    const { code, stdout, stderr } = await runImport(rows);
    expect(code, stderr).toBe(0);

    const lines = stdout.split('\n').filter((line) => line !== '');
    const progress = lines.filter((line) => LINE.test(line));
    // The first and the last state, and at least one line written by the timer in between.
    expect(progress.length, stdout).toBeGreaterThanOrEqual(3);
    expect(progress.length, stdout).toBe(lines.length - 1); // nothing else but the summary
    for (const line of progress) expect(LINE.exec(line)![2]).toBe(String(rows));
    expect(progress.at(-1)).toMatch(new RegExp(`^flights-20k: ${rows}/${rows} readings sent \\(100%\\)`));
    const [recorded, , batches, , already] = summaryOf(lines.at(-1)!);
    expect([recorded, batches, already]).toEqual([rows, rows / 100, 0]);
    expect(stdout.includes(ESC)).toBe(false);

    // Every flight is stored: the count of the whole metric, asked of the server.
    const counted = await t.graphql<{ aggregate: { count: number }[] }>(
      '{ aggregate(metric: "flights", field: "delay", from: "1970-01-01T00:00:00Z", to: "9999-01-01T00:00:00Z") { count } }',
    );
    expect(counted.data?.aggregate).toEqual([{ count: rows }]);
  });

  it('says in its summary how many readings an earlier run had stored, and stores none twice', async () => {
    const rows = 600; // the 400 of the first run, and 200 more
    const { code, stdout, stderr } = await runImport(rows);
    expect(code, stderr).toBe(0);
    const [recorded, , batches, , already] = summaryOf(stdout.trimEnd().split('\n').at(-1)!);
    expect([recorded, batches, already]).toEqual([rows, rows / 100, 400]);
    const counted = await t.graphql<{ aggregate: { count: number }[] }>(
      '{ aggregate(metric: "flights", field: "delay", from: "1970-01-01T00:00:00Z", to: "9999-01-01T00:00:00Z") { count } }',
    );
    expect(counted.data?.aggregate).toEqual([{ count: rows }]);
  });
});
