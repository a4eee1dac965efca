/**
 * Where bucket-list transforms (rate, difference, cumulativeSum, movingAverage) should
 * run: in the database with `$setWindowFields` (MongoDB 5.0+) or in the engine after
 * the rows arrive. Both start from the same pipeline rows, 10 groups x 10,000 minute
 * buckets (10% of the buckets empty, so not returned), stored as they come out of the
 * bucket pipeline's `$group`, so only the transform's own cost differs:
 * - engine: the rows are shipped, shaped into bucket lists (`shapeBucketGroups`, the
 *   buckets with readings), listed with every bucket of the range (`fillBuckets`,
 *   `NULL`) and transformed (`transformBuckets`);
 * - window: `$setWindowFields` (or `$addFields` for rate) computes `value` per row in
 *   the pipeline, the rows are shipped with it and shaped the same way (the API needs
 *   the bucket lists anyway), each bucket taking its row's value.
 * Both answers are compared before anything is timed. Prints a Markdown table.
 *
 *   npx tsx scripts/bench/transforms.ts          # embedded SecantusDB
 *   MONGODB_URI=mongodb://... npx tsx scripts/bench/transforms.ts
 *   npx tsx scripts/bench/transforms.ts --groups 10 --buckets 10000 --reps 5
 */
import { Command } from 'commander';
import type { Document } from 'mongodb';
import type { BucketRow } from '../../src/query/buckets-pipeline.ts';
import { fillBuckets } from '../../src/query/fill.ts';
import { granularity } from '../../src/query/granularity.ts';
import { shapeBucketGroups, type BucketGroup } from '../../src/query/shape.ts';
import { transformBuckets, type Transform } from '../../src/query/transforms.ts';
import { MINUTE_MS } from '../../src/model/time.ts';
import { format, median, withBenchDatabase } from './harness/index.ts';

const options = new Command()
  .name('bench:transforms')
  .option('--groups <n>', 'groups', Number, 10)
  .option('--buckets <n>', 'minute buckets per group', Number, 10_000)
  .option('--reps <n>', 'timed repetitions (after one warm-up)', Number, 5)
  .option('--only <names>', 'comma-separated transforms to run, e.g. rate,difference')
  .parse()
  .opts<{ groups: number; buckets: number; reps: number; only?: string }>();

const FROM = Date.UTC(2001, 0, 1);
const TO = FROM + options.buckets * MINUTE_MS;
const MINUTE = granularity('MINUTE');
const spans = Array.from({ length: options.buckets }, (_, i) => ({
  start: new Date(FROM + i * MINUTE_MS),
  end: new Date(FROM + (i + 1) * MINUTE_MS),
  partial: false,
  localStart: new Date(FROM + i * MINUTE_MS).toISOString(),
}));

await withBenchDatabase(async (_database, client) => {
  const rowsCollection = client.db('bench_transforms').collection<Document>('rows');
  try {
    await rowsCollection.drop().catch(() => undefined);
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    let rows: Document[] = [];
    let inserted = 0;
    for (let g = 0; g < options.groups; g++) {
      for (let i = 0; i < options.buckets; i++) {
        if (next() < 0.1) continue;
        const n = 1 + Math.floor(next() * 10);
        const values = Array.from({ length: n }, () => Math.round(next() * 1000) / 4);
        rows.push({
          _id: { t: new Date(FROM + i * MINUTE_MS), g: { host: `h${g}` } },
          n0: n,
          sum0: values.reduce((s, v) => s + v, 0),
          min0: Math.min(...values),
          max0: Math.max(...values),
          sq0: values.reduce((s, v) => s + v * v, 0),
        });
        if (rows.length === 10_000) {
          await rowsCollection.insertMany(rows);
          inserted += rows.length;
          rows = [];
        }
      }
    }
    if (rows.length > 0) await rowsCollection.insertMany(rows);
    inserted += rows.length;
    console.error(`${inserted} rows in ${options.groups} groups of ${options.buckets} minute buckets`);

    const range = { from: FROM, to: TO, cut: MINUTE.cut, fill: 'NONE' as const, groupBy: ['host'] };
    const avg = { $divide: ['$sum0', '$n0'] };
    const byGroup = { partitionBy: '$_id.g', sortBy: { '_id.t': 1 } };
    const cases: { name: string; transform: Transform; stages: Document[] }[] = [
      { name: 'rate', transform: { kind: 'rate' }, stages: [{ $addFields: { value: { $divide: [avg, 60] } } }] },
      {
        name: 'difference',
        transform: { kind: 'difference' },
        stages: [
          { $addFields: { x: avg } },
          {
            $setWindowFields: {
              ...byGroup,
              output: { before: { $shift: { output: '$x', by: -1 } }, beforeT: { $shift: { output: '$_id.t', by: -1 } } },
            },
          },
          // Only between adjacent buckets: an empty bucket is a missing row here.
          {
            $addFields: {
              value: { $cond: [{ $eq: [{ $subtract: ['$_id.t', '$beforeT'] }, MINUTE_MS] }, { $subtract: ['$x', '$before'] }, null] },
            },
          },
        ],
      },
      {
        name: 'cumulativeSum',
        transform: { kind: 'cumulativeSum' },
        stages: [{ $setWindowFields: { ...byGroup, output: { value: { $sum: avg, window: { documents: ['unbounded', 'current'] } } } } }],
      },
      ...[10, 1000].map((window) => ({
        name: `movingAverage(${window})`,
        transform: { kind: 'movingAverage', window } as Transform,
        stages: [{ $setWindowFields: { ...byGroup, output: { value: { $avg: avg, window: { documents: [-(window - 1), 'current'] } } } } }],
      })),
    ];

    /** Engine: ship the rows, shape, fill, transform. Returns the values and the time of the JS part. */
    const engine = async (transform: Transform) => {
      const rows = await rowsCollection.aggregate<BucketRow>([{ $match: {} }]).toArray();
      const started = performance.now();
      const groups = shapeBucketGroups(rows, range).map((group) => ({
        tags: group.tags,
        buckets: transformBuckets(fillBuckets(spans, group.buckets, 'NULL'), { statistic: 'avg', transform, range }),
      }));
      return { groups, js: performance.now() - started };
    };
    /** Window: the database computes `value`; the rows are shaped and each bucket takes its row's value. */
    const windowed = async (stages: Document[]) => {
      const rows = await rowsCollection.aggregate<BucketRow & { value: number | null }>([{ $match: {} }, ...stages]).toArray();
      const valueByKey = new Map(rows.map((row) => [`${JSON.stringify(row._id!.g)}\u0000${row._id!.t!.getTime()}`, row.value]));
      return shapeBucketGroups(rows, range).map((group: BucketGroup) => ({
        tags: group.tags,
        buckets: fillBuckets(spans, group.buckets, 'NULL').map((b) => ({
          // Field by field, as transformBuckets builds its buckets (a spread is much slower).
          start: b.start,
          end: b.end,
          count: b.count,
          sum: b.sum,
          min: b.min,
          max: b.max,
          avg: b.avg,
          variance: b.variance,
          stddev: b.stddev,
          sampleStddev: b.sampleStddev,
          filled: b.filled,
          value: valueByKey.get(`${JSON.stringify({ host: group.tags[0]!.value })}\u0000${b.start.getTime()}`) ?? null,
        })),
      }));
    };

    console.log(
      `| transform | engine: rows shipped, engine computes (ms) | of which engine JS (ms) | $setWindowFields (ms) | window / engine |`,
    );
    console.log('| --- | ---: | ---: | ---: | ---: |');
    const only = options.only?.split(',');
    for (const { name, transform, stages } of cases.filter((c) => only === undefined || only.includes(c.name))) {
      // Answers first: the window's values must be the engine's on every non-empty bucket.
      const ours = (await engine(transform)).groups;
      const theirs = await windowed(stages);
      let compared = 0;
      ours.forEach((group, g) => {
        group.buckets.forEach((bucket, i) => {
          if (bucket.count === 0) return;
          const other = theirs[g]!.buckets[i]!.value;
          const same =
            bucket.value === other ||
            (bucket.value !== null && other !== null && Math.abs(bucket.value - other) <= 1e-9 * Math.max(1, Math.abs(bucket.value)));
          if (!same)
            throw new Error(`${name}: ${group.tags[0]!.value} ${bucket.start.toISOString()}: engine ${bucket.value}, window ${other}`);
          compared += 1;
        });
      });
      const engineRuns: number[] = [];
      const jsRuns: number[] = [];
      const windowRuns: number[] = [];
      for (let rep = 0; rep < options.reps; rep++) {
        let started = performance.now();
        const { js } = await engine(transform);
        engineRuns.push(performance.now() - started);
        jsRuns.push(js);
        started = performance.now();
        await windowed(stages);
        windowRuns.push(performance.now() - started);
      }
      const [e, j, w] = [median(engineRuns), median(jsRuns), median(windowRuns)];
      console.log(`| ${name} | ${format.ms(e)} | ${format.ms(j)} | ${format.ms(w)} | ${format.ratio(w / e)} |`);
      console.error(
        `${name}: ${compared} values agree; engine ${engineRuns.map(format.ms).join(' ')}; window ${windowRuns.map(format.ms).join(' ')}`,
      );
    }

    // The engine's JS share, step by step, on rows already fetched.
    const fetched = await rowsCollection.aggregate<BucketRow>([{ $match: {} }]).toArray();
    const steps: Record<string, number[]> = {};
    const step = <T>(name: string, run: () => T): T => {
      const started = performance.now();
      const result = run();
      steps[name] ??= [];
      steps[name].push(performance.now() - started);
      return result;
    };
    for (let rep = 0; rep <= options.reps; rep++) {
      const groups = step('shapeBucketGroups (buckets with readings)', () => shapeBucketGroups(fetched, range));
      const filled = step('fillBuckets NULL', () => groups.map((group) => fillBuckets(spans, group.buckets, 'NULL')));
      for (const { name, transform } of cases) {
        step(`transformBuckets ${name}`, () => filled.map((buckets) => transformBuckets(buckets, { statistic: 'avg', transform, range })));
      }
    }
    console.log(`\n| engine step, ${fetched.length} rows, ${options.groups * options.buckets} buckets | median ms |\n| --- | ---: |`);
    // The first run of each step warms up and is left out.
    for (const [name, runs] of Object.entries(steps)) console.log(`| ${name} | ${format.ms(median(runs.slice(1)))} |`);
  } finally {
    await rowsCollection.drop().catch(() => undefined);
  }
});
