/**
 * Measures series-day document sizes with the `bson` serializer the driver uses: the worst
 * case the limits allow, and typical documents of the two data sets. Prints a Markdown
 * table (quoted in docs/design.md).
 *
 *   npx tsx scripts/measure-document-size.ts
 */
import { calculateObjectSize, Double } from 'bson';
import { daySkeleton } from '../src/model/day-document.ts';
import { Limits } from '../src/model/limits.ts';
import { tagPair } from '../src/model/series.ts';
import { CPU_FIELDS } from './bench/harness/tsbs.ts';

const MIB = 1024 * 1024;
const name = (prefix: string, i: number, length: number) => `${prefix}${i}`.padEnd(length, '_');

/** A day document with every hour and minute slot filled, as a sparse document becomes when full. */
function fullDocument(fields: string[], tagCount: number, tagValueLength: number) {
  const tags: Record<string, string> = {};
  for (let i = 0; i < tagCount; i++) tags[name('tag', i, Limits.nameLength)] = 'v'.repeat(tagValueLength);
  const tagPairs = Object.entries(tags).map(([key, value]) => tagPair(key, value));
  const doc = daySkeleton(
    { series: 'f'.repeat(24), metric: 'm'.repeat(Limits.nameLength), tags, tagPairs, date: new Date(0) },
    fields,
  ) as Record<string, unknown>;
  doc.first = new Date(0);
  doc.last = new Date(0);
  return doc;
}

/** A document holding `readings` readings of two fields in distinct minutes (a sparse route-day). */
function sparseDocument(readings: number) {
  const slot = () => ({ n: new Double(1), sum: new Double(12), min: new Double(12), max: new Double(12), sq: new Double(144) });
  const fields = () => ({ delay: slot(), distance: slot() });
  const hours: Record<string, unknown> = {};
  for (let i = 0; i < readings; i++) hours[String(i)] = { fields: fields(), minutes: { [String(i)]: fields() } };
  return {
    series: 'f'.repeat(24),
    metric: 'flights',
    tags: { origin: 'LAS', destination: 'PHL' },
    tagPairs: ['destination=PHL', 'origin=LAS'],
    date: new Date(0),
    first: new Date(0),
    last: new Date(0),
    fields: fields(),
    hours,
  };
}

const tsbsFields = [...CPU_FIELDS];
const rows: [string, number][] = [
  [
    `worst case: ${Limits.fieldsPerMetric} fields with ${Limits.nameLength}-character names, ${Limits.tagsPerSeries} tags of ${Limits.tagValueLength} characters, all 1,440 minutes`,
    calculateObjectSize(
      fullDocument(
        Array.from({ length: Limits.fieldsPerMetric }, (_, i) => name('f', i, Limits.nameLength)),
        Limits.tagsPerSeries,
        Limits.tagValueLength,
      ),
    ),
  ],
  ['TSBS cpu host-day, 10 fields, all 1,440 minutes (pre-allocated or full)', calculateObjectSize(fullDocument(tsbsFields, 10, 12))],
  ['flights route-day with 1 flight (sparse)', calculateObjectSize(sparseDocument(1))],
  ['flights route-day with 4 flights (sparse)', calculateObjectSize(sparseDocument(4))],
  ['flights route-day pre-allocated (2 fields, 1,440 minutes)', calculateObjectSize(fullDocument(['delay', 'distance'], 2, 3))],
];
console.log('| series-day document | BSON size |\n| --- | ---: |');
for (const [label, size] of rows)
  console.log(
    `| ${label} | ${size >= MIB ? `${(size / MIB).toFixed(2)} MiB` : `${(size / 1024).toFixed(1)} KiB`} (${size.toLocaleString('en-US')} B) |`,
  );
console.log(`\nMongoDB's limit is 16 MiB (${(16 * MIB).toLocaleString('en-US')} B).`);
