import type { QueryEngine } from '../engine/engine.ts';
import type { MetricDocument } from '../storage/store.ts';
import type { Condition, Operand } from './parse.ts';
import { StatementError } from './context.ts';

/** The time bounds of a condition (`[from, to)`, ms; null where it sets none) and its tag condition. */
export interface SplitCondition {
  from: number | null;
  to: number | null;
  tags: Condition | null;
}

const isTimeRef = (operand: Operand) => operand.kind === 'ref' && operand.name.toLowerCase() === 'time';

/** The instant of a time operand: `now()` plus or minus durations, a duration literal (ms since the epoch), a number (ns), or a time string. */
function instantOf(operand: Operand, now: number): number {
  switch (operand.kind) {
    case 'now':
      return now;
    case 'duration':
      return operand.ms;
    case 'number':
      return operand.value / 1e6;
    case 'string': {
      const text = /^\d{4}-\d{2}-\d{2}$/.test(operand.value) ? `${operand.value}T00:00:00Z` : operand.value.replace(' ', 'T');
      const ms = Date.parse(/[zZ]|[+-]\d{2}:\d{2}$/.test(text) ? text : `${text}Z`);
      if (Number.isNaN(ms)) throw new StatementError(`invalid time: '${operand.value}' (use RFC 3339, e.g. '2024-01-01T00:00:00Z')`);
      return ms;
    }
    case 'binary': {
      const lhs = instantOf(operand.lhs, now);
      const rhs = operand.rhs.kind === 'duration' ? operand.rhs.ms : instantOf(operand.rhs, now);
      return operand.op === '+' ? lhs + rhs : lhs - rhs;
    }
    default:
      throw new StatementError('a time must be compared with now(), a time literal or a time string');
  }
}

/**
 * Splits a WHERE condition into its time bounds (comparisons of `time` joined to the rest
 * by AND) and the condition on tags.
 * @throws StatementError for `time` under an OR, or compared with `=`/`!=`.
 */
export function splitCondition(condition: Condition | null, now: number): SplitCondition {
  const split: SplitCondition = { from: null, to: null, tags: null };
  const visit = (node: Condition): Condition | null => {
    if (node.kind === 'and') {
      const lhs = visit(node.lhs);
      const rhs = visit(node.rhs);
      return lhs === null ? rhs : rhs === null ? lhs : { kind: 'and', lhs, rhs };
    }
    if (node.kind === 'compare' && (isTimeRef(node.lhs) || isTimeRef(node.rhs))) {
      const flipped = isTimeRef(node.rhs);
      const other = flipped ? node.lhs : node.rhs;
      const at = instantOf(other, now);
      const op = flipped ? ({ '<': '>', '<=': '>=', '>': '<', '>=': '<=' } as Record<string, string>)[node.op] : node.op;
      if (op === '>=' || op === '>') {
        const from = op === '>' ? at + 1 : at;
        split.from = split.from === null ? from : Math.max(split.from, from);
      } else if (op === '<=' || op === '<') {
        const to = op === '<=' ? at + 1 : at;
        split.to = split.to === null ? to : Math.min(split.to, to);
      } else throw new StatementError(`time can only be compared with <, <=, > and >=, not ${node.op}`);
      return null;
    }
    if (containsTime(node)) throw new StatementError('time conditions must be joined to the others with AND, not OR');
    return node;
  };
  split.tags = condition === null ? null : visit(condition);
  return split;
}

function containsTime(node: Condition): boolean {
  if (node.kind === 'compare') return isTimeRef(node.lhs) || isTimeRef(node.rhs);
  return containsTime(node.lhs) || containsTime(node.rhs);
}

/** A tag comparison's key and what it compares with. */
export function tagComparison(node: Extract<Condition, { kind: 'compare' }>, metric: MetricDocument | null) {
  if (node.lhs.kind !== 'ref') throw new StatementError('a condition compares a tag key with a string or a regular expression');
  const key = node.lhs.name;
  if (metric?.fields.includes(key) && !metric.tagKeys.includes(key)) {
    throw new StatementError(`conditions on fields ("${key}") are not supported: only tags and time can be compared`);
  }
  if (node.op === '=~' || node.op === '!~') {
    if (node.rhs.kind !== 'regex') throw new StatementError(`${node.op} compares with a regular expression (/.../)`);
    return { key, op: node.op, regex: compile(node.rhs.pattern), value: null };
  }
  if (node.op !== '=' && node.op !== '!=') throw new StatementError(`tags can be compared with =, !=, =~ and !~, not ${node.op}`);
  if (node.rhs.kind !== 'string' && node.rhs.kind !== 'ref')
    throw new StatementError(`a tag is compared with a string ('value'), not ${node.rhs.kind}`);
  return { key, op: node.op, regex: null, value: node.rhs.kind === 'string' ? node.rhs.value : node.rhs.name };
}

/** A regular expression of InfluxQL (Go RE2 syntax, unanchored) as a JavaScript one. */
export function compile(pattern: string): RegExp {
  try {
    return new RegExp(pattern, 'u');
  } catch (error) {
    throw new StatementError(`invalid regular expression /${pattern}/: ${(error as Error).message}`);
  }
}

/** Whether a series' tags satisfy a tag condition (a tag the series lacks has the value `''`, as in InfluxDB). */
export function tagsMatch(condition: Condition | null, tags: Record<string, string>, metric: MetricDocument | null = null): boolean {
  if (condition === null) return true;
  if (condition.kind !== 'compare') {
    const lhs = tagsMatch(condition.lhs, tags, metric);
    return condition.kind === 'and' ? lhs && tagsMatch(condition.rhs, tags, metric) : lhs || tagsMatch(condition.rhs, tags, metric);
  }
  const { key, op, regex, value } = tagComparison(condition, metric);
  const actual = tags[key] ?? '';
  if (op === '=') return actual === value;
  if (op === '!=') return actual !== value;
  if (op === '=~') return regex!.test(actual);
  return !regex!.test(actual);
}

/**
 * The engine's tag filters for a tag condition when it is an AND of conditions on one
 * key each, each an OR of `=` (a non-empty value) and `=~` (resolved against the key's
 * values in the registry); null when it is not of that form.
 */
export async function tagFilters(
  condition: Condition | null,
  metric: MetricDocument,
  engine: QueryEngine,
): Promise<{ key: string; in: string[] }[] | null> {
  if (condition === null) return [];
  const clauses: Condition[] = [];
  const flatten = (node: Condition) => {
    if (node.kind === 'and') {
      flatten(node.lhs);
      flatten(node.rhs);
    } else clauses.push(node);
  };
  flatten(condition);
  const filters = new Map<string, Set<string>>();
  for (const clause of clauses) {
    const alternatives: Extract<Condition, { kind: 'compare' }>[] = [];
    const collect = (node: Condition): boolean => {
      if (node.kind !== 'compare') return node.kind === 'or' && collect(node.lhs) && collect(node.rhs);
      alternatives.push(node);
      return true;
    };
    if (!collect(clause)) return null;
    const parts = alternatives.map((node) => tagComparison(node, metric));
    const key = parts[0]!.key;
    if (parts.some((part) => part.key !== key || part.op === '!=' || part.op === '!~' || part.value === '')) return null;
    if (parts.some((part) => part.regex?.test(''))) return null;
    if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(key)) return null;
    const values = new Set<string>();
    const needsValues = parts.some((part) => part.regex !== null);
    const known = needsValues ? await engine.tagValues(metric._id, key, []) : [];
    for (const part of parts) {
      if (part.regex === null) values.add(part.value!);
      else for (const value of known) if (part.regex.test(value)) values.add(value);
    }
    const previous = filters.get(key);
    filters.set(key, previous === undefined ? values : new Set([...previous].filter((value) => values.has(value))));
  }
  return [...filters].map(([key, values]) => ({ key, in: [...values].sort() }));
}
