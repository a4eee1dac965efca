/**
 * What a request may do, decided from its token: scopes (`read`, `write`, `admin`, `monitor`)
 * and optional metric-name prefixes. Pure functions, used by the GraphQL scope checks.
 */
import { SCOPES, type Scope } from '../model/scopes.ts';

/** The access of one request, from its token (or {@link OPEN_ACCESS} when `AUTH=off`). */
export interface Access {
  /** Public id of the token (e.g. `tsg_3fK9xQ2a`); null when authentication is off. */
  tokenId: string | null;
  /** Name of the token; null when authentication is off. */
  tokenName: string | null;
  /** Scopes the token was given, as stored (`admin` is expanded by {@link hasScope}). */
  scopes: readonly Scope[];
  /** Metric-name prefixes the token is limited to; null: every metric. */
  prefixes: readonly string[] | null;
}

/** Access of every request when `AUTH=off`: every scope, every metric. */
export const OPEN_ACCESS: Access = Object.freeze({ tokenId: null, tokenName: null, scopes: SCOPES, prefixes: null });

/** True when `access` grants `scope`: it was given, or `admin` was given (admin includes read, write and monitor). */
export function hasScope(access: Access, scope: Scope): boolean {
  return access.scopes.includes(scope) || access.scopes.includes('admin');
}

/**
 * True when `access` may touch metric `metric`: no prefix restriction, or the name
 * starts with one of the prefixes (plain string prefix: `cpu` allows `cpu`, `cpu_temp`
 * and `cpu2`).
 */
export function mayTouchMetric(access: Access, metric: string): boolean {
  return access.prefixes === null || access.prefixes.some((prefix) => metric.startsWith(prefix));
}

/** The first of `metrics` that `access` may not touch, or undefined when it may touch all. */
export function firstForbiddenMetric(access: Access, metrics: readonly string[]): string | undefined {
  return metrics.find((metric) => !mayTouchMetric(access, metric));
}

/**
 * The metric of a series key (`flights,destination=PHL,origin=LAS` -> `flights`):
 * everything before the first comma. Metric names cannot contain commas.
 */
export function metricOfSeriesKey(key: string): string {
  const comma = key.indexOf(',');
  return comma === -1 ? key : key.slice(0, comma);
}

/** A scope check that failed, as reported by the GraphQL layer: a missing scope or a metric out of reach. */
export type Refusal = { kind: 'scope'; scope: Scope } | { kind: 'metrics'; metrics: readonly string[] };

/**
 * The FORBIDDEN message for refused checks: which scope the operation needs, or which
 * metric the token may not touch. It names only what the client sent and what its own
 * token holds, nothing about stored data.
 */
export function forbiddenMessage(access: Access, refusals: readonly Refusal[]): string {
  const scope = refusals.find((refusal) => refusal.kind === 'scope');
  if (scope) {
    const held = access.scopes.length > 0 ? access.scopes.join(', ') : 'none';
    return `This operation needs the "${scope.scope}" scope; the API token has: ${held}`;
  }
  for (const refusal of refusals) {
    if (refusal.kind !== 'metrics') continue;
    const metric = firstForbiddenMetric(access, refusal.metrics);
    if (metric !== undefined) {
      return `The API token may not touch metric "${metric}" (it is limited to metric names starting with ${access.prefixes!.map((prefix) => `"${prefix}"`).join(', ')})`;
    }
  }
  return 'The API token does not allow this operation';
}
