import { Presets, SingleBar } from 'cli-progress';

/** Seconds between progress lines when stderr is not a terminal. */
export const PLAIN_PROGRESS_SECONDS = 5;

/** A progress display: `update(done, total)` as work goes on, `stop()` at the end. */
export interface Progress {
  update: (done: number, total: number) => void;
  stop: () => void;
}

/**
 * Progress of a command-line tool on stderr: a bar (cli-progress) on a terminal,
 * otherwise a line at the start, at most every {@link PLAIN_PROGRESS_SECONDS} and at the
 * end, so a log file or CI output shows the work going on; nothing while `total` is 0.
 * @param tool the command's name, which starts every plain line.
 * @param unit what is counted, e.g. `documents stamped`.
 */
export function progress(tool: string, unit: string, say: (line: string) => void = (line) => console.error(line)): Progress {
  if (process.stderr.isTTY) {
    const bar = new SingleBar({ format: ` {bar} {value}/{total} ${unit} | ETA {eta}s` }, Presets.shades_classic);
    let started = false;
    return {
      update(done, total) {
        if (total === 0) return;
        if (!started) bar.start(total, done);
        else bar.setTotal(total);
        started = true;
        bar.update(done);
      },
      stop: () => bar.stop(),
    };
  }
  let shown = 0;
  return {
    update(done, total) {
      if (total === 0) return;
      const now = performance.now();
      if (done !== 0 && done !== total && now - shown < PLAIN_PROGRESS_SECONDS * 1000) return;
      shown = now;
      say(`${tool}: ${done}/${total} ${unit}`);
    },
    stop() {},
  };
}
