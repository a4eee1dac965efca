/**
 * What a live subscription costs: `--subscribers` SSE subscriptions (`subscription {
 * buckets }`, one hour of minutes, 10 series) on one in-process server, and `--writes`
 * batches of 10 readings recorded one after the other, each after the interval has
 * passed; prints the time from each write's acknowledgement to each subscriber's push
 * (p50, p99), and the pushes received per write (1 when nothing is coalesced).
 *
 *   npx tsx scripts/bench/live.ts                       # embedded SecantusDB
 *   npx tsx scripts/bench/live.ts --subscribers 50 --writes 10
 *   MONGODB_URI=mongodb://... npx tsx scripts/bench/live.ts
 */
import { Command } from 'commander';
import { benchApp, format, percentile, positiveInt, postGraphql, withScratchStore } from './harness/index.ts';

const options = new Command()
  .name('bench:live')
  .option('--subscribers <n>', 'open subscriptions', positiveInt, 10)
  .option('--writes <n>', 'batches recorded', positiveInt, 10)
  .option('--interval <ms>', 'LIVE_MIN_INTERVAL_MS', positiveInt, 200)
  .parse()
  .opts<{ subscribers: number; writes: number; interval: number }>();

await withScratchStore('live', { writeConcern: { w: 'majority', journal: true } }, async (store) => {
  const app = benchApp(store, { limits: { maxBatchSize: 10_000, maxBuckets: 100_000 }, live: { minIntervalMs: options.interval } });

  const HOUR_START = Date.UTC(2024, 0, 1, 12);
  const SUBSCRIBE = `subscription { buckets(metric: "live", field: "v", from: ${HOUR_START}, to: ${HOUR_START + 3_600_000}, granularity: MINUTE) { buckets { start count sum } } }`;

  /** When each subscriber received each push (ms, `performance.now()`). */
  const received: number[][] = [];
  const readers: ReadableStreamDefaultReader<Uint8Array>[] = [];
  for (let i = 0; i < options.subscribers; i++) {
    const times: number[] = [];
    received.push(times);
    const response = await app.fetch('http://bench/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: SUBSCRIBE }),
    });
    const reader = response.body!.getReader();
    readers.push(reader);
    void (async () => {
      const decoder = new TextDecoder();
      for (;;) {
        const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }));
        if (chunk.done) return;
        const events = decoder.decode(chunk.value, { stream: true }).match(/event: next/g)?.length ?? 0;
        for (let e = 0; e < events; e++) times.push(performance.now());
      }
    })();
  }
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  while (received.some((times) => times.length === 0)) await sleep(10);

  const RECORD = `mutation($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { applied } }`;
  const acknowledged: number[] = [];
  const writeMs: number[] = [];
  for (let w = 0; w < options.writes; w++) {
    await sleep(options.interval * 1.5);
    const readings = Array.from({ length: 10 }, (_, i) => ({
      metric: 'live',
      tags: [{ key: 'host', value: `h${i}` }],
      time: new Date(HOUR_START + (w % 60) * 60_000).toISOString(),
      fields: [{ name: 'v', value: w + i }],
    }));
    const started = performance.now();
    await (await postGraphql(app, RECORD, { readings })).json();
    acknowledged.push(performance.now());
    writeMs.push(performance.now() - started);
  }
  await sleep(options.interval * 3 + 2_000);

  const delays: number[] = [];
  for (const times of received) {
    for (let w = 0; w < acknowledged.length; w++) {
      const push = times.slice(1).find((time) => time >= acknowledged[w]! && (w + 1 >= acknowledged.length || time < acknowledged[w + 1]!));
      if (push !== undefined) delays.push(push - acknowledged[w]!);
    }
  }
  const pushes = received.reduce((sum, times) => sum + times.length - 1, 0);
  console.log(`| subscribers | writes | interval | write p50 | push after acknowledgement p50 / p99 | pushes per write and subscriber |`);
  console.log(`| --- | --- | --- | --- | --- | --- |`);
  console.log(
    `| ${options.subscribers} | ${options.writes} | ${options.interval} ms | ${format.ms(percentile(writeMs, 50))} ms | ${format.ms(percentile(delays, 50))} / ${format.ms(percentile(delays, 99))} ms | ${(pushes / (options.subscribers * options.writes)).toFixed(2)} |`,
  );
  for (const reader of readers) await reader.cancel().catch(() => {});
  await app.dispose();
});
