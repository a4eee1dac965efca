/**
 * A parser for the part of InfluxQL (InfluxDB 1.x's query language) that Grafana's
 * InfluxDB data source sends, and that this server answers (pure, no I/O). No
 * maintained InfluxQL parser exists for JavaScript, so this one covers the documented
 * subset only:
 *
 * - `SELECT <aggregate>("field"[, N]) [<op> <number> ...] [AS "alias"], ... FROM
 *   ["db".]["rp".]"measurement" | /regex/ [WHERE <condition>] [GROUP BY time(<interval>[,
 *   <offset>]), "tag" | *, ...] [fill(null|none|previous|linear|<number>)] [ORDER BY time
 *   [ASC|DESC]] [LIMIT n] [OFFSET n] [SLIMIT n] [SOFFSET n] [tz('Zone/Name')]`, and raw
 *   selections of fields and tags (`SELECT "f", "host" ...`, `SELECT * ...`);
 * - conditions: `time` compared with `now() [+-] <duration>`, `<n>ms`/`s`/`u`/`ns`
 *   literals or RFC 3339 strings, combined with AND; tags compared with `=`, `!=`, `<>`
 *   (strings) and `=~`, `!~` (regular expressions), combined with AND, OR and parentheses;
 * - `SHOW MEASUREMENTS [WITH MEASUREMENT =|=~ ...] [LIMIT n] [OFFSET n]`, `SHOW TAG KEYS
 *   [FROM ...]`, `SHOW TAG VALUES [FROM ...] WITH KEY = "k" | IN ("a", "b") | =~ /re/
 *   [WHERE ...]`, `SHOW FIELD KEYS [FROM ...]`, `SHOW RETENTION POLICIES [ON db]`, `SHOW
 *   DATABASES`, and `CREATE DATABASE` (which Telegraf sends before it writes);
 * - several statements separated by `;`.
 *
 * Identifiers are bare (`cpu`) or double-quoted (`"cpu load"`), strings single-quoted,
 * regular expressions between slashes (`/^web-\d+$/`, `\/` for a slash), durations as
 * InfluxQL writes them (`1m`, `1h30m`, `1700000000000ms`), keywords in any case, and
 * `-- comments`. What is outside this subset fails with an {@link InfluxQLError} naming
 * the position and what was expected.
 */

/** A statement that does not parse: InfluxDB's `error parsing query: ...`. */
export class InfluxQLError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InfluxQLError';
  }
}

/** A measurement of a FROM clause: a name (with the database and retention policy it names, if any) or a regular expression. */
export type Source =
  | { kind: 'name'; name: string; database: string | null; retentionPolicy: string | null }
  | { kind: 'regex'; pattern: string };

/** A value expression of a SELECT field. */
export type ValueExpr =
  | { kind: 'call'; name: string; args: ValueExpr[] }
  | { kind: 'ref'; name: string }
  | { kind: 'number'; value: number }
  | { kind: 'string'; value: string }
  | { kind: 'regex'; pattern: string }
  | { kind: 'wildcard' }
  | { kind: 'binary'; op: '+' | '-' | '*' | '/'; lhs: ValueExpr; rhs: ValueExpr };

/** An operand of a WHERE comparison. */
export type Operand =
  | { kind: 'ref'; name: string }
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'duration'; ms: number }
  | { kind: 'regex'; pattern: string }
  | { kind: 'now' }
  | { kind: 'binary'; op: '+' | '-'; lhs: Operand; rhs: Operand };

/** A comparison operator of a condition. */
export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=' | '=~' | '!~';

/** A WHERE condition. */
export type Condition =
  | { kind: 'and' | 'or'; lhs: Condition; rhs: Condition }
  | { kind: 'compare'; op: CompareOp; lhs: Operand; rhs: Operand };

/** `fill()`: what an empty time interval shows. */
export type Fill = { kind: 'null' | 'none' | 'previous' | 'linear' } | { kind: 'number'; value: number };

/** A parsed SELECT. */
export interface SelectStatement {
  kind: 'select';
  fields: { expr: ValueExpr; alias: string | null }[];
  sources: Source[];
  condition: Condition | null;
  /** `GROUP BY time(interval, offset)` in ms; null without. */
  groupByTime: { intervalMs: number; offsetMs: number } | null;
  /** Tag keys of GROUP BY, in order; `*` groups by every tag key. */
  groupByTags: string[];
  groupByAll: boolean;
  fill: Fill;
  descending: boolean;
  limit: number | null;
  offset: number;
  slimit: number | null;
  soffset: number;
  /** `tz('...')`, or null. */
  timeZone: string | null;
}

/** `WITH KEY` of SHOW TAG VALUES. */
export type KeyFilter = { op: '=' | '!='; keys: string[] } | { op: '=~' | '!~'; pattern: string };

/** A parsed statement. */
export type Statement =
  | SelectStatement
  | {
      kind: 'showMeasurements';
      with: { op: '=' | '!=' | '=~' | '!~'; value: string } | null;
      condition: Condition | null;
      limit: number | null;
      offset: number;
    }
  | { kind: 'showTagKeys'; sources: Source[]; condition: Condition | null; limit: number | null; offset: number }
  | { kind: 'showTagValues'; sources: Source[]; key: KeyFilter; condition: Condition | null; limit: number | null; offset: number }
  | { kind: 'showFieldKeys'; sources: Source[]; limit: number | null; offset: number }
  | { kind: 'showRetentionPolicies'; database: string | null }
  | { kind: 'showDatabases' }
  | { kind: 'createDatabase'; name: string };

type Token =
  | { kind: 'ident'; value: string; quoted: boolean; at: number }
  | { kind: 'string'; value: string; at: number }
  | { kind: 'number'; value: number; text: string; at: number }
  | { kind: 'duration'; ms: number; at: number }
  | { kind: 'regex'; pattern: string; at: number }
  | { kind: 'op'; value: string; at: number }
  | { kind: 'eof'; at: number };

/** Milliseconds per InfluxQL duration unit (`u` and `µ` are microseconds, `ns` nanoseconds). */
const DURATION_UNITS: Record<string, number> = {
  ns: 1e-6,
  u: 1e-3,
  µ: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const OPERATORS = ['=~', '!~', '!=', '<>', '<=', '>=', '::', '=', '<', '>', '+', '-', '*', '/', '(', ')', ',', ';', '.'];

/** The scanner: tokens on demand, a regular expression only where the parser allows one. */
class Scanner {
  position = 0;

  constructor(readonly text: string) {}

  private skip(): void {
    const text = this.text;
    for (;;) {
      while (this.position < text.length && /\s/.test(text[this.position]!)) this.position++;
      if (text.startsWith('--', this.position)) {
        while (this.position < text.length && text[this.position] !== '\n') this.position++;
        continue;
      }
      if (text.startsWith('/*', this.position)) {
        const end = text.indexOf('*/', this.position + 2);
        this.position = end === -1 ? text.length : end + 2;
        continue;
      }
      return;
    }
  }

  fail(message: string, at = this.position): never {
    throw new InfluxQLError(`${message} at line 1, char ${at + 1}`);
  }

  /** Reads the next token; `/` starts a regular expression when `regex`. */
  next(regex = false): Token {
    this.skip();
    const text = this.text;
    const at = this.position;
    if (at >= text.length) return { kind: 'eof', at };
    const char = text[at]!;
    if (regex && char === '/') {
      let pattern = '';
      let i = at + 1;
      while (i < text.length && text[i] !== '/') {
        if (text[i] === '\\' && text[i + 1] === '/') {
          pattern += '/';
          i += 2;
          continue;
        }
        pattern += text[i];
        i++;
      }
      if (i >= text.length) this.fail('unterminated regular expression', at);
      this.position = i + 1;
      return { kind: 'regex', pattern, at };
    }
    if (char === '"' || char === "'") {
      let value = '';
      let i = at + 1;
      while (i < text.length && text[i] !== char) {
        if (text[i] === '\\' && i + 1 < text.length) {
          const escaped = text[i + 1]!;
          value += escaped === 'n' ? '\n' : escaped === 't' ? '\t' : escaped;
          i += 2;
          continue;
        }
        value += text[i];
        i++;
      }
      if (i >= text.length) this.fail(char === '"' ? 'unterminated quoted identifier' : 'unterminated string', at);
      this.position = i + 1;
      return char === '"' ? { kind: 'ident', value, quoted: true, at } : { kind: 'string', value, at };
    }
    const number = /^(\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(text.slice(at));
    if (number !== null) {
      const durations = /^((?:\d+(?:ns|ms|u|µ|s|m|h|d|w))+)(?![A-Za-z0-9_])/.exec(text.slice(at));
      if (durations !== null) {
        let ms = 0;
        for (const part of durations[1]!.matchAll(/(\d+)(ns|ms|u|µ|s|m|h|d|w)/g)) ms += Number(part[1]) * DURATION_UNITS[part[2]!]!;
        this.position = at + durations[0].length;
        return { kind: 'duration', ms, at };
      }
      this.position = at + number[0].length;
      return { kind: 'number', value: Number(number[0]), text: number[0], at };
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(at));
    if (word !== null) {
      this.position = at + word[0].length;
      return { kind: 'ident', value: word[0], quoted: false, at };
    }
    for (const op of OPERATORS) {
      if (text.startsWith(op, at)) {
        this.position = at + op.length;
        return { kind: 'op', value: op, at };
      }
    }
    return this.fail(`unexpected ${JSON.stringify(char)}`);
  }

  /** The next token without consuming it. */
  peek(regex = false): Token {
    const saved = this.position;
    const token = this.next(regex);
    this.position = saved;
    return token;
  }
}

/** How a token reads in messages. */
function describe(token: Token): string {
  switch (token.kind) {
    case 'eof':
      return 'EOF';
    case 'ident':
      return token.quoted ? JSON.stringify(token.value) : token.value.toUpperCase();
    case 'string':
      return `'${token.value}'`;
    case 'number':
      return token.text;
    case 'duration':
      return `${token.ms}ms`;
    case 'regex':
      return `/${token.pattern}/`;
    case 'op':
      return token.value;
  }
}

class Parser {
  private readonly scanner: Scanner;

  constructor(text: string) {
    this.scanner = new Scanner(text);
  }

  private expected(what: string, token: Token): never {
    return this.scanner.fail(`found ${describe(token)}, expected ${what}`, token.at);
  }

  /** True (and consumed) when the next token is keyword `word`. */
  private keyword(word: string): boolean {
    const token = this.scanner.peek();
    if (token.kind === 'ident' && !token.quoted && token.value.toUpperCase() === word) {
      this.scanner.next();
      return true;
    }
    return false;
  }

  private expectKeyword(word: string): void {
    if (!this.keyword(word)) this.expected(word, this.scanner.peek());
  }

  private op(value: string): boolean {
    const token = this.scanner.peek();
    if (token.kind === 'op' && token.value === value) {
      this.scanner.next();
      return true;
    }
    return false;
  }

  private expectOp(value: string): void {
    if (!this.op(value)) this.expected(value, this.scanner.peek());
  }

  private identifier(what = 'identifier'): string {
    const token = this.scanner.next();
    if (token.kind !== 'ident') this.expected(what, token);
    return token.value;
  }

  private integer(what: string): number {
    const token = this.scanner.next();
    if (token.kind !== 'number' || !Number.isInteger(token.value)) this.expected(what, token);
    return token.value;
  }

  parseAll(): Statement[] {
    const statements: Statement[] = [];
    for (;;) {
      while (this.op(';'));
      if (this.scanner.peek().kind === 'eof') break;
      statements.push(this.statement());
      const token = this.scanner.peek();
      if (token.kind !== 'eof' && !(token.kind === 'op' && token.value === ';')) this.expected(';', token);
    }
    if (statements.length === 0) throw new InfluxQLError('empty query');
    return statements;
  }

  private statement(): Statement {
    if (this.keyword('SELECT')) return this.select();
    if (this.keyword('SHOW')) return this.show();
    if (this.keyword('CREATE')) {
      this.expectKeyword('DATABASE');
      const name = this.identifier('database name');
      // WITH DURATION ... and the like: accepted and ignored (there is one retention policy).
      while (
        this.scanner.peek().kind !== 'eof' &&
        !(this.scanner.peek().kind === 'op' && (this.scanner.peek() as { value: string }).value === ';')
      ) {
        this.scanner.next();
      }
      return { kind: 'createDatabase', name };
    }
    return this.expected('SELECT, SHOW or CREATE DATABASE (the statements this server answers)', this.scanner.peek());
  }

  private limits(): { limit: number | null; offset: number } {
    let limit: number | null = null;
    let offset = 0;
    if (this.keyword('LIMIT')) limit = this.integer('LIMIT number');
    if (this.keyword('OFFSET')) offset = this.integer('OFFSET number');
    return { limit, offset };
  }

  private skipOn(): string | null {
    return this.keyword('ON') ? this.identifier('database name') : null;
  }

  private show(): Statement {
    if (this.keyword('MEASUREMENTS')) {
      this.skipOn();
      let filter: { op: '=' | '!=' | '=~' | '!~'; value: string } | null = null;
      if (this.keyword('WITH')) {
        this.expectKeyword('MEASUREMENT');
        const token = this.scanner.next();
        if (token.kind !== 'op' || !['=', '!=', '<>', '=~', '!~'].includes(token.value)) this.expected('= or =~', token);
        const op = (token.value === '<>' ? '!=' : token.value) as '=' | '!=' | '=~' | '!~';
        const value = this.scanner.next(op === '=~' || op === '!~');
        if (op === '=~' || op === '!~') {
          if (value.kind !== 'regex') this.expected('regular expression', value);
          filter = { op, value: value.pattern };
        } else {
          if (value.kind !== 'ident' && value.kind !== 'string') this.expected('measurement name', value);
          filter = { op, value: value.value };
        }
      }
      const condition = this.keyword('WHERE') ? this.condition() : null;
      return { kind: 'showMeasurements', with: filter, condition, ...this.limits() };
    }
    if (this.keyword('TAG')) {
      if (this.keyword('KEYS')) {
        this.skipOn();
        const sources = this.keyword('FROM') ? this.sources() : [];
        const condition = this.keyword('WHERE') ? this.condition() : null;
        return { kind: 'showTagKeys', sources, condition, ...this.limits() };
      }
      this.expectKeyword('VALUES');
      this.skipOn();
      const sources = this.keyword('FROM') ? this.sources() : [];
      this.expectKeyword('WITH');
      this.expectKeyword('KEY');
      let key: KeyFilter;
      if (this.keyword('IN')) {
        this.expectOp('(');
        const keys = [this.identifier('tag key')];
        while (this.op(',')) keys.push(this.identifier('tag key'));
        this.expectOp(')');
        key = { op: '=', keys };
      } else {
        const token = this.scanner.next();
        if (token.kind !== 'op' || !['=', '!=', '<>', '=~', '!~'].includes(token.value)) this.expected('=, !=, =~, !~ or IN', token);
        if (token.value === '=~' || token.value === '!~') {
          const pattern = this.scanner.next(true);
          if (pattern.kind !== 'regex') this.expected('regular expression', pattern);
          key = { op: token.value, pattern: pattern.pattern };
        } else key = { op: token.value === '=' ? '=' : '!=', keys: [this.identifier('tag key')] };
      }
      const condition = this.keyword('WHERE') ? this.condition() : null;
      return { kind: 'showTagValues', sources, key, condition, ...this.limits() };
    }
    if (this.keyword('FIELD')) {
      this.expectKeyword('KEYS');
      this.skipOn();
      const sources = this.keyword('FROM') ? this.sources() : [];
      return { kind: 'showFieldKeys', sources, ...this.limits() };
    }
    if (this.keyword('RETENTION')) {
      this.expectKeyword('POLICIES');
      return { kind: 'showRetentionPolicies', database: this.skipOn() };
    }
    if (this.keyword('DATABASES')) return { kind: 'showDatabases' };
    return this.expected('MEASUREMENTS, TAG KEYS, TAG VALUES, FIELD KEYS, RETENTION POLICIES or DATABASES', this.scanner.peek());
  }

  private sources(): Source[] {
    const sources = [this.source()];
    while (this.op(',')) sources.push(this.source());
    return sources;
  }

  private source(): Source {
    const token = this.scanner.next(true);
    if (token.kind === 'regex') return { kind: 'regex', pattern: token.pattern };
    if (token.kind !== 'ident') this.expected('measurement name or regular expression', token);
    const parts = [token.value];
    while (this.op('.')) {
      const next = this.scanner.next(true);
      if (next.kind === 'regex' && parts.length <= 2) return { kind: 'regex', pattern: next.pattern };
      if (next.kind !== 'ident') this.expected('measurement name', next);
      parts.push(next.value);
    }
    if (parts.length > 3) this.scanner.fail('a measurement is at most "db"."rp"."measurement"');
    const name = parts[parts.length - 1]!;
    const retentionPolicy = parts.length >= 2 ? parts[parts.length - 2]! : null;
    const database = parts.length === 3 ? parts[0]! : null;
    return { kind: 'name', name, database, retentionPolicy: retentionPolicy === '' ? null : retentionPolicy };
  }

  private select(): SelectStatement {
    const fields: SelectStatement['fields'] = [];
    do {
      const expr = this.valueExpr();
      const alias = this.keyword('AS') ? this.identifier('alias') : null;
      fields.push({ expr, alias });
    } while (this.op(','));
    if (this.keyword('INTO')) this.scanner.fail('SELECT ... INTO is not supported (nothing is written by queries)');
    this.expectKeyword('FROM');
    const sources = this.sources();
    const condition = this.keyword('WHERE') ? this.condition() : null;
    let groupByTime: SelectStatement['groupByTime'] = null;
    const groupByTags: string[] = [];
    let groupByAll = false;
    if (this.keyword('GROUP')) {
      this.expectKeyword('BY');
      do {
        const token = this.scanner.peek(true);
        if (token.kind === 'ident' && !token.quoted && token.value.toLowerCase() === 'time' && this.isCall()) {
          this.scanner.next();
          this.expectOp('(');
          const interval = this.scanner.next();
          if (interval.kind !== 'duration') this.expected('duration', interval);
          let offsetMs = 0;
          if (this.op(',')) {
            const negative = this.op('-');
            const offset = this.scanner.next();
            if (offset.kind === 'duration') offsetMs = negative ? -offset.ms : offset.ms;
            else if (offset.kind === 'ident' && offset.value.toLowerCase() === 'now') {
              this.scanner.fail('GROUP BY time offsets of now() are not supported');
            } else this.expected('duration', offset);
          }
          this.expectOp(')');
          groupByTime = { intervalMs: interval.ms, offsetMs };
        } else if (token.kind === 'op' && token.value === '*') {
          this.scanner.next();
          groupByAll = true;
        } else if (token.kind === 'regex') {
          this.scanner.fail('GROUP BY a regular expression is not supported: name the tag keys');
        } else {
          groupByTags.push(this.identifier('time(), a tag key or *'));
          this.typeCast();
        }
      } while (this.op(','));
    }
    let fill: Fill = { kind: 'null' };
    if (this.isKeywordCall('FILL')) {
      this.scanner.next();
      this.expectOp('(');
      const negative = this.op('-');
      const token = this.scanner.next();
      if (token.kind === 'number') fill = { kind: 'number', value: negative ? -token.value : token.value };
      else if (token.kind === 'ident' && ['null', 'none', 'previous', 'linear'].includes(token.value.toLowerCase()) && !negative) {
        fill = { kind: token.value.toLowerCase() as 'null' | 'none' | 'previous' | 'linear' };
      } else this.expected('null, none, previous, linear or a number', token);
      this.expectOp(')');
    }
    let descending = false;
    if (this.keyword('ORDER')) {
      this.expectKeyword('BY');
      const field = this.identifier('time');
      if (field.toLowerCase() !== 'time') this.scanner.fail('only ORDER BY time is supported');
      if (this.keyword('DESC')) descending = true;
      else this.keyword('ASC');
    }
    const { limit, offset } = this.limits();
    let slimit: number | null = null;
    let soffset = 0;
    if (this.keyword('SLIMIT')) slimit = this.integer('SLIMIT number');
    if (this.keyword('SOFFSET')) soffset = this.integer('SOFFSET number');
    let timeZone: string | null = null;
    if (this.isKeywordCall('TZ')) {
      this.scanner.next();
      this.expectOp('(');
      const zone = this.scanner.next();
      if (zone.kind !== 'string') this.expected("a time zone name ('Europe/Paris')", zone);
      this.expectOp(')');
      timeZone = zone.value;
    }
    return {
      kind: 'select',
      fields,
      sources,
      condition,
      groupByTime,
      groupByTags,
      groupByAll,
      fill,
      descending,
      limit,
      offset,
      slimit,
      soffset,
      timeZone,
    };
  }

  /** True when the token after the next one is `(`. */
  private isCall(): boolean {
    const saved = this.scanner.position;
    this.scanner.next();
    const open = this.scanner.peek();
    this.scanner.position = saved;
    return open.kind === 'op' && open.value === '(';
  }

  private isKeywordCall(word: string): boolean {
    const token = this.scanner.peek();
    return token.kind === 'ident' && !token.quoted && token.value.toUpperCase() === word && this.isCall();
  }

  /** Skips a `::field` or `::tag` cast (the type is known from the registry). */
  private typeCast(): void {
    if (this.op('::')) this.identifier('field, tag, float, integer or string');
  }

  private valueExpr(): ValueExpr {
    let lhs = this.term();
    for (;;) {
      const token = this.scanner.peek();
      if (token.kind !== 'op' || (token.value !== '+' && token.value !== '-')) return lhs;
      this.scanner.next();
      lhs = { kind: 'binary', op: token.value, lhs, rhs: this.term() };
    }
  }

  private term(): ValueExpr {
    let lhs = this.factor();
    for (;;) {
      const token = this.scanner.peek();
      if (token.kind !== 'op' || (token.value !== '*' && token.value !== '/')) return lhs;
      this.scanner.next();
      lhs = { kind: 'binary', op: token.value, lhs, rhs: this.factor() };
    }
  }

  private factor(): ValueExpr {
    const token = this.scanner.next(true);
    if (token.kind === 'number') return { kind: 'number', value: token.value };
    if (token.kind === 'string') return { kind: 'string', value: token.value };
    if (token.kind === 'regex') return { kind: 'regex', pattern: token.pattern };
    if (token.kind === 'op' && token.value === '*') return { kind: 'wildcard' };
    if (token.kind === 'op' && token.value === '-') {
      const inner = this.factor();
      return inner.kind === 'number'
        ? { kind: 'number', value: -inner.value }
        : { kind: 'binary', op: '*', lhs: { kind: 'number', value: -1 }, rhs: inner };
    }
    if (token.kind === 'op' && token.value === '(') {
      const inner = this.valueExpr();
      this.expectOp(')');
      return inner;
    }
    if (token.kind !== 'ident') return this.expected('field, function or number', token);
    if (!token.quoted && this.op('(')) {
      const args: ValueExpr[] = [];
      if (!this.op(')')) {
        do args.push(this.valueExpr());
        while (this.op(','));
        this.expectOp(')');
      }
      return { kind: 'call', name: token.value.toLowerCase(), args };
    }
    this.typeCast();
    return { kind: 'ref', name: token.value };
  }

  condition(): Condition {
    let lhs = this.andCondition();
    while (this.keyword('OR')) lhs = { kind: 'or', lhs, rhs: this.andCondition() };
    return lhs;
  }

  private andCondition(): Condition {
    let lhs = this.comparison();
    while (this.keyword('AND')) lhs = { kind: 'and', lhs, rhs: this.comparison() };
    return lhs;
  }

  private comparison(): Condition {
    if (this.op('(')) {
      const inner = this.condition();
      this.expectOp(')');
      return inner;
    }
    const lhs = this.operand();
    const token = this.scanner.next();
    if (token.kind !== 'op' || !['=', '!=', '<>', '<', '<=', '>', '>=', '=~', '!~'].includes(token.value)) {
      return this.expected('a comparison operator (=, !=, <>, <, <=, >, >=, =~, !~)', token);
    }
    const op = (token.value === '<>' ? '!=' : token.value) as CompareOp;
    const rhs = this.operand(op === '=~' || op === '!~');
    return { kind: 'compare', op, lhs, rhs };
  }

  private operand(regex = false): Operand {
    let lhs = this.operandAtom(regex);
    for (;;) {
      const token = this.scanner.peek();
      if (token.kind !== 'op' || (token.value !== '+' && token.value !== '-')) return lhs;
      this.scanner.next();
      lhs = { kind: 'binary', op: token.value, lhs, rhs: this.operandAtom(false) };
    }
  }

  private operandAtom(regex: boolean): Operand {
    const token = this.scanner.next(regex);
    switch (token.kind) {
      case 'regex':
        return { kind: 'regex', pattern: token.pattern };
      case 'string':
        return { kind: 'string', value: token.value };
      case 'number':
        return { kind: 'number', value: token.value };
      case 'duration':
        return { kind: 'duration', ms: token.ms };
      case 'ident':
        if (!token.quoted && token.value.toLowerCase() === 'now' && this.op('(')) {
          this.expectOp(')');
          return { kind: 'now' };
        }
        this.typeCast();
        return { kind: 'ref', name: token.value };
      case 'op':
        if (token.value === '-') {
          const inner = this.operandAtom(false);
          if (inner.kind === 'number') return { kind: 'number', value: -inner.value };
          if (inner.kind === 'duration') return { kind: 'duration', ms: -inner.ms };
        }
        return this.expected('a tag key, time, a string, a number or a regular expression', token);
      default:
        return this.expected('a tag key, time, a string, a number or a regular expression', token);
    }
  }
}

/**
 * Parses the statements of `q`.
 * @throws InfluxQLError at the first thing that does not parse, with its position.
 */
export function parseInfluxQL(text: string): Statement[] {
  return new Parser(text).parseAll();
}
