/**
 * The line-protocol parser against the InfluxDB v2 manual page "Line protocol" (its
 * examples), against what InfluxDB's client library writes (`Point.toLineProtocol`, an
 * encoder sharing no code with ours), and its errors with their exact line and column.
 */
import { Point } from '@influxdata/influxdb-client';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineProtocolError, parseLineProtocol, positionOf, timestampToMs } from '../../src/routes/line-protocol.ts';

/** The error `text` raises: its code, 1-based line and column, and message. */
function failure(text: string): { code: string; line: number; column: number; message: string } {
  try {
    parseLineProtocol(text);
  } catch (error) {
    if (!(error instanceof LineProtocolError)) throw error;
    return { code: error.code, ...positionOf(text, error.offset), message: error.message };
  }
  throw new Error(`parsed without error: ${JSON.stringify(text)}`);
}

const simple = (text: string) =>
  parseLineProtocol(text).map((entry) => ({
    measurement: entry.measurement,
    tags: Object.fromEntries(entry.tags.map((tag) => [tag.key, tag.value])),
    fields: Object.fromEntries(entry.fields.map((field) => [field.key, [field.kind, field.value]])),
    timestamp: entry.timestamp,
  }));

describe('parseLineProtocol: the manual page "Line protocol"', () => {
  it('reads its example: measurement, tags, a string field and a nanosecond timestamp', () => {
    expect(simple('myMeasurement,tag1=value1,tag2=value2 fieldKey="fieldValue" 1556813561098000000')).toEqual([
      {
        measurement: 'myMeasurement',
        tags: { tag1: 'value1', tag2: 'value2' },
        fields: { fieldKey: ['string', 'fieldValue'] },
        timestamp: 1556813561098000000n,
      },
    ]);
  });

  it('reads every field type: floats (also written as integers or in scientific notation), i, u, booleans', () => {
    const [entry] = simple(
      'm a=1.0,b=1,c=-1.234456e+78,d=.5,e=1.,f=12485903i,g=-12485903i,h=12485903u,i=t,j=T,k=true,l=True,m=TRUE,n=f,o=F,p=false,q=False,r=FALSE',
    );
    expect(entry!.fields).toEqual({
      a: ['float', 1],
      b: ['float', 1],
      c: ['float', -1.234456e78],
      d: ['float', 0.5],
      e: ['float', 1],
      f: ['integer', 12485903],
      g: ['integer', -12485903],
      h: ['unsigned', 12485903],
      i: ['boolean', true],
      j: ['boolean', true],
      k: ['boolean', true],
      l: ['boolean', true],
      m: ['boolean', true],
      n: ['boolean', false],
      o: ['boolean', false],
      p: ['boolean', false],
      q: ['boolean', false],
      r: ['boolean', false],
    });
  });

  it('accepts the 64-bit integer limits and refuses one past them', () => {
    const [entry] = simple('m a=-9223372036854775808i,b=9223372036854775807i,c=0u,d=18446744073709551615u');
    expect(entry!.fields).toEqual({
      // As doubles: the nearest of each (2^63 and 2^64).
      a: ['integer', -(2 ** 63)],
      b: ['integer', 2 ** 63],
      c: ['unsigned', 0],
      d: ['unsigned', 2 ** 64],
    });
    expect(failure('m a=9223372036854775808i')).toMatchObject({ code: 'INVALID_FIELD_VALUE', line: 1, column: 5 });
    expect(failure('m a=18446744073709551616u')).toMatchObject({ code: 'INVALID_FIELD_VALUE', line: 1, column: 5 });
    expect(failure('m a=-1u')).toMatchObject({ code: 'MALFORMED_BODY', column: 5 });
  });

  it('unescapes the special characters of each element', () => {
    expect(simple('my\\ Measurement fieldKey="string value"')[0]!.measurement).toBe('my Measurement');
    expect(simple('my\\,Measurement f=1')[0]!.measurement).toBe('my,Measurement');
    // "=" needs no escape in a measurement: a backslash before it stays.
    expect(simple('my\\=M f=1')[0]!.measurement).toBe('my\\=M');
    expect(simple('myMeasurement,tag\\ Key1=tag\\ Value1,tag\\ Key2=tag\\ Value2 fieldKey=100')[0]!.tags).toEqual({
      'tag Key1': 'tag Value1',
      'tag Key2': 'tag Value2',
    });
    expect(simple('m,k\\=1=a\\,b\\=c f\\ 1\\,x\\=y=1')[0]).toMatchObject({ tags: { 'k=1': 'a,b=c' }, fields: { 'f 1,x=y': ['float', 1] } });
    expect(simple('myMeasurement fieldKey="\\"string\\" within a string"')[0]!.fields).toEqual({
      fieldKey: ['string', '"string" within a string'],
    });
    expect(simple('myMeasurement,tagKey=🍭 fieldKey="Launch 🚀" 1556813561098000000')[0]).toMatchObject({
      tags: { tagKey: '🍭' },
      fields: { fieldKey: ['string', 'Launch 🚀'] },
    });
  });

  it('reads backslashes as InfluxDB does: literal unless before a special character; in strings \\\\ is one', () => {
    expect(simple('m,k=a\\b f=1')[0]!.tags).toEqual({ k: 'a\\b' });
    expect(simple('m,k=a\\\\b f=1')[0]!.tags).toEqual({ k: 'a\\\\b' });
    // The second backslash escapes the space: `a\` then a space inside the value.
    expect(simple('m,k=a\\\\ b f=1')[0]!.tags).toEqual({ k: 'a\\ b' });
    expect(simple('m f="a\\\\b\\c\\"d"')[0]!.fields).toEqual({ f: ['string', 'a\\b\\c"d'] });
  });

  it('keeps quotes in names and tag values, and commas, spaces and "=" unescaped in strings', () => {
    expect(simple(`"m",'k'="v" f="a, b = c"`)[0]).toMatchObject({
      measurement: '"m"',
      tags: { "'k'": '"v"' },
      fields: { f: ['string', 'a, b = c'] },
    });
  });

  it('skips comments and empty lines, takes CRLF, and allows spaces around sections', () => {
    const text = '# This is a comment\n\n  m,k=v   f=1   5  \r\n\r\n   # indented comment\nn g=2i\n';
    expect(simple(text)).toEqual([
      { measurement: 'm', tags: { k: 'v' }, fields: { f: ['float', 1] }, timestamp: 5n },
      { measurement: 'n', tags: {}, fields: { g: ['integer', 2] }, timestamp: null },
    ]);
    expect(simple('')).toEqual([]);
    expect(simple('# only a comment')).toEqual([]);
  });

  it('reads a string value that spans lines, and counts lines after it', () => {
    const text = 'm f="two\nlines"\nn f=1 x';
    expect(simple('m f="two\nlines"')[0]!.fields).toEqual({ f: ['string', 'two\nlines'] });
    expect(failure(text)).toMatchObject({ line: 3, column: 7 });
  });
});

describe('parseLineProtocol: errors name the line and column', () => {
  const cases: [string, number, number, RegExp][] = [
    ['cpu', 1, 4, /at least one field/],
    ['cpu,host=a', 1, 11, /at least one field/],
    ['cpu ', 1, 5, /at least one field/],
    ['ok v=1\n,host=a v=1', 2, 1, /measurement name/],
    ['ok v=1\nok v=2\ncpu,host= v=1', 3, 10, /tag "host" has no value/],
    ['cpu,host v=1', 1, 9, /expected "=" after tag key "host"/],
    ['cpu,=a v=1', 1, 5, /expected a tag key/],
    ['cpu,a=b=c v=1', 1, 8, /unexpected "="/],
    ['cpu v', 1, 6, /expected "=" after field key "v"/],
    ['cpu v=', 1, 7, /field "v" has no value/],
    ['cpu v=1x', 1, 7, /"1x" is not a field value/],
    ['cpu v=+1', 1, 7, /is not a field value/],
    ['cpu v=NaN', 1, 7, /is not a field value/],
    ['cpu v=yes', 1, 7, /is not a field value/],
    ['cpu v=1,', 1, 9, /expected a field key/],
    ['cpu v="abc', 1, 7, /no closing quote/],
    ['cpu v="a"b', 1, 10, /unexpected "b" after a field value/],
    ['cpu v=1 12a', 1, 9, /"12a" is not a timestamp/],
    ['cpu v=1 1.5', 1, 9, /is not a timestamp/],
    ['cpu v=1 1 2', 1, 11, /unexpected text after the timestamp/],
    ['cpu\tx v=1', 1, 4, /control character U\+0009/],
    ['cpu v=1\rx', 1, 8, /unexpected/],
    ['🍭,k=🚀 v=1 x', 1, 11, /is not a timestamp/],
  ];
  it.each(cases)('%j: line %i, column %i', (text, line, column, message) => {
    const error = failure(text);
    expect({ line: error.line, column: error.column }).toEqual({ line, column });
    expect(error.message).toMatch(message);
    expect(error.code).toBe('MALFORMED_BODY');
  });

  it('refuses a timestamp outside the signed 64-bit range as INVALID_TIME', () => {
    expect(simple('m f=1 -9223372036854775808')[0]!.timestamp).toBe(-9223372036854775808n);
    expect(failure('m f=1 9223372036854775808')).toMatchObject({ code: 'INVALID_TIME', line: 1, column: 7 });
  });
});

describe('timestampToMs', () => {
  it('converts each precision, rounding toward the past', () => {
    expect(timestampToMs(1556813561098765432n, 'ns')).toBe(1556813561098);
    expect(timestampToMs(1556813561098765n, 'us')).toBe(1556813561098);
    expect(timestampToMs(1556813561098n, 'ms')).toBe(1556813561098);
    expect(timestampToMs(1556813561n, 's')).toBe(1556813561000);
    expect(timestampToMs(-1n, 'ns')).toBe(-1);
    expect(timestampToMs(-1_000_000n, 'ns')).toBe(-1);
    expect(timestampToMs(-1_000_001n, 'ns')).toBe(-2);
    expect(timestampToMs(0n, 'us')).toBe(0);
  });
});

describe('parseLineProtocol reads what InfluxDB client libraries write', () => {
  // Printable text without control characters (the client writes those as `\n` and `\t`,
  // which InfluxDB keeps as two characters too); a value ending in a backslash is
  // ambiguous in line protocol itself, as InfluxDB documents.
  const text = fc
    .string({ unit: fc.constantFrom('a', 'Z', '0', ' ', ',', '=', '"', '\\', '#', 'é', '🚀', "'"), minLength: 1, maxLength: 12 })
    .filter((value) => !value.endsWith('\\'));
  const name = text.filter((value) => !value.startsWith('#') && !value.startsWith(' '));
  const isInteger = (value: number) => Number.isSafeInteger(value) && !Object.is(value, -0);

  it('round-trips random measurements, tags, fields and timestamps through Point.toLineProtocol', () => {
    fc.assert(
      fc.property(
        name,
        fc.dictionary(text, text, { maxKeys: 4 }),
        fc.dictionary(text, fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.boolean(), text), {
          minKeys: 1,
          maxKeys: 4,
        }),
        fc.bigInt({ min: 0n, max: 2n ** 62n }),
        (measurement, tags, fields, nanos) => {
          const point = new Point(measurement).timestamp(String(nanos));
          for (const [key, value] of Object.entries(tags)) point.tag(key, value);
          const expected: Record<string, [string, unknown]> = {};
          for (const [key, value] of Object.entries(fields)) {
            if (typeof value === 'boolean') point.booleanField(key, value);
            else if (typeof value === 'string') point.stringField(key, value);
            else if (isInteger(value)) point.intField(key, value);
            else point.floatField(key, value);
            const kind =
              typeof value === 'boolean' ? 'boolean' : typeof value === 'string' ? 'string' : isInteger(value) ? 'integer' : 'float';
            expected[key] = [kind, Object.is(value, -0) ? 0 : value];
          }
          const line = point.toLineProtocol()!;
          const [entry] = simple(line);
          expect(entry).toEqual({ measurement, tags, fields: expected, timestamp: nanos });
        },
      ),
      { numRuns: 500 },
    );
  });
});
