import { ErrorCode, InputError } from '../errors.ts';

/** The limits of one request (configuration `MAX_BUCKETS`, `MAX_SERIES`, `MAX_FILTER_VALUES`). */
export interface QueryLimits {
  /** Most buckets all bucket lists and aggregates of a request may return together (an aggregate counts 1 per group or series). */
  maxBuckets: number;
  /** Most series all series lists of a request may list together. */
  maxSeries: number;
  /** Most values all tag filters (`where.in`) of a request may hold together. */
  maxFilterValues: number;
}

/** What a request's budget counts: buckets, listed series, tag-filter values. */
export type BudgetKind = 'buckets' | 'series' | 'filterValues';

const LIMIT_OF: Record<BudgetKind, keyof QueryLimits> = {
  buckets: 'maxBuckets',
  series: 'maxSeries',
  filterValues: 'maxFilterValues',
};

const number = (n: number) => n.toLocaleString('en-US');

/** The error refusing a request that would go over the limit of `kind`: `wanted` in all, `detail` saying what the refused part asked for. */
function overBudget(kind: BudgetKind, wanted: number, limit: number, detail: string): InputError {
  const asked = detail ? ` (${detail})` : '';
  switch (kind) {
    case 'buckets':
      return new InputError(
        ErrorCode.TOO_MANY_BUCKETS,
        `This request could return ${number(wanted)} buckets${asked}; the limit is ${number(limit)} per request, all fields, aliases, groups and series together. Use a coarser granularity, a shorter range, a narrower filter or fewer fields.`,
      );
    case 'series':
      return new InputError(
        ErrorCode.TOO_MANY_SERIES,
        `This request would list ${number(wanted)} series${asked}; the limit is ${number(limit)} per request, all series lists together. Use a lower limit or a narrower filter.`,
        'limit',
      );
    case 'filterValues':
      return new InputError(
        ErrorCode.TOO_MANY_FILTER_VALUES,
        `This request carries ${number(wanted)} tag-filter values${asked}; the limit is ${number(limit)} per request, all \`where.in\` lists together.`,
        'where',
      );
  }
}

/**
 * What one request may still spend: each field that lists buckets, series or tag-filter
 * values reserves its share before it touches the database, and the first reservation
 * that does not fit refuses the request as a whole. Pure bookkeeping, no I/O; one
 * instance per request, in the GraphQL context.
 *
 * Once refused, the budget stays refused: every later reservation throws the same
 * error, and {@link RequestBudget.refusal} tells the bucket loader to run no pipeline
 * for this request, not even for fields that had reserved before.
 */
export class RequestBudget {
  private readonly used: Record<BudgetKind, number> = { buckets: 0, series: 0, filterValues: 0 };
  private refused: InputError | undefined;

  constructor(readonly limits: QueryLimits) {}

  /** The error that refused this request (TOO_MANY_BUCKETS, TOO_MANY_SERIES or TOO_MANY_FILTER_VALUES), if any. */
  get refusal(): InputError | undefined {
    return this.refused;
  }

  /** How much of `kind` is reserved so far. */
  spent(kind: BudgetKind): number {
    return this.used[kind];
  }

  /** How much of `kind` is left (0 once refused). */
  remaining(kind: BudgetKind): number {
    if (this.refused) return 0;
    return Math.max(0, this.limits[LIMIT_OF[kind]] - this.used[kind]);
  }

  /**
   * Checks that `amount` of `kind` would fit, without reserving it: for a part of a
   * query whose full cost is still unknown (one group of a grouped query, before its
   * groups are counted). Refuses the request when it does not fit.
   * @param detail what the part asks for, for the message, e.g. `100,800 buckets per group`.
   * @throws InputError TOO_MANY_BUCKETS, TOO_MANY_SERIES or TOO_MANY_FILTER_VALUES, or the earlier refusal.
   */
  check(kind: BudgetKind, amount: number, detail = ''): void {
    if (this.refused) throw this.refused;
    const wanted = this.used[kind] + amount;
    const limit = this.limits[LIMIT_OF[kind]];
    if (wanted > limit) {
      this.refused = overBudget(kind, wanted, limit, detail);
      throw this.refused;
    }
  }

  /**
   * Refuses the request for asking `wanted` of `kind` in one go, more than the limit
   * allows even for an empty budget (a series list whose `limit` is above `MAX_SERIES`).
   * @throws InputError TOO_MANY_BUCKETS, TOO_MANY_SERIES or TOO_MANY_FILTER_VALUES, or the earlier refusal.
   */
  refuse(kind: BudgetKind, wanted: number, detail = ''): never {
    if (this.refused) throw this.refused;
    this.refused = overBudget(kind, wanted, this.limits[LIMIT_OF[kind]], detail);
    throw this.refused;
  }

  /**
   * Reserves `amount` of `kind` (a non-negative count) for the rest of the request.
   * @param detail what the reserving field asks for, for the message, e.g. `200 groups x 1,440 buckets`.
   * @throws InputError TOO_MANY_BUCKETS, TOO_MANY_SERIES or TOO_MANY_FILTER_VALUES when it does not
   * fit (the request is refused from then on), or the earlier refusal.
   */
  reserve(kind: BudgetKind, amount: number, detail = ''): void {
    this.check(kind, amount, detail);
    this.used[kind] += amount;
  }
}

/** Formats a count for messages, e.g. `100,800`. */
export const formatCount = number;
