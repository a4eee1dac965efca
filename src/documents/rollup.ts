/**
 * Rollup documents (docs/rollups.md), pure: series-day contents merged over the
 * series sharing the values of a rollup's tag keys, one document per group and day,
 * day, hour and quarter-hour slots; and which rollups a fold writes now or marks dirty.
 */
import { type ContentPlan, type DayContent, copySlot, mergeSlot } from './content.ts';
import { type RollupDefinition, dayKey } from '../model/rollup.ts';
import { type TagMap, seriesId, seriesKey, sortTags, tagList, tagMap, tagPair } from '../model/series.ts';
import { isMinutePath, SlotPath } from './series-day.ts';

/** The tags of `tags` whose keys a rollup keeps (the others are merged away). */
export function rollupTags(tags: TagMap, tagKeys: readonly string[]): TagMap {
  return tagMap(sortTags(tagKeys.filter((key) => tags[key] !== undefined).map((key) => ({ key, value: tags[key]! }))));
}

/**
 * Merges series-day writes into the writes of one rollup's documents (pure): every
 * write of the rollup's metric goes to the document of its day and of the values its
 * series has for the rollup's tag keys (a series without one of them is merged with the
 * others that lack it), day and hour slots merged, the minute slots merged into the
 * quarter hours that hold them (statistics only: `HourSlot.quarters`; no minute is kept),
 * quarter-hour sketches and latest readings left out. The
 * document's `series` is the id of the rollup group's key (`model/series.ts`), unique
 * within the rollup's collection. Counter increases (`inc`) are left out too: they are
 * per series, and counter queries read the series-day documents.
 */
export function rollupContents(writes: readonly DayContent[], rollup: Pick<RollupDefinition, 'metric' | 'tagKeys'>): DayContent[] {
  const merged = new Map<string, DayContent>();
  // A series writes one document a day: its group's id is hashed once, not once per day.
  const groups = new Map<string, string>();
  for (const write of writes) {
    if (write.metric !== rollup.metric) continue;
    const tags = rollupTags(write.tags, rollup.tagKeys);
    let group = groups.get(write.series);
    if (group === undefined) {
      group = seriesId(seriesKey({ metric: rollup.metric, tags: tagList(tags) }));
      groups.set(write.series, group);
    }
    const key = `${group}:${write.date.getTime()}`;
    let into = merged.get(key);
    if (into === undefined) {
      into = {
        series: group,
        metric: rollup.metric,
        tags,
        tagPairs: tagList(tags).map((tag) => tagPair(tag.key, tag.value)),
        date: write.date,
        slots: new Map(),
        quarters: new Map(),
        recent: [],
        recentKept: 0,
        fields: new Set(),
        first: write.first,
        last: write.last,
        readings: 0,
      };
      merged.set(key, into);
    }
    into.readings += write.readings;
    if (write.first < into.first) into.first = write.first;
    if (write.last > into.last) into.last = write.last;
    for (const field of write.fields) into.fields.add(field);
    for (const [path, slot] of write.slots) {
      // A minute slot adds to its quarter hour's (no sketch: those are the quarter-hour sketches below).
      const at = isMinutePath(path) ? quarterOfMinute(path) : path;
      const existing = into.slots.get(at);
      if (existing === undefined) {
        // A rollup merges series: the increase of a counter is per series, so none is kept.
        const copy = copySlot(slot);
        delete copy.inc;
        if (at !== path) copy.sketch = null;
        into.slots.set(at, copy);
      } else mergeSlot(existing, at === path ? slot : { ...slot, sketch: null });
    }
  }
  return [...merged.values()];
}

/** The path of the quarter-hour slot holding a minute slot (`hours.7.minutes.31.delay`: `hours.7.quarters.2.delay`). */
function quarterOfMinute(path: string): string {
  const [, hour, , minute, ...field] = path.split('.');
  return SlotPath.quarter(Number(hour), Math.floor(Number(minute) / 15), field.join('.'));
}

/** What a batch does to the rollups of its metrics (see {@link planRollups}). */
export interface RollupPlan {
  /** Rollups the batch writes to now, each with its merged document writes. */
  writes: { rollup: RollupDefinition; writes: DayContent[] }[];
  /** Rollups whose days (UTC midnights, ms) the batch marks dirty instead of writing them. */
  dirty: { rollup: RollupDefinition; days: number[] }[];
}

/**
 * Decides, per rollup of the batch's metrics, which days the batch writes to the rollup
 * in the same pass and which it marks dirty for a rebuild from the series-day documents
 * (pure). A day is written when the rollup is `ready`, the day is not dirty and the
 * attempt is a first attempt; a retry of a batch (which may have reached some rollup
 * documents before it failed, and rollup documents keep no batch marks) marks its days
 * dirty, as does any batch while the rollup is `building`.
 */
export function planRollups(plan: ContentPlan, rollups: readonly RollupDefinition[], options: { retry: boolean }): RollupPlan {
  const result: RollupPlan = { writes: [], dirty: [] };
  for (const rollup of rollups) {
    const direct = rollup.state === 'ready' && !options.retry;
    const now: DayContent[] = [];
    const later = new Set<number>();
    for (const write of plan.days) {
      if (write.metric !== rollup.metric) continue;
      if (direct && rollup.dirty?.[dayKey(write.date.getTime())] === undefined) now.push(write);
      else later.add(write.date.getTime());
    }
    if (now.length > 0) result.writes.push({ rollup, writes: rollupContents(now, rollup) });
    if (later.size > 0) result.dirty.push({ rollup, days: [...later] });
  }
  return result;
}
