/**
 * The InfluxQL parser (`src/influxql/parse.ts`): the statements Grafana's InfluxDB data
 * source writes parse into the expected values, and what is outside the subset fails
 * with InfluxDB's kind of message and its position.
 */
import { describe, expect, it } from 'vitest';
import { InfluxQLError, parseInfluxQL, type SelectStatement } from '../../src/influxql/parse.ts';
import { splitCondition, tagsMatch } from '../../src/influxql/conditions.ts';

const select = (text: string) => parseInfluxQL(text)[0] as SelectStatement;

describe('SELECT as Grafana writes it', () => {
  it("a panel's query: aggregate, tag condition with OR and regex, $timeFilter, GROUP BY time and tag, fill", () => {
    const statement = select(
      `SELECT mean("value") FROM "autogen"."cpu" WHERE ("host" = 'a' OR "host" =~ /b.*/) AND time >= 1700000000000ms and time <= 1700003600000ms GROUP BY time(1m), "host" fill(null)`,
    );
    expect(statement.fields).toEqual([{ expr: { kind: 'call', name: 'mean', args: [{ kind: 'ref', name: 'value' }] }, alias: null }]);
    expect(statement.sources).toEqual([{ kind: 'name', name: 'cpu', database: null, retentionPolicy: 'autogen' }]);
    expect(statement.groupByTime).toEqual({ intervalMs: 60_000, offsetMs: 0 });
    expect(statement.groupByTags).toEqual(['host']);
    expect(statement.fill).toEqual({ kind: 'null' });
    const split = splitCondition(statement.condition, 0);
    expect([split.from, split.to]).toEqual([1700000000000, 1700003600001]);
    expect(tagsMatch(split.tags, { host: 'a' })).toBe(true);
    expect(tagsMatch(split.tags, { host: 'xbz' })).toBe(true);
    expect(tagsMatch(split.tags, { host: 'c' })).toBe(false);
  });

  it('every aggregate, percentile with its number, math, aliases, ORDER BY, LIMIT, SLIMIT, tz and offsets', () => {
    const statement = select(
      `select percentile("f", 95) AS "p95", spread(f) * 100, median("f"::field) FROM m WHERE time > now() - 6h GROUP BY time(1h, 15m), * fill(previous) ORDER BY time DESC LIMIT 10 OFFSET 2 SLIMIT 3 SOFFSET 1 tz('Europe/Paris')`,
    );
    expect(statement.fields.map((field) => field.alias)).toEqual(['p95', null, null]);
    expect(statement.fields[0]!.expr).toEqual({
      kind: 'call',
      name: 'percentile',
      args: [
        { kind: 'ref', name: 'f' },
        { kind: 'number', value: 95 },
      ],
    });
    expect(statement.fields[1]!.expr).toMatchObject({ kind: 'binary', op: '*', rhs: { kind: 'number', value: 100 } });
    expect(statement).toMatchObject({
      groupByTime: { intervalMs: 3_600_000, offsetMs: 900_000 },
      groupByAll: true,
      fill: { kind: 'previous' },
      descending: true,
      limit: 10,
      offset: 2,
      slimit: 3,
      soffset: 1,
      timeZone: 'Europe/Paris',
    });
    expect(splitCondition(statement.condition, 10 * 3_600_000)).toEqual({ from: 4 * 3_600_000 + 1, to: null, tags: null });
  });

  it('fill with a number, time strings and nanosecond numbers, != and <>, !~', () => {
    const statement = select(
      `SELECT count(v) FROM m WHERE "a" <> 'x' AND b !~ /^y/ AND time >= '2024-01-01T00:00:00Z' AND time < 1704067260000000000 GROUP BY time(30s) fill(-1)`,
    );
    expect(statement.fill).toEqual({ kind: 'number', value: -1 });
    expect(statement.groupByTime).toEqual({ intervalMs: 30_000, offsetMs: 0 });
    const split = splitCondition(statement.condition, 0);
    expect([split.from, split.to]).toEqual([Date.UTC(2024, 0, 1), Date.UTC(2024, 0, 1, 0, 1)]);
    expect(tagsMatch(split.tags, { a: 'z', b: 'n' })).toBe(true);
    expect(tagsMatch(split.tags, { a: 'x', b: 'n' })).toBe(false);
    expect(tagsMatch(split.tags, { a: 'z', b: 'yes' })).toBe(false);
    // A tag the series lacks is '' as in InfluxDB: != 'x' holds.
    expect(tagsMatch(split.tags, {})).toBe(true);
  });

  it('several statements; SHOW statements of the editor; CREATE DATABASE', () => {
    expect(
      parseInfluxQL(
        `SHOW MEASUREMENTS WITH MEASUREMENT =~ /cp/ LIMIT 100; SHOW TAG KEYS FROM "cpu"; SHOW TAG VALUES FROM "cpu" WITH KEY = "host" WHERE "region" = 'eu'; SHOW TAG VALUES WITH KEY IN ("a", "b"); SHOW FIELD KEYS FROM "cpu"; SHOW RETENTION POLICIES on "telegraf"; SHOW DATABASES; CREATE DATABASE "telegraf" WITH DURATION 1d;`,
      ).map((statement) => statement.kind),
    ).toEqual([
      'showMeasurements',
      'showTagKeys',
      'showTagValues',
      'showTagValues',
      'showFieldKeys',
      'showRetentionPolicies',
      'showDatabases',
      'createDatabase',
    ]);
    expect(parseInfluxQL('SHOW MEASUREMENTS WITH MEASUREMENT =~ /c\\/p/ LIMIT 100')[0]).toEqual({
      kind: 'showMeasurements',
      with: { op: '=~', value: 'c/p' },
      condition: null,
      limit: 100,
      offset: 0,
    });
    expect(parseInfluxQL('SHOW TAG VALUES WITH KEY IN ("a", "b")')[0]).toMatchObject({ key: { op: '=', keys: ['a', 'b'] } });
  });
});

describe('what fails, with the position', () => {
  it.each([
    ['SELEKT 1', /^found SELEKT, expected SELECT, SHOW or CREATE DATABASE .* at line 1, char 1$/],
    ['SELECT mean(v) FROM', /found EOF, expected measurement name/],
    ['SELECT mean(v) FROM m WHERE host = ', /expected a tag key, time/],
    ["SELECT mean(v) FROM m WHERE host = 'a", /unterminated string/],
    ['SELECT mean(v) FROM m GROUP BY time(x)', /found X, expected duration/],
    ['SELECT mean(v) INTO x FROM m', /INTO is not supported/],
    ['SELECT v FROM m ORDER BY host', /only ORDER BY time/],
    ['', /empty query/],
  ])('%s', (text, message) => {
    expect(() => parseInfluxQL(text)).toThrow(InfluxQLError);
    expect(() => parseInfluxQL(text)).toThrow(message);
  });

  it('time under OR, or compared with =', () => {
    expect(() => splitCondition(select("SELECT mean(v) FROM m WHERE time > now() - 1h OR host = 'a'").condition, 0)).toThrow(
      /joined to the others with AND/,
    );
    expect(() => splitCondition(select('SELECT mean(v) FROM m WHERE time = now()').condition, 0)).toThrow(/only be compared with </);
  });
});
