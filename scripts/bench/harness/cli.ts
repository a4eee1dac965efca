/** What every benchmark's command line shares: option parsers, the data set option, a progress log. */
import { InvalidArgumentError, Option } from 'commander';

/**
 * Parses a command-line option that must be a positive integer.
 * @throws InvalidArgumentError (commander prints it and exits) otherwise.
 */
export function positiveInt(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('expected a positive integer');
  return number;
}

/**
 * Parses a command-line option that must be an integer of 0 or more.
 * @throws InvalidArgumentError (commander prints it and exits) otherwise.
 */
export function nonNegativeInt(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new InvalidArgumentError('expected an integer of 0 or more');
  return number;
}

/** The data sets a run covers: dense (TSBS cpu-only), sparse (flights) or both. */
export type DataChoice = 'dense' | 'sparse' | 'both';

/** `--data <set>`: dense, sparse or both (the default). */
export const dataOption = () => new Option('--data <set>', 'data set').choices(['dense', 'sparse', 'both']).default('both');

/** A progress log on stderr, `[<name> <seconds since it was made>s] message`, and those seconds. */
export interface ProgressLog {
  (message: string): void;
  /** Seconds since the log was made. */
  seconds(): number;
}

/** A {@link ProgressLog} named `name`, its seconds printed with `digits` decimals. */
export function progressLog(name: string, digits = 0): ProgressLog {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  const log = (message: string) => console.error(`[${name} ${seconds().toFixed(digits)}s] ${message}`);
  return Object.assign(log, { seconds });
}
