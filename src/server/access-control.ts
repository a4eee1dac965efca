/**
 * Who may call the GraphQL endpoint, and from which web pages: bearer-token
 * authentication, CORS from an allow-list, and refusal of requests a foreign web page
 * could send without a CORS preflight (CSRF). `/health`, `/ready` and the GraphiQL
 * page itself stay open; every GraphQL request goes through these checks. Tokens are
 * checked by `auth/authenticate.ts`.
 */
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import type { Plugin } from 'graphql-yoga';
import { OPEN_ACCESS, type Access } from '../auth/access.ts';
import { type AuthSettings, createAuthenticator, tokenMissing } from '../auth/authenticate.ts';
import { TOKEN_CACHE_MS } from '../auth/tokens.ts';
import { CodedError, ErrorCode } from '../errors.ts';
import { toGraphQLError } from './graphql-errors.ts';
import type { Logger } from '../logger.ts';
import type { Store } from '../storage/store.ts';
import { countValidTokens } from '../storage/tokens.ts';

/** Request headers that make a GET non-simple (so browsers preflight it) and so let it through the CSRF check. */
export const CSRF_HEADERS = ['x-graphql-yoga-csrf', 'authorization'] as const;

/** POST body types the server accepts: JSON and GraphQL documents. Browsers preflight all of them cross-site. */
const ACCEPTED_BODY_TYPES = ['application/json', 'application/graphql+json', 'application/graphql'];

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
        try {
          granted.set(request, await authenticate(request.headers.get('authorization')));
        } catch (error) {
          throw error instanceof CodedError ? toGraphQLError(error) : error;
        }
      },
    });
    countValidTokens(store).then(
      (count) =>
        count === 0
          ? logger.warn(
              'AUTH=tokens and no API token exists yet: create one with `npm run token -- create --name NAME --scope read,write` (see docs/access-and-limits.md)',
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
      if (!access) throw toGraphQLError(tokenMissing());
      return access;
    },
    graphiqlHeaders: settings.mode === 'tokens' ? JSON.stringify({ Authorization: 'Bearer <paste a token>' }, null, 2) : undefined,
  };
}
