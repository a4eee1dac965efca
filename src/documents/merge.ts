/**
 * The parts of one series-day merged into one content, pure: what a compaction
 * writes. Statistics and sketches add up; counters' increases chain where they can.
 */
import { type CounterPiece, chainIncrease } from '../model/counter.ts';
import { type DayContent, type SlotContent, copySlot, mergeSlot } from './content.ts';
import { type SeriesDayDocument, quarterSketchPath, isMinutePath } from './series-day.ts';
import { fullContentOf, oldestVersion } from './decode.ts';
import { mergeSketch } from '../model/sketch.ts';

/** The hour of the day of a quarter-hour sketch path (`hours.7.quarters.2.delay`: 7). */
const hourOfQuarterPath = (path: string) => Number(path.split('.')[1]);

/**
 * Gives each of `writes` (the parts of one series-day) that has no quarter-hour sketch
 * in an hour where another has some the quarter-hour sketches of its minute sketches
 * there, in place: a quarter's sketch is the merge of its 15 minutes' (DDSketch merges
 * exactly). A query reads an hour's quarter-hour sketches whenever the hour has any, and
 * its minute sketches only otherwise (`quartersOfHour` in `documents/slots.ts`),
 * so without this the merge of a part written while the metric kept minute sketches and
 * one written once it kept quarter hours would answer null where both parts answered.
 */
export function fillQuarters(writes: readonly DayContent[]): void {
  const hours = new Set<number>();
  for (const write of writes) for (const path of write.quarters.keys()) hours.add(hourOfQuarterPath(path));
  if (hours.size === 0) return;
  for (const write of writes) {
    const own = new Set([...write.quarters.keys()].map(hourOfQuarterPath));
    for (const [path, slot] of write.slots) {
      if (slot.sketch === null || !isMinutePath(path)) continue;
      // `hours.<h>.minutes.<m>.<field>`; names hold no dots (NAME_PATTERN).
      const [, hour, , minute, field] = path.split('.') as [string, string, string, string, string];
      if (!hours.has(Number(hour)) || own.has(Number(hour))) continue;
      const quarter = quarterSketchPath(Number(hour), Math.floor(Number(minute) / 15), field);
      const bins = write.quarters.get(quarter) ?? new Map<string, number>();
      mergeSketch(bins, slot.sketch);
      write.quarters.set(quarter, bins);
    }
  }
}

/**
 * Merges the stored parts of one series-day into the write of one document (pure):
 * statistics, first and last readings and sketch bins of every slot (quarter-hour
 * sketches included, filled in from minute sketches where only some parts have them in
 * an hour: {@link fillQuarters}), readings counted,
 * and the latest readings: the newest `latestReadings` of the parts' lists, but no more
 * than the shortest list of a part that kept fewer than its readings, so the merged list
 * is exactly the day's newest readings (a day's newest k readings are among each part's
 * newest k). Latest readings are kept by time, oldest first. Counter slots get their
 * `inc` merged by {@link mergeIncreases}.
 * @param latestReadings the metric's `latestReadings` setting now.
 * @returns the write, and the layout version the merged document may claim (the oldest of the parts').
 */
export function mergeParts(docs: readonly SeriesDayDocument[], latestReadings: number): { write: DayContent; version: number } {
  const writes = docs.map(fullContentOf);
  fillQuarters(writes);
  const [first, ...rest] = writes;
  if (first === undefined) throw new Error('mergeParts: no documents');
  const into: DayContent = {
    ...first,
    slots: new Map([...first.slots].map(([path, slot]) => [path, copySlot(slot)])),
    quarters: new Map([...first.quarters].map(([path, bins]) => [path, new Map(bins)])),
    fields: new Set(first.fields),
  };
  let kept = latestReadings;
  for (const write of writes) if (write.recent.length < write.readings) kept = Math.min(kept, write.recent.length);
  const recent = [...first.recent];
  for (const write of rest) {
    into.readings += write.readings;
    into.first = Math.min(into.first, write.first);
    into.last = Math.max(into.last, write.last);
    for (const field of write.fields) into.fields.add(field);
    for (const [path, slot] of write.slots) {
      const existing = into.slots.get(path);
      if (existing === undefined) into.slots.set(path, copySlot(slot));
      else mergeSlot(existing, slot);
    }
    for (const [path, bins] of write.quarters) {
      const existing = into.quarters.get(path);
      if (existing === undefined) into.quarters.set(path, new Map(bins));
      else mergeSketch(existing, bins);
    }
    recent.push(...write.recent);
  }
  into.recent = kept > 0 ? recent.sort((a, b) => a.t - b.t).slice(-kept) : [];
  into.recentKept = Math.max(0, kept);
  mergeIncreases(into, writes);
  return { write: into, version: oldestVersion(docs) };
}

/** A slot write as the piece of a counter it holds (see `CounterPiece`). */
const pieceOf = (slot: SlotContent): CounterPiece => ({ first: slot.first, last: slot.last, n: slot.stats.n, inc: slot.inc ?? null });

/**
 * Sets the counter `inc` of every slot of `into`, the merge of the parts `writes` of one
 * series-day (pure, in place), on the slots where a part has one (other metrics have
 * none, and keep none):
 * - a minute slot: the parts' pieces of it chained (`chainIncrease`): exact unless the
 *   parts' readings in that minute interleave in time, then left without `inc`;
 * - an hour slot: its merged minute slots chained, when each has its `inc` and together
 *   they hold every reading of the hour (their counts add up to the hour's); minute slots
 *   of one hour never interleave, so a late reading that fell between two parts'
 *   readings of the hour, but in a minute of its own, leaves the hour exact. Otherwise
 *   (minutes interleaved, or retention removed them) the parts' pieces of the hour
 *   chained, as for a minute;
 * - the day totals: the same from the merged hour slots, else from the parts' day pieces.
 * A slot whose increase is not known has no `inc`, and queries answer null for it (raw
 * readings are not kept, so nothing can recompute it later).
 */
export function mergeIncreases(into: DayContent, writes: readonly DayContent[]): void {
  const pieces = new Map<string, CounterPiece[]>();
  for (const write of writes) {
    for (const [path, slot] of write.slots) {
      const list = pieces.get(path);
      if (list === undefined) pieces.set(path, [pieceOf(slot)]);
      else list.push(pieceOf(slot));
    }
  }
  const counted = (path: string) => pieces.get(path)?.some((piece) => piece.inc !== null) === true;
  // Merged slots of the level below, per slot above: `hours.7.fields.x` <- minutes of hour 7, `fields.x` <- hours.
  const finer = new Map<string, SlotContent[]>();
  for (const [path, slot] of into.slots) {
    const steps = path.split('.');
    const above = steps.length === 5 ? `hours.${steps[1]}.fields.${steps[4]}` : steps.length === 4 ? `fields.${steps[3]}` : null;
    if (above === null) continue;
    const list = finer.get(above);
    if (list === undefined) finer.set(above, [slot]);
    else list.push(slot);
  }
  // Minutes first, then hours, then the day: each level may chain the merged level below.
  const depth = (path: string) => path.split('.').length;
  const paths = [...into.slots.keys()].filter(counted).sort((a, b) => depth(b) - depth(a));
  for (const path of paths) {
    const slot = into.slots.get(path)!;
    const below = finer.get(path) ?? [];
    const complete =
      below.length > 0 && below.every((part) => part.inc !== undefined) && below.reduce((n, part) => n + part.stats.n, 0) === slot.stats.n;
    const increase = chainIncrease(complete ? below.map(pieceOf) : pieces.get(path)!);
    if (increase === null) delete slot.inc;
    else slot.inc = increase;
  }
}
