/**
 * The access levels an API token may carry. A token stores them (`storage/tokens.ts`),
 * requests are judged by them (`auth/access.ts`) and GraphQL fields ask for them
 * (`graphql/scopes.ts`).
 */

/**
 * The access levels a token may carry. `admin` includes `read`, `write` and `monitor`;
 * `write` does not include `read`; `monitor` allows only `GET /metrics` (a Prometheus
 * scraper's token, which can neither read series nor write).
 */
export const SCOPES = ['read', 'write', 'admin', 'monitor'] as const;

/** One access level; see {@link SCOPES}. */
export type Scope = (typeof SCOPES)[number];
