/**
 * The slow-query log: one line for a GraphQL request that took at least SLOW_QUERY_MS,
 * with bursts collapsed so that a busy client does not flood the log. It never carries
 * a request's variables or headers (so never a token), and documents are logged with
 * their literal values hidden ({@link normalizeDocument}).
 */
import { getOperationAST, Kind, print, stripIgnoredCharacters, visit, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import type { Logger } from '../logger.ts';

/** Longest normalized document a slow-query line carries, in characters (longer ones are cut, ending in `…`). */
export const MAX_LOGGED_QUERY = 4_000;

/** Default time within which one operation name is logged once, in milliseconds (10 s). */
export const SLOW_LOG_INTERVAL_MS = 10_000;

/** Most operation names whose last line is remembered; past that the oldest is forgotten (its next line is logged). */
const MAX_REMEMBERED_OPERATIONS = 1_000;

/**
 * A GraphQL document with its literal values hidden, as the slow-query log prints it:
 * strings become `""`, numbers `0`, lists `[]` and input objects `{}` (booleans, enum
 * values, `null` and variable names stay; variables' values are never part of a
 * document), then printed without comments and ignored characters (graphql-js
 * `stripIgnoredCharacters`), cut at {@link MAX_LOGGED_QUERY} characters. Metric names,
 * tag values and times sent inline are hidden with the rest.
 */
export function normalizeDocument(document: DocumentNode): string {
  const hidden = visit(document, {
    StringValue: () => ({ kind: Kind.STRING, value: '' }),
    IntValue: () => ({ kind: Kind.INT, value: '0' }),
    FloatValue: () => ({ kind: Kind.FLOAT, value: '0' }),
    ListValue: () => ({ kind: Kind.LIST, values: [] }),
    ObjectValue: () => ({ kind: Kind.OBJECT, fields: [] }),
  });
  const text = stripIgnoredCharacters(print(hidden));
  return text.length > MAX_LOGGED_QUERY ? `${text.slice(0, MAX_LOGGED_QUERY - 1)}…` : text;
}

/**
 * The readings a write batch sends: for a mutation whose root fields are all
 * `recordReading` (one reading each) or `recordReadings` (the length of its `readings`
 * list, given inline or as a variable), their sum; undefined for any other operation
 * (a query, a subscription, a mutation with any other root field or a fragment at the
 * root). `variables` are the request's raw variables; only list lengths are read.
 */
export function writeBatchReadings(operation: OperationDefinitionNode, variables: Record<string, unknown> | undefined): number | undefined {
  if (operation.operation !== 'mutation') return undefined;
  let readings = 0;
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) return undefined;
    const name = selection.name.value;
    if (name === '__typename') continue;
    if (name === 'recordReading') {
      readings += 1;
      continue;
    }
    if (name !== 'recordReadings') return undefined;
    const list = selection.arguments?.find((argument) => argument.name.value === 'readings')?.value;
    if (list?.kind === Kind.LIST) readings += list.values.length;
    else if (list?.kind === Kind.VARIABLE) {
      const value = variables?.[list.name.value];
      readings += Array.isArray(value) ? value.length : 0;
    }
  }
  return readings;
}

/** One answered GraphQL request, as {@link SlowQueryLog.answered} takes it. */
export interface AnsweredRequest {
  /** The parsed document; undefined when it did not parse. */
  document: DocumentNode | undefined;
  /** The `operationName` the client sent, if any. */
  operationName: string | undefined;
  /** The raw variables the client sent (only the length of a `readings` list is read, never logged). */
  variables: Record<string, unknown> | undefined;
  /** Time from the request's arrival to its answer, in milliseconds. */
  ms: number;
  /** Outcome code: `OK` or the first error's `extensions.code`. */
  code: string;
}

/** What {@link SlowQueryLog} needs. */
export interface SlowQueryLogOptions {
  logger: Logger;
  /** A request at least this long is slow (config SLOW_QUERY_MS), in milliseconds. */
  slowQueryMs: number;
  /** Within this time one operation name is logged once, in milliseconds (default {@link SLOW_LOG_INTERVAL_MS}). */
  intervalMs?: number;
  /** The clock, ms (default `performance.now`); tests pass their own. */
  now?: () => number;
}

/** What the log remembers of one operation name: when its last line was written, and the slow requests not logged since. */
interface Burst {
  loggedAt: number;
  suppressed: number;
}

/**
 * Decides which slow requests are logged, and how.
 *
 * Queries (every operation but a write batch) that took at least `slowQueryMs` are
 * logged as a warning, `Slow query: NAME took N ms`, with `operation`, `ms`, `code` and
 * the normalized document (`query`).
 *
 * Write batches (mutations whose root fields only record readings: `recordReading`,
 * `recordReadings`) are not warned about: their time grows with the readings they carry,
 * and an importer sending batches of hundreds of readings takes seconds each by design.
 * One that took at least `slowQueryMs` is logged at debug (`LOG_LEVEL=debug`), so an
 * import through the API leaves the console to its progress line: `Slow write batch: NAME, R
 * readings in N ms`, with `operation`, `ms`, `code`, `readings` and `msPerReading` (the
 * figure to compare between batches), and without the document, which says nothing a
 * name does not.
 *
 * Bursts are collapsed: within `intervalMs` of a line, further slow requests of the same
 * operation name are counted but not logged, and the next line logged for that name
 * carries `suppressed`, the number of them, and says so in its message ("; 12 similar
 * since the last line not logged"). Queries and write batches of one name are counted
 * apart.
 * The operation name is the executed operation's, `anonymous` for an operation without
 * one, `unknown` when the document did not parse.
 */
export class SlowQueryLog {
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly bursts = new Map<string, Burst>();

  constructor(private readonly options: SlowQueryLogOptions) {
    this.intervalMs = options.intervalMs ?? SLOW_LOG_INTERVAL_MS;
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * Looks at one answered request: nothing when it took less than `slowQueryMs`;
   * otherwise a line as the class comment says, or a count towards the next line.
   * @returns true when the request was slow (logged or counted as suppressed).
   */
  answered(request: AnsweredRequest): boolean {
    if (request.ms < this.options.slowQueryMs) return false;
    const operation = request.document ? getOperationAST(request.document, request.operationName) : null;
    const name = request.document ? (operation?.name?.value ?? 'anonymous') : 'unknown';
    const readings = operation ? writeBatchReadings(operation, request.variables) : undefined;
    const kind = readings === undefined ? 'query' : 'write';
    const suppressed = this.admit(`${kind}:${name}`);
    if (suppressed === undefined) return true;
    const ms = Math.round(request.ms);
    const tail = suppressed > 0 ? `; ${suppressed} similar since the last line not logged` : '';
    const also = suppressed > 0 ? { suppressed } : {};
    if (readings === undefined) {
      this.options.logger.warn(
        { operation: name, ms, code: request.code, query: request.document ? normalizeDocument(request.document) : null, ...also },
        `Slow query: ${name} took ${ms} ms${tail}`,
      );
    } else {
      const msPerReading = readings > 0 ? Math.round((request.ms / readings) * 100) / 100 : null;
      this.options.logger.debug(
        { operation: name, ms, code: request.code, readings, msPerReading, ...also },
        `Slow write batch: ${name}, ${readings} readings in ${ms} ms${tail}`,
      );
    }
    return true;
  }

  /**
   * Whether a line for `key` may be written now: the number of slow requests of that key
   * not logged since its last line when it may, undefined when it falls within
   * `intervalMs` of that line (it is then counted).
   */
  private admit(key: string): number | undefined {
    const at = this.now();
    const burst = this.bursts.get(key);
    if (burst !== undefined && at - burst.loggedAt < this.intervalMs) {
      burst.suppressed++;
      return undefined;
    }
    this.bursts.delete(key);
    this.bursts.set(key, { loggedAt: at, suppressed: 0 });
    // Map order is insertion order: the first key is the one logged longest ago.
    if (this.bursts.size > MAX_REMEMBERED_OPERATIONS) this.bursts.delete(this.bursts.keys().next().value!);
    return burst?.suppressed ?? 0;
  }
}
