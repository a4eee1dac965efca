/**
 * Request limits enforced around GraphQL execution: the size of the request body, the
 * shape of the document (depth, aliases, tokens, directives; GraphQL Armor), and one
 * error per refusal in the response. The per-request budget of buckets, series and
 * tag-filter values lives in `query/budget.ts`; the query time limit in
 * `storage/query-options.ts`.
 */
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import type { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { loadConfig, type Config } from '../config.ts';
import { CodedError, ErrorCode } from '../errors.ts';
import { toGraphQLError } from './graphql-errors.ts';

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

/** GraphQL Armor's rejection as our QUERY_TOO_COMPLEX error (HTTP 400), thrown from its `onReject` callback. */
function rejectAsTooComplex(_context: unknown, error: GraphQLError): never {
  throw toGraphQLError(new CodedError(ErrorCode.QUERY_TOO_COMPLEX, error.message.replace(/^Syntax Error: /, ''), { httpStatus: 400 }));
}

/**
 * GraphQL Armor's document limits: tokens while parsing (the parser stops at the first
 * token over the limit, so a huge document costs no more than a small one), then depth,
 * aliases and directives as the first validation rules. A document over any of them is
 * refused with `extensions.code` QUERY_TOO_COMPLEX and HTTP 400 before anything runs.
 * Introspection (`__schema`) is exempt from the depth limit, so GraphiQL works.
 */
export function useDocumentLimits(limits: Pick<RequestLimits, 'maxDepth' | 'maxAliases' | 'maxTokens' | 'maxDirectives'>): Plugin[] {
  const callbacks = { onReject: [rejectAsTooComplex], propagateOnRejection: true };
  return [
    maxTokensPlugin({ n: limits.maxTokens, ...callbacks }),
    maxDepthPlugin({ n: limits.maxDepth, ignoreIntrospection: true, ...callbacks }),
    maxAliasesPlugin({ n: limits.maxAliases, ...callbacks }),
    maxDirectivesPlugin({ n: limits.maxDirectives, ...callbacks }),
  ] as Plugin[];
}

/** The REQUEST_TOO_LARGE error (HTTP 413) for a body over `maxBytes`. */
function tooLarge(maxBytes: number): GraphQLError {
  return toGraphQLError(
    new CodedError(ErrorCode.REQUEST_TOO_LARGE, `The request body is larger than ${maxBytes.toLocaleString('en-US')} bytes.`, {
      httpStatus: 413,
    }),
  );
}

/**
 * Limits the request body to `maxBytes` (`MAX_BODY_BYTES`): a `Content-Length` over it
 * is refused before a byte is read, and a body without one (chunked) is counted while
 * it is read and refused at the first chunk that goes over. Refusals are
 * REQUEST_TOO_LARGE with HTTP 413; a malformed `Content-Length` is INVALID_ARGUMENT
 * with HTTP 400. Replaces graphql-yoga's own limit (`maxRequestBodySize: false`), which
 * gives another code.
 */
export function useBodyLimit(maxBytes: number): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      const length = request.headers.get('content-length');
      if (length !== null) {
        if (!/^\d+$/.test(length)) {
          throw toGraphQLError(
            new CodedError(ErrorCode.INVALID_ARGUMENT, 'The Content-Length header is not a number.', { httpStatus: 400 }),
          );
        }
        if (Number(length) > maxBytes) throw tooLarge(maxBytes);
      }
      if (requestParser === undefined || request.body === null) return;
      const parse = requestParser;
      setRequestParser((original) => {
        const body = original.body;
        if (body === null) return parse(original);
        // The native TransformStream for a native body (as graphql-yoga does).
        const Transform = body instanceof ReadableStream ? globalThis.TransformStream : fetchAPI.TransformStream;
        let read = 0;
        const counted = body.pipeThrough(
          new Transform<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
              read += chunk.byteLength;
              if (read > maxBytes) controller.error(tooLarge(maxBytes));
              else controller.enqueue(chunk);
            },
          }),
        );
        return parse(
          new fetchAPI.Request(original.url, {
            method: original.method,
            headers: original.headers,
            signal: original.signal,
            body: counted,
            // @ts-expect-error `duplex` is required by fetch for a streamed body but missing from the DOM types
            duplex: 'half',
          }),
        );
      });
    },
  };
}

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
