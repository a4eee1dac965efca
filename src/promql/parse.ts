/**
 * PromQL text to the expression tree the evaluator works on (`evaluate.ts`). The syntax
 * is Prometheus' own grammar: `@prometheus-io/lezer-promql`, the parser of Prometheus'
 * web UI, gives the concrete syntax tree; this module only walks it into
 * {@link Expr} values, checks the types of function arguments (`functions.ts`) and
 * refuses, with a message naming it, what the evaluator does not support (subqueries,
 * `@`, `group_left`, native-histogram functions, ...). Pure, no I/O.
 */
import type { SyntaxNode } from '@lezer/common';
import { parser } from '@prometheus-io/lezer-promql';
import { FUNCTIONS, type ValueType } from './functions.ts';

/** A label matcher of a selector: `=`, `!=`, `=~` (fully anchored RE2-style regular expression), `!~`. */
export interface Matcher {
  name: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

/** The operators of binary expressions, arithmetic, comparison and set operators. */
export type BinaryOp = '+' | '-' | '*' | '/' | '%' | '^' | '==' | '!=' | '>' | '<' | '>=' | '<=' | 'and' | 'or' | 'unless';

/** The aggregation operators the evaluator supports. */
export type AggregateOp = 'sum' | 'avg' | 'min' | 'max' | 'count' | 'topk' | 'bottomk';

/** An instant vector selector: matchers (the metric name as a `__name__` matcher) and its offset in ms. */
export interface VectorSelector {
  kind: 'vector';
  matchers: Matcher[];
  offsetMs: number;
}

/** A range vector selector: an instant selector and the range of its windows, in ms. */
export interface MatrixSelector {
  kind: 'matrix';
  selector: VectorSelector;
  rangeMs: number;
}

/** A PromQL expression as the evaluator takes it. */
export type Expr =
  | { kind: 'number'; value: number }
  | { kind: 'string'; value: string }
  | VectorSelector
  | MatrixSelector
  | { kind: 'call'; func: string; args: Expr[] }
  | { kind: 'aggregate'; op: AggregateOp; param: Expr | null; expr: Expr; grouping: { without: boolean; labels: string[] } | null }
  | {
      kind: 'binary';
      op: BinaryOp;
      lhs: Expr;
      rhs: Expr;
      /** `bool`: a comparison answers 0 or 1 instead of filtering. */
      bool: boolean;
      /** `on(...)` or `ignoring(...)`; null: every label but the name is matched. */
      matching: { on: boolean; labels: string[] } | null;
    }
  | { kind: 'unary'; op: '-' | '+'; expr: Expr };

/** A query that does not parse, or uses what the evaluator does not support: Prometheus' `bad_data`. */
export class PromQLError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PromQLError';
  }
}

const BINARY_OPS: Record<string, BinaryOp> = {
  Add: '+',
  Sub: '-',
  Mul: '*',
  Div: '/',
  Mod: '%',
  Pow: '^',
  Eql: '==',
  Neq: '!=',
  Gtr: '>',
  Lss: '<',
  Gte: '>=',
  Lte: '<=',
  And: 'and',
  Or: 'or',
  Unless: 'unless',
};

const COMPARISONS = new Set<BinaryOp>(['==', '!=', '>', '<', '>=', '<=']);

/** True for the comparison operators (which filter unless `bool`). */
export const isComparison = (op: BinaryOp) => COMPARISONS.has(op);

const SUPPORTED_AGGREGATES = new Set<string>(['sum', 'avg', 'min', 'max', 'count', 'topk', 'bottomk']);

const UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 };

/**
 * A Prometheus duration (`5m`, `1m0s`, `1h30m`, `100ms`, `2d`; Go's `time.Duration`
 * text as Grafana sends `$__rate_interval`), or a number of seconds (`600`, `1.5`), in ms.
 * @throws PromQLError for anything else.
 */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  if (/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  if (!/^(\d+(ms|s|m|h|d|w|y))+$/.test(trimmed)) throw new PromQLError(`"${text}" is not a duration (such as 5m, 1m0s, 1h30m or 600)`);
  let total = 0;
  for (const match of trimmed.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)) total += Number(match[1]) * UNITS_MS[match[2]!]!;
  return total;
}

/** A number literal as PromQL writes it: decimal, hexadecimal (`0x1f`), `Inf`, `NaN`, or a duration in seconds (`5m` is 300). */
function parseNumber(text: string): number {
  const lower = text.toLowerCase();
  if (lower === 'inf' || lower === '+inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  if (lower === 'nan') return NaN;
  if (/^0x[0-9a-f]+$/.test(lower)) return Number.parseInt(lower.slice(2), 16);
  if (/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text)) return Number(text);
  return parseDuration(text) / 1000;
}

/**
 * A PromQL string literal without its quotes: `"..."` and `'...'` with Go's escapes
 * (`\n`, `\t`, `\\`, `\"`, `\xHH`, `\uHHHH`, `\UHHHHHHHH`, octal `\ooo`), or a raw `` `...` ``.
 */
export function unquote(text: string): string {
  const quote = text[0];
  const body = text.slice(1, -1);
  if (quote === '`') return body;
  const simple: Record<string, string> = {
    n: '\n',
    t: '\t',
    r: '\r',
    a: '\x07',
    b: '\b',
    f: '\f',
    v: '\v',
    '\\': '\\',
    '"': '"',
    "'": "'",
  };
  return body.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)/g, (_all, sequence: string) => {
    if (sequence.length === 1) {
      const replaced = simple[sequence];
      if (replaced === undefined) throw new PromQLError(`unknown sequence sequence \\${sequence} in string ${text}`);
      return replaced;
    }
    if (/^[0-7]{3}$/.test(sequence)) return String.fromCodePoint(Number.parseInt(sequence, 8));
    return String.fromCodePoint(Number.parseInt(sequence.slice(1), 16));
  });
}

/** The children of a node, in order. */
function children(node: SyntaxNode): SyntaxNode[] {
  const list: SyntaxNode[] = [];
  for (let child = node.firstChild; child !== null; child = child.nextSibling) list.push(child);
  return list;
}

/** The first error node below `node`, or null. */
function firstError(node: SyntaxNode): SyntaxNode | null {
  if (node.type.isError) return node;
  for (let child = node.firstChild; child !== null; child = child.nextSibling) {
    const found = firstError(child);
    if (found !== null) return found;
  }
  return null;
}

/** The type of an expression's value, for argument checks. */
export function typeOf(expr: Expr): ValueType {
  switch (expr.kind) {
    case 'number':
      return 'scalar';
    case 'string':
      return 'string';
    case 'vector':
      return 'vector';
    case 'matrix':
      return 'matrix';
    case 'call':
      return FUNCTIONS[expr.func]!.returns;
    case 'aggregate':
      return 'vector';
    case 'unary':
      return typeOf(expr.expr);
    case 'binary':
      return typeOf(expr.lhs) === 'scalar' && typeOf(expr.rhs) === 'scalar' ? 'scalar' : 'vector';
  }
}

/** Walks the concrete syntax tree of `text`. */
class Walker {
  constructor(private readonly text: string) {}

  private source(node: SyntaxNode): string {
    return this.text.slice(node.from, node.to);
  }

  private unsupported(what: string): never {
    throw new PromQLError(`${what} is not supported by this server (see its Prometheus API documentation for the supported subset)`);
  }

  expr(node: SyntaxNode): Expr {
    switch (node.name) {
      case 'ParenExpr':
        return this.expr(this.only(node));
      case 'NumberDurationLiteral':
        return { kind: 'number', value: parseNumber(this.source(node)) };
      case 'StringLiteral':
        return { kind: 'string', value: unquote(this.source(node)) };
      case 'VectorSelector':
        return this.selector(node, 0);
      case 'MatrixSelector':
        return this.matrix(node, 0);
      case 'OffsetExpr':
        return this.offset(node);
      case 'UnaryExpr':
        return this.unary(node);
      case 'BinaryExpr':
        return this.binary(node);
      case 'FunctionCall':
        return this.call(node);
      case 'AggregateExpr':
        return this.aggregate(node);
      case 'SubqueryExpr':
        return this.unsupported('A subquery (`expr[range:step]`)');
      case 'StepInvariantExpr':
        return this.unsupported('The `@` modifier');
      case 'AnchoredExpr':
      case 'SmoothedExpr':
        return this.unsupported(`\`${this.source(node)}\``);
      default:
        return this.unsupported(`\`${this.source(node)}\` (${node.name})`);
    }
  }

  private only(node: SyntaxNode): SyntaxNode {
    const list = children(node);
    if (list.length !== 1) throw new PromQLError(`unexpected ${this.source(node)}`);
    return list[0]!;
  }

  private selector(node: SyntaxNode, offsetMs: number): VectorSelector {
    const matchers: Matcher[] = [];
    for (const child of children(node)) {
      if (child.name === 'Identifier') matchers.push({ name: '__name__', op: '=', value: this.source(child) });
      else if (child.name === 'LabelMatchers') {
        for (const matcher of children(child)) matchers.push(this.matcher(matcher));
      }
    }
    if (matchers.every((matcher) => new RegExp(anchored(matcher)).test('') === (matcher.op === '=' || matcher.op === '=~'))) {
      throw new PromQLError('vector selector must contain at least one non-empty matcher');
    }
    return { kind: 'vector', matchers, offsetMs };
  }

  private matcher(node: SyntaxNode): Matcher {
    const parts = children(node);
    if (node.name === 'QuotedLabelName') return { name: '__name__', op: '=', value: unquote(this.source(parts[0]!)) };
    const [name, op, value] = parts;
    if (name === undefined || op === undefined || value === undefined) throw new PromQLError(`unexpected ${this.source(node)}`);
    const label = name.name === 'LabelName' ? this.source(name) : unquote(this.source(name.firstChild ?? name));
    const matcher: Matcher = { name: label, op: this.source(op) as Matcher['op'], value: unquote(this.source(value)) };
    if (matcher.op === '=~' || matcher.op === '!~') {
      try {
        new RegExp(anchored(matcher));
      } catch (error) {
        throw new PromQLError(`invalid regular expression ${JSON.stringify(matcher.value)}: ${(error as Error).message}`);
      }
    }
    return matcher;
  }

  private duration(node: SyntaxNode): number {
    if (node.name === 'DurationExpr' || node.name === 'OffsetDurationExpr') {
      const parts = children(node);
      if (parts.length === 2 && parts[0]!.name === 'UnaryOp') {
        const inner = this.duration(parts[1]!);
        return this.source(parts[0]!) === '-' ? -inner : inner;
      }
      if (parts.length !== 1 || parts[0]!.name !== 'NumberDurationLiteralInDurationContext') {
        return this.unsupported(`The duration expression \`${this.source(node)}\``);
      }
      return parseDuration(this.source(parts[0]!));
    }
    return parseDuration(this.source(node));
  }

  private matrix(node: SyntaxNode, offsetMs: number): MatrixSelector {
    const parts = children(node);
    const vector = parts.find((part) => part.name === 'VectorSelector');
    const range = parts.find((part) => part.name === 'DurationExpr');
    if (vector === undefined || range === undefined) throw new PromQLError(`unexpected ${this.source(node)}`);
    const rangeMs = this.duration(range);
    if (!(rangeMs > 0)) throw new PromQLError(`a range must be positive, not ${this.source(range)}`);
    return { kind: 'matrix', selector: this.selector(vector, offsetMs), rangeMs };
  }

  private offset(node: SyntaxNode): Expr {
    const parts = children(node);
    const target = parts[0]!;
    const amount = parts.find((part) => part.name === 'OffsetDurationExpr');
    if (amount === undefined) throw new PromQLError(`unexpected ${this.source(node)}`);
    const offsetMs = this.duration(amount);
    if (target.name === 'VectorSelector') return this.selector(target, offsetMs);
    if (target.name === 'MatrixSelector') return this.matrix(target, offsetMs);
    return this.unsupported('`offset` on anything but a selector');
  }

  private unary(node: SyntaxNode): Expr {
    const parts = children(node);
    const op = this.source(parts[0]!) as '-' | '+';
    const expr = this.expr(parts[1]!);
    if (expr.kind === 'number') return { kind: 'number', value: op === '-' ? -expr.value : expr.value };
    return { kind: 'unary', op, expr };
  }

  private grouping(node: SyntaxNode): string[] {
    return children(node)
      .filter((child) => child.name === 'LabelName' || child.name === 'QuotedLabelName' || child.name === 'StringLiteral')
      .map((child) => (child.name === 'LabelName' ? this.source(child) : unquote(this.source(child.firstChild ?? child))));
  }

  private binary(node: SyntaxNode): Expr {
    const parts = children(node);
    const operands = parts.filter(
      (part) => !(part.name in BINARY_OPS) && part.name !== 'BoolModifier' && part.name !== 'MatchingModifierClause',
    );
    const opNode = parts.find((part) => part.name in BINARY_OPS);
    if (operands.length !== 2 || opNode === undefined) throw new PromQLError(`unexpected ${this.source(node)}`);
    const op = BINARY_OPS[opNode.name]!;
    const bool = parts.some((part) => part.name === 'BoolModifier');
    let matching: { on: boolean; labels: string[] } | null = null;
    const clause = parts.find((part) => part.name === 'MatchingModifierClause');
    if (clause !== undefined) {
      const clauseParts = children(clause);
      if (clauseParts.some((part) => part.name === 'GroupLeft' || part.name === 'GroupRight')) {
        this.unsupported('Many-to-one matching (`group_left`, `group_right`)');
      }
      const labels = clauseParts.find((part) => part.name === 'GroupingLabels');
      matching = { on: clauseParts[0]!.name === 'On', labels: labels === undefined ? [] : this.grouping(labels) };
    }
    if (parts.some((part) => part.name === 'FillModifier')) this.unsupported('`fill` modifiers of binary operators');
    const lhs = this.expr(operands[0]!);
    const rhs = this.expr(operands[1]!);
    const lhsType = typeOf(lhs);
    const rhsType = typeOf(rhs);
    for (const [side, type] of [
      [operands[0]!, lhsType],
      [operands[1]!, rhsType],
    ] as const) {
      if (type !== 'scalar' && type !== 'vector') {
        throw new PromQLError(`binary expression must contain only scalar and instant vector types, not ${type} (${this.source(side)})`);
      }
    }
    if (bool && !isComparison(op)) throw new PromQLError('bool modifier can only be used on comparison operators');
    if (isComparison(op) && lhsType === 'scalar' && rhsType === 'scalar' && !bool) {
      throw new PromQLError('comparisons between scalars must use BOOL modifier');
    }
    if ((op === 'and' || op === 'or' || op === 'unless') && (lhsType !== 'vector' || rhsType !== 'vector')) {
      throw new PromQLError(`set operator "${op}" not allowed in binary scalar expression`);
    }
    if (matching !== null && (lhsType !== 'vector' || rhsType !== 'vector')) {
      throw new PromQLError('vector matching only allowed between instant vectors');
    }
    return { kind: 'binary', op, lhs, rhs, bool, matching };
  }

  private call(node: SyntaxNode): Expr {
    const parts = children(node);
    const name = this.source(parts[0]!);
    const definition = FUNCTIONS[name];
    if (definition === undefined) return this.unsupported(`The function ${name}()`);
    const body = parts.find((part) => part.name === 'FunctionCallBody');
    const args = body === undefined ? [] : children(body).map((child) => this.expr(child));
    const { params, optional = 0 } = definition;
    if (args.length < params.length - optional || args.length > params.length) {
      const expected = optional === 0 ? `${params.length}` : `${params.length - optional} to ${params.length}`;
      throw new PromQLError(`expected ${expected} argument(s) in call to "${name}", got ${args.length}`);
    }
    args.forEach((arg, i) => {
      const type = typeOf(arg);
      if (type !== params[i]) {
        throw new PromQLError(`expected type ${typeName(params[i]!)} in call to function "${name}", got ${typeName(type)}`);
      }
    });
    return { kind: 'call', func: name, args };
  }

  private aggregate(node: SyntaxNode): Expr {
    const parts = children(node);
    const op = this.source(parts[0]!).toLowerCase();
    if (!SUPPORTED_AGGREGATES.has(op)) return this.unsupported(`The aggregation ${op}()`);
    let grouping: { without: boolean; labels: string[] } | null = null;
    const modifier = parts.find((part) => part.name === 'AggregateModifier');
    if (modifier !== undefined) {
      const modifierParts = children(modifier);
      const labels = modifierParts.find((part) => part.name === 'GroupingLabels');
      grouping = { without: modifierParts[0]!.name === 'Without', labels: labels === undefined ? [] : this.grouping(labels) };
    }
    const body = parts.find((part) => part.name === 'FunctionCallBody');
    const args = body === undefined ? [] : children(body).map((child) => this.expr(child));
    const takesParam = op === 'topk' || op === 'bottomk';
    if (args.length !== (takesParam ? 2 : 1)) {
      throw new PromQLError(
        `wrong number of arguments for aggregate expression provided, expected ${takesParam ? 2 : 1}, got ${args.length}`,
      );
    }
    const param = takesParam ? args[0]! : null;
    const expr = args[args.length - 1]!;
    if (param !== null && typeOf(param) !== 'scalar')
      throw new PromQLError(`expected type scalar in aggregation parameter, got ${typeName(typeOf(param))}`);
    if (typeOf(expr) !== 'vector')
      throw new PromQLError(`expected type instant vector in aggregation expression, got ${typeName(typeOf(expr))}`);
    return { kind: 'aggregate', op: op as AggregateOp, param, expr, grouping };
  }
}

/** How Prometheus names a value type in messages. */
export function typeName(type: ValueType): string {
  return { scalar: 'scalar', vector: 'instant vector', matrix: 'range vector', string: 'string' }[type];
}

/** The JavaScript pattern of a regular-expression matcher: anchored at both ends, as Prometheus anchors it. */
export function anchored(matcher: Pick<Matcher, 'value' | 'op'>): string {
  if (matcher.op === '=~' || matcher.op === '!~') return `^(?:${matcher.value})$`;
  return `^${matcher.value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
}

/** True when a label's value (`''` for a label the series lacks, as in Prometheus) satisfies `matcher`. */
export function matches(matcher: Matcher, value: string, compiled?: RegExp): boolean {
  switch (matcher.op) {
    case '=':
      return value === matcher.value;
    case '!=':
      return value !== matcher.value;
    case '=~':
      return (compiled ?? new RegExp(anchored(matcher), 'u')).test(value);
    case '!~':
      return !(compiled ?? new RegExp(anchored(matcher), 'u')).test(value);
  }
}

/**
 * Parses a PromQL expression with Prometheus' grammar.
 * @throws PromQLError with the position of a syntax error, or naming what is not supported.
 */
export function parsePromQL(text: string): Expr {
  if (text.trim() === '') throw new PromQLError('no expression found in input');
  const tree = parser.parse(text);
  const top = tree.topNode;
  const error = firstError(top);
  if (error !== null) {
    const at = error.from;
    const shown = at >= text.length ? 'end of input' : JSON.stringify(text.slice(at, at + 10));
    throw new PromQLError(`parse error at char ${at + 1}: unexpected ${shown}`);
  }
  const body = children(top);
  if (body.length !== 1) throw new PromQLError('parse error: expected one expression');
  const expr = new Walker(text).expr(body[0]!);
  if (typeOf(expr) === 'matrix' || typeOf(expr) === 'string') {
    throw new PromQLError(`invalid expression type "${typeName(typeOf(expr))}" for range query, must be Scalar or instant Vector`);
  }
  return expr;
}
