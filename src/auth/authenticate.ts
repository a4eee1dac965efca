/**
 * Who a request is: the bearer token of its `Authorization` header, checked against the
 * `tokens` collection (`storage/tokens.ts`) with the verdict cached for a few seconds.
 * One authenticator serves the GraphQL endpoint (`server/access-control.ts`), the plain
 * HTTP routes (`routes/http-answers.ts`) and `GET /metrics` (`observability/metrics.ts`),
 * so a token means the same everywhere and a revocation applies as fast everywhere.
 */
import { LRUCache } from 'lru-cache';
import type { Config } from '../config.ts';
import { CodedError, ErrorCode } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Store } from '../storage/store.ts';
import { findValidToken, TOUCH_INTERVAL_MS, touchToken } from '../storage/tokens.ts';
import type { Access } from './access.ts';
import { hashToken, parseAuthorization, TOKEN_CACHE_MS } from './tokens.ts';

/** The access settings of an app. */
export interface AuthSettings {
  /** `tokens`: every GraphQL request needs `Authorization: Bearer <token>`; `off`: every request has every scope. */
  mode: 'tokens' | 'off';
  /** Origins (e.g. `https://dash.example.com`) whose pages may call the API from a browser; none by default. */
  corsOrigins: readonly string[];
  /** How long verified tokens are cached, in milliseconds (default {@link TOKEN_CACHE_MS}; 0: no cache). */
  cacheMs?: number;
}

/** {@link AuthSettings} from the configuration (`AUTH`, `CORS_ORIGINS`). */
export function authSettings(config: Pick<Config, 'AUTH' | 'CORS_ORIGINS'>): AuthSettings {
  return { mode: config.AUTH, corsOrigins: config.CORS_ORIGINS };
}

/** How a client gets a token, as the refusals say it. */
const HOW_TO_GET_ONE = 'send "Authorization: Bearer <token>"; an operator creates tokens with `npm run token -- create`';

/**
 * A 401 UNAUTHENTICATED error whose `extensions.http` also carries the header
 * `WWW-Authenticate: Bearer realm="tsgraph"` (RFC 6750), which graphql-yoga sends with
 * the answer once the error is a GraphQL error.
 */
export function unauthenticated(message: string): CodedError {
  const error = new CodedError(ErrorCode.UNAUTHENTICATED, message, { httpStatus: 401 });
  (error.extensions.http as { headers?: Record<string, string> }).headers = { 'WWW-Authenticate': 'Bearer realm="tsgraph"' };
  return error;
}

/** The refusal of a request without any `Authorization` header. */
export function tokenMissing(): CodedError {
  return unauthenticated(`This API needs a token: ${HOW_TO_GET_ONE}`);
}

/**
 * Checks the bearer token of a request against the `tokens` collection, remembering
 * the verdict for `cacheMs` (by the token's hash; at most 10,000 verdicts). `lastUsedAt`
 * is written at most once an hour per token; a failure to write it is logged only.
 * @returns a function from an `Authorization` header (or null) to the request's access.
 * @throws CodedError UNAUTHENTICATED (HTTP 401, see {@link unauthenticated}) for a
 * missing, malformed, unknown or revoked token; the driver's error when the database
 * cannot be asked.
 */
export function createAuthenticator(store: Store, cacheMs: number, logger: Logger): (header: string | null) => Promise<Access> {
  const cache = cacheMs > 0 ? new LRUCache<string, Access | 'refused'>({ max: 10_000, ttl: cacheMs }) : null;
  return async (header) => {
    const credentials = parseAuthorization(header);
    if (credentials.kind === 'missing') throw tokenMissing();
    if (credentials.kind === 'malformed') {
      throw unauthenticated(`The Authorization header does not hold an API token (tsg_ and 43 characters): ${HOW_TO_GET_ONE}`);
    }
    const hash = hashToken(credentials.token);
    let verdict = cache?.get(hash);
    if (verdict === undefined) {
      const doc = await findValidToken(store, hash);
      verdict = doc ? { tokenId: doc._id, tokenName: doc.name, scopes: doc.scopes, prefixes: doc.prefixes } : 'refused';
      cache?.set(hash, verdict);
      const now = new Date();
      if (doc && (!doc.lastUsedAt || now.getTime() - doc.lastUsedAt.getTime() >= TOUCH_INTERVAL_MS)) {
        await touchToken(store, doc._id, now).catch((error: unknown) =>
          logger.warn({ err: error }, `Could not record the use of token ${doc._id}`),
        );
      }
    }
    if (verdict === 'refused') throw unauthenticated('Unknown or revoked API token');
    return verdict;
  };
}
