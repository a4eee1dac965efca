/**
 * What the server runs in the background, beside the requests: the retention pass
 * (`retention.ts`) and the rollup rebuild pass (`rollups.ts`). Each is a {@link Job};
 * one {@link JobScheduler} runs them all the same way and stops them all at shutdown.
 */
import type { Logger } from '../logger.ts';

/** What one run of a job did: the line the scheduler logs for it. */
export interface JobOutcome {
  /** True when the run changed something: logged at info; else at debug (nothing due). */
  changed: boolean;
  /** The log message, e.g. `Retention pass removed expired data`. */
  message: string;
  /** Fields of the log line beside `job` and `ms`, e.g. what was removed. */
  details?: Record<string, unknown>;
}

/** A pass the server repeats on a timer. */
export interface Job {
  /** Short name, logged as `job` on every line of its runs (e.g. `retention`). */
  name: string;
  /** Time from one run's planned start to the next, in milliseconds; 0 or less: the job never runs. */
  intervalMs: number;
  /** True: the first run starts at once; false or absent: after one interval. */
  runAtStart?: boolean;
  /** True: runs that changed something are logged at debug too (a job that runs every second, like the folder). */
  quiet?: boolean;
  /**
   * One run. `signal` is aborted when the scheduler stops: the run should end at its
   * next safe point. An error thrown is logged as a warning; the next run tries again.
   */
  run(signal: AbortSignal): Promise<JobOutcome>;
}

/** One job as the scheduler holds it. */
interface Scheduled {
  job: Job;
  timers: NodeJS.Timeout[];
  running: Promise<void> | undefined;
}

/**
 * Runs jobs on their intervals, at most one run of each job at a time (a run still
 * going when the next is due makes that one skipped), and logs one line per run:
 * `{job, ms, ...details}` at info when it changed something, at debug when not, at warn
 * with `err` when it failed. Timers do not keep the process alive. Several server
 * instances may run the same jobs on one database: each job says why that is safe.
 */
export class JobScheduler {
  private readonly scheduled: Scheduled[] = [];
  private readonly stopping = new AbortController();

  constructor(private readonly logger: Logger) {}

  /**
   * Starts running `job` on its interval (nothing when `intervalMs` is 0 or less).
   * @throws Error when the scheduler was stopped already.
   */
  start(job: Job): void {
    if (this.stopping.signal.aborted) throw new Error(`The job scheduler is stopped; ${job.name} was not started`);
    if (job.intervalMs <= 0) return;
    const entry: Scheduled = { job, timers: [], running: undefined };
    const tick = () => {
      if (entry.running === undefined && !this.stopping.signal.aborted) {
        entry.running = this.runOnce(job).finally(() => (entry.running = undefined));
      }
    };
    if (job.runAtStart) entry.timers.push(setTimeout(tick, 0));
    entry.timers.push(setInterval(tick, job.intervalMs));
    for (const timer of entry.timers) timer.unref();
    this.scheduled.push(entry);
  }

  /** Names of the jobs started (those with an interval), in the order they were started. */
  jobs(): string[] {
    return this.scheduled.map((entry) => entry.job.name);
  }

  /**
   * Stops every job: no run starts any more, the runs under way are told through their
   * signal, and the returned promise waits for them to end (at shutdown, before the
   * database connection is closed).
   */
  async stop(): Promise<void> {
    this.stopping.abort();
    for (const entry of this.scheduled) for (const timer of entry.timers) clearTimeout(timer);
    await Promise.all(this.scheduled.map((entry) => entry.running));
  }

  /** One run of `job`, logged; never throws. */
  private async runOnce(job: Job): Promise<void> {
    const started = performance.now();
    try {
      const outcome = await job.run(this.stopping.signal);
      const line = { job: job.name, ms: Math.round(performance.now() - started), ...outcome.details };
      if (outcome.changed && !job.quiet) this.logger.info(line, outcome.message);
      else this.logger.debug(line, outcome.message);
    } catch (error) {
      this.logger.warn(
        { job: job.name, ms: Math.round(performance.now() - started), err: error },
        `Job ${job.name} failed; its next run tries again`,
      );
    }
  }
}
