/**
 * Packed minutes (see `PackedMinutes`): an hour's minute slots as arrays per field, written
 * for hours whose minutes share each minute's count and first and last times, and read
 * back as the object form for a compaction.
 */
import { Double } from 'mongodb';
import { HOUR_MS } from '../model/time.ts';
import { type FieldStats, PACKED_STATISTICS, type PackedMinutes, type PackedStatistic, type StoredStats } from './series-day.ts';

/** A stored number as a JavaScript number (a BSON `Double` built by the writer, or a number read back). */
const numberOf = (value: unknown) => Number(value);

/** A stored `{t, v}` pair's time in ms since epoch. */
const timeOf = (pair: StoredStats['first']) => pair?.t.getTime();

/**
 * The fields of an hour's minute slots when they can be packed (see {@link PackedMinutes}),
 * in the order of the first minute, else null: at least `least` minutes, every minute
 * holding every field with readings, the same count and the same first and last reading
 * times for each field, no counter increase (`inc`, which the packed form does not keep),
 * and no more minutes without readings before the last than minutes with them (the
 * arrays run from minute 0, and an empty minute still costs an element in each).
 */
function packableFields(minutes: Record<string, FieldStats>, least: number): string[] | null {
  const keys = Object.keys(minutes);
  if (least <= 0 || keys.length < least) return null;
  const span = Math.max(...keys.map(Number)) + 1;
  if (span > 2 * keys.length) return null;
  const fields = Object.keys(minutes[keys[0]!]!);
  if (fields.length === 0) return null;
  for (const key of keys) {
    const slots = minutes[key]!;
    if (Object.keys(slots).length !== fields.length) return null;
    const first = slots[fields[0]!]!;
    for (const field of fields) {
      const slot = slots[field];
      if (slot === undefined || 'inc' in slot || !(numberOf(slot.n) > 0)) return null;
      if (
        numberOf(slot.n) !== numberOf(first.n) ||
        timeOf(slot.first) !== timeOf(first.first) ||
        timeOf(slot.last) !== timeOf(first.last)
      ) {
        return null;
      }
      if (slot.first === undefined || slot.last === undefined) return null;
    }
  }
  return fields;
}

/** A statistic as a packed column stores it: a BSON double (typed as the column's number). */
const stored = (value: unknown) => new Double(numberOf(value)) as unknown as number;

/** The packed form of the minute slots of the hour starting at `hourStart` (ms since epoch) whose fields are `fields` (see {@link packableFields}). */
function packed(minutes: Record<string, FieldStats>, fields: readonly string[], hourStart: number): PackedMinutes {
  const span = Math.max(...Object.keys(minutes).map(Number)) + 1;
  const mc: PackedMinutes = {
    n: [],
    tf: [],
    tl: [],
    f: {},
  };
  for (const field of fields) mc.f[field] = { sum: [], sq: [], min: [], max: [], first: [], last: [] };
  for (let minute = 0; minute < span; minute++) {
    const slots = minutes[String(minute)];
    const any = slots?.[fields[0]!];
    mc.n.push(any === undefined ? 0 : numberOf(any.n));
    mc.tf.push(any === undefined ? null : any.first!.t.getTime() - hourStart);
    mc.tl.push(any === undefined ? null : any.last!.t.getTime() - hourStart);
    for (const field of fields) {
      const slot = slots?.[field];
      const columns = mc.f[field]!;
      if (slot === undefined) {
        for (const statistic of PACKED_STATISTICS) columns[statistic].push(null);
        continue;
      }
      columns.sum.push(stored(slot.sum));
      columns.sq.push(stored(slot.sq));
      columns.min.push(stored(slot.min));
      columns.max.push(stored(slot.max));
      columns.first.push(stored(slot.first!.v));
      columns.last.push(stored(slot.last!.v));
    }
  }
  return mc;
}

/**
 * Packs the minute slots of each hour of a series-day document that can be (see
 * {@link PackedMinutes}): its `minutes` object is replaced by `mc`, in place. `doc` is a
 * document as `slotFormDocument` builds it (statistics as BSON doubles, pairs `{t: date, v}`,
 * `date` its day's midnight);
 * `least` the fewest minutes with readings of an hour packed (0: none). Sketches (`q`)
 * are left as they are. Pure but for `doc`.
 */
export function packHours(doc: Record<string, unknown>, least: number): void {
  if (least <= 0) return;
  const hours = doc.hours as Record<string, { minutes?: Record<string, FieldStats>; mc?: PackedMinutes }> | undefined;
  const day = (doc.date as Date).getTime();
  for (const [hour, slot] of Object.entries(hours ?? {})) {
    if (slot.minutes === undefined) continue;
    const fields = packableFields(slot.minutes, least);
    if (fields === null) continue;
    slot.mc = packed(slot.minutes, fields, day + Number(hour) * HOUR_MS);
    delete slot.minutes;
  }
}

/**
 * The minute slots packed in `mc` (see {@link PackedMinutes}) of the hour starting at
 * `hourStart` (ms since epoch, UTC) as the object form keeps them: minute of the hour
 * (`"0"`..`"59"`) -> field -> statistics with their first and last readings (times as
 * dates); minutes without readings left out. Numbers as stored (doubles read as
 * numbers). Pure.
 */
export function unpackedMinutes(mc: PackedMinutes, hourStart: number): Record<string, FieldStats> {
  const minutes: Record<string, FieldStats> = {};
  mc.n.forEach((count, minute) => {
    const n = Number(count);
    if (!(n > 0)) return;
    const tf = new Date(hourStart + Number(mc.tf[minute]));
    const tl = new Date(hourStart + Number(mc.tl[minute]));
    minutes[String(minute)] = Object.fromEntries(
      Object.entries(mc.f).map(([field, columns]) => {
        const at = (statistic: PackedStatistic) => Number(columns[statistic][minute]);
        const stats: StoredStats = {
          n,
          sum: at('sum'),
          sq: at('sq'),
          min: at('min'),
          max: at('max'),
          first: { t: tf, v: at('first') },
          last: { t: tl, v: at('last') },
        };
        return [field, stats];
      }),
    );
  });
  return minutes;
}
