/**
 * The InfluxDB 1.x API (`/query` with InfluxQL, v1 `/write`, `/ping`) used by a real
 * client, the npm `influx` package (node-influx: `u` and `p` in the query string, v1
 * line protocol, GET and POST queries), and by the statements Grafana's InfluxDB data
 * source sends (test/fixtures/grafana). Every aggregate is checked against a plain loop
 * over the readings written, in the log's tail and after folding; percentiles and the
 * median within the sketches' 1%.
 */
import { readFileSync } from 'node:fs';
import { InfluxDB } from 'influx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestApp, type TestApp } from '../helpers/app.ts';
import { serveOnLoopback, type Loopback } from '../helpers/loopback.ts';
import { random } from '../helpers/random.ts';
import { databaseSnapshot } from '../helpers/snapshot.ts';
import { createTokens, useTokensOnce } from '../helpers/tokens.ts';

let t: TestApp;
let server: Loopback;
let tokens: Record<'reader' | 'writer' | 'admin' | 'memOnly', string>;

const MINUTE = 60_000;
/** 2024-03-01T00:00:00Z. */
const T0 = Date.UTC(2024, 2, 1);
const HOURS = 3;

/** A reading as written. */
interface Reading {
  t: number;
  tags: Record<string, string>;
  usage_user: number;
  usage_system: number;
}
const readings: Reading[] = [];

/** Hosts with a reading every 10 s (at 2.5 s past), web-5 without a region tag. */
function makeReadings(): void {
  const next = random(461);
  const hosts: Record<string, string>[] = [
    { host: 'web-1', region: 'eu' },
    { host: 'web-2', region: 'eu' },
    { host: 'web-3', region: 'us' },
    { host: 'web-4', region: 'us' },
    { host: 'web-5' },
  ];
  for (const tags of hosts) {
    for (let i = 0; i < (HOURS * 3600) / 10; i++) {
      readings.push({
        t: T0 + 2_500 + i * 10_000,
        tags,
        usage_user: Math.round(next() * 10_000) / 100,
        usage_system: Math.round(next() * 4_000) / 100,
      });
    }
  }
}

/** The exact aggregates of some values, with InfluxQL's definitions. */
function exact(values: number[], name: string, percent = 50): number | null {
  if (values.length === 0) return name === 'count' ? 0 : null;
  const sorted = [...values].sort((a, b) => a - b);
  const n = values.length;
  const sum = values.reduce((a, b) => a + b, 0);
  switch (name) {
    case 'count':
      return n;
    case 'sum':
      return sum;
    case 'mean':
      return sum / n;
    case 'min':
      return sorted[0]!;
    case 'max':
      return sorted[n - 1]!;
    case 'spread':
      return sorted[n - 1]! - sorted[0]!;
    case 'first':
      return values[0]!;
    case 'last':
      return values[n - 1]!;
    case 'stddev': {
      if (n < 2) return null;
      const mean = sum / n;
      return Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
    }
    case 'median':
      return n % 2 === 1 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
    case 'percentile': {
      const i = Math.floor((n * percent) / 100 + 0.5) - 1;
      return i < 0 || i >= n ? null : sorted[i]!;
    }
    default:
      throw new Error(name);
  }
}

/** The expected rows of `agg(field)` per host over `[from, to)` in intervals of `intervalMs`, fill(null), for the hosts `hosts`. */
function expectedRows(
  agg: string,
  field: 'usage_user' | 'usage_system',
  from: number,
  to: number,
  intervalMs: number,
  hosts: string[],
  percent = 50,
) {
  const out: Record<string, [number, number | null][]> = {};
  for (const host of hosts) {
    const rows: [number, number | null][] = [];
    for (let start = Math.floor(from / intervalMs) * intervalMs; start < to; start += intervalMs) {
      const values = readings
        .filter((r) => r.tags.host === host && r.t >= Math.max(start, from) && r.t < Math.min(start + intervalMs, to))
        .map((r) => r[field]);
      rows.push([start, exact(values, agg, percent)]);
    }
    out[host] = rows;
  }
  return out;
}

beforeAll(async () => {
  t = await openTestApp('influxquery', { auth: 'tokens', journal: false });
  tokens = await createTokens(t.store, [
    ['reader', 'read', []],
    ['writer', 'write', []],
    ['admin', 'admin', []],
    ['memOnly', 'read', ['mem']],
  ]);
  await useTokensOnce(t, tokens);
  server = await serveOnLoopback(t.app);
  makeReadings();
  const writer = influx(tokens.writer);
  for (let i = 0; i < readings.length; i += 2_000) {
    await writer.writePoints(
      readings.slice(i, i + 2_000).map((reading) => ({
        measurement: 'cpu',
        tags: reading.tags,
        fields: { usage_user: reading.usage_user, usage_system: reading.usage_system },
        timestamp: new Date(reading.t),
      })),
    );
  }
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

/** A node-influx client of the server with `token` as password (sent as `p`). */
function influx(token: string): InfluxDB {
  const { hostname, port } = new URL(server.url);
  return new InfluxDB({ host: hostname, port: Number(port), database: 'telegraf', username: 'grafana', password: token });
}

/** `GET /query?db=telegraf&epoch=ms&q=...` with Basic authentication, as Grafana's backend sends it; the parsed body. */
async function grafanaQuery(q: string, token = tokens.reader, method: 'GET' | 'POST' = 'GET') {
  const url = new URL('/query', server.url);
  const parameters = new URLSearchParams({ db: 'telegraf', q, epoch: 'ms' });
  const headers: Record<string, string> = { authorization: `Basic ${Buffer.from(`grafana:${token}`).toString('base64')}` };
  let body: URLSearchParams | undefined;
  if (method === 'GET') url.search = parameters.toString();
  else {
    body = parameters;
    headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  const answer = await fetch(url, { method, headers, body });
  return {
    status: answer.status,
    body: (await answer.json()) as {
      results: {
        statement_id: number;
        series?: { name: string; tags?: Record<string, string>; columns: string[]; values: unknown[][] }[];
        error?: string;
      }[];
      error?: string;
    },
  };
}

const HOSTS = ['web-1', 'web-2', 'web-3', 'web-4', 'web-5'];
const FROM = T0 + 30 * MINUTE;
const TO = T0 + 150 * MINUTE;
const timeFilter = `time >= ${FROM}ms and time <= ${TO - 1}ms`;

/** Compares answered series (by host) with expected rows; `tolerance` relative (sketch answers 0.01). */
function expectRows(
  series: { tags?: Record<string, string>; values: unknown[][] }[],
  wanted: Record<string, [number, number | null][]>,
  what: string,
  tolerance = 1e-9,
) {
  expect(series.map((entry) => entry.tags?.host).sort(), what).toEqual(Object.keys(wanted).sort());
  for (const entry of series) {
    const rows = wanted[entry.tags!.host!]!;
    expect(
      entry.values.map((row) => row[0]),
      `${what} ${entry.tags!.host} times`,
    ).toEqual(rows.map((row) => row[0]));
    entry.values.forEach((row, i) => {
      const value = rows[i]![1];
      if (value === null) expect(row[1], `${what} ${entry.tags!.host} ${i}`).toBeNull();
      else
        expect(Math.abs((row[1] as number) - value), `${what} ${entry.tags!.host} at ${i}: ${row[1]} vs ${value}`).toBeLessThanOrEqual(
          tolerance * Math.max(1, Math.abs(value)),
        );
    });
  }
}

describe('SELECT with GROUP BY time, against a plain loop over the readings written by node-influx', () => {
  for (const phase of ['in the tail', 'after folding'] as const) {
    it(`every aggregate per host at 1m, 5m, 20m and 1h (${phase})`, async () => {
      if (phase === 'after folding') expect(await t.settle()).toBeGreaterThan(0);
      for (const interval of ['1m', '5m', '20m', '1h']) {
        const ms = { '1m': MINUTE, '5m': 5 * MINUTE, '20m': 20 * MINUTE, '1h': 60 * MINUTE }[interval]!;
        const aggregates = ['mean', 'count', 'sum', 'min', 'max', 'first', 'last', 'spread', 'stddev'];
        // One statement with every aggregate, as a panel with several queries sends them together.
        const q = `SELECT ${aggregates.map((agg) => `${agg}("usage_user")`).join(', ')} FROM "cpu" WHERE ${timeFilter} GROUP BY time(${interval}), "host" fill(null)`;
        const answer = await grafanaQuery(q);
        expect(answer.status).toBe(200);
        expect(answer.body.results[0]!.error).toBeUndefined();
        const series = answer.body.results[0]!.series!;
        expect(series[0]!.columns).toEqual(['time', ...aggregates]);
        aggregates.forEach((agg, i) => {
          const column = series.map((entry) => ({ tags: entry.tags, values: entry.values.map((row) => [row[0], row[i + 1]]) }));
          expectRows(column, expectedRows(agg, 'usage_user', FROM, TO, ms, HOSTS), `${agg} ${interval}`);
        });
      }
    });
  }

  it('median and percentile from quarter-hour sketches within 1%; null in minute buckets, which keep none', async () => {
    for (const [agg, percent] of [
      ['median', 50],
      ['percentile', 95],
      ['percentile', 10],
    ] as const) {
      const call = agg === 'median' ? 'median("usage_system")' : `percentile("usage_system", ${percent})`;
      for (const [interval, ms] of [
        ['15m', 15 * MINUTE],
        ['1h', 60 * MINUTE],
      ] as const) {
        const answer = await grafanaQuery(`SELECT ${call} FROM "cpu" WHERE ${timeFilter} GROUP BY time(${interval}), "host"`);
        expectRows(
          answer.body.results[0]!.series!,
          expectedRows(agg, 'usage_system', FROM, TO, ms, HOSTS, percent),
          `${call} ${interval}`,
          0.01,
        );
      }
    }
    const minutes = await grafanaQuery(`SELECT median("usage_system") FROM "cpu" WHERE ${timeFilter} GROUP BY time(1m)`);
    expect(minutes.body.results[0]!.series![0]!.values.every((row) => row[1] === null)).toBe(true);
  });

  it("Grafana's tag conditions: = OR =~ on one key, != across series that lack the tag, AND of two keys; several fields and math", async () => {
    const cases: [string, (reading: Reading) => boolean][] = [
      [`("host" = 'web-1' OR "host" =~ /^web-[23]$/)`, (r) => ['web-1', 'web-2', 'web-3'].includes(r.tags.host!)],
      [`"region" != 'eu'`, (r) => r.tags.region !== 'eu'],
      [`"region" !~ /^e/`, (r) => !(r.tags.region ?? '').startsWith('e')],
      [`"region" = 'us' AND "host" <> 'web-4'`, (r) => r.tags.region === 'us' && r.tags.host !== 'web-4'],
      [`("region" = 'eu' OR "host" = 'web-5')`, (r) => r.tags.region === 'eu' || r.tags.host === 'web-5'],
    ];
    for (const [condition, keep] of cases) {
      const q = `SELECT mean("usage_user"), max("usage_system") * 2 AS "double", stddev("usage_user") FROM "cpu" WHERE ${condition} AND ${timeFilter} GROUP BY time(30m) fill(none)`;
      const answer = await grafanaQuery(q);
      const series = answer.body.results[0]!.series!;
      expect(series).toHaveLength(1);
      expect(series[0]!.columns).toEqual(['time', 'mean', 'double', 'stddev']);
      const rows: unknown[][] = [];
      for (let start = FROM; start < TO; start += 30 * MINUTE) {
        const inside = readings.filter((r) => keep(r) && r.t >= start && r.t < start + 30 * MINUTE);
        rows.push([
          start,
          exact(
            inside.map((r) => r.usage_user),
            'mean',
          ),
          exact(
            inside.map((r) => r.usage_system),
            'max',
          )! * 2,
          exact(
            inside.map((r) => r.usage_user),
            'stddev',
          ),
        ]);
      }
      series[0]!.values.forEach((row, i) => {
        expect(row[0], q).toBe(rows[i]![0]);
        for (const column of [1, 2, 3]) expect(row[column] as number, `${q} ${i} ${column}`).toBeCloseTo(rows[i]![column] as number, 9);
      });
    }
  });

  it('fill(), ORDER BY time DESC, LIMIT, SLIMIT, offsets and tz()', async () => {
    const gap = `time >= ${T0 + 170 * MINUTE}ms and time <= ${T0 + 190 * MINUTE - 1}ms`;
    const of = async (q: string) => (await grafanaQuery(q)).body.results[0]!.series!;
    const last10 = readings.filter((r) => r.tags.host === 'web-1' && r.t >= T0 + 170 * MINUTE);
    const lastMean = exact(
      last10.filter((r) => r.t >= T0 + 175 * MINUTE).map((r) => r.usage_user),
      'mean',
    );
    for (const [fill, expectedEmpty] of [
      ['null', [null, null]],
      ['0', [0, 0]],
      ['previous', [lastMean, lastMean]],
    ] as const) {
      const series = await of(`SELECT mean("usage_user") FROM "cpu" WHERE "host" = 'web-1' AND ${gap} GROUP BY time(5m) fill(${fill})`);
      expect(series[0]!.values.map((row) => row[0])).toEqual([170, 175, 180, 185].map((m) => T0 + m * MINUTE));
      expect(series[0]!.values.slice(2).map((row) => row[1])).toEqual(expectedEmpty);
    }
    expect(
      (await of(`SELECT mean("usage_user") FROM "cpu" WHERE "host" = 'web-1' AND ${gap} GROUP BY time(5m) fill(none)`))[0]!.values,
    ).toHaveLength(2);
    const counted = await of(`SELECT count("usage_user") FROM "cpu" WHERE "host" = 'web-1' AND ${gap} GROUP BY time(5m)`);
    expect(counted[0]!.values.map((row) => row[1])).toEqual([30, 30, 0, 0]);
    const desc = await of(
      `SELECT last("usage_user") FROM "cpu" WHERE ${timeFilter} GROUP BY time(1h), "host" ORDER BY time DESC LIMIT 1 SLIMIT 2`,
    );
    expect(desc.map((entry) => entry.tags!.host)).toEqual(['web-1', 'web-2']);
    expect(desc[0]!.values).toEqual([[T0 + 120 * MINUTE, readings.filter((r) => r.tags.host === 'web-1' && r.t < TO).at(-1)!.usage_user]]);
    const shifted = await of(`SELECT count("usage_user") FROM "cpu" WHERE "host" = 'web-1' AND ${timeFilter} GROUP BY time(1h, 15m)`);
    expect(shifted[0]!.values.map((row) => row[0])).toEqual([15, 75, 135].map((m) => T0 + m * MINUTE));
    expect(shifted[0]!.values.map((row) => row[1])).toEqual([45 * 6, 360, 15 * 6]);
    for (const source of ['/^cp/', '"telegraf"."autogen"."cpu"', '"autogen".cpu']) {
      const named = await of(`SELECT count("usage_user") FROM ${source} WHERE "host" = 'web-1' AND ${timeFilter}`);
      expect(
        named.map((entry) => [entry.name, entry.values[0]![1]]),
        source,
      ).toEqual([['cpu', 720]]);
    }
    const paris = await grafanaQuery(`SELECT count("usage_user") FROM "cpu" WHERE "host" = 'web-1' GROUP BY time(1d) tz('Europe/Paris')`);
    // 2024-03-01 00:00 in Paris is 2024-02-29T23:00Z: one local day holds all 3 hours of readings.
    expect(paris.body.results[0]!.series![0]!.values).toEqual([[T0 - 60 * MINUTE, HOURS * 360]]);
    const text = await fetch(
      `${server.url}/query?db=telegraf&p=${tokens.reader}&q=${encodeURIComponent(`SELECT count("usage_user") FROM "cpu" WHERE "host" = 'web-1' GROUP BY time(1d) tz('Europe/Paris')`)}`,
    );
    expect(((await text.json()) as { results: { series: { values: unknown[][] }[] }[] }).results[0]!.series[0]!.values[0]![0]).toBe(
      '2024-03-01T00:00:00+01:00',
    );
  });

  it('aggregates without GROUP BY time: one row at the range start, first() and last() at their reading', async () => {
    const answer = await grafanaQuery(`SELECT count("usage_user"), mean("usage_user") FROM "cpu" WHERE "host" = 'web-2' AND ${timeFilter}`);
    const inside = readings.filter((r) => r.tags.host === 'web-2' && r.t >= FROM && r.t < TO).map((r) => r.usage_user);
    expect(answer.body.results[0]!.series![0]!.values[0]![0]).toBe(FROM);
    expect(answer.body.results[0]!.series![0]!.values[0]![1]).toBe(inside.length);
    expect(answer.body.results[0]!.series![0]!.values[0]![2]).toBeCloseTo(exact(inside, 'mean')!, 9);
    const last = await grafanaQuery(`SELECT last("usage_user") FROM "cpu" WHERE "host" = 'web-2'`);
    const newest = readings.filter((r) => r.tags.host === 'web-2').at(-1)!;
    expect(last.body.results[0]!.series![0]!.values).toEqual([[newest.t, newest.usage_user]]);
  });
});

describe('through node-influx', () => {
  it('ping, database names, measurements, and queries whose rows equal the plain loop', async () => {
    const client = influx(tokens.reader);
    const [host] = await client.ping(5_000);
    expect(host!.online).toBe(true);
    expect(host!.version).toBe('1.8.10');
    expect(await client.getDatabaseNames()).toEqual(['tsgraph']);
    expect(await client.getMeasurements()).toEqual(['cpu']);
    const rows = await client.query<{ time: Date; host: string; max: number }>(
      `SELECT max("usage_system") FROM "cpu" WHERE "region" = 'us' AND ${timeFilter} GROUP BY time(1h), "host"`,
    );
    const wanted = expectedRows('max', 'usage_system', FROM, TO, 60 * MINUTE, ['web-3', 'web-4']);
    expect(rows.map((row) => [row.host, row.time.getTime(), row.max])).toEqual(
      Object.entries(wanted).flatMap(([name, list]) => list.map(([time, value]) => [name, time, value])),
    );
    const raw = await client.query<{ time: Date; usage_user: number; host: string }>(
      `SELECT "usage_user", "host" FROM "cpu" WHERE "host" = 'web-3' AND time >= ${T0 + 176 * MINUTE}ms`,
    );
    const recent = readings.filter((r) => r.tags.host === 'web-3' && r.t >= T0 + 176 * MINUTE);
    expect(raw.map((row) => [row.time.getTime(), row.usage_user, row.host])).toEqual(recent.map((r) => [r.t, r.usage_user, 'web-3']));
  });

  it('writes v1 line protocol with its precisions; CREATE DATABASE needs the write scope and changes nothing', async () => {
    const client = influx(tokens.writer);
    await client.createDatabase('telegraf');
    const at = Date.UTC(2024, 3, 1, 12);
    await client.writePoints([{ measurement: 'mem', tags: { host: 'db-1' }, fields: { used: 10 }, timestamp: new Date(at) }], {
      precision: 's',
    });
    await client.writePoints([{ measurement: 'mem', tags: { host: 'db-1' }, fields: { used: 30 }, timestamp: new Date(at + 1_500) }], {
      precision: 'ms',
    });
    const answer = await grafanaQuery(
      `SELECT sum("used"), count("used") FROM "mem" WHERE time >= ${at}ms and time <= ${at + MINUTE}ms`,
      tokens.memOnly,
    );
    expect(answer.body.results[0]!.series![0]!.values).toEqual([[at, 40, 2]]);
    const refused = await grafanaQuery('CREATE DATABASE "other"', tokens.reader);
    expect(refused.body.results[0]!.error).toMatch(/write/);
  });
});

describe("the statements Grafana's data source sends", () => {
  const fixtures = JSON.parse(readFileSync(new URL('../fixtures/grafana/influxdb-requests.json', import.meta.url), 'utf8')) as {
    healthCheck: string[];
    editor: string[];
    panel: string;
  };

  it("'Save & test' and the query editor's look-ups", async () => {
    const health = await grafanaQuery(fixtures.healthCheck[0]!);
    expect(health).toMatchObject({
      status: 200,
      body: { results: [{ statement_id: 0, series: [{ name: 'measurements', columns: ['name'] }] }] },
    });
    const answers = await Promise.all(fixtures.editor.map(async (q) => (await grafanaQuery(q)).body.results[0]));
    expect(answers.map((answer) => answer!.series)).toEqual([
      [{ name: 'measurements', columns: ['name'], values: [['cpu'], ['mem']] }],
      [{ name: 'measurements', columns: ['name'], values: [['cpu']] }],
      [
        {
          name: '',
          columns: ['name', 'duration', 'shardGroupDuration', 'replicaN', 'default'],
          values: [['autogen', '0s', '168h0m0s', 1, true]],
        },
      ],
      [{ name: 'cpu', columns: ['tagKey'], values: [['host'], ['region']] }],
      [{ name: 'cpu', columns: ['key', 'value'], values: HOSTS.map((host) => ['host', host]) }],
      [
        {
          name: 'cpu',
          columns: ['key', 'value'],
          values: [
            ['host', 'web-1'],
            ['host', 'web-2'],
          ],
        },
      ],
      [
        {
          name: 'cpu',
          columns: ['fieldKey', 'fieldType'],
          values: [
            ['usage_system', 'float'],
            ['usage_user', 'float'],
          ],
        },
      ],
    ]);
  });

  it('a panel with $__interval and $timeFilter, by GET and by POST, several statements in one q', async () => {
    const q = fixtures.panel
      .replace('{from}', String(FROM))
      .replace('{to}', String(TO - 1))
      .replace('{interval}', '1m');
    for (const method of ['GET', 'POST'] as const) {
      const answer = await grafanaQuery(`${q}; SHOW FIELD KEYS FROM "cpu"`, tokens.reader, method);
      expect(answer.body.results.map((result) => result.statement_id)).toEqual([0, 1]);
      expectRows(
        answer.body.results[0]!.series!,
        expectedRows('mean', 'usage_user', FROM, TO, MINUTE, ['web-1', 'web-2', 'web-3']),
        `panel ${method}`,
      );
    }
  });
});

describe('errors in InfluxDB shape, nothing written', () => {
  it('a statement it cannot answer has its error, the others still answer; a query that does not parse is 400', async () => {
    const before = await databaseSnapshot(t.store.db);
    const answer = await grafanaQuery(
      [
        'SELECT derivative(mean("usage_user")) FROM "cpu" GROUP BY time(1m)',
        'SELECT mean("usage_user") FROM "cpu" GROUP BY time(10s)',
        `SELECT mean("usage_user") FROM "cpu" WHERE "usage_user" > 5 AND ${timeFilter} GROUP BY time(1m)`,
        `SELECT "usage_user" FROM "cpu" WHERE ${timeFilter}`,
        'SHOW MEASUREMENTS',
      ].join('; '),
    );
    expect(answer.status).toBe(200);
    const [derivative, seconds, field, raw, show] = answer.body.results;
    expect(derivative!.error).toMatch(/derivative\(\) is not supported/);
    expect(seconds!.error).toMatch(/whole minutes/);
    expect(field!.error).toMatch(/conditions on fields/);
    expect(raw!.error).toMatch(/GROUP BY time\(\)/);
    expect(show!.series).toBeDefined();
    const broken = await grafanaQuery('SELEKT 1');
    expect(broken.status).toBe(400);
    expect(broken.body.error).toMatch(/^error parsing query: found SELEKT, expected SELECT/);
    expect(await databaseSnapshot(t.store.db)).toEqual(before);
  });

  it('no token 401, a token without read 403, a measurement outside its prefixes as the statement error; writes refused whole', async () => {
    const none = await fetch(`${server.url}/query?q=SHOW%20MEASUREMENTS`);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { code: string }).code).toBe('UNAUTHENTICATED');
    expect((await grafanaQuery('SHOW MEASUREMENTS', tokens.writer)).status).toBe(403);
    const outside = await grafanaQuery(`SELECT mean("usage_user") FROM "cpu" WHERE ${timeFilter} GROUP BY time(1h)`, tokens.memOnly);
    expect(outside.body.results[0]!.error).toMatch(/may not read measurement "cpu"/);
    expect((await grafanaQuery('SHOW MEASUREMENTS', tokens.memOnly)).body.results[0]!.series![0]!.values).toEqual([['mem']]);
    const before = await databaseSnapshot(t.store.db);
    const write = (body: string, token: string, precision = 'ms') =>
      fetch(`${server.url}/write?db=telegraf&precision=${precision}&u=x&p=${token}`, { method: 'POST', body });
    const reader = await write('cpu,host=x usage_user=1 1', tokens.reader);
    expect(reader.status).toBe(403);
    const bad = await write('cpu,host=x usage_user=1 1\ncpu,host=x usage_user=oops 2', tokens.writer);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/^line 2, column \d+:/);
    expect((await write('cpu value=1 1', tokens.writer, 'h')).status).toBe(400);
    expect(await databaseSnapshot(t.store.db)).toEqual(before);
  });

  it('/write keeps batch ids: the same Idempotency-Key twice stores the readings once', async () => {
    const body = `batch_test,host=a value=5 ${Date.UTC(2024, 4, 1)}`;
    for (let i = 0; i < 2; i++) {
      const answer = await fetch(`${server.url}/write?db=telegraf&precision=ms`, {
        method: 'POST',
        headers: { authorization: `Token ${tokens.writer}`, 'idempotency-key': 'grafana-batch-1' },
        body,
      });
      expect(answer.status).toBe(204);
    }
    const answer = await grafanaQuery(
      `SELECT count("value") FROM "batch_test" WHERE time >= ${Date.UTC(2024, 4, 1)}ms and time <= ${Date.UTC(2024, 4, 1) + MINUTE}ms`,
    );
    expect(answer.body.results[0]!.series![0]!.values[0]![1]).toBe(1);
  });
});
