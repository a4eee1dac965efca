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

/**
 * What each scope allows, in words (Markdown): the source of the scopes reference page
 * (`npm run docs:reference`). The checks themselves are in `auth/access.ts` and
 * `graphql/scopes.ts`.
 */
export const SCOPE_ALLOWS: Record<Scope, string> = {
  read: 'the queries: `metrics`, `metric`, `tagValues`, `series`, `seriesById`, `buckets`, `aggregate`, `latestValues`; the `buckets` subscription; `GET /export`',
  write:
    '`recordReading`, `recordReadings`, `POST /api/v2/write`, `POST /api/readings`, `POST /v1/metrics` (OTLP), `POST /api/v1/write` (Prometheus remote write); not reading (give `read,write` for both)',
  admin:
    'everything: read, write, `GET /metrics`, and `setMetricStatistics`, `setRetention`, `deleteMetric`, `deleteSeries`, `defineRollup`, `dropRollup`',
  monitor: "`GET /metrics` only (a Prometheus scraper's token; see docs/operations.md#metrics)",
};
