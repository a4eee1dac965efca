/**
 * The flights importer shows its progress when its output is not a terminal: a plain
 * line every few seconds (here every few milliseconds) with the readings sent, the rate
 * and the time left.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createImportProgress } from '../../src/importer/progress.ts';
import { openTestApp, type TestApp } from '../helpers/app.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A progress line of a known total: `4000/20000 readings (20%) | 1875 readings/s | ETA 9s`. */
const LINE = /^(\d+)\/(\d+) readings \((\d+)%\) \| (\d+) readings\/s \| ETA (.+)$/;

/** The escape character that starts every terminal control sequence (cursor moves, colours). */
const ESC = String.fromCharCode(27);

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('import progress on a stream that is not a terminal', () => {
  it('writes a plain line per interval, then the final state, without terminal escapes', async () => {
    const stream = new PassThrough();
    let output = '';
    stream.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const progress = createImportProgress({ stream, intervalMs: 30 });
    for (let recorded = 0; recorded <= 1000; recorded += 100) {
      progress.update(recorded, 1000);
      await sleep(20);
    }
    progress.stop();
    progress.stop();

    expect(output.includes(ESC)).toBe(false); // no cursor movement or colours
    const lines = output.split('\n');
    expect(lines.pop()).toBe(''); // ends with a newline, no empty line before it
    expect(lines.length).toBeGreaterThanOrEqual(4);
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
    expect(lines.at(-1)).toMatch(/^1000\/1000 readings \(100%\)/);
  });

  it('leaves the total and the ETA out when the total is unknown', async () => {
    const stream = new PassThrough();
    let output = '';
    stream.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const progress = createImportProgress({ stream, intervalMs: 1_000 });
    progress.update(500, undefined);
    progress.stop();
    const lines = output.split('\n').filter((line) => line !== '');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(/^\d+ readings \| \d+ readings\/s$/);
    expect(lines.at(-1)).toMatch(/^500 readings/);
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

  it('prints progress lines while importing, then the summary, and stores every flight', async () => {
    const rows = 400;
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
    expect(code, stderr).toBe(0);

    const lines = stdout.split('\n').filter((line) => line !== '');
    const progress = lines.filter((line) => LINE.test(line));
    // The first and the last state, and at least one line written by the timer in between.
    expect(progress.length, stdout).toBeGreaterThanOrEqual(3);
    for (const line of progress) expect(LINE.exec(line)![2]).toBe(String(rows));
    expect(progress.at(-1)).toMatch(new RegExp(`^${rows}/${rows} readings \\(100%\\)`));
    expect(lines.at(-1)).toMatch(new RegExp(`^Imported ${rows} readings from flights-20k`));
    expect(stdout.includes(ESC)).toBe(false);

    // Every flight is stored: the count of the whole metric, asked of the server.
    const counted = await t.graphql<{ aggregate: { count: number }[] }>(
      '{ aggregate(metric: "flights", field: "delay", from: "1970-01-01T00:00:00Z", to: "9999-01-01T00:00:00Z") { count } }',
    );
    expect(counted.data?.aggregate).toEqual([{ count: rows }]);
  });
});
