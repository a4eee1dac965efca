/**
 * The progress of an import as `npm run import:flights` shows it: on a terminal,
 * cli-progress's bar redrawn in place; on anything else (a pipe, a file, a CI log), where
 * a redrawn bar would print nothing, one plain line every few seconds with the readings
 * sent, the rate and the time left (cli-progress's `noTTYOutput` mode).
 */
import cliProgress from 'cli-progress';

// cli-progress is CommonJS: Node's ES module loader finds `SingleBar` among its named
// exports, not `Format`.
const { Format, SingleBar } = cliProgress;

/** A stream progress is written to; `isTTY` tells a terminal from a pipe or a file. */
export type ProgressStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/** Options of {@link createImportProgress}. */
export interface ProgressOptions {
  /**
   * Where to write (default: standard error when it is a terminal, so the bar stays off
   * redirected output; otherwise standard output, beside the final summary).
   */
  stream?: ProgressStream;
  /** Time between two lines when the stream is not a terminal, in milliseconds (default 5,000). */
  intervalMs?: number;
}

/** Shows the progress of one import. */
export interface ImportProgress {
  /** Readings recorded so far, and the total expected (undefined when unknown: no ETA then). */
  update(recorded: number, total: number | undefined): void;
  /** Writes the last state and stops the timer; idempotent. */
  stop(): void;
}

/**
 * The progress display of an import, created when the import starts. Each line (or
 * redraw) says, for example, `4000/20000 readings (20%) | 1875 readings/s | ETA 9s`: the
 * rate is the readings recorded so far over the seconds since the display was created,
 * the ETA the readings left at that rate (`?` before the first batch); both are computed
 * at every line, so a stalled import shows a falling rate and a growing ETA. Nothing is
 * written before the first update.
 */
export function createImportProgress(options: ProgressOptions = {}): ImportProgress {
  const stream = options.stream ?? (process.stderr.isTTY ? process.stderr : process.stdout);
  const terminal = stream.isTTY === true;
  const started = performance.now();
  let bar: InstanceType<typeof SingleBar> | undefined;
  return {
    update(recorded, total) {
      if (bar === undefined) {
        const known = total !== undefined;
        const counts = known ? '{value}/{total} readings ({percentage}%)' : '{value} readings';
        const eta = known ? ' | ETA {left}' : '';
        const template = terminal ? ` ${known ? '{bar} ' : ''}${counts} | {rate} readings/s${eta}` : `${counts} | {rate} readings/s${eta}`;
        bar = new SingleBar({
          stream,
          format: (barOptions, params, payload) => {
            const seconds = (performance.now() - started) / 1000;
            const rate = seconds > 0 ? params.value / seconds : 0;
            const left = rate > 0 ? Format.TimeFormat(Math.round((params.total - params.value) / rate), barOptions, 1) : '?';
            return Format.Formatter({ ...barOptions, format: template }, params, { ...payload, rate: Math.round(rate), left });
          },
          noTTYOutput: true,
          notTTYSchedule: options.intervalMs ?? 5_000,
          // On a terminal the summary printed after the import replaces the bar; elsewhere
          // the last line stays and no empty line follows it.
          clearOnComplete: true,
          hideCursor: terminal,
          barCompleteChar: '\u2588',
          barIncompleteChar: '\u2591',
        });
        bar.start(total ?? Number.MAX_SAFE_INTEGER, recorded);
      }
      bar.update(recorded);
    },
    stop() {
      bar?.stop();
    },
  };
}
