/**
 * A bounded load test on loopback: N writers send `recordReadings` batches, each with
 * its own batch id, while M readers run bucket and aggregate queries, for a fixed time
 * (autocannon). It prints throughput and latency (p50, p99) per operation, then
 * retries every batch that was not acknowledged (with the same id) and checks that the
 * stored totals equal a plain sum over every reading sent: nothing lost, nothing doubled.
 *
 *   npm run load                                   # own embedded database and server
 *   npm run load -- --writers 8 --readers 2 --duration 30 --batch 200
 *   npm run load -- --rate 2                       # writers held to 2 batches/s in all
 *   npm run load -- --url http://127.0.0.1:4000/graphql --token tsg_...
 *   MERGE_HERE_DOCUMENTS=0 npm run load           # its reads run their pipelines only
 *
 * Only loopback addresses are accepted for --url. The operations are those of
 * `scripts/load.graphql`, typed by `npm run codegen`.
 */
import { createServer, type Server } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import autocannon, { type Result } from 'autocannon';
import { Command, InvalidArgumentError } from 'commander';
import { pino } from 'pino';
import { LoadHourBucketsDocument, LoadPerHostDocument, LoadTotalsDocument, LoadWriteDocument } from '../src/client/generated/graphql.ts';
import { request, requestBody } from '../src/client/request.ts';
import { loadConfig } from '../src/config.ts';
import { ensureSecantusInstalled, startSecantus, type EmbeddedServer } from '../src/embedded/secantus.ts';
import { sendBatch } from '../src/importer/send.ts';
import { percentile } from './bench/harness/timing.ts';
import { foldJob, foldJobSettings } from '../src/jobs/fold-job.ts';
import { JobScheduler } from '../src/jobs/scheduler.ts';
import { createApp } from '../src/server/yoga.ts';
import { openStore, type Store } from '../src/storage/store.ts';

const positiveInt = (value: string) => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('expected a positive integer');
  return number;
};
const loopback = (value: string) => {
  const host = new URL(value).hostname;
  if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(host)) throw new InvalidArgumentError('only loopback addresses are load-tested');
  return value;
};

const options = new Command()
  .name('load')
  .description('Bounded load test: writers with batch ids and readers at once, then exact totals.')
  .option('--writers <n>', 'concurrent writer connections', positiveInt, 4)
  .option('--readers <n>', 'concurrent reader connections', positiveInt, 2)
  .option('--duration <s>', 'seconds of load', positiveInt, 20)
  .option('--batch <n>', 'readings per batch', positiveInt, 100)
  .option('--hosts <n>', 'series (hosts) written to', positiveInt, 50)
  .option('--rate <n>', 'batches per second sent by all writers together (default: as fast as answered)', positiveInt)
  .option('--url <url>', 'GraphQL endpoint of a running server on loopback (default: start one)', loopback)
  .option('--token <token>', 'API token with read and write scopes (default: $TSGRAPH_TOKEN)', process.env.TSGRAPH_TOKEN)
  .parse()
  .opts<{
    writers: number;
    readers: number;
    duration: number;
    batch: number;
    hosts: number;
    rate?: number;
    url?: string;
    token?: string;
  }>();

const METRIC = `load_${Date.now().toString(36)}`;
const START = Date.UTC(2024, 0, 1);

/** Reading `k` of the run: host, time (7 s apart, so batches spread over hours and days) and an integer value (exact sums). */
const readingAt = (k: number) => ({
  metric: METRIC,
  tags: [{ key: 'host', value: `h${k % options.hosts}` }],
  time: new Date(START + k * 7000).toISOString(),
  fields: [{ name: 'v', value: (k * 31) % 101 }],
});
const batchReadings = (seq: number) => Array.from({ length: options.batch }, (_, i) => readingAt(seq * options.batch + i));

const headers = {
  'content-type': 'application/json',
  accept: 'application/graphql-response+json',
  ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
};

interface Local {
  embedded: EmbeddedServer;
  store: Store;
  server: Server;
  jobs: JobScheduler;
}

async function startLocal(): Promise<{ url: string; local: Local }> {
  const config = loadConfig();
  const binary = await ensureSecantusInstalled(config.EMBEDDED_VENV_DIR, config.PYTHON, (message) => console.log(message));
  const embedded = await startSecantus({ binary, dataDir: ':memory:', say: () => {} });
  // Reads merge their documents in process as the server's configuration says (`MERGE_HERE_DOCUMENTS=0`: pipelines only).
  const store = await openStore(embedded.uri, 'load', { mergeHereDocuments: config.MERGE_HERE_DOCUMENTS });
  // Its own server on loopback, open: the load test measures the API, not token checks.
  const app = createApp({
    store,
    logger: pino({ level: 'warn' }),
    limits: { maxBatchSize: config.MAX_BATCH_SIZE, maxBuckets: config.MAX_BUCKETS },
    auth: { mode: 'off', corsOrigins: [] },
  });
  // The folder runs as in a server started with `npm start`: writes are acknowledged by
  // the log, folded in the background, and reads see folded documents plus the tail.
  const jobs = new JobScheduler(pino({ level: 'warn' }));
  jobs.start(foldJob(store, foldJobSettings(config)));
  const server = createServer(app);
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/graphql`,
    local: { embedded, store, server, jobs },
  };
}

const { url, local } = options.url ? { url: options.url, local: undefined } : await startLocal();
console.log(
  `Load test against ${url}: ${options.writers} writers (batches of ${options.batch}), ${options.readers} readers, ${options.duration} s; metric ${METRIC}`,
);

const loopDelay = monitorEventLoopDelay({ resolution: 5 });
loopDelay.enable();
let nextSeq = 0;
const acknowledged = new Set<number>();
const sent = new Set<number>();
let refused = 0;

const writers = autocannon({
  url,
  connections: options.writers,
  duration: options.duration,
  ...(options.rate ? { overallRate: options.rate } : {}),
  requests: [
    {
      method: 'POST',
      headers,
      setupRequest: (request, context) => {
        const seq = nextSeq++;
        sent.add(seq);
        (context as { seq?: number }).seq = seq;
        return {
          ...request,
          body: requestBody(LoadWriteDocument, { readings: batchReadings(seq), batchId: `${METRIC}:${seq}` }),
        };
      },
      onResponse: (status, body, context) => {
        const seq = (context as { seq: number }).seq;
        const parsed = JSON.parse(body) as { data?: { recordReadings?: { recorded: number } }; errors?: unknown[] };
        if (status === 200 && parsed.data?.recordReadings?.recorded === options.batch) acknowledged.add(seq);
        else refused += 1;
      },
    },
  ],
});

const span = { from: new Date(START).toISOString(), to: new Date(START + 30 * 86_400_000).toISOString() };
const READ_HOURS = requestBody(LoadHourBucketsDocument, {
  metric: METRIC,
  from: span.from,
  to: new Date(START + 2 * 86_400_000).toISOString(),
  hosts: ['h1', 'h2'],
});
const READ_GROUPS = requestBody(LoadPerHostDocument, { metric: METRIC, ...span });
/**
 * What the readers saw of one query: its latency in ms, timed from the request's setup
 * (just before it is sent) to its answer, and the tail readings each answer read
 * (`extensions.reads[].tail.readings`, summed over the answer's pipelines).
 */
interface QueryTimes {
  ms: number[];
  tailReadings: number[];
}
const readTimes: Record<'hours' | 'groups', QueryTimes> = {
  hours: { ms: [], tailReadings: [] },
  groups: { ms: [], tailReadings: [] },
};
/** A reader's request whose latency and tail are kept under `name`. */
const timedRead = (name: keyof typeof readTimes, body: string) => ({
  method: 'POST' as const,
  headers,
  body,
  setupRequest: (request: object, context: object) => {
    (context as { started?: number }).started = performance.now();
    return request;
  },
  onResponse: (_status: number, responseBody: string, context: object) => {
    readTimes[name].ms.push(performance.now() - (context as { started: number }).started);
    const reads = (JSON.parse(responseBody) as { extensions?: { reads?: { tail?: { readings: number } }[] } }).extensions?.reads;
    readTimes[name].tailReadings.push((reads ?? []).reduce((total, read) => total + (read.tail?.readings ?? 0), 0));
  },
});
const readers = autocannon({
  url,
  connections: options.readers,
  duration: options.duration,
  requests: [timedRead('hours', READ_HOURS), timedRead('groups', READ_GROUPS)],
});

const [writeResult, readResult] = (await Promise.all([writers, readers])) as [Result, Result];
loopDelay.disable();

// Complete what was not acknowledged, with the same ids: exactly once either way.
const unacknowledged = [...sent].filter((seq) => !acknowledged.has(seq));
for (const seq of unacknowledged) await sendBatch(url, batchReadings(seq), { batchId: `${METRIC}:${seq}`, token: options.token });

// The expected totals: a plain loop over every reading of every batch sent.
let count = 0;
let sum = 0;
for (const seq of sent) {
  for (const reading of batchReadings(seq)) {
    count += 1;
    sum += reading.fields[0]!.value;
  }
}
const stored = await request(
  LoadTotalsDocument,
  { metric: METRIC, from: span.from, to: '9999-01-01T00:00:00Z' },
  { url, token: options.token },
);
const actual = { count: stored.aggregate[0]?.count ?? 0, sum: stored.aggregate[0]?.sum ?? 0 };

const row = (name: string, result: Result, unit: number) =>
  `| ${name} | ${result.requests.total} | ${(result.requests.total / options.duration).toFixed(1)} | ${((result.requests.total * unit) / options.duration).toFixed(0)} | ${result.latency.p50} | ${result.latency.p99} | ${result.non2xx + result.errors + result.timeouts} |`;
console.log('\n| operation | requests | requests/s | readings/s | p50 ms | p99 ms | errors |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
console.log(row(`recordReadings (batch ${options.batch})`, writeResult, options.batch));
console.log(row('reads (HOUR buckets of 2 hosts, aggregate by host)', readResult, 0));

/** The value at percentile `p` of `values` (nearest rank), or 0 for none. */
const rank = (values: readonly number[], p: number) => (values.length === 0 ? 0 : percentile(values, p));
console.log('\n| query | answers | p50 ms | p99 ms | tail readings read, mean | max |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
for (const [name, label] of [
  ['hours', 'HOUR buckets of 2 hosts over 2 days'],
  ['groups', 'aggregate by host over 30 days'],
] as const) {
  const { ms, tailReadings } = readTimes[name];
  const mean = tailReadings.length === 0 ? 0 : tailReadings.reduce((a, b) => a + b, 0) / tailReadings.length;
  console.log(
    `| ${label} | ${ms.length} | ${rank(ms, 50).toFixed(0)} | ${rank(ms, 99).toFixed(0)} | ${mean.toFixed(0)} | ${Math.max(0, ...tailReadings)} |`,
  );
}
console.log(
  `\nEvent loop delay during the load (the server, its folder and the load's clients share this process): p50 ${(loopDelay.percentile(50) / 1e6).toFixed(0)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(0)} ms, max ${(loopDelay.max / 1e6).toFixed(0)} ms.`,
);
console.log(
  `\nBatches sent ${sent.size}, acknowledged during the load ${acknowledged.size}, refused or failed ${refused}, completed afterwards with the same id ${unacknowledged.length}.`,
);
console.log(
  `Expected ${count} readings, sum ${sum}; stored ${actual.count}, sum ${actual.sum}: ${actual.count === count && actual.sum === sum ? 'EXACT' : 'MISMATCH'}`,
);

if (local) {
  await new Promise<void>((closed) => local.server.close(() => closed()));
  await local.jobs.stop();
  await local.store.client.close();
  await local.embedded.stop();
}
process.exitCode = actual.count === count && actual.sum === sum ? 0 : 1;
