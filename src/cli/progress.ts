/**
 * The one progress display of the command-line tools and of the demo's first start
 * (`npm run migrate`, `npm run rollups -- backfill`, `npm run import:flights`,
 * `npm run demo`): on a terminal, one line with a bar, redrawn in place (a carriage
 * return, the line, erase to its end) and erased when the work stops; anywhere else (a
 * pipe, a file, a CI log), where a redrawn line would be noise, a plain line at the
 * first update, then one every few seconds from a timer (so a stalled job still shows
 * its rate falling), and the last state when the work stops.
 *
 * The terminal line saves and restores no cursor position (cli-progress does, and
 * after lines written by someone else in the meantime, a log line for instance, the
 * restored position is no longer the bar's and the summary overwrites those lines):
 * such a line is left after the bar's text, and the bar goes on on the next line.
 */

/** Seconds between two plain lines when the output is not a terminal, by default. */
export const PLAIN_PROGRESS_SECONDS = 5;

/** Characters of the bar drawn before the line on a terminal. */
const BAR_WIDTH = 24;

/** Shortest time between two redraws on a terminal, in milliseconds. */
const REDRAW_MS = 100;

/** A stream a progress bar is drawn on; `isTTY` tells a terminal from a pipe or a file. */
export type ProgressStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/** A progress display: `update(done, total)` as the work goes on, `stop()` at the end. */
export interface Progress {
  /**
   * The count done so far and the total expected (`undefined` when not known: no
   * percentage and no time left then). Nothing is shown while `total` is 0. May be
   * passed on as a plain function (`onProgress: progress.update`).
   */
  update: (done: number, total: number | undefined) => void;
  /** Shows the last state (a plain line) or clears the bar (a terminal) and stops the timer; idempotent. */
  stop: () => void;
}

/** Options of {@link createProgress}. */
export interface ProgressOptions {
  /** Starts every line as `<label>: ` (e.g. `migrate`, `flights-20k`); no prefix when omitted. */
  label?: string;
  /** What is counted, written after the counts: `documents stamped`, `readings sent`. */
  unit: string;
  /**
   * What the rate counts, e.g. `readings` for `1875 readings/s`. When given, every line
   * also says the percentage done, the rate since the display was created and the time
   * left at that rate; when omitted, a line is only `<label>: <done>/<total> <unit>`.
   */
  rateUnit?: string;
  /** Where the terminal bar is drawn, and the plain lines written unless `say` is given (default: standard error). */
  stream?: ProgressStream;
  /** Whether to draw the bar in place (default: whether `stream` is a terminal). */
  terminal?: boolean;
  /** Receives each plain line, without its newline (default: written to `stream`). */
  say?: (line: string) => void;
  /** Milliseconds between two plain lines (default {@link PLAIN_PROGRESS_SECONDS} seconds). */
  intervalMs?: number;
}

/**
 * A duration in whole seconds as people read it: `9s`, `4m 05s`, `2h 03m`; `?` when
 * not finite (no rate yet).
 */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const whole = Math.max(0, Math.round(seconds));
  if (whole < 60) return `${whole}s`;
  if (whole < 3600) return `${Math.floor(whole / 60)}m ${String(whole % 60).padStart(2, '0')}s`;
  return `${Math.floor(whole / 3600)}h ${String(Math.floor((whole % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * Creates a progress display (see the module comment). A line reads, without a rate,
 * `migrate: 2000/3000 documents stamped`; with one,
 * `flights-20k: 4000/20000 readings sent (20%) | 1875 readings/s | 9s left`, or
 * `12000 readings sent | 1875 readings/s` when the total is not known. The rate is the
 * count done over the seconds since this call, computed afresh for every line.
 */
export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const terminal = options.terminal ?? stream.isTTY === true;
  const say = options.say ?? ((line: string) => void stream.write(`${line}\n`));
  const intervalMs = options.intervalMs ?? PLAIN_PROGRESS_SECONDS * 1000;
  const created = performance.now();
  let done = 0;
  let total: number | undefined;
  let stopped = false;

  /** The line of the current state, after the bar on a terminal. */
  const line = (): string => {
    const prefix = options.label === undefined ? '' : `${options.label}: `;
    const counts = total === undefined ? `${done} ${options.unit}` : `${done}/${total} ${options.unit}`;
    if (options.rateUnit === undefined) return `${prefix}${counts}`;
    const seconds = (performance.now() - created) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    const speed = `${Math.round(rate)} ${options.rateUnit}/s`;
    if (total === undefined) return `${prefix}${counts} | ${speed}`;
    const percent = Math.floor((done * 100) / total);
    const left = formatDuration(rate > 0 ? (total - done) / rate : Number.NaN);
    return `${prefix}${counts} (${percent}%) | ${speed} | ${left} left`;
  };

  if (terminal) {
    const columns = () => (stream.columns ?? 80) - 1; // the last column would wrap the line on some terminals
    let lastDraw = 0;
    let ticker: NodeJS.Timeout | undefined;
    let pending: NodeJS.Timeout | undefined;
    const draw = () => {
      lastDraw = performance.now();
      const filled = total === undefined ? 0 : Math.round((Math.min(done, total) / total) * BAR_WIDTH);
      const bar = total === undefined ? '' : `${'\u2588'.repeat(filled)}${'\u2591'.repeat(BAR_WIDTH - filled)} `;
      const text = line();
      // The bar only where the whole line fits beside it; cut to the width otherwise.
      const shown = bar.length + text.length <= columns() ? `${bar}${text}` : text.slice(0, columns());
      stream.write(`\r${shown}\u001b[K`);
    };
    return {
      update(count, expected) {
        if (stopped || expected === 0) return;
        done = count;
        total = expected;
        if (ticker === undefined) {
          draw();
          // Redrawn every second even without news: the rate falls and the time left grows while stalled.
          ticker = setInterval(draw, 1000);
          ticker.unref();
        } else if (performance.now() - lastDraw >= REDRAW_MS) draw();
        else if (pending === undefined) {
          pending = setTimeout(() => {
            pending = undefined;
            if (!stopped) draw();
          }, REDRAW_MS);
          pending.unref();
        }
      },
      stop() {
        if (stopped) return;
        stopped = true;
        clearInterval(ticker);
        clearTimeout(pending);
        // What follows (a summary) takes the line's place.
        if (ticker !== undefined) stream.write('\r\u001b[K');
      },
    };
  }

  let timer: NodeJS.Timeout | undefined;
  return {
    update(count, expected) {
      if (stopped || expected === 0) return;
      done = count;
      total = expected;
      if (timer !== undefined) return;
      say(line());
      timer = setInterval(() => say(line()), intervalMs);
      timer.unref();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      if (timer === undefined) return;
      clearInterval(timer);
      say(line());
    },
  };
}
