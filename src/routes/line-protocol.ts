/**
 * A parser of InfluxDB line protocol, pure (no I/O), following the InfluxDB v2 manual
 * page "Line protocol" (https://docs.influxdata.com/influxdb/v2/reference/syntax/line-protocol/):
 *
 *   measurement[,tag_key=tag_value...] field_key=field_value[,field_key=field_value...] [timestamp]
 *
 * - Lines end with `\n` (or `\r\n`); empty lines and lines starting with `#` (comments)
 *   are skipped; spaces before a line, between its sections and after it are allowed.
 * - Escapes: in the measurement `\,` and `\ `; in tag keys, tag values and field keys
 *   `\,`, `\=` and `\ `; in string field values `\"` and `\\`. A backslash before any
 *   other character is a literal backslash. Outside string values `\\` is two
 *   backslashes, not one: the manual's "Escaping backslashes" table says otherwise, but
 *   InfluxDB's own parser and the reference decoder (github.com/influxdata/line-protocol)
 *   unescape only the special characters there, and Telegraf and the client libraries
 *   escape only those: a tag value `a\ b` is written `a\\ b` and must read back as `a\ b`.
 * - Field values: floats (`1`, `-1.5`, `1e+78`, `.5`), signed 64-bit integers (`12i`),
 *   unsigned 64-bit integers (`12u`), strings (`"text"`, which may span lines) and
 *   booleans (`t`, `T`, `true`, `True`, `TRUE` and the same for false).
 * - The timestamp is a signed 64-bit integer in the precision the request names.
 * - Control characters (U+0000 to U+001F, U+007F) are refused outside string values.
 *
 * Positions are offsets (UTF-16 code units) into the text; {@link positionOf} turns one
 * into a 1-based line and column (in characters) for messages. The parser checks the
 * syntax only; names, values and times are checked by the record path's validation
 * (`record/validate.ts`).
 */
import { CodedError, ErrorCode } from '../errors.ts';

/** The type of a field value, as line protocol writes it. */
export type FieldKind = 'float' | 'integer' | 'unsigned' | 'string' | 'boolean';

/** A tag of a line, unescaped, with where its key and value start. */
export interface LineTag {
  key: string;
  value: string;
  /** Offset of the key. */
  at: number;
  /** Offset of the value. */
  valueAt: number;
}

/** A field of a line, unescaped; integers and unsigned integers as numbers (exact up to 2^53). */
export interface LineField {
  key: string;
  kind: FieldKind;
  value: number | string | boolean;
  /** Offset of the key. */
  at: number;
  /** Offset of the value (the opening quote of a string). */
  valueAt: number;
}

/** One line of line protocol (one point), unescaped. */
export interface LineEntry {
  /** Offset of the measurement: the start of the line's content. */
  at: number;
  measurement: string;
  /** In the order written. */
  tags: LineTag[];
  /** In the order written; at least one. */
  fields: LineField[];
  /** The timestamp as written, in the request's precision; null when the line has none. */
  timestamp: bigint | null;
  /** Offset of the timestamp, or of the line's end when it has none. */
  timestampAt: number;
}

/** A line that does not parse: MALFORMED_BODY, or INVALID_FIELD_VALUE/INVALID_TIME for a number out of its 64-bit range. */
export class LineProtocolError extends CodedError {
  /** Offset in the text where the problem is. */
  readonly offset: number;

  constructor(code: ErrorCode, offset: number, message: string) {
    super(code, message);
    this.name = 'LineProtocolError';
    this.offset = offset;
  }
}

const NEWLINE = 10;
const RETURN = 13;
const SPACE = 32;
const QUOTE = 34;
const HASH = 35;
const COMMA = 44;
const EQUALS = 61;
const BACKSLASH = 92;
const MINUS = 45;
const DOT = 46;
const ZERO = 48;
const NINE = 57;
const LOWER_I = 105;
const LOWER_U = 117;

/** What ends, and what a backslash escapes in, a measurement. */
const MEASUREMENT_SPECIAL = (code: number) => code === COMMA || code === SPACE;
/** What ends, and what a backslash escapes in, a tag key, tag value or field key. */
const KEY_SPECIAL = (code: number) => code === COMMA || code === EQUALS || code === SPACE;

const isControl = (code: number) => code < 32 || code === 127;

const BOOLEANS = new Map<string, boolean>([
  ['t', true],
  ['T', true],
  ['true', true],
  ['True', true],
  ['TRUE', true],
  ['f', false],
  ['F', false],
  ['false', false],
  ['False', false],
  ['FALSE', false],
]);

const FLOAT = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const INTEGER = /^-?\d+i$/;
const UNSIGNED = /^\d+u$/;
const TIMESTAMP = /^-?\d+$/;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** A short, printable rendering of a character for messages. */
function describe(text: string, offset: number): string {
  if (offset >= text.length) return 'the end of the line';
  const code = text.codePointAt(offset)!;
  if (code === NEWLINE || code === RETURN) return 'the end of the line';
  if (isControl(code)) return `control character U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return JSON.stringify(String.fromCodePoint(code));
}

/**
 * Parses a whole body of line protocol.
 * @returns one entry per line that is neither empty nor a comment, in order.
 * @throws LineProtocolError at the first line that does not parse: MALFORMED_BODY for
 * the syntax, INVALID_FIELD_VALUE for an integer out of the 64-bit range,
 * INVALID_TIME for a timestamp out of the signed 64-bit range.
 */
export function parseLineProtocol(text: string): LineEntry[] {
  const entries: LineEntry[] = [];
  const end = text.length;
  let i = 0;
  while (i < end) {
    while (text.charCodeAt(i) === SPACE) i++;
    if (i >= end) break;
    const code = text.charCodeAt(i);
    if (code === NEWLINE) {
      i++;
    } else if (code === RETURN && text.charCodeAt(i + 1) === NEWLINE) {
      i += 2;
    } else if (code === HASH) {
      while (i < end && text.charCodeAt(i) !== NEWLINE) i++;
    } else {
      const entry = new EntryParser(text, i);
      entries.push(entry.parse());
      i = entry.position;
    }
  }
  return entries;
}

/** Parses one entry starting at a given offset; `position` is after its line end once `parse` returns. */
class EntryParser {
  position: number;

  constructor(
    private readonly text: string,
    start: number,
  ) {
    this.position = start;
  }

  private at(offset = this.position): number {
    return this.text.charCodeAt(offset);
  }

  /** True at the end of the line: end of text, `\n` or `\r\n`. */
  private atLineEnd(offset = this.position): boolean {
    const code = this.at(offset);
    return offset >= this.text.length || code === NEWLINE || (code === RETURN && this.at(offset + 1) === NEWLINE);
  }

  private fail(message: string, offset = this.position): never {
    throw new LineProtocolError(ErrorCode.MALFORMED_BODY, offset, message);
  }

  parse(): LineEntry {
    const at = this.position;
    const measurement = this.token(MEASUREMENT_SPECIAL);
    if (measurement === '') this.fail(`expected a measurement name, found ${describe(this.text, this.position)}`);
    const tags: LineTag[] = [];
    while (this.at() === COMMA) {
      this.position++;
      const keyAt = this.position;
      const key = this.token(KEY_SPECIAL);
      if (key === '') this.fail(`expected a tag key after ",", found ${describe(this.text, this.position)}`);
      if (this.at() !== EQUALS) this.fail(`expected "=" after tag key ${JSON.stringify(key)}, found ${describe(this.text, this.position)}`);
      this.position++;
      const valueAt = this.position;
      const value = this.token(KEY_SPECIAL);
      if (value === '') {
        this.fail(`tag ${JSON.stringify(key)} has no value (leave an empty tag out; escape "," "=" and " " in values with "\\")`);
      }
      tags.push({ key, value, at: keyAt, valueAt });
    }
    if (this.at() !== SPACE) {
      if (this.atLineEnd()) this.fail('expected a space and at least one field (measurement[,tag=value] field=value [timestamp])');
      this.fail(`unexpected ${describe(this.text, this.position)} (escape "," "=" and " " in names and tag values with "\\")`);
    }
    this.skipSpaces();
    if (this.atLineEnd()) this.fail('expected at least one field (field=value) after the space');
    const fields: LineField[] = [];
    for (;;) {
      fields.push(this.field());
      if (this.at() !== COMMA) break;
      this.position++;
    }
    let timestamp: bigint | null = null;
    let timestampAt = this.position;
    if (!this.atLineEnd()) {
      if (this.at() !== SPACE) this.fail(`unexpected ${describe(this.text, this.position)} after a field value`);
      this.skipSpaces();
      timestampAt = this.position;
      if (!this.atLineEnd()) {
        timestamp = this.timestamp();
        this.skipSpaces();
        if (!this.atLineEnd()) this.fail(`unexpected text after the timestamp: ${describe(this.text, this.position)}`);
      }
    }
    this.position += this.at() === RETURN ? 2 : 1;
    return { at, measurement, tags, fields, timestamp, timestampAt };
  }

  private skipSpaces(): void {
    while (this.at() === SPACE) this.position++;
  }

  /**
   * Reads a name or tag value up to an unescaped special character or the line end,
   * unescaping a backslash before a special character; refuses control characters.
   */
  private token(special: (code: number) => boolean): string {
    const text = this.text;
    let value = '';
    let segment = this.position;
    let i = this.position;
    while (i < text.length) {
      const code = text.charCodeAt(i);
      if (code === BACKSLASH) {
        const next = text.charCodeAt(i + 1);
        if (special(next)) {
          value += text.slice(segment, i) + text[i + 1];
          i += 2;
          segment = i;
          continue;
        }
        i++;
        continue;
      }
      if (special(code) || code === NEWLINE || code === RETURN) break;
      if (isControl(code)) this.fail(`${describe(text, i)} is not allowed outside string field values`, i);
      i++;
    }
    this.position = i;
    return value + text.slice(segment, i);
  }

  private field(): LineField {
    const at = this.position;
    const key = this.token(KEY_SPECIAL);
    if (key === '') this.fail(`expected a field key, found ${describe(this.text, this.position)}`);
    if (this.at() !== EQUALS) this.fail(`expected "=" after field key ${JSON.stringify(key)}, found ${describe(this.text, this.position)}`);
    this.position++;
    const valueAt = this.position;
    if (this.at() === QUOTE) return { key, kind: 'string', value: this.string(), at, valueAt };
    const text = this.text;
    let i = this.position;
    while (i < text.length) {
      const code = text.charCodeAt(i);
      if (code === COMMA || code === SPACE || code === NEWLINE || code === RETURN) break;
      i++;
    }
    const raw = text.slice(this.position, i);
    this.position = i;
    if (raw === '') this.fail(`field ${JSON.stringify(key)} has no value`, valueAt);
    const first = raw.charCodeAt(0);
    if (first === MINUS || first === DOT || (first >= ZERO && first <= NINE)) {
      const last = raw.charCodeAt(raw.length - 1);
      if (last === LOWER_I || last === LOWER_U) {
        const unsigned = last === LOWER_U;
        if (unsigned ? UNSIGNED.test(raw) : INTEGER.test(raw)) {
          // Up to 15 digits a double is exact; longer ones are range-checked exactly.
          const digits = raw.slice(0, -1);
          if (digits.length <= 15) return { key, kind: unsigned ? 'unsigned' : 'integer', value: Number(digits), at, valueAt };
          const value = BigInt(digits);
          const [min, max] = unsigned ? [0n, UINT64_MAX] : [INT64_MIN, INT64_MAX];
          if (value < min || value > max) {
            throw new LineProtocolError(
              ErrorCode.INVALID_FIELD_VALUE,
              valueAt,
              `field ${JSON.stringify(key)}: ${raw} is outside the ${unsigned ? 'unsigned' : 'signed'} 64-bit range`,
            );
          }
          return { key, kind: unsigned ? 'unsigned' : 'integer', value: Number(value), at, valueAt };
        }
      } else if (FLOAT.test(raw)) {
        return { key, kind: 'float', value: Number(raw), at, valueAt };
      }
    } else {
      const value = BOOLEANS.get(raw);
      if (value !== undefined) return { key, kind: 'boolean', value, at, valueAt };
    }
    return this.fail(
      `field ${JSON.stringify(key)}: ${JSON.stringify(raw)} is not a field value (a number such as 1.5, 12i or 12u, a "quoted string", or true/false)`,
      valueAt,
    );
  }

  /** Reads a double-quoted string value starting at the quote: `\"` and `\\` are unescaped; it may span lines. */
  private string(): string {
    const text = this.text;
    const open = this.position;
    let value = '';
    let segment = open + 1;
    let i = segment;
    while (i < text.length) {
      const code = text.charCodeAt(i);
      if (code === BACKSLASH) {
        const next = text.charCodeAt(i + 1);
        if (next === QUOTE || next === BACKSLASH) {
          value += text.slice(segment, i) + text[i + 1];
          i += 2;
          segment = i;
          continue;
        }
      } else if (code === QUOTE) {
        this.position = i + 1;
        return value + text.slice(segment, i);
      }
      i++;
    }
    return this.fail('a string field value has no closing quote', open);
  }

  private timestamp(): bigint {
    const at = this.position;
    const text = this.text;
    let i = at;
    while (i < text.length) {
      const code = text.charCodeAt(i);
      if (code === SPACE || code === NEWLINE || code === RETURN) break;
      i++;
    }
    const raw = text.slice(at, i);
    if (!TIMESTAMP.test(raw)) this.fail(`${JSON.stringify(raw)} is not a timestamp (an integer, in the precision of the request)`, at);
    const value = BigInt(raw);
    if (value < INT64_MIN || value > INT64_MAX) {
      throw new LineProtocolError(ErrorCode.INVALID_TIME, at, `timestamp ${raw} is outside the signed 64-bit range`);
    }
    this.position = i;
    return value;
  }
}

/** Timestamp precisions of the InfluxDB v2 write API, with how many of each make a millisecond (or, for `s`, how many ms make one). */
const PRECISIONS = {
  ns: { per: 1_000_000n },
  us: { per: 1_000n },
  ms: { per: 1n },
  s: { times: 1_000n },
} as const;

/** A timestamp precision of the write API: `ns` (the default), `us`, `ms` or `s`. */
export type Precision = keyof typeof PRECISIONS;

/** True when `name` is a {@link Precision}. */
export function isPrecision(name: string): name is Precision {
  return Object.hasOwn(PRECISIONS, name);
}

/**
 * A timestamp in `precision` as milliseconds since the Unix epoch, rounded down (toward
 * the past; readings are stored at minute resolution, first and last values to the ms).
 * Very large values give numbers a `Date` cannot hold; validation refuses those.
 */
export function timestampToMs(timestamp: bigint, precision: Precision): number {
  const unit = PRECISIONS[precision];
  if ('times' in unit) return Number(timestamp * unit.times);
  const quotient = timestamp / unit.per;
  return Number(timestamp < 0n && quotient * unit.per !== timestamp ? quotient - 1n : quotient);
}

/** The 1-based line and column (in characters, a surrogate pair counting one) of `offset` in `text`. */
export function positionOf(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  let column = 1;
  for (let i = lineStart; i < offset; i++) {
    const code = text.charCodeAt(i);
    if (code < 0xdc00 || code > 0xdfff || i === lineStart) column++;
  }
  return { line, column };
}
