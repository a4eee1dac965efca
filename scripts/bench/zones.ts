/**
 * What a time zone costs a chart: DAY and MONTH buckets of the same fortnight of real
 * flights in UTC and in zones whose local midnight falls inside UTC days (whole hours:
 * New York; half and quarter hours: Kolkata, Kathmandu, Adelaide), as the pipeline of
 * `query/buckets-pipeline.ts` runs them through the storage layer. Also the UTC group
 * keys the pipelines use against the alternatives (`$dateTrunc`, arithmetic,
 * `$dateFromParts`), on the same documents.
 *
 *   npx tsx scripts/bench/zones.ts                 # embedded database, LAS JFK SJC ORD
 *   npx tsx scripts/bench/zones.ts --runs 7 --origins LAS,ORD
 *   MONGODB_URI=mongodb://host:27017 npx tsx scripts/bench/zones.ts
 *
 * Prints Markdown tables: the fastest and the median of `--runs` runs after a warm-up,
 * the cases of a table in a new random order each round, and each zone's ratio to UTC.
 */
import { Command } from 'commander';
import { SECANTUS_VERSION } from '../../src/embedded/secantus.ts';
import { recordBatch } from '../../src/engine/record-batch.ts';
import { readFlights3m, type Flight } from '../../src/importer/flights.ts';
import { bucketsPipeline } from '../../src/query/buckets-pipeline.ts';
import { granularity, type GranularityName } from '../../src/query/granularity.ts';
import { parseLocalTime } from '../../src/query/zone.ts';
import { validateReadings } from '../../src/record/validate.ts';
import type { Store } from '../../src/storage/store.ts';
import { format, row, tableHead, timeCases, withScratchStore } from './harness/index.ts';
import { aggregateBuckets } from '../../src/storage/aggregate.ts';
import type { DocumentPipeline } from '../../src/documents/selection.ts';

const options = new Command()
  .name('bench:zones')
  .option('--runs <n>', 'timed runs per case', (value) => Number(value), 7)
  .option('--origins <codes>', 'origin airports to load (comma-separated)', 'LAS,JFK,SJC,ORD')
  .parse()
  .opts<{ runs: number; origins: string }>();

const log = (message: string) => console.error(message);
const ZONES = ['UTC', 'America/New_York', 'Asia/Kolkata', 'Asia/Kathmandu', 'Australia/Adelaide'];
const GRANULARITIES: GranularityName[] = ['DAY', 'MONTH'];
const FROM = '2001-03-25';
const TO = '2001-04-08';

/** The flights of 2001-03-24 to 2001-04-09 (UTC) from the chosen origins, so every zone's local fortnight is covered. */
async function loadFlights(origins: ReadonlySet<string>): Promise<Flight[]> {
  const flights: Flight[] = [];
  for await (const chunk of readFlights3m({ after: new Date('2001-03-24T00:00:00Z'), before: new Date('2001-04-09T12:00:00Z') })) {
    for (const flight of chunk) if (origins.has(flight.origin)) flights.push(flight);
  }
  return flights;
}

async function record(store: Store, flights: readonly Flight[]): Promise<void> {
  for (let i = 0; i < flights.length; i += 1000) {
    const inputs = flights.slice(i, i + 1000).map((flight) => ({
      metric: 'flights',
      tags: [
        { key: 'origin', value: flight.origin },
        { key: 'destination', value: flight.destination },
      ],
      time: flight.time,
      fields: [
        { name: 'delay', value: flight.delay },
        { name: 'distance', value: flight.distance },
      ],
    }));
    await recordBatch(store, validateReadings(inputs, { maxBatchSize: 1000, receivedAt: Date.now() }), { receivedAt: Date.now() });
  }
}

/** The DAY and MONTH pipeline of a zone over its local fortnight. */
function chart(name: GranularityName, zone: string): DocumentPipeline {
  return bucketsPipeline({
    scope: { metric: 'flights' },
    fields: ['delay'],
    from: parseLocalTime(FROM, zone),
    to: parseLocalTime(TO, zone),
    granularity: granularity(name),
    grouping: { by: 'none' },
    timeZone: zone,
  });
}

/** Times each named pipeline (see `timeCases`) and prints a table of their fastest and median ms under `title`, after a blank line. */
async function printPipelineTimes(store: Store, title: string, cases: readonly [string, DocumentPipeline][]): Promise<void> {
  const times = await timeCases(
    cases.map(([name, pipeline]) => ({ name, run: () => aggregateBuckets(store, pipeline) })),
    options.runs,
  );
  console.log(['', ...tableHead([title, 'fastest ms', 'median ms'], 'lrr')].join('\n'));
  for (const [name] of cases) console.log(row([name, format.ms(times.get(name)!.fastest), format.ms(times.get(name)!.median)]));
}

await withScratchStore(
  'zones',
  {},
  async (store, database) => {
    const origins = new Set(options.origins.split(',').map((code) => code.trim()));
    const flights = await loadFlights(origins);
    log(`recording ${flights.length} flights from ${[...origins].join(', ')}`);
    await record(store, flights);
    const documents = await store.seriesDays.countDocuments({});
    const server = database.embedded ? `SecantusDB ${SECANTUS_VERSION} (embedded)` : 'the server at MONGODB_URI';
    console.log(
      `${flights.length} flights of ${[...origins].join(', ')}, ${documents} route-day documents, on ${server}; ${options.runs} runs per case.\n`,
    );

    // Charts: each zone against UTC.
    const cases = GRANULARITIES.flatMap((name) =>
      ZONES.map((zone) => ({ name: `${name} ${zone}`, run: () => aggregateBuckets(store, chart(name, zone)) })),
    );
    const times = await timeCases(cases, options.runs);
    console.log(tableHead(['granularity', 'zone', 'fastest ms', 'median ms', 'ratio to UTC (fastest)'], 'llrrr').join('\n'));
    for (const name of GRANULARITIES) {
      const utc = times.get(`${name} UTC`)!.fastest;
      for (const zone of ZONES) {
        const { fastest, median } = times.get(`${name} ${zone}`)!;
        console.log(row([name, zone, format.ms(fastest), format.ms(median), zone === 'UTC' ? '' : format.ratio(fastest / utc)]));
      }
    }

    // UTC group keys: the forms the pipeline uses against the alternatives, same documents.
    const utcFrom = Date.parse(`${FROM}T00:00:00Z`);
    const utcTo = Date.parse(`${TO}T00:00:00Z`);
    const day = chart('DAY', 'UTC');
    const t = { $toLong: '$date' };
    const keyed = (key: unknown): DocumentPipeline => ({
      selection: day.selection,
      stages: [
        {
          $group: {
            _id: { t: key },
            n: { $sum: '$fields.delay.n' },
            sum: { $sum: '$fields.delay.sum' },
            min: { $min: '$fields.delay.min' },
            max: { $max: '$fields.delay.max' },
            sq: { $sum: '$fields.delay.sq' },
          },
        },
      ],
    });
    const keyCases: [string, DocumentPipeline][] = [
      ['DAY: the date itself (used)', keyed('$date')],
      ['DAY: $dateTrunc', keyed({ $dateTrunc: { date: '$date', unit: 'day' } })],
      ['DAY: ms arithmetic', keyed({ $toDate: { $subtract: [t, { $mod: [t, 86_400_000] }] } })],
      ['WEEK: $dateTrunc (used)', keyed({ $dateTrunc: { date: '$date', unit: 'week', startOfWeek: 'monday' } })],
      ['WEEK: ms arithmetic', keyed({ $toDate: { $subtract: [t, { $mod: [{ $add: [t, 259_200_000] }, 604_800_000] }] } })],
      ['MONTH: $dateTrunc (used)', keyed({ $dateTrunc: { date: '$date', unit: 'month' } })],
      ['MONTH: $dateFromParts', keyed({ $dateFromParts: { year: { $year: '$date' }, month: { $month: '$date' } } })],
    ];
    await printPipelineTimes(store, `UTC group key over day totals [${FROM}, ${TO})`, keyCases);
    // Slot times in ms (hour slots of an HOUR chart): arithmetic against $dateTrunc of the date made from them.
    const hourly = bucketsPipeline({
      scope: { metric: 'flights' },
      fields: ['delay'],
      from: utcFrom,
      to: utcTo,
      granularity: granularity('HOUR'),
      grouping: { by: 'none' },
    });
    const withKey = (key: unknown): DocumentPipeline => ({
      selection: hourly.selection,
      stages: [...hourly.stages.slice(0, -1), { $group: { ...hourly.stages.at(-1)!.$group, _id: { t: key } } }],
    });
    const slotCases: [string, DocumentPipeline][] = [
      ['HOUR: ms arithmetic (used)', withKey({ $toDate: { $subtract: ['$slot.time', { $mod: ['$slot.time', 3_600_000] }] } })],
      ['HOUR: $dateTrunc of $toDate', withKey({ $dateTrunc: { date: { $toDate: '$slot.time' }, unit: 'hour' } })],
    ];
    await printPipelineTimes(store, `UTC group key over hour slots [${FROM}, ${TO})`, slotCases);
  },
  log,
);
