/**
 * Who may call the GraphQL endpoint, and from which web pages: bearer-token
 * authentication, CORS from an allow-list, and refusal of requests a foreign web page
 * could send without a CORS preflight (CSRF). `/health`, `/ready` and the GraphiQL
 * page itself stay open; every GraphQL request goes through these checks.
 */
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { OPEN_ACCESS, type Access } from '../auth/access.ts';
import { hashToken, parseAuthorization, TOKEN_CACHE_MS } from '../auth/tokens.ts';
import type { Config } from '../config.ts';
import type { GraphQLError } from 'graphql';
import { CodedError, ErrorCode } from '../errors.ts';
import { toGraphQLError } from './graphql-errors.ts';
import type { Logger } from '../logger.ts';
import type { Store } from '../storage/store.ts';
import { countValidTokens, findValidToken, touchToken, TOUCH_INTERVAL_MS } from '../storage/tokens.ts';

/** Request headers that make a GET non-simple (so browsers preflight it) and so let it through the CSRF check. */
export const CSRF_HEADERS = ['x-graphql-yoga-csrf', 'authorization'] as const;

/** POST body types the server accepts: JSON and GraphQL documents. Browsers preflight all of them cross-site. */
const ACCEPTED_BODY_TYPES = ['application/json', 'application/graphql+json', 'application/graphql'];

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

/** What `createApp` wires into graphql-yoga. */
export interface AccessControl {
  /** Yoga plugins: body-type check, CSRF check, authentication (in this order), `Vary: Origin`. */
  plugins: Plugin[];
  /** Yoga's `cors` option: CORS headers only for allowed origins, never `allow-credentials`. */
  cors: (request: Request) => false | { origin: string[]; credentials: false; methods: string[]; allowedHeaders: string[]; maxAge: number };
  /** The access of an authenticated GraphQL request (for the context); refuses a request that skipped authentication. */
  accessOf(request: Request): Access;
  /** GraphiQL's initial headers editor content (JSON), or undefined when no token is needed. */
  graphiqlHeaders: string | undefined;
}

/** A 401 UNAUTHENTICATED error with `WWW-Authenticate: Bearer` (RFC 6750). */
function unauthenticated(message: string): GraphQLError {
  const error = new CodedError(ErrorCode.UNAUTHENTICATED, message, { httpStatus: 401 });
  (error.extensions.http as { headers?: Record<string, string> }).headers = { 'WWW-Authenticate': 'Bearer realm="tsgraph"' };
  return toGraphQLError(error);
}

const HOW_TO_GET_ONE = 'send "Authorization: Bearer <token>"; an operator creates tokens with `npm run token -- create`';

/**
 * Checks the bearer token of a request against the `tokens` collection, remembering
 * the verdict for `cacheMs` (by the token's hash). `lastUsedAt` is written at most
 * once an hour per token.
 * @returns a function from an `Authorization` header to the request's access.
 * @throws CodedError UNAUTHENTICATED (HTTP 401) for a missing, malformed, unknown or revoked token.
 */
export function createAuthenticator(store: Store, cacheMs: number, logger: Logger): (header: string | null) => Promise<Access> {
  const cache = cacheMs > 0 ? new LRUCache<string, Access | 'refused'>({ max: 10_000, ttl: cacheMs }) : null;
  return async (header) => {
    const credentials = parseAuthorization(header);
    if (credentials.kind === 'missing') throw unauthenticated(`This API needs a token: ${HOW_TO_GET_ONE}`);
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

/**
 * Refuses POST bodies other than JSON or a GraphQL document with 415
 * UNSUPPORTED_MEDIA_TYPE: HTML forms (`application/x-www-form-urlencoded`,
 * `multipart/form-data`) and `text/plain` are what a foreign web page can post without
 * a CORS preflight.
 */
function useBodyTypeCheck(): Plugin {
  return {
    onRequestParse({ request }) {
      if (request.method !== 'POST') return;
      const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (!ACCEPTED_BODY_TYPES.includes(type)) {
        throw toGraphQLError(
          new CodedError(
            ErrorCode.UNSUPPORTED_MEDIA_TYPE,
            `POST bodies must be JSON (content-type: application/json) or a GraphQL document (application/graphql), not ${type === '' ? 'untyped' : type}`,
            { httpStatus: 415 },
          ),
        );
      }
    },
  };
}

/**
 * The CSRF check of `@graphql-yoga/plugin-csrf-prevention` (a request whose body type
 * browsers send without a preflight, such as a plain GET, needs one of
 * {@link CSRF_HEADERS}), with its refusal coded CSRF_HEADER_REQUIRED (HTTP 403).
 */
function useCsrfCheck(): Plugin {
  const csrf = useCSRFPrevention({ requestHeaders: [...CSRF_HEADERS] });
  return {
    onRequestParse(payload) {
      try {
        csrf.onRequestParse?.(payload);
      } catch {
        throw toGraphQLError(
          new CodedError(
            ErrorCode.CSRF_HEADER_REQUIRED,
            `Requests without a JSON body need an Authorization or ${CSRF_HEADERS[0]} header (so browsers preflight them)`,
            { httpStatus: 403 },
          ),
        );
      }
    },
  };
}

/**
 * Builds the access control of an app: with `mode: 'tokens'` every GraphQL request is
 * authenticated before it is parsed; with `off` every request gets
 * {@link OPEN_ACCESS}. Logs the mode at start, and how to create a token when none exists.
 */
export function createAccessControl(store: Store, settings: AuthSettings, logger: Logger): AccessControl {
  const granted = new WeakMap<Request, Access>();
  const plugins: Plugin[] = [useBodyTypeCheck(), useCsrfCheck()];
  const allowed = new Set(settings.corsOrigins);

  if (settings.mode === 'tokens') {
    const cacheMs = settings.cacheMs ?? TOKEN_CACHE_MS;
    const authenticate = createAuthenticator(store, cacheMs, logger);
    plugins.push({
      async onRequestParse({ request }) {
        granted.set(request, await authenticate(request.headers.get('authorization')));
      },
    });
    countValidTokens(store).then(
      (count) =>
        count === 0
          ? logger.warn(
              'AUTH=tokens and no API token exists yet: create one with `npm run token -- create --name NAME --scope read,write` (see README "Access")',
            )
          : logger.info(`Access: API tokens required (${count} valid); a revocation applies within ${cacheMs / 1000} s`),
      () => {}, // the readiness check reports an unreachable database
    );
  } else {
    logger.warn('AUTH=off: every client that reaches this server can read, write and delete without a token');
  }
  if (allowed.size > 0) {
    logger.info(`CORS: web pages of ${[...allowed].join(', ')} may call the API`);
    plugins.push({
      onResponse({ response }) {
        // CORS headers depend on the request's Origin; caches must keep the answers apart.
        if (!/\bOrigin\b/i.test(response.headers.get('vary') ?? '')) response.headers.append('Vary', 'Origin');
      },
    });
  }

  return {
    plugins,
    cors: (request) => {
      const origin = request.headers.get('origin');
      if (origin === null || !allowed.has(origin)) return false;
      return {
        origin: [origin],
        credentials: false,
        methods: ['GET', 'POST'],
        allowedHeaders: ['authorization', 'content-type', 'accept', CSRF_HEADERS[0]],
        maxAge: 600,
      };
    },
    accessOf(request) {
      if (settings.mode === 'off') return OPEN_ACCESS;
      const access = granted.get(request);
      if (!access) throw unauthenticated(`This API needs a token: ${HOW_TO_GET_ONE}`);
      return access;
    },
    graphiqlHeaders: settings.mode === 'tokens' ? JSON.stringify({ Authorization: 'Bearer <paste a token>' }, null, 2) : undefined,
  };
}
