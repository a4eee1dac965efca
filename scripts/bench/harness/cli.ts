/** What every benchmark's command line shares: option parsers, the data set option, sketch levels, a progress log. */
import { InvalidArgumentError, Option } from 'commander';
import { SLOT_LEVELS, type SlotLevel } from '../../../src/model/statistics-settings.ts';

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

/** The data sets a run covers: sparse (flights), dense (TSBS cpu-only) or both. */
export type DataChoice = 'sparse' | 'dense' | 'both';

/** `--dataset <set>`: sparse, dense or both (the default). */
export const datasetOption = () => new Option('--dataset <set>', 'data set').choices(['sparse', 'dense', 'both']).default('both');

/** The data sets of a {@link DataChoice}, sparse first. */
export const datasetsOf = (choice: DataChoice): ('sparse' | 'dense')[] => (choice === 'both' ? ['sparse', 'dense'] : [choice]);

/**
 * Parses a list of sketch levels (`--sketch-levels`): levels of `SLOT_LEVELS` separated by commas, or `none`.
 * @throws InvalidArgumentError (commander prints it and exits) for an unknown level.
 */
export function sketchLevels(text: string): SlotLevel[] {
  const levels = text === 'none' ? [] : text.split(',').map((level) => level.trim());
  const unknown = levels.filter((level) => !(SLOT_LEVELS as readonly string[]).includes(level));
  if (unknown.length > 0) throw new InvalidArgumentError(`unknown level ${unknown.join(', ')}`);
  return levels as SlotLevel[];
}

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
