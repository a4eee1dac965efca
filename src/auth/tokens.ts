/**
 * API tokens, the pure part: making a token, hashing it, reading it from an
 * `Authorization` header, and the rules for token names, scopes and metric prefixes.
 * Storage is in `storage/tokens.ts`, decisions on requests in `auth/access.ts`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { isValidName } from '../model/limits.ts';

/** What every token starts with, so a leaked one is recognisable (secret scanners, logs). */
export const TOKEN_PREFIX = 'tsg_';

/** Random bytes in a token: 256 bits, written as 43 base64url characters. */
export const TOKEN_BYTES = 32;

/** A token as sent by clients: `tsg_` and 43 base64url characters. */
export const TOKEN_PATTERN = /^tsg_[A-Za-z0-9_-]{43}$/;

/**
 * How long a server keeps trusting a token it verified (or refusing one it did not
 * find) without asking the database again: a revocation applies within this time.
 */
export const TOKEN_CACHE_MS = 5_000;

/** Characters of the token that form its public id (`tsg_` and the next 8). */
const ID_LENGTH = TOKEN_PREFIX.length + 8;

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
  write: '`recordReading`, `recordReadings`, `POST /api/v2/write`, `POST /api/readings`; not reading (give `read,write` for both)',
  admin:
    'everything: read, write, `GET /metrics`, and `setMetricLayout`, `setMetricStatistics`, `setRetention`, `deleteMetric`, `deleteSeries`, `defineRollup`, `dropRollup`',
  monitor: "`GET /metrics` only (a Prometheus scraper's token; see docs/operations.md#metrics)",
};

/** A new token: the secret (shown once), its public id, and the hash that is stored. */
export interface NewToken {
  /** The secret, e.g. `tsg_3fK9xQ2a…` (47 characters); never stored. */
  token: string;
  /** Public id: the first 12 characters of the token, e.g. `tsg_3fK9xQ2a`; names the token in lists and logs. */
  id: string;
  /** SHA-256 of the token, 64 lowercase hex characters; what the database keeps. */
  hash: string;
}

/** Makes a new random token (`tsg_` + 32 random bytes in base64url). */
export function generateToken(): NewToken {
  const token = TOKEN_PREFIX + randomBytes(TOKEN_BYTES).toString('base64url');
  return { token, id: tokenId(token), hash: hashToken(token) };
}

/** SHA-256 of a token as 64 lowercase hex characters. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The public id of a token: its first 12 characters (`tsg_` and 8 more). */
export function tokenId(token: string): string {
  return token.slice(0, ID_LENGTH);
}

/** What an `Authorization` header holds: no header, something that is not a bearer token, or a token. */
export type Credentials = { kind: 'missing' } | { kind: 'malformed' } | { kind: 'token'; token: string };

/**
 * Reads `Authorization: Bearer <token>` (scheme case-insensitive, RFC 6750). A header
 * with another scheme, or a bearer value that is not shaped like one of our tokens, is
 * `malformed`; an absent or blank header is `missing`.
 */
export function parseAuthorization(header: string | null | undefined): Credentials {
  if (header === null || header === undefined || header.trim() === '') return { kind: 'missing' };
  const match = /^Bearer +(\S+) *$/i.exec(header.trim());
  if (!match || !TOKEN_PATTERN.test(match[1]!)) return { kind: 'malformed' };
  return { kind: 'token', token: match[1]! };
}

/** Thrown by the parse functions below for a bad token name, scope or prefix; the message says what is allowed. */
export class TokenSpecError extends Error {
  override name = 'TokenSpecError';
}

/**
 * Checks a token name: 1 to 64 letters, digits, `_`, `-` or `.`, not starting with
 * `tsg_` (so a name is never mistaken for a token id).
 * @throws TokenSpecError when the name breaks the rule.
 */
export function parseTokenName(name: string): string {
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name) || name.startsWith(TOKEN_PREFIX)) {
    throw new TokenSpecError(`Token name "${name}": use 1 to 64 letters, digits, "_", "-" or ".", not starting with "${TOKEN_PREFIX}"`);
  }
  return name;
}

/**
 * Parses scopes given as `read,write` (or several such lists), without duplicates, in
 * the order of {@link SCOPES}.
 * @throws TokenSpecError for an unknown scope or an empty list.
 */
export function parseScopes(lists: readonly string[]): Scope[] {
  const given = lists
    .flatMap((list) => list.split(','))
    .map((scope) => scope.trim())
    .filter((scope) => scope !== '');
  for (const scope of given) {
    if (!(SCOPES as readonly string[]).includes(scope)) {
      throw new TokenSpecError(`Unknown scope "${scope}": use ${SCOPES.join(', ')}`);
    }
  }
  if (given.length === 0) throw new TokenSpecError(`Give at least one scope: ${SCOPES.join(', ')}`);
  return SCOPES.filter((scope) => given.includes(scope));
}

/**
 * Checks metric-name prefixes a token is limited to (e.g. `cpu` allows `cpu`,
 * `cpu_temp`, `cpu2`). Each must be the start of a valid metric name: a letter or `_`,
 * then letters, digits, `_` or `-`, at most 64 characters. Duplicates are dropped.
 * @returns the prefixes, sorted; an empty list means "no restriction" (null).
 * @throws TokenSpecError for a prefix no metric name can start with.
 */
export function parsePrefixes(prefixes: readonly string[]): string[] | null {
  for (const prefix of prefixes) {
    if (!isValidName(prefix)) {
      throw new TokenSpecError(
        `Metric prefix "${prefix}": it must be the start of a metric name (a letter or "_", then letters, digits, "_" or "-", at most 64 characters, not "__…")`,
      );
    }
  }
  return prefixes.length === 0 ? null : [...new Set(prefixes)].sort();
}
