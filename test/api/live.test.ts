/**
 * Live updates and polling: `subscription { buckets }` over Server-Sent Events (the first
 * push is the current answer, later pushes the changed buckets after GraphQL and NDJSON
 * writes, coalesced per subscriber), its refusals (the same codes as the query), a
 * change stream feeding two instances from one replica-set database, and ETags on GET
 * query answers. Expected totals come from a plain loop over the readings sent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import getPort from 'get-port';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { ensureSecantusInstalled } from '../../src/embedded/secantus.ts';
import { LiveEvents, writesOfChange } from '../../src/events/live-events.ts';
import { openTestApp, type GraphQLResponse, type TestApp } from '../helpers/app.ts';
import { testMongoUri } from '../helpers/db.ts';
import { createTokens } from '../helpers/tokens.ts';

const MIN = 60_000;
const T0 = Date.UTC(2024, 0, 1);
/** Shortest time between two pushes in these tests. */
const INTERVAL_MS = 400;

interface Reading {
  host: string;
  /** Minutes after T0. */
  minute: number;
  value: number;
}

const RECORD = `mutation($readings: [ReadingInput!]!) { recordReadings(readings: $readings) { applied } }`;
const asInput = (metric: string, readings: readonly Reading[]) =>
  readings.map((r) => ({
    metric,
    tags: [{ key: 'host', value: r.host }],
    time: new Date(T0 + r.minute * MIN).toISOString(),
    fields: [{ name: 'usage', value: r.value }],
  }));

/** A subscription over the first hour in ten-minute buckets, every bucket listed. */
const SUBSCRIBE = `subscription($metric: String!, $from: Time!, $to: Time!) {
  buckets(metric: $metric, field: "usage", from: $from, to: $to, granularity: TEN_MINUTES) {
    tags { key value }
    buckets { start end count sum min max }
  }
}`;
const HOUR = { from: new Date(T0).toISOString(), to: new Date(T0 + 60 * MIN).toISOString() };

interface PushedBucket {
  start: string;
  end: string;
  count: number;
  sum: number | null;
  min: number | null;
  max: number | null;
}
type Pushed = GraphQLResponse<{ buckets: { tags: unknown[]; buckets: PushedBucket[] }[] }>;

/** The ten-minute buckets of the first hour whose start is at or after `sinceMinute`'s bucket, computed with a plain loop. */
function expectedBuckets(readings: readonly Reading[], sinceMinute = 0): PushedBucket[] {
  const out: PushedBucket[] = [];
  for (let start = 0; start < 60; start += 10) {
    if (start + 10 <= sinceMinute) continue;
    let count = 0;
    let sum = 0;
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    for (const r of readings) {
      if (r.minute < start || r.minute >= start + 10) continue;
      count += 1;
      sum += r.value;
      min = Math.min(min, r.value);
      max = Math.max(max, r.value);
    }
    out.push({
      start: new Date(T0 + start * MIN).toISOString(),
      end: new Date(T0 + (start + 10) * MIN).toISOString(),
      count,
      sum: count === 0 ? null : sum,
      min: count === 0 ? null : min,
      max: count === 0 ? null : max,
    });
  }
  return out;
}

/** A Server-Sent Events client on `app.fetch`: the `next` events' payloads in order. */
interface EventStream {
  status: number;
  contentType: string;
  /** The next payload, or a failure after `timeoutMs`. */
  next(timeoutMs?: number): Promise<Pushed>;
  /** Payloads received and not yet taken by `next`. */
  queued(): Pushed[];
  /** Whether the server sent `complete` (or closed the stream). */
  ended(): boolean;
  close(): Promise<void>;
}

async function openStream(
  app: TestApp['app'],
  query: string,
  variables: Record<string, unknown>,
  token: string | null,
): Promise<EventStream> {
  const abort = new AbortController();
  const response = await app.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  const contentType = response.headers.get('content-type') ?? '';
  const queue: Pushed[] = [];
  let waiter: (() => void) | undefined;
  let done = false;
  const reader = response.body!.getReader();
  const wake = () => {
    waiter?.();
    waiter = undefined;
  };
  if (!contentType.includes('text/event-stream')) {
    queue.push((await response.json()) as Pushed);
    done = true;
  } else {
    void (async () => {
      const decoder = new TextDecoder();
      let text = '';
      try {
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) break;
          text += decoder.decode(chunk.value, { stream: true });
          let end = text.indexOf('\n\n');
          while (end >= 0) {
            const block = text.slice(0, end);
            text = text.slice(end + 2);
            end = text.indexOf('\n\n');
            const lines = block.split('\n');
            const event = lines
              .find((line) => line.startsWith('event:'))
              ?.slice(6)
              .trim();
            const data = lines
              .filter((line) => line.startsWith('data:'))
              .map((line) => line.slice(5).trim())
              .join('\n');
            if (event === 'next') queue.push(JSON.parse(data) as Pushed);
            if (event === 'complete') done = true;
            wake();
          }
        }
      } catch {
        // aborted by close()
      }
      done = true;
      wake();
    })();
  }
  return {
    status: response.status,
    contentType,
    async next(timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (queue.length === 0) {
        if (done) throw new Error('the stream ended');
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no event within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          waiter = resolve;
          setTimeout(resolve, left);
        });
      }
      return queue.shift()!;
    },
    queued: () => queue,
    ended: () => done,
    async close() {
      await reader.cancel().catch(() => {});
      abort.abort();
    },
  };
}

const codeOf = (response: GraphQLResponse<unknown>) => response.errors?.[0]?.extensions?.code;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let t: TestApp;
let tokens: Record<'admin' | 'reader' | 'writer' | 'mem-reader', string>;

beforeAll(async () => {
  t = await openTestApp('live', { auth: 'tokens', journal: false, live: { minIntervalMs: INTERVAL_MS } });
  tokens = await createTokens(t.store, [
    ['admin', 'admin', []],
    ['reader', 'read', []],
    ['writer', 'write', []],
    ['mem-reader', 'read', ['mem']],
  ]);
});
afterAll(async () => t?.close());

const record = async (metric: string, readings: readonly Reading[]) => {
  const answer = await t.graphql(RECORD, { readings: asInput(metric, readings) }, { token: tokens.writer });
  expect(answer.errors).toBeUndefined();
};

describe('subscription { buckets }', () => {
  it('pushes the current answer at once, then the changed buckets after a write, with exact totals', async () => {
    const seed: Reading[] = [
      { host: 'a', minute: 5, value: 2 },
      { host: 'b', minute: 25, value: 7.5 },
      { host: 'a', minute: 45, value: -3 },
    ];
    await record('cpu', seed);
    const stream = await openStream(t.app, SUBSCRIBE, { metric: 'cpu', ...HOUR }, tokens.reader);
    try {
      expect(stream.status).toBe(200);
      expect(stream.contentType).toContain('text/event-stream');
      const first = await stream.next();
      expect(first.errors).toBeUndefined();
      expect(first.data!.buckets).toHaveLength(1);
      expect(first.data!.buckets[0]!.buckets).toEqual(expectedBuckets(seed));

      const added: Reading[] = [
        { host: 'a', minute: 38, value: 4 },
        { host: 'b', minute: 32, value: 10 },
        { host: 'b', minute: 51, value: 1.25 },
      ];
      await record('cpu', added);
      const pushed = await stream.next();
      expect(pushed.errors).toBeUndefined();
      // The buckets from the one holding the earliest new reading (00:32) to the end.
      expect(pushed.data!.buckets[0]!.buckets).toEqual(expectedBuckets([...seed, ...added], 32));
      expect(pushed.data!.buckets[0]!.buckets.map((bucket) => bucket.start)).toEqual([
        '2024-01-01T00:30:00.000Z',
        '2024-01-01T00:40:00.000Z',
        '2024-01-01T00:50:00.000Z',
      ]);

      // Readings outside the range or of another metric push nothing.
      await record('cpu', [{ host: 'a', minute: 90, value: 1 }]);
      await record('mem', [{ host: 'a', minute: 10, value: 1 }]);
      await sleep(INTERVAL_MS + 300);
      expect(stream.queued()).toHaveLength(0);
    } finally {
      await stream.close();
    }
  });

  it('coalesces quick batches into at most one push per interval, the last with the exact total', async () => {
    const metric = 'coalesce';
    const stream = await openStream(t.app, SUBSCRIBE, { metric, ...HOUR }, tokens.reader);
    try {
      expect((await stream.next()).data).toEqual({ buckets: [] });
      const batches: Reading[][] = Array.from({ length: 8 }, (_, i) => [
        { host: `h${i % 3}`, minute: 50 + (i % 10), value: i + 0.5 },
        { host: 'x', minute: 55, value: 100 * i },
      ]);
      const started = Date.now();
      await Promise.all(batches.map((batch) => record(metric, batch)));
      const acknowledged = Date.now();
      const all = batches.flat();
      const expected = expectedBuckets(all, 50);
      // Take pushes until none comes for longer than the interval (a push whose query
      // already saw every reading may still be followed by one for the last write's report).
      const pushes: Pushed[] = [];
      for (;;) {
        const pushed = await stream.next(INTERVAL_MS + 600).catch(() => undefined);
        if (pushed === undefined) break;
        expect(pushed.errors).toBeUndefined();
        pushes.push(pushed);
      }
      expect(pushes.length).toBeGreaterThan(0);
      expect(pushes.at(-1)!.data!.buckets[0]!.buckets).toEqual(expected);
      // Pushes at least an interval apart, all handed over by the last acknowledgement plus one interval.
      const bound = Math.floor((acknowledged - started) / INTERVAL_MS) + 2;
      expect(pushes.length).toBeLessThanOrEqual(bound);
      expect(pushes.length).toBeLessThan(batches.length);
    } finally {
      await stream.close();
    }
  });

  it('pushes after a write through the NDJSON route', async () => {
    const stream = await openStream(t.app, SUBSCRIBE, { metric: 'ndjson', ...HOUR }, tokens.reader);
    try {
      expect((await stream.next()).data).toEqual({ buckets: [] });
      const readings: Reading[] = [
        { host: 'a', minute: 12, value: 3 },
        { host: 'a', minute: 19, value: 4 },
      ];
      const body = asInput('ndjson', readings)
        .map((r) =>
          JSON.stringify({ metric: r.metric, tags: { host: r.tags[0]!.value }, time: r.time, fields: { usage: r.fields[0]!.value } }),
        )
        .join('\n');
      const written = await t.app.fetch('http://yoga/api/readings', {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${tokens.writer}` },
        body,
      });
      expect(written.status).toBe(200);
      const pushed = await stream.next();
      expect(pushed.data!.buckets[0]!.buckets).toEqual(expectedBuckets(readings, 12));
    } finally {
      await stream.close();
    }
  });

  it('refuses a missing token, a missing scope and a metric out of reach', async () => {
    const cases = [
      [null, 'UNAUTHENTICATED'],
      [tokens.writer, 'FORBIDDEN'],
      [tokens['mem-reader'], 'FORBIDDEN'],
    ] as const;
    for (const [token, code] of cases) {
      const stream = await openStream(t.app, SUBSCRIBE, { metric: 'cpu', ...HOUR }, token);
      try {
        const answer = await stream.next();
        expect(codeOf(answer)).toBe(code);
        expect(answer.data ?? null).toBeNull();
      } finally {
        await stream.close();
      }
    }
  });

  it('refuses bad arguments with the same code as the query', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ metric: 'cpu', from: HOUR.to, to: HOUR.from }, 'INVALID_RANGE'],
      [{ metric: 'no$metric', ...HOUR }, 'INVALID_NAME'],
      [{ metric: 'cpu', from: 'yesterday', to: HOUR.to }, 'INVALID_TIME'],
    ];
    for (const [variables, code] of cases) {
      const query = await t.graphql(SUBSCRIBE.replace('subscription', 'query'), variables, { token: tokens.reader });
      expect(codeOf(query)).toBe(code);
      const stream = await openStream(t.app, SUBSCRIBE, variables, tokens.reader);
      try {
        expect(codeOf(await stream.next())).toBe(code);
      } finally {
        await stream.close();
      }
    }
    // Over MAX_BUCKETS: a year of minutes.
    const tooMany = { metric: 'cpu', from: '2024-01-01T00:00:00Z', to: '2025-01-01T00:00:00Z' };
    const minutes = SUBSCRIBE.replace('TEN_MINUTES', 'MINUTE');
    expect(codeOf(await t.graphql(minutes.replace('subscription', 'query'), tooMany, { token: tokens.reader }))).toBe('TOO_MANY_BUCKETS');
    const stream = await openStream(t.app, minutes, tooMany, tokens.reader);
    try {
      expect(codeOf(await stream.next())).toBe('TOO_MANY_BUCKETS');
    } finally {
      await stream.close();
    }
  });

  it("pushes a counter's increase and rate, reset-aware, and refuses them for a gauge with NOT_A_COUNTER", async () => {
    const COUNTER = `subscription($metric: String!, $from: Time!, $to: Time!) {
      buckets(metric: $metric, field: "usage", from: $from, to: $to, granularity: TEN_MINUTES, statistic: INCREASE) {
        buckets { start count increase rate value }
      }
    }`;
    /** Per ten-minute bucket from `sinceMinute`'s: each host's readings in order, each adding its rise over the one before (itself after a drop). */
    const expected = (readings: readonly Reading[], sinceMinute = 0) =>
      [0, 10, 20, 30, 40, 50]
        .filter((start) => start + 10 > sinceMinute)
        .map((start) => {
          let count = 0;
          let increase = 0;
          for (const host of ['a', 'b']) {
            const mine = readings.filter((r) => r.host === host).sort((x, y) => x.minute - y.minute);
            mine.forEach((r, i) => {
              if (r.minute < start || r.minute >= start + 10) return;
              count += 1;
              if (i > 0) increase += r.value >= mine[i - 1]!.value ? r.value - mine[i - 1]!.value : r.value;
            });
          }
          const value = count === 0 ? null : increase;
          return {
            start: new Date(T0 + start * MIN).toISOString(),
            count,
            increase: value,
            rate: value === null ? null : value / 600,
            value,
          };
        });
    const declared = await t.graphql('mutation { setMetricKind(metric: "served", kind: COUNTER) { kind } }', {}, { token: tokens.admin });
    expect(declared.errors).toBeUndefined();
    const seed: Reading[] = [
      { host: 'a', minute: 2, value: 10 },
      { host: 'a', minute: 14, value: 25 },
      { host: 'b', minute: 15, value: 3 },
      { host: 'a', minute: 33, value: 40 },
    ];
    await record('served', seed);
    const stream = await openStream(t.app, COUNTER, { metric: 'served', ...HOUR }, tokens.reader);
    try {
      const first = await stream.next();
      expect(first.errors).toBeUndefined();
      expect(first.data!.buckets[0]!.buckets).toEqual(expected(seed));
      // A restart of a at 00:21 (down to 4): 00:20 gains 4, and 00:30 gains 40 - 4 instead of 40 - 25.
      const added: Reading[] = [
        { host: 'a', minute: 21, value: 4 },
        { host: 'b', minute: 48, value: 9 },
      ];
      await record('served', added);
      const pushed = await stream.next();
      expect(pushed.errors).toBeUndefined();
      expect(pushed.data!.buckets[0]!.buckets).toEqual(expected([...seed, ...added], 21));
    } finally {
      await stream.close();
    }
    const gauge = await openStream(t.app, COUNTER, { metric: 'cpu', ...HOUR }, tokens.reader);
    try {
      const refused = await gauge.next();
      expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_A_COUNTER', metric: 'cpu' });
    } finally {
      await gauge.close();
    }
  });
});

describe('polling: ETag', () => {
  const QUERY = `{ buckets(metric: "etag", field: "usage", from: "${HOUR.from}", to: "${HOUR.to}", granularity: HOUR) { buckets { count sum } } }`;
  const get = (token: string, query = QUERY, headers: Record<string, string> = {}) =>
    t.app.fetch(`http://yoga/graphql?query=${encodeURIComponent(query)}`, {
      headers: { accept: 'application/graphql-response+json', authorization: `Bearer ${token}`, ...headers },
    });

  it('answers 304 to the same GET with If-None-Match, and changes the tag after a write', async () => {
    await record('etag', [{ host: 'a', minute: 3, value: 5 }]);
    const first = await get(tokens.reader);
    expect(first.status).toBe(200);
    const tag = first.headers.get('etag')!;
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(first.headers.get('cache-control')).toBe('private, max-age=0, must-revalidate');
    expect(first.headers.get('vary')).toMatch(/Authorization/);
    expect(((await first.json()) as GraphQLResponse<unknown>).data).toEqual({ buckets: [{ buckets: [{ count: 1, sum: 5 }] }] });

    const again = await get(tokens.reader, QUERY, { 'if-none-match': tag });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(tag);
    expect(await again.text()).toBe('');

    await record('etag', [{ host: 'b', minute: 7, value: 2 }]);
    const after = await get(tokens.reader, QUERY, { 'if-none-match': tag });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(tag);
    expect(((await after.json()) as GraphQLResponse<unknown>).data).toEqual({ buckets: [{ buckets: [{ count: 2, sum: 7 }] }] });
  });

  it("never answers 304 with another token's tag when the answers differ, and never tags errors or mutations", async () => {
    const metrics = '{ metrics { name } }';
    const admin = await get(tokens.admin, metrics);
    const tag = admin.headers.get('etag')!;
    const names = ((await admin.json()) as { data: { metrics: { name: string }[] } }).data.metrics.map((m) => m.name);
    expect(names).toContain('cpu');
    const other = await get(tokens['mem-reader'], metrics, { 'if-none-match': tag });
    expect(other.status).toBe(200);
    expect(other.headers.get('etag')).not.toBe(tag);
    expect(await other.json()).toEqual({ data: { metrics: [{ name: 'mem' }] } });

    const refused = await get(tokens.reader, QUERY.replace('HOUR)', 'HOUR, to: "2023-01-01")').replace(`to: "${HOUR.to}", `, ''));
    expect(codeOf((await refused.json()) as GraphQLResponse<unknown>)).toBe('INVALID_RANGE');
    expect(refused.headers.get('etag')).toBeNull();
    expect(refused.headers.get('cache-control')).toBe('no-store');

    const mutation = await t.app.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.writer}` },
      body: JSON.stringify({ query: RECORD, variables: { readings: asInput('etag', [{ host: 'c', minute: 1, value: 1 }]) } }),
    });
    expect(mutation.status).toBe(200);
    expect(mutation.headers.get('etag')).toBeNull();
    expect(mutation.headers.get('cache-control')).toBe('no-store');
  });
});

describe('change streams', () => {
  it('are found missing on the standalone test database, and used on a replica set: a write on one instance is pushed by another', async () => {
    const standalone = new LiveEvents(pino({ level: 'silent' }));
    const probe = await standalone.watchChangeStreams(t.store);
    const uri = testMongoUri();
    const replicaSet = probe.used ? undefined : await startReplicaSetServer();
    try {
      if (replicaSet) expect(probe.reason).toMatch(/replica set/i);
      const shared = replicaSet?.uri ?? uri;
      const instances: { app: TestApp; events: LiveEvents }[] = [];
      const database = `test_live_cs_${Date.now()}`;
      for (let i = 0; i < 2; i++) {
        const events = new LiveEvents(pino({ level: 'silent' }));
        // Both instances on one database of the replica set.
        const app = await openTestApp('live_cs', { live: { events, minIntervalMs: INTERVAL_MS }, uri: shared, database });
        expect(await events.watchChangeStreams(app.store)).toEqual({ used: true });
        instances.push({ app, events });
      }
      const [writer, watcher] = instances as [(typeof instances)[0], (typeof instances)[0]];
      const stream = await openStream(watcher.app.app, SUBSCRIBE, { metric: 'cs', ...HOUR }, null);
      try {
        expect((await stream.next()).data).toEqual({ buckets: [] });
        // Let the stream open for the new metric.
        await sleep(300);
        const readings: Reading[] = [
          { host: 'a', minute: 21, value: 6 },
          { host: 'a', minute: 27, value: 0.5 },
        ];
        // One batch: one log entry, one change.
        const answer = await writer.app.graphql(RECORD, { readings: asInput('cs', readings) });
        expect(answer.errors).toBeUndefined();
        const pushed = await stream.next(10_000);
        expect(pushed.errors).toBeUndefined();
        // The change names the batch's minutes: the buckets from 00:20 on.
        expect(pushed.data!.buckets[0]!.buckets).toEqual(expectedBuckets(readings, 21));
        const more: Reading[] = [{ host: 'a', minute: 44, value: 3 }];
        await sleep(INTERVAL_MS);
        expect((await writer.app.graphql(RECORD, { readings: asInput('cs', more) })).errors).toBeUndefined();
        // The next batch names its minute: the buckets from 00:40 on.
        const update = await stream.next(10_000);
        expect(update.data!.buckets[0]!.buckets).toEqual(expectedBuckets([...readings, ...more], 44));
      } finally {
        await stream.close();
        for (const { app, events } of instances) {
          await events.close();
          await app.close();
        }
      }
    } finally {
      await standalone.close();
      await replicaSet?.stop();
    }
  }, 60_000);

  it('tell the minutes of a new log entry, for each of its metrics', () => {
    const change = (metrics: unknown, first: unknown, last: unknown) =>
      ({ operationType: 'insert', fullDocument: { metrics, first, last } }) as unknown as Parameters<typeof writesOfChange>[0];
    expect(writesOfChange(change(['m'], new Date(T0 + 5 * MIN + 1234), new Date(T0 + 7 * MIN)))).toEqual([
      { metric: 'm', from: T0 + 5 * MIN, to: T0 + 8 * MIN },
    ]);
    expect(writesOfChange(change(['a', 'b'], new Date(T0), new Date(T0 + 59_999)))).toEqual([
      { metric: 'a', from: T0, to: T0 + MIN },
      { metric: 'b', from: T0, to: T0 + MIN },
    ]);
    expect(writesOfChange(change(undefined, new Date(T0), new Date(T0)))).toEqual([]);
  });
});

/** Starts a throw-away SecantusDB without `--standalone`: it then presents itself as a replica-set primary, with change streams. */
async function startReplicaSetServer(): Promise<{ uri: string; stop(): Promise<void> }> {
  const config = loadConfig();
  const binary = await ensureSecantusInstalled(config.EMBEDDED_VENV_DIR, config.PYTHON, () => {}, 'python');
  const port = await getPort({ host: '127.0.0.1' });
  const child: ChildProcess = spawn(
    binary,
    ['--host', '127.0.0.1', '--port', String(port), '--storage-path', ':memory:', '--log-level', 'WARNING'],
    { stdio: 'ignore' },
  );
  const uri = `mongodb://127.0.0.1:${port}/?directConnection=true`;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new MongoClient(uri, { serverSelectionTimeoutMS: 500 });
    try {
      await client.db('admin').command({ ping: 1 });
      break;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(200);
    } finally {
      await client.close();
    }
  }
  return {
    uri,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
