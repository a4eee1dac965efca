/**
 * Cache validators for polling: a GET query answered without errors carries a strong
 * `ETag` (the SHA-256 of its body) and `Cache-Control: private, max-age=0,
 * must-revalidate`, and a GET that sends the same tag back in `If-None-Match` is answered
 * `304 Not Modified` without the body (RFC 9110 "HTTP Semantics", sections 8.8.3 ETag and
 * 13.1.2 If-None-Match; RFC 9111 "HTTP Caching", 5.2.2 Cache-Control). Every other
 * GraphQL answer (a POST, a mutation, an answer with errors) gets `Cache-Control:
 * no-store`; a subscription's event stream keeps graphql-yoga's `no-cache`.
 *
 * The query runs every time: the tag saves the body's transfer and the client's parsing,
 * not the server's work. Since the tag is computed from the body this request produced,
 * with this request's token, a cache can never hand one token's answer to another; the
 * answers say `private` (no shared cache may keep them) and `Vary: Authorization`. Even a
 * range that ended in the past is revalidated every time, as late readings may still
 * arrive for it.
 */
import { createHash } from 'node:crypto';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';

/** `Cache-Control` of a GET query answered without errors: any cache may keep it, but must ask again before each use. */
export const REVALIDATE = 'private, max-age=0, must-revalidate';
/** `Cache-Control` of every other GraphQL answer. */
export const NO_STORE = 'no-store';

/** The strong entity tag of a body: its SHA-256, base64url, quoted. */
export function entityTag(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url')}"`;
}

/**
 * Whether an `If-None-Match` header names `tag`: `*`, or a comma-separated list of tags
 * of which one is `tag`, compared weakly as RFC 9110 13.1.2 asks (a `W/` prefix ignored).
 */
export function noneMatchHolds(header: string | null, tag: string): boolean {
  if (header === null) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((entry) => entry.trim().replace(/^W\//, '') === tag);
}

/** Adds `Authorization` to a response's `Vary` unless it is there already. */
function varyOnAuthorization(headers: Headers): void {
  if (!/\bAuthorization\b/i.test(headers.get('vary') ?? '')) headers.append('Vary', 'Authorization');
}

/** The yoga plugin: ETag and `304 Not Modified` for GET query answers without errors, `no-store` for every other GraphQL answer. */
export function useCacheHeaders(): Plugin {
  /** Per GraphQL request: whether its answer may be revalidated (a GET query without errors). */
  const cacheable = new WeakMap<Request, boolean>();
  return {
    onResultProcess({ request, result }) {
      // A stream (a subscription over SSE) keeps graphql-yoga's own `Cache-Control: no-cache`.
      if (isAsyncIterable(result)) return;
      cacheable.set(request, request.method === 'GET' && !Array.isArray(result) && !result.errors?.length);
    },
    async onResponse({ request, response, setResponse, fetchAPI }) {
      const verdict = cacheable.get(request);
      if (verdict === undefined) return;
      if (!verdict || response.status !== 200) {
        response.headers.set('cache-control', NO_STORE);
        return;
      }
      const body = await response.text();
      const tag = entityTag(body);
      const headers = new fetchAPI.Headers(response.headers);
      headers.set('etag', tag);
      headers.set('cache-control', REVALIDATE);
      varyOnAuthorization(headers);
      if (noneMatchHolds(request.headers.get('if-none-match'), tag)) {
        // A 304 repeats the validators and caching headers of the 200 it stands for, not the body's (RFC 9110 15.4.5).
        const kept = [...headers].filter(([name]) => !/^content-(type|length)$/i.test(name));
        setResponse(new fetchAPI.Response(null, { status: 304, headers: kept }));
        return;
      }
      setResponse(new fetchAPI.Response(body, { status: 200, headers }));
    },
  };
}
