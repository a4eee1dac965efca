/**
 * Request limits enforced around GraphQL execution: one error per refusal in the
 * response. The per-request budget of buckets, series and
 * tag-filter values lives in `query/budget.ts`; the query time limit in
 * `storage/query-options.ts`.
 */
import type { Plugin } from 'graphql-yoga';
import { loadConfig, type Config } from '../config.ts';
import { CodedError } from '../errors.ts';

/** The request limits of the server (configuration variables in brackets). */
export interface RequestLimits {
  /** Most series all series lists of a request may list; also the largest `limit` (`MAX_SERIES`). */
  maxSeries: number;
  /** Most values in all tag filters of a request (`MAX_FILTER_VALUES`). */
  maxFilterValues: number;
  /** Time limit of each database read, in milliseconds (`QUERY_TIMEOUT_MS`). */
  queryTimeoutMs: number;
  /** Largest request body, in bytes (`MAX_BODY_BYTES`). */
  maxBodyBytes: number;
  /** Deepest field nesting of a document (`MAX_DEPTH`). */
  maxDepth: number;
  /** Most aliases in a document (`MAX_ALIASES`). */
  maxAliases: number;
  /** Most tokens in a document (`MAX_TOKENS`). */
  maxTokens: number;
  /** Most directives in a document (`MAX_DIRECTIVES`). */
  maxDirectives: number;
}

/** The request limits of a configuration. */
export function requestLimitsFromConfig(config: Config): RequestLimits {
  return {
    maxSeries: config.MAX_SERIES,
    maxFilterValues: config.MAX_FILTER_VALUES,
    queryTimeoutMs: config.QUERY_TIMEOUT_MS,
    maxBodyBytes: config.MAX_BODY_BYTES,
    maxDepth: config.MAX_DEPTH,
    maxAliases: config.MAX_ALIASES,
    maxTokens: config.MAX_TOKENS,
    maxDirectives: config.MAX_DIRECTIVES,
  };
}

/** The request limits of the default configuration (see `config.ts`). */
export const DEFAULT_REQUEST_LIMITS: Readonly<RequestLimits> = Object.freeze(requestLimitsFromConfig(loadConfig({})));

/**
 * Reports each refusal once: when a request is refused by its budget, every field that
 * tries to reserve afterwards, and every field whose pipeline was held back, fails with
 * the same error instance; the response carries it once (at the first path) instead of
 * once per series or alias.
 */
export function useOneErrorPerRefusal(): Plugin {
  return {
    onExecute: () => ({
      onExecuteDone: ({ result, setResult }) => {
        if (!('errors' in result) || !result.errors || result.errors.length < 2) return;
        const seen = new Set<unknown>();
        const errors = result.errors.filter((error) => {
          const original = error.originalError;
          if (!(original instanceof CodedError)) return true;
          if (seen.has(original)) return false;
          seen.add(original);
          return true;
        });
        if (errors.length !== result.errors.length) setResult({ ...result, errors });
      },
    }),
  };
}
