/**
 * What the request limits cost and what they stop (figures for docs/access-and-limits.md, "Limits"):
 * - the longest the event loop is blocked by an oversized document (5 MB of 300,000
 *   aliases; just under 1 MiB of aliases), with the limits and, for comparison,
 *   without them (25 MB body, no document limits);
 * - how long refusing an over-budget request takes (200 hosts x 3 readings);
 * - whether the database stops working when the time limit fires or the client
 *   disconnects: a second copy of a heavy query is timed right after the first was
 *   stopped, against the same query alone.
 *
 *   npx tsx scripts/bench/limits.ts          # embedded SecantusDB
 *   MONGODB_URI=mongodb://... npx tsx scripts/bench/limits.ts
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfig } from '../../src/config.ts';
import { requestLimitsFromConfig, type RequestLimits } from '../../src/server/limits.ts';
import { benchApp, median, serveApp, withScratchStore } from './harness/index.ts';

const config = loadConfig();
await withScratchStore('limits', {}, async (store) => {
  /** Serves an app with `limits` on a local port; returns its URL and a closer. */
  function serve(limits: Partial<RequestLimits>) {
    const app = benchApp(store, {
      limits: { maxBatchSize: config.MAX_BATCH_SIZE, maxBuckets: config.MAX_BUCKETS },
      requestLimits: { ...requestLimitsFromConfig(config), ...limits },
    });
    return serveApp(app);
  }

  /** POSTs a GraphQL body; returns the status, the first error code and the elapsed ms. */
  async function post(url: string, body: string, signal?: AbortSignal) {
    const started = performance.now();
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body,
      signal,
    });
    const text = await response.text();
    const ms = performance.now() - started;
    let code = 'ok';
    try {
      code = (JSON.parse(text) as { errors?: { extensions?: { code?: string } }[] }).errors?.[0]?.extensions?.code ?? 'ok';
    } catch {
      code = 'not JSON';
    }
    return { status: response.status, code, ms };
  }

  /** Runs `work` and returns its result with the longest event-loop delay seen meanwhile, in ms. */
  async function blocking<T>(work: () => Promise<T>): Promise<T & { blockedMs: number }> {
    const histogram = monitorEventLoopDelay({ resolution: 5 });
    histogram.enable();
    const result = await work();
    histogram.disable();
    return { ...result, blockedMs: histogram.max / 1e6 };
  }

  const limited = await serve({});
  const unlimited = await serve({ maxBodyBytes: 25_000_000, maxTokens: 1e9, maxAliases: 1e9, maxDepth: 1e9, maxDirectives: 1e9 });

  const hugeBody = JSON.stringify({ query: `{ ${Array.from({ length: 300_000 }, (_, i) => `a${i}: __typename`).join(' ')} }` });
  const aliases: string[] = [];
  for (let i = 0, length = 0; length < 1_000_000; i++) {
    aliases.push(`a${i}: __typename `);
    length += aliases[i]!.length;
  }
  const nearLimitBody = JSON.stringify({ query: `{ ${aliases.join('')}}` });

  console.log(
    '\n| document | server | HTTP | code | response ms | longest event-loop block ms |\n| --- | --- | ---: | --- | ---: | ---: |',
  );
  for (const [name, body] of [
    [`300,000 aliases (${(hugeBody.length / 1e6).toFixed(1)} MB)`, hugeBody],
    [`${aliases.length.toLocaleString('en-US')} aliases (${(nearLimitBody.length / 1024).toFixed(0)} KiB)`, nearLimitBody],
  ] as const) {
    for (const [label, server] of [
      ['limits', limited],
      ['no limits', unlimited],
    ] as const) {
      const result = await blocking(() => post(server.url, body));
      console.log(`| ${name} | ${label} | ${result.status} | ${result.code} | ${result.ms.toFixed(0)} | ${result.blockedMs.toFixed(0)} |`);
    }
  }
  await unlimited.close();

  // 200 hosts x 3 readings for the budget refusals.
  const host = (i: number) => `h${String(i).padStart(3, '0')}`;
  const readings = Array.from({ length: 200 }, (_, i) =>
    [0, 1, 2].map((m) => ({
      metric: 'cpu',
      tags: [{ key: 'host', value: host(i) }],
      time: `2024-03-01T10:0${m}:00Z`,
      fields: [{ name: 'usage', value: m }],
    })),
  ).flat();
  await post(
    limited.url,
    JSON.stringify({ query: 'mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { recorded } }', variables: { r: readings } }),
  );
  const weekOfMinutes = (i: number) =>
    `a${i}: buckets(metric: "cpu", field: "usage", granularity: MINUTE, from: "2024-02-26T00:00:00Z", to: "2024-03-04T00:00:00Z", where: [{key: "host", in: "${host(i)}"}]) { buckets { count } }`;
  const refusals: [string, string, Record<string, unknown>?][] = [
    [
      '70 days of MINUTE by 200 hosts, fill NULL',
      '{ buckets(metric: "cpu", field: "usage", granularity: MINUTE, from: "2024-01-01T00:00:00Z", to: "2024-03-11T00:00:00Z", groupBy: ["host"]) { buckets { count } } }',
    ],
    [
      '1 day of MINUTE by 200 hosts (groups counted first)',
      '{ buckets(metric: "cpu", field: "usage", granularity: MINUTE, from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z", groupBy: ["host"]) { buckets { count } } }',
    ],
    ['10 aliases of a week of minutes', `{ ${Array.from({ length: 10 }, (_, i) => weekOfMinutes(i)).join(' ')} }`],
    [
      'where.in with 10,000 values',
      'query($in: [String!]!) { buckets(metric: "cpu", field: "usage", granularity: DAY, from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z", where: [{key: "host", in: $in}]) { buckets { count } } }',
      { in: Array.from({ length: 10_000 }, (_, i) => `v${i}`) },
    ],
    [
      'series(limit: 10000) with nested MINUTE buckets',
      '{ series(metric: "cpu", limit: 10000) { buckets(field: "usage", granularity: MINUTE, from: "2024-03-01T10:00:00Z", to: "2024-03-01T10:10:00Z") { count } } }',
    ],
    [
      'series(limit: 1000) x 1 day of MINUTE (after the look-up)',
      '{ series(metric: "cpu", limit: 1000) { buckets(field: "usage", granularity: MINUTE, from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z") { count } } }',
    ],
  ];
  console.log('\n| over-budget request | code | time to refusal, median of 5, ms |\n| --- | --- | ---: |');
  for (const [name, query, variables] of refusals) {
    const body = JSON.stringify({ query, variables });
    const runs: { code: string; ms: number }[] = [];
    for (let i = 0; i < 5; i++) runs.push(await post(limited.url, body));
    console.log(`| ${name} | ${runs[0]!.code} | ${median(runs.map((run) => run.ms)).toFixed(1)} |`);
  }

  // A query over 40 series-day documents of one reading each.
  await post(
    limited.url,
    JSON.stringify({
      query: 'mutation($r: [ReadingInput!]!) { recordReadings(readings: $r) { recorded } }',
      variables: {
        r: Array.from({ length: 40 }, (_, i) => ({
          metric: 'heavy',
          tags: [{ key: 'host', value: host(i) }],
          time: '2024-03-01T12:00:00Z',
          fields: [{ name: 'v', value: i }],
        })),
      },
    }),
  );
  const heavy = JSON.stringify({
    query:
      '{ buckets(metric: "heavy", field: "v", granularity: MINUTE, from: "2024-03-01T00:00:00Z", to: "2024-03-02T00:00:00Z", fill: NONE) { buckets { count } } }',
  });
  const timeLimited = await serve({ queryTimeoutMs: 300 });
  console.log(
    '\n| round | heavy query alone ms | stopped by | first answered after ms | the same query right after ms |\n| --- | ---: | --- | ---: | ---: |',
  );
  for (let round = 1; round <= 3; round++) {
    const alone = (await post(limited.url, heavy)).ms;
    const client = new AbortController();
    setTimeout(() => client.abort(), 300);
    let started = performance.now();
    await post(limited.url, heavy, client.signal).catch(() => undefined);
    const abortedAt = performance.now() - started;
    const afterAbort = (await post(limited.url, heavy)).ms;
    await new Promise((resolve) => setTimeout(resolve, 3 * alone));
    started = performance.now();
    const timedOut = await post(timeLimited.url, heavy);
    const timedOutAt = performance.now() - started;
    const afterTimeout = (await post(limited.url, heavy)).ms;
    console.log(`| ${round} | ${alone.toFixed(0)} | client disconnect at 300 ms | ${abortedAt.toFixed(0)} | ${afterAbort.toFixed(0)} |`);
    console.log(`| ${round} | | QUERY_TIMEOUT_MS 300 (${timedOut.code}) | ${timedOutAt.toFixed(0)} | ${afterTimeout.toFixed(0)} |`);
    await new Promise((resolve) => setTimeout(resolve, 3 * alone));
  }
  await timeLimited.close();
  await limited.close();
});
