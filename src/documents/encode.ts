/**
 * Series-day contents (`content.ts`) as stored documents, pure: the slot form
 * (day, hour and minute slots, sketches under `q`, latest readings), the raw form (the
 * readings themselves, `r`), packed minutes (`packed-minutes.ts`), and the part a fold
 * or compaction inserts (`_id` `<series>:<day ms>:<f>`). See docs/design.md for each form.
 */
import { LRUCache } from 'lru-cache';
import { Double } from 'mongodb';
import { ALL_LEVELS, type DayContent, type PlanLevels, type SlotContent } from './content.ts';
import { DOCUMENT_VERSION, type DocumentForms, RAW_SKETCH_BITS, SLOT_FORM, sketchPath, isMinutePath } from './series-day.ts';
import type { SlotLevel } from '../model/statistics-settings.ts';
import type { TimedValue } from '../model/stats.ts';
import { packHours } from './packed-minutes.ts';
import { sketchCount, sketchKey } from '../model/sketch.ts';
import { isQuarterPath } from './series-day.ts';

/**
 * Dotted paths split into their keys, and sketch paths of slot paths, kept across calls
 * (least recently used first out past {@link PATHS_KEPT}): a fold builds hundreds of
 * documents whose slots share a few thousand paths (a field's day, 24 hours, 1,440
 * minutes and 96 quarter hours), and splitting each path again for each document took
 * about a quarter of the time of building them.
 */
const PATHS_KEPT = 200_000;

const splitPaths = new LRUCache<string, readonly string[]>({ max: PATHS_KEPT, memoMethod: (path) => path.split('.') });

const sketchPaths = new LRUCache<string, string>({ max: PATHS_KEPT, memoMethod: sketchPath });

/** The keys of dotted `path` (see {@link splitPaths}). */
const pathKeys = (path: string): readonly string[] => splitPaths.memo(path);

/** `sketchPath(path)`, made once per slot path (see {@link splitPaths}). */
const sketchPathOf = (path: string): string => sketchPaths.memo(path);

/** Sets `value` at dotted `path` of `target`, creating the objects on the way. */
function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = pathKeys(path);
  const last = keys.length - 1;
  let node = target;
  for (let i = 0; i < last; i++) {
    const key = keys[i]!;
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[last]!] = value;
}

/**
 * Dotted paths as a tree: `true` where a path ends (its whole value is kept), as an
 * inclusion `$project` of those paths keeps a document.
 */
export type PathTree = { [key: string]: PathTree | true };

/**
 * The parts of a series-day document (`PlanLevels`) whose values a projection to
 * `within` may keep, for planning a reader's tail (`storage/tail.ts`): hour slots when
 * it reaches `hours`, minute slots when it reaches an hour's `minutes` or `quarters` (or
 * a whole hour: a rollup's quarter hours are merged from the minutes), latest readings
 * when it reaches `recent`. Any path under `q` (a percentile's sketches)
 * plans every part: the day and hour sketches are merged from the quarter hours', and a
 * sketch's path creates `q` even where the projection then drops it. What is left out
 * is what {@link slotFormDocument} with the same `within` would drop; the embedded documents
 * a left-out minute slot would create on its way (`hours.H`) are created by its hour
 * slot, always planned with it, so the projected documents are the same either way.
 * Without `within` (the whole document), every part.
 */
export function levelsWithin(within: PathTree | null | undefined): Readonly<PlanLevels> {
  if (within === null || within === undefined || 'q' in within) return ALL_LEVELS;
  const hours = within.hours;
  const minutes =
    hours === true ||
    (hours !== undefined && Object.values(hours).some((hour) => hour === true || 'minutes' in hour || 'quarters' in hour));
  return { hours: hours !== undefined, minutes, sketches: false, recent: 'recent' in within };
}

/**
 * Whether a value set at `path` would survive a projection to `within`, with the
 * embedded documents on the way created as {@link setPath} would create them up to the
 * first key the projection drops (so that an embedded document the projection keeps,
 * emptied, exists either way). Without `within`, true.
 */
function kept(target: Record<string, unknown>, path: string, within: PathTree | undefined): boolean {
  if (within === undefined) return true;
  const keys = pathKeys(path);
  let node = target;
  let branch: PathTree | true = within;
  for (const [i, key] of keys.entries()) {
    if (branch === true) return true;
    const next: PathTree | true | undefined = branch[key];
    if (next === undefined) return false;
    if (i === keys.length - 1) return true;
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
    branch = next;
  }
  return true;
}

/**
 * What a document of `write` stores besides its statistics, in both forms: series,
 * metric, tags, tag pairs, day, layout version `version`, readings, and the first and
 * last reading times as dates.
 */
function storedIdentity(write: DayContent, version: number): Record<string, unknown> {
  return {
    series: write.series,
    metric: write.metric,
    tags: write.tags,
    tagPairs: write.tagPairs,
    date: write.date,
    v: version,
    readings: write.readings,
    first: new Date(write.first),
    last: new Date(write.last),
  };
}

/** A slot's statistics as stored: doubles throughout, `{t: date, v: double}` first and last pairs, `inc` when known. */
function slotAsStored({ stats, first, last, inc }: SlotContent, pairs = true): Record<string, unknown> {
  const pair = (value: TimedValue) => ({ t: new Date(value.t), v: new Double(value.v) });
  return {
    n: new Double(stats.n),
    sum: new Double(stats.sum),
    min: new Double(stats.min),
    max: new Double(stats.max),
    sq: new Double(stats.sq),
    ...(pairs ? { first: pair(first), last: pair(last) } : {}),
    ...(inc === undefined ? {} : { inc: new Double(inc) }),
  };
}

/**
 * The whole document a write makes when its document does not exist yet (pure): what
 * `dayUpdate`'s upsert would store, with the same BSON types (doubles for statistics,
 * `{t: date, v: double}` pairs, integer bin counts), of layout version `version`. A rebuild
 * inserts these instead of upserting: one insert costs the same however many slots and
 * bins a document has, where an update's cost grows with its paths (see docs/performance.md).
 * @param within when given, the slots, sketches and latest readings that a projection to
 *   these paths would drop are left out (the rest is whole: the caller still projects),
 *   so a reader's tail builds only what its pipeline reads (`storage/tail.ts`).
 */
export function slotFormDocument(write: DayContent, version: number = DOCUMENT_VERSION, within?: PathTree): Record<string, unknown> {
  const doc: Record<string, unknown> = { ...storedIdentity(write, version), fields: {}, hours: {} };
  for (const [path, slot] of write.slots) {
    // A rollup's quarter hours keep statistics only: no first and last readings (see `HourSlot.quarters`).
    if (kept(doc, path, within)) setPath(doc, path, slotAsStored(slot, !isQuarterPath(path)));
    const sketch = slot.sketch;
    if (sketch === null) continue;
    const at = sketchPathOf(path);
    if (kept(doc, at, within)) setPath(doc, at, Object.fromEntries(sketch));
  }
  for (const [path, bins] of write.quarters) {
    const at = sketchPathOf(path);
    if (kept(doc, at, within)) setPath(doc, at, Object.fromEntries(bins));
  }
  if (write.recent.length > 0 && (within === undefined || 'recent' in within)) {
    doc.recent = [...write.recent]
      .sort((a, b) => a.t - b.t)
      .slice(-write.recentKept)
      .map((reading) => ({ t: new Date(reading.t), f: reading.f }));
  }
  return doc;
}

/**
 * The document a write makes in the raw form (see `SeriesDayDocument.r`), or null when the
 * write cannot be written so: it holds more than `most` readings, or not all of its
 * readings (its latest readings keep fewer than it has: a metric keeping fewer latest
 * readings than `most`), or it is a counter's (its slots keep `inc`, which the raw form
 * does not: `rawContentOf` could not give it back to a compaction; a compaction also passes
 * 0 for a counter whose increases it found unknown), or its slots are not whole (see
 * {@link wholeSlots}). Pure. The identity and the day totals (`fields`) are those of
 * {@link slotFormDocument}; instead of hours, sketches and latest readings it keeps every
 * reading, oldest first, its values as doubles (as the slot form's statistics are: a
 * square of an int32 would be a 64-bit integer on the server), with the sketch bin key
 * of each value of a field the write sketches, and the levels it sketches (`kl`, see
 * `RAW_SKETCH_BITS`): what the slot form's sketches would count, and where.
 */
export function rawFormDocument(write: DayContent, most: number, version: number = DOCUMENT_VERSION): Record<string, unknown> | null {
  if (write.readings > most || write.recent.length !== write.readings) return null;
  for (const slot of write.slots.values()) if (slot.inc !== undefined) return null;
  const fields: Record<string, unknown> = {};
  const sketched = new Set<string>();
  const levels = new Set<SlotLevel>();
  for (const [path, slot] of write.slots) {
    const level = slotLevelOf(path);
    if (slot.sketch !== null) {
      levels.add(level);
      sketched.add(fieldOfPath(path));
    }
    if (level === 'day') fields[fieldOfPath(path)] = slotAsStored(slot);
  }
  for (const path of write.quarters.keys()) {
    levels.add('quarter');
    sketched.add(fieldOfPath(path));
  }
  if (!wholeSlots(write, sketched, levels)) return null;
  const r = [...write.recent]
    .sort((a, b) => a.t - b.t)
    .map((reading) => {
      const keys = Object.entries(reading.f).filter(([field]) => sketched.has(field));
      return {
        t: new Date(reading.t),
        f: Object.fromEntries(Object.entries(reading.f).map(([field, value]) => [field, new Double(value)])),
        ...(keys.length === 0 ? {} : { k: Object.fromEntries(keys.map(([field, value]) => [field, sketchKey(value)])) }),
      };
    });
  return {
    ...storedIdentity(write, version),
    fields,
    r,
    ...(levels.size === 0 ? {} : { kl: [...levels].reduce((sum, level) => sum + RAW_SKETCH_BITS[level], 0) }),
  };
}

/**
 * Whether a write's slots are what its readings alone would make, so that the raw form,
 * which keeps only the readings, says the same: every field's minute slots count every
 * reading of its day (none trimmed away at a retention horizon, `trimToHorizons`), and
 * every field of `sketched` has at each level of `levels`, in every slot, a sketch
 * counting every reading of the slot, and no sketch elsewhere. A compaction of parts
 * written under other statistics settings (sketches of some readings only) is not.
 */
function wholeSlots(write: DayContent, sketched: ReadonlySet<string>, levels: ReadonlySet<SlotLevel>): boolean {
  const days = new Map<string, number>();
  const minutes = new Map<string, number>();
  const quarters = new Map<string, number>();
  const add = (into: Map<string, number>, field: string, n: number) => into.set(field, (into.get(field) ?? 0) + n);
  for (const [path, slot] of write.slots) {
    const field = fieldOfPath(path);
    const level = slotLevelOf(path);
    if (level === 'day') days.set(field, slot.stats.n);
    else if (level === 'minute') add(minutes, field, slot.stats.n);
    const kept = sketched.has(field) && levels.has(level);
    if (kept ? slot.sketch === null || sketchCount(slot.sketch) !== slot.stats.n : slot.sketch !== null) return false;
  }
  for (const [path, bins] of write.quarters) add(quarters, fieldOfPath(path), sketchCount(bins));
  for (const [field, n] of days) {
    if (minutes.get(field) !== n) return false;
    if (levels.has('quarter') && sketched.has(field) && quarters.get(field) !== n) return false;
  }
  return true;
}

/** The level of a slot path (`fields.delay`: day, `hours.7.fields.delay`: hour, `hours.7.minutes.30.delay`: minute). */
const slotLevelOf = (path: string): SlotLevel =>
  path.startsWith('fields.') ? 'day' : isMinutePath(path) ? 'minute' : isQuarterPath(path) ? 'quarter' : 'hour';

/** The field of a slot or quarter-hour sketch path: its last step (`hours.7.fields.delay`: `delay`). */
const fieldOfPath = (path: string) => path.slice(path.lastIndexOf('.') + 1);

/**
 * The whole document of a part: a series-day write (or rollup group-day write) as the
 * document `slotFormDocument` makes, of layout version `version`, with the fold (or
 * compaction) number `f` and the `_id` `"<series>:<day ms>:<f>"`, so a second attempt
 * of the same fold inserts the same ids and fails on them (error 11000) instead of
 * adding the readings twice. In the forms `forms` allows: the raw form
 * (`rawFormDocument`) when the write can be (at most `forms.rawReadings` readings, all of
 * them among its latest readings, not a counter's); else the slot form, with the minutes
 * of each hour of at least `forms.packedMinutes` minutes packed where they can be
 * (`packHours`).
 */
export function partDocument(
  write: DayContent,
  fold: number,
  version: number = DOCUMENT_VERSION,
  forms: Readonly<DocumentForms> = SLOT_FORM,
): Record<string, unknown> {
  const raw = forms.rawReadings > 0 ? rawFormDocument(write, forms.rawReadings, version) : null;
  const doc = raw ?? slotFormDocument(write, version);
  if (raw === null) packHours(doc, forms.packedMinutes);
  return { _id: `${write.series}:${write.date.getTime()}:${fold}`, ...doc, f: fold };
}

/**
 * The parts of a fold's writes, one per write ({@link partDocument} with fold number
 * `fold` and the current layout version), in the forms `forms` allows (by default the
 * slot form only: rollups). Pure.
 */
export function foldDocuments(
  writes: readonly DayContent[],
  fold: number,
  forms: Readonly<DocumentForms> = SLOT_FORM,
): Record<string, unknown>[] {
  return writes.map((write) => partDocument(write, fold, DOCUMENT_VERSION, forms));
}

/**
 * `doc` cut down to the paths of `tree`, as an inclusion `$project` cuts it (keys in the
 * document's order, embedded documents on a path kept even when nothing inside them
 * is): what the pipeline's own `$project` would keep, plus what its `$match` stages
 * read, done before the tail is sent, so a read ships the paths it needs and not whole
 * documents (sending them whole cost 1.87x in the write-path prototype).
 */
export function projectDocument(doc: Record<string, unknown>, tree: PathTree): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(doc)) {
    const branch = tree[key];
    if (branch === undefined) continue;
    if (branch === true) out[key] = value;
    // An embedded document on a path stays, emptied, as an inclusion `$project` keeps it
    // (pipelines read `$objectToArray` of such a level and need an object, not nothing).
    else if (value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)) {
      out[key] = projectDocument(value as Record<string, unknown>, branch);
    }
  }
  return out;
}
