/**
 * Reads against a plain collection: the same readings loaded into the project (GraphQL
 * `recordReadings` in batches of 1,000 with batch ids while the server's folder runs,
 * then folded and compacted as a server would) and into a plain collection of one flat
 * document per reading on the same database server (`insertMany`, the two taking turns
 * batch by batch), with the index a user would create (`{origin: 1, t: 1}` for flights,
 * whose questions filter by origin only; `{hostname: 1, t: 1}` for TSBS). Then the same
 * chart questions of both, taking turns (project, plain, project, ...), the first turn
 * of each a warm-up: the project through GraphQL in process, the plain collection with
 * the `$match`/`$group` pipeline a user writes (`$dateTrunc`, with `timezone` for zoned
 * buckets). Every answer is checked against the other and against a plain loop over the
 * readings in Node before its time counts (counts, minima and maxima exactly, sums and
 * means to 1e-9 relative).
 *
 *   npm run bench:read-peers                              # both data sets (about an hour here)
 *   npm run bench:read-peers -- --dataset sparse --runs 5
 *   npm run bench:read-peers -- --keep .bench-data/read-peers   # load once, ask again later
 *   npm run bench:read-peers -- --keep .bench-data/read-peers --only zoned
 *   npm run bench:read-peers -- --keep .bench-data/read-peers --only minute,single-groupby
 *   MONGODB_URI=mongodb://host:27017 npm run bench:read-peers
 *   MERGE_HERE_DOCUMENTS=0 npm run bench:read-peers -- --keep .bench-data/read-peers   # pipelines only
 *
 * Sparse: January 2001 of flights-3m (`--before 2001-02-01`, as `import:flights` reads
 * it), tags origin and destination, fields delay and distance. Dense: TSBS cpu-only,
 * 100 hosts over one day every 10 s, its query types as `timescale/tsbs` defines them
 * (`cmd/tsbs_generate_queries/uses/devops`): where the project has no way to ask one, the
 * plain figure is printed with `n/a` and the reason; one more question, a dashboard's last
 * hour of one host by minute, is not a TSBS type.
 *
 * `--keep DIR` keeps the embedded database on disk in DIR (and with `MONGODB_URI` keeps
 * the databases): a later run with the same DIR finds the readings there (counts
 * checked, nothing left unfolded) and skips the load, printing the load figures the
 * loading run stored. Prints Markdown on stdout, progress on stderr; exits with 1 when
 * an answer disagrees.
 */
import { TZDate } from '@date-fns/tz';
import { Command } from 'commander';
import type { Document } from 'mongodb';
import { loadConfig, rollupPolicy } from '../../src/config.ts';
import { defineAutomaticRollups } from '../../src/storage/auto-rollups.ts';
import { findRollups, rebuildDirtyDays } from '../../src/storage/rollups.ts';
import { measureBacklog } from '../../src/storage/ingest-log.ts';
import { CollectionName, ensureIndexes, openStore, type Store } from '../../src/storage/store.ts';
import {
  type Answers,
  answerKey,
  batches,
  benchApp,
  benchDatabase,
  bytesAtRest,
  compareAnswerMaps,
  type DataChoice,
  type DataSet,
  datasetOption,
  datasetsOf,
  dateTrunc,
  denseDataSet,
  describeMachine,
  describeServer,
  format,
  graphqlBody,
  type GraphqlBody,
  LOAD_BATCH,
  loopAnswer,
  type PeerStat,
  type PeerUnit,
  PlainCollection,
  plainDocument,
  positiveInt,
  progressLog,
  readingInput,
  readsSummary,
  recordThroughApi,
  seededRandom,
  serverFolder,
  settleLikeServer,
  sparseDataSet,
  table,
  tagValue,
  takingTurns,
} from './harness/index.ts';

const options = new Command()
  .addOption(datasetOption())
  .option('--runs <n>', 'timed runs of each side after its warm-up', positiveInt, 3)
  .option('--only <substrings>', 'only the questions whose name contains this (or one of these, comma-separated)')
  .option('--keep <dir>', 'keep the embedded database on disk in DIR and reuse the readings loaded there')
  .option('--rows <n>', 'sparse: at most n flights of the month (a smaller run)', positiveInt)
  .option('--hosts <n>', 'dense: hosts', positiveInt, 100)
  .option('--hours <n>', 'dense: hours of readings', positiveInt, 24)
  .option(
    '--auto-rollups <on|off>',
    "run the server's rollup pass after the load (automatic rollups defined and backfilled): the server's AUTO_ROLLUPS by default",
  )
  .parse()
  .opts<{
    dataset: DataChoice;
    runs: number;
    only?: string;
    keep?: string;
    rows?: number;
    hosts: number;
    hours: number;
    autoRollups?: string;
  }>();
const log = progressLog('read-peers');

/** A question asked of both: its GraphQL request (or why the project cannot ask it), its pipeline, and how each answer and the plain loop's are normalized. */
interface Question {
  name: string;
  description: string;
  graphql: string | { na: string };
  fromProject?: (data: Record<string, unknown>) => Answers;
  pipeline: Document[];
  fromPlain: (rows: Document[]) => Answers;
  reference: () => Answers;
}

/** A chart question: statistics of fields in buckets (or over the range), filtered by one tag, grouped by one, ranked. */
interface Chart {
  name: string;
  description: string;
  data: DataSet;
  fields: readonly string[];
  stats: readonly PeerStat[];
  from: number;
  to: number;
  unit?: PeerUnit;
  timeZone?: string;
  filter?: { key: string; values: readonly string[] };
  groupBy?: string;
  /** Keep the `limit` groups with the largest `by` of the first field (ties by group value). */
  rank?: { by: PeerStat; limit: number };
}

const iso = (ms: number) => new Date(ms).toISOString();
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const GRANULARITY: Record<PeerUnit, string> = { minute: 'MINUTE', hour: 'HOUR', day: 'DAY', week: 'WEEK' };

/** A {@link Chart} as a {@link Question}: one `buckets` (or `aggregate`) selection per field, one `$group` with an accumulator per field and statistic. */
function chart(c: Chart): Question {
  const metric = c.data.readings[0]!.metric;
  const args = [
    `metric: "${metric}"`,
    `from: "${iso(c.from)}"`,
    `to: "${iso(c.to)}"`,
    ...(c.timeZone ? [`timeZone: "${c.timeZone}"`] : []),
    ...(c.filter ? [`where: [{key: "${c.filter.key}", in: ${JSON.stringify(c.filter.values)}}]`] : []),
    ...(c.groupBy ? [`groupBy: ["${c.groupBy}"]`] : []),
    ...(c.rank ? [`orderBy: {statistic: ${c.rank.by.toUpperCase()}, direction: DESC}`, `limit: ${c.rank.limit}`] : []),
  ].join(', ');
  const stats = c.stats.join(' ');
  const selections = c.fields.map((field, i) =>
    c.unit
      ? `q${i}: buckets(${args}, field: "${field}", granularity: ${GRANULARITY[c.unit]}, fill: NONE) { tags { value } buckets { start ${stats} } }`
      : `q${i}: aggregate(${args}, field: "${field}") { tags { value } ${stats} }`,
  );
  const match: Document = { t: { $gte: new Date(c.from), $lt: new Date(c.to) } };
  if (c.filter) match[c.filter.key] = c.filter.values.length === 1 ? c.filter.values[0] : { $in: [...c.filter.values] };
  const id: Document = {};
  if (c.unit) id.t = dateTrunc(c.unit, c.timeZone);
  if (c.groupBy) id.g = `$${c.groupBy}`;
  const group: Document = { _id: Object.keys(id).length > 0 ? id : null };
  const accumulators: Record<PeerStat, (field: string) => Document> = {
    count: () => ({ $sum: 1 }),
    sum: (f) => ({ $sum: `$${f}` }),
    min: (f) => ({ $min: `$${f}` }),
    max: (f) => ({ $max: `$${f}` }),
    avg: (f) => ({ $avg: `$${f}` }),
  };
  for (const field of c.fields) for (const stat of c.stats) group[`${field}_${stat}`] = accumulators[stat](field);
  const order = c.rank
    ? [{ $sort: { [`${c.fields[0]}_${c.rank.by}`]: -1, '_id.g': 1 } }, { $limit: c.rank.limit }]
    : [{ $sort: { _id: 1 } }];
  return {
    name: c.name,
    description: c.description,
    graphql: `{ ${selections.join('\n')} }`,
    fromProject(data) {
      const answers: Answers = new Map();
      c.fields.forEach((field, i) => {
        for (const g of data[`q${i}`] as ({ tags: { value: string }[] } & Record<string, unknown>)[]) {
          const groupName = g.tags[0]?.value ?? '';
          const rows = c.unit ? (g.buckets as Record<string, unknown>[]) : [g];
          for (const row of rows) {
            const bucket = c.unit ? Date.parse(row.start as string) : 'all';
            for (const stat of c.stats) if (row[stat] !== null) answers.set(answerKey(field, groupName, bucket, stat), row[stat] as number);
          }
        }
      });
      return answers;
    },
    pipeline: [{ $match: match }, { $group: group }, ...order],
    fromPlain(rows) {
      const answers: Answers = new Map();
      for (const row of rows) {
        const rid = (row._id ?? {}) as { t?: Date; g?: string };
        for (const field of c.fields) {
          for (const stat of c.stats) {
            answers.set(
              answerKey(field, c.groupBy ? (rid.g ?? '') : '', c.unit ? rid.t!.getTime() : 'all', stat),
              row[`${field}_${stat}`] as number,
            );
          }
        }
      }
      return answers;
    },
    reference() {
      const stats = c.rank && !c.stats.includes(c.rank.by) ? [...c.stats, c.rank.by] : c.stats;
      const all = loopAnswer(c.data.readings, { ...c, stats });
      if (!c.rank) return all;
      const by = c.rank.by;
      const groups = [...all]
        .filter(([key]) => key.startsWith(`${c.fields[0]}|`) && key.endsWith(`|${by}`))
        .map(([key, value]) => ({ group: key.split('|')[1]!, value }))
        .sort((a, b) => b.value - a.value || (a.group < b.group ? -1 : 1))
        .slice(0, c.rank.limit)
        .map((g) => g.group);
      const kept = new Set(groups);
      return new Map(
        [...all].filter(([key]) => kept.has(key.split('|')[1]!) && c.stats.includes(key.slice(key.lastIndexOf('|') + 1) as PeerStat)),
      );
    },
  };
}

/** `[start, start + length)` of the data, starting `fraction` of the way in, on a whole `align` (ms), clipped to the data. */
function window(data: DataSet, length: number, fraction: number, align = 60_000): [number, number] {
  const span = data.to - data.from;
  if (length >= span) return [data.from, data.to];
  const start = data.from + Math.floor(((span - length) * fraction) / align) * align;
  return [start, start + length];
}

/** `[start, start + length)` on a whole `align` (ms) around the median time of `entity`'s readings, clipped to the data. */
function around(data: DataSet, entity: string, length: number, align: number): [number, number] {
  const times = data.readings.filter((r) => tagValue(r, data.entityTag) === entity).map((r) => r.time);
  times.sort((a, b) => a - b);
  const centre = times[Math.floor(times.length / 2)] ?? data.from;
  const start = Math.max(data.from - (data.from % align), centre - length / 2 - ((centre - length / 2) % align));
  return [start, Math.min(start + length, Math.ceil(data.to / align) * align)];
}

const H = 3_600_000;
const D = 24 * H;

/** The sparse questions: one origin's charts at every unit, zoned days and weeks, five origins by hour, every origin, top 10, five origins by minute. */
function sparseQuestions(data: DataSet): Question[] {
  const origin = data.entities[0]!;
  const five = data.entities.slice(0, 5);
  const one = { key: 'origin', values: [origin] };
  const delay = { data, fields: ['delay'], stats: ['count', 'sum', 'min', 'max', 'avg'] as PeerStat[] };
  const month: [number, number] = [data.from - (data.from % D), Math.ceil(data.to / D) * D];
  const [m3a, m3b] = around(data, origin, 3 * H, H);
  const [h2a, h2b] = around(data, origin, 2 * D, D);
  const [d14a, d14b] = around(data, origin, 14 * D, D);
  const questions = [
    chart({
      ...delay,
      name: 'minute-3h',
      description: `MINUTE buckets over 3 hours, ${origin}`,
      unit: 'minute',
      from: m3a,
      to: m3b,
      filter: one,
    }),
    chart({ ...delay, name: 'hour-2d', description: `HOUR buckets over 2 days, ${origin}`, unit: 'hour', from: h2a, to: h2b, filter: one }),
    chart({
      ...delay,
      name: 'day-14d',
      description: `DAY buckets over 14 days, ${origin}`,
      unit: 'day',
      from: d14a,
      to: d14b,
      filter: one,
    }),
    chart({
      ...delay,
      name: 'day-month',
      description: `DAY buckets over the month, ${origin}`,
      unit: 'day',
      from: month[0],
      to: month[1],
      filter: one,
    }),
  ];
  for (const timeZone of ['America/New_York', 'Asia/Kolkata', 'Asia/Kathmandu']) {
    // The month as local midnights of the zone: its first day to the day after its last.
    const first = new TZDate(month[0], 'UTC');
    const last = new TZDate(month[1], 'UTC');
    const from = new TZDate(first.getFullYear(), first.getMonth(), first.getDate(), timeZone).getTime();
    const to = new TZDate(last.getFullYear(), last.getMonth(), last.getDate(), timeZone).getTime();
    for (const unit of ['day', 'week'] as const) {
      questions.push(
        chart({
          ...delay,
          name: `zoned-${unit}-${timeZone.split('/')[1]!.toLowerCase()}`,
          description: `${unit.toUpperCase()} buckets in ${timeZone} over the local month, ${origin}`,
          unit,
          timeZone,
          from,
          to,
          filter: one,
        }),
      );
    }
  }
  questions.push(
    chart({
      ...delay,
      name: 'hour-month-5-origins',
      description: `HOUR buckets over the month, ${five.length} origins grouped by origin`,
      unit: 'hour',
      from: month[0],
      to: month[1],
      filter: { key: 'origin', values: five },
      groupBy: 'origin',
    }),
    chart({
      ...delay,
      name: 'month-by-origin',
      description: "the month's aggregate grouped by origin (all values)",
      from: month[0],
      to: month[1],
      groupBy: 'origin',
    }),
    chart({
      ...delay,
      name: 'top-10-origins',
      description: 'the 10 origins with the highest mean delay over the month (`orderBy: {statistic: AVG}`, `limit: 10`)',
      from: month[0],
      to: month[1],
      groupBy: 'origin',
      rank: { by: 'avg', limit: 10 },
    }),
  );
  // A dashboard's multi-select: the same three hours by minute, five origins side by side.
  questions.push(
    chart({
      ...delay,
      name: 'minute-3h-5-origins',
      description: `MINUTE buckets over the same 3 hours, ${five.length} origins grouped by origin`,
      unit: 'minute',
      from: m3a,
      to: m3b,
      filter: { key: 'origin', values: five },
      groupBy: 'origin',
    }),
  );
  return questions;
}

/** The TSBS devops query types on cpu-only (`timescale/tsbs`, `cmd/tsbs_generate_queries/uses/devops`). */
function denseQuestions(data: DataSet): Question[] {
  const random = seededRandom(45);
  const pick = (n: number) => {
    const hosts = [...data.entities];
    const chosen: string[] = [];
    while (chosen.length < Math.min(n, data.entities.length)) chosen.push(hosts.splice(Math.floor(random() * hosts.length), 1)[0]!);
    return chosen;
  };
  const fields = data.fields;
  const hosts = (n: number) => ({ key: 'hostname', values: pick(n) });
  const max = { data, stats: ['max'] as PeerStat[] };
  const questions: Question[] = [];
  // single-groupby-M-H-T: max of M fields per minute, H random hosts, a random T-hour window.
  for (const [m, h, t] of [
    [1, 1, 1],
    [1, 1, 12],
    [5, 1, 1],
    [5, 8, 1],
  ] as const) {
    const [from, to] = window(data, t * H, 0.37);
    questions.push(
      chart({
        ...max,
        name: `single-groupby-${m}-${h}-${t}`,
        description: `max of ${plural(m, 'field')} per minute, ${plural(h, 'host')}, ${t} h`,
        fields: fields.slice(0, m),
        unit: 'minute',
        from,
        to,
        filter: hosts(h),
      }),
    );
  }
  // cpu-max-all-N: max of every field per hour, N hosts, 8 hours.
  for (const n of [1, 8]) {
    const [from, to] = window(data, 8 * H, 0.29);
    questions.push(
      chart({
        ...max,
        name: `cpu-max-all-${n}`,
        description: `max of all 10 fields per hour, ${plural(n, 'host')}, 8 h`,
        fields,
        unit: 'hour',
        from,
        to,
        filter: hosts(n),
      }),
    );
  }
  // double-groupby-N: mean of N fields per host per hour, all hosts, 12 hours.
  for (const [label, n] of [
    ['1', 1],
    ['5', 5],
    ['all', 10],
  ] as const) {
    const [from, to] = window(data, 12 * H, 0.21);
    questions.push(
      chart({
        data,
        name: `double-groupby-${label}`,
        description: `mean of ${plural(n, 'field')} per host per hour, all hosts, 12 h`,
        fields: fields.slice(0, n),
        stats: ['avg'],
        unit: 'hour',
        from,
        to,
        groupBy: 'hostname',
      }),
    );
  }
  // high-cpu-N: the readings (all fields) with usage_user above 90, N hosts (or all), 12 hours.
  for (const n of [1, 0]) {
    const [from, to] = window(data, 12 * H, 0.53);
    const filter = n > 0 ? hosts(n) : undefined;
    const keep = (reading: DataSet['readings'][number]) =>
      reading.time >= from &&
      reading.time < to &&
      reading.fields.usage_user! > 90 &&
      (!filter || filter.values.includes(tagValue(reading, 'hostname')!));
    const answers = (rows: { host: string; t: number; values: Record<string, unknown> }[]): Answers =>
      new Map(
        rows.flatMap((row) => fields.map((field) => [answerKey(field, row.host, row.t, 'value'), row.values[field] as number] as const)),
      );
    const match: Document = { t: { $gte: new Date(from), $lt: new Date(to) }, usage_user: { $gt: 90 } };
    if (filter) match.hostname = filter.values[0];
    questions.push({
      name: `high-cpu-${n > 0 ? n : 'all'}`,
      description: `the readings with usage_user > 90, ${n > 0 ? `${n} host` : 'all hosts'}, 12 h`,
      graphql: { na: 'the API answers statistics per bucket, not the readings themselves filtered by value' },
      pipeline: [{ $match: match }],
      fromPlain: (rows) => answers(rows.map((row) => ({ host: row.hostname as string, t: (row.t as Date).getTime(), values: row }))),
      reference: () => answers(data.readings.filter(keep).map((r) => ({ host: tagValue(r, 'hostname')!, t: r.time, values: r.fields }))),
    });
  }
  // lastpoint: the latest reading of every host.
  const latest = (host: string, field: string, time: number, value: number): [string, number][] => [
    [answerKey(field, host, 'all', 'time'), time],
    [answerKey(field, host, 'all', 'value'), value],
  ];
  questions.push({
    name: 'lastpoint',
    description: 'the latest reading of every host (all fields)',
    graphql: `{ ${fields.map((f, i) => `q${i}: latestValues(metric: "cpu", field: "${f}", groupBy: ["hostname"]) { tags { value } latest { time value } }`).join('\n')} }`,
    fromProject: (answer) =>
      new Map(
        fields.flatMap((field, i) =>
          (answer[`q${i}`] as { tags: { value: string }[]; latest: { time: string; value: number } }[]).flatMap((g) =>
            latest(g.tags[0]!.value, field, Date.parse(g.latest.time), g.latest.value),
          ),
        ),
      ),
    pipeline: [
      {
        $group: {
          _id: '$hostname',
          last: { $top: { sortBy: { t: -1 }, output: { t: '$t', ...Object.fromEntries(fields.map((f) => [f, `$${f}`])) } } },
        },
      },
    ],
    fromPlain: (rows) =>
      new Map(
        rows.flatMap((row) => fields.flatMap((f) => latest(row._id as string, f, (row.last.t as Date).getTime(), row.last[f] as number))),
      ),
    reference: () => {
      const last = new Map<string, DataSet['readings'][number]>();
      for (const r of data.readings) {
        const host = tagValue(r, 'hostname')!;
        if ((last.get(host)?.time ?? -1) < r.time) last.set(host, r);
      }
      return new Map([...last].flatMap(([host, r]) => fields.flatMap((f) => latest(host, f, r.time, r.fields[f]!))));
    },
  });
  // groupby-orderby-limit: max of usage_user per minute, the last 5 minutes before a random end.
  const [, end] = window(data, Math.min(H, data.to - data.from), 0.83);
  const lastFive = chart({
    ...max,
    name: 'groupby-orderby-limit',
    description: '',
    fields: ['usage_user'],
    unit: 'minute',
    from: end - 5 * 60_000,
    to: end,
  });
  questions.push({
    ...lastFive,
    description:
      'max of usage_user per minute, the last 5 minutes before a time (plain: every minute from the start, sorted, `$limit: 5`, as TSBS asks; the project asks the 5 minutes: it cannot sort buckets)',
    pipeline: [
      { $match: { t: { $gte: new Date(data.from), $lt: new Date(end) } } },
      { $group: { _id: { t: dateTrunc('minute') }, usage_user_max: { $max: '$usage_user' } } },
      { $sort: { _id: -1 } },
      { $limit: 5 },
    ],
    reference: () => {
      const all = loopAnswer(data.readings, { fields: ['usage_user'], stats: ['max'], from: data.from, to: end, unit: 'minute' });
      return new Map([...all].sort((a, b) => Number(b[0].split('|')[2]) - Number(a[0].split('|')[2])).slice(0, 5));
    },
  });
  // last-hour-1-1: a dashboard's chart (not a TSBS type): max of 1 field per minute, 1 host, the data's last hour.
  const [lastFrom, lastTo] = window(data, H, 1);
  questions.push(
    chart({
      ...max,
      name: 'last-hour-1-1',
      description: "max of 1 field per minute, 1 host, the data's last hour (a dashboard's chart; not a TSBS type)",
      fields: fields.slice(0, 1),
      unit: 'minute',
      from: lastFrom,
      to: lastTo,
      filter: hosts(1),
    }),
  );
  return questions;
}

/** What a load measured, kept with the plain collection (`load` collection) for runs that reuse the data. */
interface LoadFigures {
  date: string;
  readings: number;
  /** Seconds of the project's acknowledgements (sum over its batches) and of the plain collection's `insertMany`. */
  projectSeconds: number;
  plainSeconds: number;
  /** Seconds after the last acknowledgement until every reading was folded and the due compactions made. */
  settleSeconds: number;
  compactions: number;
  refusals: number;
}

/** Loads `data` into both sides, taking turns batch by batch, unless a kept database already holds it all. */
async function load(
  data: DataSet,
  store: Store,
  plain: PlainCollection,
  app: ReturnType<typeof benchApp>,
): Promise<{ figures: LoadFigures; reused: boolean }> {
  const kept = await plain.db.collection<LoadFigures & { _id: string }>('load').findOne({ _id: 'figures' });
  if (kept !== null && kept.readings === data.readings.length && (await plain.count()) === kept.readings) {
    const metric = data.readings[0]!.metric;
    const body = await graphqlBody<{ aggregate: { count: number }[] }>(
      app,
      `{ aggregate(metric: "${metric}", field: "${data.fields[0]}", from: "${iso(data.from - D)}", to: "${iso(data.to + D)}") { count } }`,
    );
    const backlog = await measureBacklog(store);
    if (body.data!.aggregate[0]?.count === data.readings.length && backlog.readings === 0) return { figures: kept, reused: true };
  }
  log(`loading ${data.readings.length} readings into both sides, taking turns`);
  await store.db.dropDatabase();
  await ensureIndexes(store.db);
  await plain.db.dropDatabase();
  await plain.reset();
  const folder = serverFolder(store);
  const figures: LoadFigures = {
    date: new Date().toISOString().slice(0, 10),
    readings: data.readings.length,
    projectSeconds: 0,
    plainSeconds: 0,
    settleSeconds: 0,
    compactions: 0,
    refusals: 0,
  };
  try {
    for (const [i, batch] of batches(data.readings, LOAD_BATCH).entries()) {
      const inputs = batch.map(readingInput);
      const docs = batch.map(plainDocument);
      let started = performance.now();
      figures.refusals += await recordThroughApi(app, inputs, `read-peers-${data.name}-${i}`);
      figures.projectSeconds += (performance.now() - started) / 1000;
      started = performance.now();
      await plain.insert(docs);
      figures.plainSeconds += (performance.now() - started) / 1000;
      if (i % 50 === 49)
        log(`${(i + 1) * LOAD_BATCH} readings: project ${figures.projectSeconds.toFixed(0)} s, plain ${figures.plainSeconds.toFixed(0)} s`);
    }
  } finally {
    await folder.stop();
  }
  const started = performance.now();
  figures.compactions = (await settleLikeServer(store)).compactions;
  figures.settleSeconds = (performance.now() - started) / 1000;
  await plain.db.collection<LoadFigures & { _id: string }>('load').replaceOne({ _id: 'figures' }, figures, { upsert: true });
  return { figures, reused: false };
}

/** Asks every question of both sides, checks the answers, and prints the table. @returns the disagreements. */
async function ask(data: DataSet, questions: Question[], app: ReturnType<typeof benchApp>, plain: PlainCollection): Promise<string[]> {
  const failures: string[] = [];
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const q of questions) {
    log(`${q.name}: ${q.description}`);
    const expected = q.reference();
    const request = q.graphql;
    const project = typeof request === 'string' ? () => graphqlBody<Record<string, unknown>>(app, request) : null;
    const turns = await takingTurns<GraphqlBody<Record<string, unknown>>, Document[]>(
      project,
      () => plain.aggregate(q.pipeline),
      options.runs,
    );
    const checks: string[] = [];
    if (turns.b.error) checks.push(`plain failed: ${turns.b.error.message}`);
    else {
      const off = compareAnswerMaps(expected, q.fromPlain(turns.b.first!));
      if (off) checks.push(`plain against the loop: ${off}`);
    }
    let projectCell = 'n/a';
    let ratio = 'n/a';
    let reads = '';
    if (typeof q.graphql !== 'string') notes.push(`- ${q.name}: n/a for the project: ${q.graphql.na}.`);
    else if (turns.a!.error || turns.a!.first === undefined) {
      const code = (turns.a!.error as { code?: string } | undefined)?.code ?? turns.a!.error?.message ?? 'no answer';
      projectCell = `${code} (${format.ms(turns.a!.median)})`;
      notes.push(
        `- ${q.name}: the project answered ${code} (median of its runs until the error: ${format.count(Math.round(turns.a!.median))} ms).`,
      );
    } else {
      const off = compareAnswerMaps(expected, q.fromProject!(turns.a!.first.data!));
      if (off) checks.push(`project against the loop: ${off}`);
      projectCell = format.ms(turns.a!.median);
      ratio = format.ratio(turns.a!.median / turns.b.median);
      reads = readsSummary(turns.a!.first.extensions?.reads);
    }
    for (const check of checks) failures.push(`${data.name} ${q.name}: ${check}`);
    rows.push([
      `${q.name}: ${q.description}`,
      projectCell,
      format.ms(turns.b.median),
      ratio,
      reads,
      checks.length > 0
        ? 'DIFFER'
        : reads === ''
          ? `agree (${format.count(expected.size)} values, the plain collection's)`
          : `agree (${format.count(expected.size)} values)`,
    ]);
  }
  console.log(
    [
      ...table(
        ['question', 'project ms', 'plain ms', 'project / plain', 'project read (`extensions.reads`)', 'answers vs the loop'],
        'lrrrll',
        rows,
      ),
      ...(notes.length > 0 ? ['', ...notes] : []),
      '',
    ].join('\n'),
  );
  return failures;
}

const config = loadConfig();
const database = await benchDatabase(log, options.keep === undefined ? {} : { dataDir: options.keep });
const failures: string[] = [];
try {
  for (const name of datasetsOf(options.dataset)) {
    const data =
      name === 'sparse' ? await sparseDataSet(new Date('2001-02-01T00:00:00Z'), options.rows) : denseDataSet(options.hosts, options.hours);
    const dbName = options.keep === undefined ? `bench_read_peers_${name}_${Date.now()}` : `read_peers_${name}`;
    // Reads merge their documents in process as the server's configuration says (`MERGE_HERE_DOCUMENTS=0`: pipelines only).
    const store = await openStore(database.uri, dbName, { mergeHereDocuments: config.MERGE_HERE_DOCUMENTS });
    const plain = new PlainCollection(store.client.db(`${dbName}_plain`), [
      name === 'sparse' ? { origin: 1, t: 1 } : { hostname: 1, t: 1 },
    ]);
    try {
      // The request limits of a server started with the environment's configuration.
      const app = benchApp(store, { limits: { maxBatchSize: config.MAX_BATCH_SIZE, maxBuckets: config.MAX_BUCKETS } });
      const { figures, reused } = await load(data, store, plain, app);
      // A kept database loaded by an earlier tree: the compactions the server's folder
      // makes now, on its first looks (none when nothing became due).
      const caughtUp = reused ? (await settleLikeServer(store)).compactions : 0;
      // The server's rollup pass, as its job runs it after an import: automatic rollups defined and backfilled.
      const policy = { ...rollupPolicy(config), ...(options.autoRollups === undefined ? {} : { enabled: options.autoRollups === 'on' }) };
      const passStarted = performance.now();
      const defined = await defineAutomaticRollups(store, policy);
      const rebuilt = await rebuildDirtyDays(store, 0);
      const passSeconds = (performance.now() - passStarted) / 1000;
      const rollups = (await findRollups(store, [data.readings[0]!.metric])).map(
        (rollup) => `${rollup.name} [${rollup.tagKeys.join(', ')}]`,
      );
      const rest = await bytesAtRest(store);
      const plainBytes = await plain.bytes();
      const bytes = {
        project: rest.total,
        plain: plainBytes.data + plainBytes.index,
        documents: rest.collections.find((c) => c.name === CollectionName.seriesDays)!.documents,
        via: rest.via === plainBytes.via ? rest.via : `${rest.via} / ${plainBytes.via}`,
      };
      const server = await describeServer(store.client, database.embedded);
      console.log(`## ${name}: ${data.description}\n`);
      console.log(
        `${new Date().toISOString().slice(0, 10)}; ${server}${database.onDisk ? ', data on disk' : ''}; ${describeMachine()}; medians of ${options.runs} runs after a warm-up, taking turns.\n`,
      );
      console.log(
        [
          ...table(['load', 'readings/s', 'bytes per reading (indexes included)', 'documents'], 'lrrr', [
            [
              `project: \`recordReadings\` batches of ${LOAD_BATCH} with the server's folder running`,
              format.rate(figures.readings / figures.projectSeconds),
              format.count(Math.round(bytes.project / data.readings.length)),
              `${format.count(bytes.documents)} series-day`,
            ],
            [
              `plain collection: \`insertMany\` of ${LOAD_BATCH}, index ${JSON.stringify(plain.indexes[0])}`,
              format.rate(figures.readings / figures.plainSeconds),
              format.count(Math.round(bytes.plain / data.readings.length)),
              format.count(data.readings.length),
            ],
          ]),
          '',
          `Project / plain: ingest ${format.ratio(figures.plainSeconds / figures.projectSeconds)}, bytes ${format.ratio(bytes.project / bytes.plain)}. The project's fold and due compactions (${figures.compactions}) finished ${figures.settleSeconds.toFixed(1)} s after its last acknowledgement; ${figures.refusals} INGEST_BACKLOG refusals waited out. Bytes: \`storageSize\` + \`totalIndexSize\` from \`${bytes.via}\`, every collection of the project but the ingest log, rollups included, measured after the rollup pass.${reused ? ` Loaded on ${figures.date} into the kept database (\`--keep\`); readings/s of that load.` : ''}`,
          '',
        ].join('\n'),
      );
      console.log(
        `${reused ? `Compactions due on the kept database now: ${caughtUp}. ` : ''}Rollup pass (automatic rollups ${policy.enabled ? 'on' : 'off'}): ${defined.length} defined, ${rebuilt.rebuilt} days rebuilt in ${passSeconds.toFixed(1)} s; the metric's rollups: ${rollups.join(', ') || 'none'}.\n`,
      );
      const questions = (name === 'sparse' ? sparseQuestions(data) : denseQuestions(data)).filter(
        (q) => options.only === undefined || options.only.split(',').some((part: string) => q.name.includes(part)),
      );
      failures.push(...(await ask(data, questions, app, plain)));
    } finally {
      if (options.keep === undefined) {
        await store.db.dropDatabase().catch(() => undefined);
        await plain.db.dropDatabase().catch(() => undefined);
      }
      await store.client.close();
    }
  }
} finally {
  await database.stop();
}
if (failures.length > 0) {
  console.error(`Answers differ:\n${failures.join('\n')}`);
  process.exitCode = 1;
}
