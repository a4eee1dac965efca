/**
 * The benchmark queries. Each is written twice: as a GraphQL request for ours, and as
 * the equivalent aggregation pipeline for the one-document-per-reading baselines. Both
 * answers are normalized to `field|group|bucket start -> value` so they can be compared
 * before anything is timed.
 */
import type { Document } from 'mongodb';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../../src/model/time.ts';
import type { DataSet } from './datasets.ts';

/** The statistic a query asks for, per bucket or over the range. */
export type Stat = 'max' | 'avg' | 'count';
/** The bucket width of a query (UTC calendar units). */
export type Unit = 'minute' | 'hour' | 'day' | 'month';

/** A benchmark query in both forms. */
export interface BenchQuery {
  name: string;
  description: string;
  /** The stored level ours needs: minute queries are held to a lower target than hour and coarser. */
  unit: Unit | 'range';
  graphql: string;
  pipeline(dateTrunc: boolean): Document[];
  fromGraphql(data: Record<string, unknown>): Map<string, number>;
  fromRows(rows: Document[]): Map<string, number>;
}

const GRANULARITY: Record<Unit, string> = { minute: 'MINUTE', hour: 'HOUR', day: 'DAY', month: 'MONTH' };
const UNIT_MS: Record<Exclude<Unit, 'month'>, number> = { minute: MINUTE_MS, hour: HOUR_MS, day: DAY_MS };

/** Start of the `unit` holding `$time`: `$dateTrunc` when the server has it, date arithmetic otherwise. */
export function truncate(unit: Unit, dateTrunc: boolean): Document {
  if (dateTrunc) return { $dateTrunc: { date: '$time', unit } };
  if (unit === 'month') return { $dateFromParts: { year: { $year: '$time' }, month: { $month: '$time' } } };
  return { $subtract: ['$time', { $mod: [{ $toLong: '$time' }, UNIT_MS[unit]] }] };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** What a benchmark query asks: fields and statistic, bucket unit, range, entities and whether it answers per entity. */
export interface Spec {
  name: string;
  description: string;
  data: DataSet;
  fields: readonly string[];
  stat: Stat;
  /** null: one value over the whole range (an aggregate). */
  unit: Unit | null;
  from: number;
  to: number;
  /** Entities (hosts, origins) to keep; all when omitted. */
  entities?: readonly string[];
  /** One answer per entity instead of one over all of them. */
  perEntity: boolean;
}

function accumulator(stat: Stat, field: string): Document {
  if (stat === 'count') return { $sum: 1 };
  return { [`$${stat}`]: `$fields.${field}` };
}

/** Builds a {@link BenchQuery} from a specification. */
export function build(spec: Spec): BenchQuery {
  const { data, fields, stat, unit, from, to, entities, perEntity } = spec;
  const where = entities ? `, where: [{key: "${data.entityTag}", in: ${JSON.stringify(entities)}}]` : '';
  const groupBy = perEntity ? `, groupBy: ["${data.entityTag}"]` : '';
  const metric = data.readings[0]!.metric;
  const selections = fields.map((field, i) =>
    unit === null
      ? `q${i}: aggregate(metric: "${metric}", field: "${field}", from: "${iso(from)}", to: "${iso(to)}"${where}${groupBy}) { tags { value } ${stat} }`
      : `q${i}: buckets(metric: "${metric}", field: "${field}", granularity: ${GRANULARITY[unit]}, from: "${iso(from)}", to: "${iso(to)}"${where}${groupBy}, fill: NONE) { tags { value } buckets { start ${stat} } }`,
  );
  return {
    name: spec.name,
    description: spec.description,
    unit: unit ?? 'range',
    graphql: `{ ${selections.join('\n')} }`,
    pipeline(dateTrunc) {
      const match: Document = { metric, time: { $gte: new Date(from), $lt: new Date(to) } };
      // One entity: an equality, as a user would write it (and as every planner handles).
      if (entities) match[`tags.${data.entityTag}`] = entities.length === 1 ? entities[0] : { $in: [...entities] };
      const id: Document = {};
      if (unit) id.t = truncate(unit, dateTrunc);
      if (perEntity) id.g = `$tags.${data.entityTag}`;
      const group: Document = { _id: Object.keys(id).length ? id : null };
      fields.forEach((field, i) => {
        group[`q${i}`] = accumulator(stat, field);
      });
      return [{ $match: match }, { $group: group }];
    },
    fromGraphql(answer) {
      const values = new Map<string, number>();
      fields.forEach((field, i) => {
        const value = answer[`q${i}`] as ({ tags: { value: string }[] } & Record<string, unknown>)[];
        for (const group of value) {
          const g = group.tags[0]?.value ?? '';
          if (unit === null) {
            if ((group.count as number | undefined) !== 0) values.set(`${field}|${g}|all`, group[stat] as number);
            continue;
          }
          for (const bucket of group.buckets as Record<string, unknown>[]) {
            values.set(`${field}|${g}|${Date.parse(bucket.start as string)}`, bucket[stat] as number);
          }
        }
      });
      return values;
    },
    fromRows(rows) {
      const values = new Map<string, number>();
      for (const row of rows) {
        const id = (row._id ?? {}) as { t?: Date; g?: string };
        fields.forEach((field, i) => {
          values.set(`${field}|${perEntity ? (id.g ?? '') : ''}|${unit === null ? 'all' : id.t!.getTime()}`, row[`q${i}`] as number);
        });
      }
      return values;
    },
  };
}

/** A window of `length` ms inside the data, starting `fraction` of the way in (whole minutes), clipped to the data. */
function window(data: DataSet, length: number, fraction: number, align = 60_000): [number, number] {
  const spanMs = data.to - data.from;
  if (length >= spanMs) return [data.from, data.to];
  let start = data.from + Math.floor(((spanMs - length) * fraction) / align) * align;
  if (start < data.from) start = data.from;
  return [start, start + length];
}

const H = 3_600_000;
const D = 24 * H;

/** The TSBS query types on dense data, plus daily and monthly rollups over the whole range. */
export function denseQueries(data: DataSet): BenchQuery[] {
  const hosts = data.entities;
  const one = [hosts[Math.min(3, hosts.length - 1)]!];
  const eight = hosts.slice(0, Math.min(8, hosts.length));
  const [a1, b1] = window(data, H, 0.37);
  const [a12, b12] = window(data, 12 * H, 0.21);
  const [a8, b8] = window(data, 8 * H, 0.5, H);
  const [end5] = window(data, 5 * 60_000, 0.83);
  return [
    build({
      name: 'single-groupby-1-1-1',
      description: 'max of 1 field per minute, 1 host, 1 h',
      data,
      fields: ['usage_user'],
      stat: 'max',
      unit: 'minute',
      from: a1,
      to: b1,
      entities: one,
      perEntity: false,
    }),
    build({
      name: 'single-groupby-1-8-1',
      description: 'max of 1 field per minute, 8 hosts, 1 h',
      data,
      fields: ['usage_user'],
      stat: 'max',
      unit: 'minute',
      from: a1,
      to: b1,
      entities: eight,
      perEntity: false,
    }),
    build({
      name: 'single-groupby-5-1-12',
      description: 'max of 5 fields per minute, 1 host, 12 h',
      data,
      fields: data.fields.slice(0, 5),
      stat: 'max',
      unit: 'minute',
      from: a12,
      to: b12,
      entities: one,
      perEntity: false,
    }),
    build({
      name: 'cpu-max-all-8',
      description: 'max of all 10 fields per hour, 8 hosts, 8 h',
      data,
      fields: data.fields,
      stat: 'max',
      unit: 'hour',
      from: a8,
      to: b8,
      entities: eight,
      perEntity: false,
    }),
    build({
      name: 'double-groupby-1',
      description: 'mean of 1 field per host per hour, all hosts, 12 h',
      data,
      fields: ['usage_user'],
      stat: 'avg',
      unit: 'hour',
      from: a12 - (a12 % H),
      to: Math.ceil(b12 / H) * H,
      perEntity: true,
    }),
    build({
      name: 'groupby-orderby-limit',
      description: 'max of 1 field per minute, all hosts, the last 5 minutes before a time',
      data,
      fields: ['usage_user'],
      stat: 'max',
      unit: 'minute',
      from: end5,
      to: end5 + 5 * 60_000,
      perEntity: false,
    }),
    build({
      name: 'daily-rollup',
      description: 'mean of 1 field per day, all hosts, whole range',
      data,
      fields: ['usage_user'],
      stat: 'avg',
      unit: 'day',
      from: data.from - (data.from % D),
      to: Math.ceil(data.to / D) * D,
      perEntity: false,
    }),
    build({
      name: 'monthly-rollup',
      description: 'mean of 1 field per month, all hosts, whole range',
      data,
      fields: ['usage_user'],
      stat: 'avg',
      unit: 'month',
      from: data.from - (data.from % D),
      to: Math.ceil(data.to / D) * D,
      perEntity: false,
    }),
  ];
}

/** A window of `length` ms (aligned to `align`) centred on the median time of `entity`'s readings, clipped to the data. */
function windowAround(data: DataSet, entity: string, length: number, align: number): [number, number] {
  const times = data.readings
    .filter((r) => r.tags.some((tag) => tag.key === data.entityTag && tag.value === entity))
    .map((r) => r.time)
    .sort((a, b) => a - b);
  const centre = times[Math.floor(times.length / 2)] ?? data.from;
  const start = Math.max(data.from - (data.from % align), centre - length / 2 - ((centre - length / 2) % align));
  return [start, Math.min(start + length, Math.ceil(data.to / align) * align)];
}

/** One airport at MINUTE over 3 h, HOUR over 2 days, DAY over 14 days, MONTH over the whole range; average delay per origin. */
export function sparseQueries(data: DataSet): BenchQuery[] {
  const airport = [data.entities[0]!];
  const [m3a, m3b] = windowAround(data, airport[0]!, 3 * H, H);
  const [h2a, h2b] = windowAround(data, airport[0]!, 2 * D, H);
  const [d14a, d14b] = windowAround(data, airport[0]!, 14 * D, D);
  const whole: [number, number] = [data.from - (data.from % D), Math.ceil(data.to / D) * D];
  return [
    build({
      name: 'airport-minute-3h',
      description: `flights per minute from ${airport[0]}, 3 h`,
      data,
      fields: ['delay'],
      stat: 'count',
      unit: 'minute',
      from: m3a,
      to: m3b,
      entities: airport,
      perEntity: false,
    }),
    build({
      name: 'airport-hour-2d',
      description: `mean delay per hour from ${airport[0]}, 2 days`,
      data,
      fields: ['delay'],
      stat: 'avg',
      unit: 'hour',
      from: h2a,
      to: h2b,
      entities: airport,
      perEntity: false,
    }),
    build({
      name: 'airport-day-14d',
      description: `mean delay per day from ${airport[0]}, 14 days`,
      data,
      fields: ['delay'],
      stat: 'avg',
      unit: 'day',
      from: d14a,
      to: d14b,
      entities: airport,
      perEntity: false,
    }),
    build({
      name: 'airport-month-all',
      description: `mean delay per month from ${airport[0]}, whole range`,
      data,
      fields: ['delay'],
      stat: 'avg',
      unit: 'month',
      from: whole[0],
      to: whole[1],
      entities: airport,
      perEntity: false,
    }),
    build({
      name: 'per-origin-avg-delay',
      description: 'mean delay per origin airport, whole range',
      data,
      fields: ['delay'],
      stat: 'avg',
      unit: null,
      from: whole[0],
      to: whole[1],
      perEntity: true,
    }),
  ];
}

/** Mean of one field for one entity over growing ranges from the start of the data: 1 h, 1 day, 7 days, everything. */
export function scalingQueries(data: DataSet): { label: string; query: BenchQuery }[] {
  const entity = [data.entities[0]!];
  const start = data.from - (data.from % H);
  const end = Math.ceil(data.to / H) * H;
  return [
    ['1 hour', H],
    ['1 day', D],
    ['7 days', 7 * D],
    ['whole range', end - start],
  ].map(([label, length]) => ({
    label: label as string,
    query: build({
      name: `scaling-${label}`,
      description: `mean of ${data.fields[0]} for ${entity[0]} over ${label}`,
      data,
      fields: [data.fields[0]!],
      stat: 'avg',
      unit: null,
      from: start,
      to: Math.min(start + (length as number), end),
      entities: entity,
      perEntity: false,
    }),
  }));
}

/**
 * Compares two normalized answers: the same keys, values equal to 1e-9 relative.
 * @returns null when they agree, otherwise a short description of the first difference.
 */
export function compareAnswers(a: Map<string, number>, b: Map<string, number>): string | null {
  if (a.size !== b.size) return `${a.size} values vs ${b.size}`;
  for (const [key, value] of a) {
    const other = b.get(key);
    if (other === undefined) return `key ${key} missing`;
    if (Math.abs(value - other) > 1e-9 * Math.max(1, Math.abs(value))) return `${key}: ${value} vs ${other}`;
  }
  return null;
}
