/**
 * Managing API tokens (used by `npm run token`): creating one from a name, scopes and
 * prefixes. Storage is in `storage/tokens.ts`.
 */
import { insertToken, type TokenDocument } from '../storage/tokens.ts';
import type { Store } from '../storage/store.ts';
import { generateToken, parsePrefixes, parseScopes, parseTokenName, TokenSpecError } from './tokens.ts';

/** What to create: a name, scopes (`read,write`) and optional metric prefixes, unchecked. */
export interface TokenRequest {
  name: string;
  /** Lists such as `read,write`; see `parseScopes`. */
  scopes: readonly string[];
  /** Metric-name prefixes; empty: every metric. */
  prefixes: readonly string[];
}

/**
 * Creates and stores a token.
 * @returns the secret token (to show once; it is not stored) and the stored document.
 * @throws TokenSpecError for a bad name, scope or prefix, or a name already used by
 * another token (valid or revoked).
 */
export async function createApiToken(
  store: Store,
  request: TokenRequest,
  now = new Date(),
): Promise<{ token: string; doc: TokenDocument }> {
  const name = parseTokenName(request.name);
  const scopes = parseScopes(request.scopes);
  const prefixes = parsePrefixes(request.prefixes);
  for (let attempt = 0; attempt < 5; attempt++) {
    const made = generateToken();
    const doc: TokenDocument = { _id: made.id, name, hash: made.hash, scopes, prefixes, createdAt: now };
    const outcome = await insertToken(store, doc);
    if (outcome === 'inserted') return { token: made.token, doc };
    if (outcome === 'name-taken') {
      throw new TokenSpecError(`A token named "${name}" exists already (names are not reused, also after revocation); choose another name`);
    }
  }
  throw new Error('Could not store a new token: its id collided five times');
}
