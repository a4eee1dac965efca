/**
 * The background job scheduler: runs on the interval, one at a time per job, one log
 * line per run at the level its outcome calls for, and a stop that waits for the run
 * under way and starts no other.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { type Job, JobScheduler } from '../../src/jobs/scheduler.ts';

/** A logger at debug level whose lines are collected, parsed. */
function collectingLogger(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `done()` holds, checking every 5 ms for at most 2 s. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !done(); i++) await sleep(5);
  expect(done()).toBe(true);
}

describe('JobScheduler', () => {
  it('logs one line per run: info when it changed something, debug when not, warn with the error when it failed', async () => {
    const { logger, lines } = collectingLogger();
    const outcomes: (() => Promise<{ changed: boolean; message: string; details?: Record<string, unknown> }>)[] = [
      async () => ({ changed: true, message: 'Removed 3', details: { removed: 3 } }),
      async () => ({ changed: false, message: 'Nothing due' }),
      async () => {
        throw new Error('database gone');
      },
    ];
    let runs = 0;
    const jobs = new JobScheduler(logger);
    jobs.start({ name: 'sweep', intervalMs: 10, runAtStart: true, run: () => outcomes[Math.min(runs++, 2)]!() });
    await until(() => lines.length >= 3);
    await jobs.stop();
    expect(lines.slice(0, 3).map(({ level, job, msg, removed }) => ({ level, job, msg, removed }))).toEqual([
      { level: 30, job: 'sweep', msg: 'Removed 3', removed: 3 },
      { level: 20, job: 'sweep', msg: 'Nothing due', removed: undefined },
      { level: 40, job: 'sweep', msg: 'Job sweep failed; its next run tries again', removed: undefined },
    ]);
    expect((lines[2]!.err as { message: string }).message).toBe('database gone');
    for (const line of lines) expect(typeof line.ms).toBe('number');
  });

  it('never runs one job twice at once, and a stop aborts the run under way, waits for it and starts no other', async () => {
    const { logger, lines } = collectingLogger();
    let running = 0;
    let most = 0;
    let runs = 0;
    let aborted = false;
    const job: Job = {
      name: 'slow',
      intervalMs: 5,
      async run(signal) {
        runs++;
        most = Math.max(most, ++running);
        // Each run outlasts several intervals; it ends early when the scheduler stops.
        for (let i = 0; i < 10 && !signal.aborted; i++) await sleep(10);
        aborted = signal.aborted;
        running--;
        return { changed: false, message: 'Done' };
      },
    };
    const jobs = new JobScheduler(logger);
    jobs.start(job);
    await until(() => runs === 2);
    await jobs.stop();
    expect(running).toBe(0);
    expect(aborted).toBe(true);
    expect(most).toBe(1);
    const after = runs;
    await sleep(50);
    expect(runs).toBe(after);
    expect(lines).toHaveLength(after);
    expect(() => jobs.start(job)).toThrow(/stopped/);
  });

  it('does not start a job without an interval, and starts an interval job only after its first interval unless it runs at start', async () => {
    const { logger, lines } = collectingLogger();
    const ran: string[] = [];
    const jobOf = (name: string, intervalMs: number, runAtStart?: boolean): Job => ({
      name,
      intervalMs,
      runAtStart,
      run: async () => {
        ran.push(name);
        return { changed: false, message: name };
      },
    });
    const jobs = new JobScheduler(logger);
    jobs.start(jobOf('off', 0, true));
    jobs.start(jobOf('later', 60_000));
    jobs.start(jobOf('now', 60_000, true));
    expect(jobs.jobs()).toEqual(['later', 'now']);
    await until(() => ran.length === 1);
    await sleep(30);
    await jobs.stop();
    expect(ran).toEqual(['now']);
    expect(lines.map((line) => line.job)).toEqual(['now']);
  });
});
