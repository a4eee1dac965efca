import type { Collection } from 'mongodb';
import type { Scope } from '../model/scopes.ts';
import { isDuplicateKeyError } from '../errors.ts';
import type { Store } from './store.ts';

/** Collection of API tokens. */
export const TOKENS_COLLECTION = 'tokens';

/**
 * One API token (collection `tokens`). The token itself is never stored, only its
 * SHA-256 hash, so a copy of the database does not let anyone in.
 */
export interface TokenDocument {
  /** Public id: the token's first 12 characters, e.g. `tsg_3fK9xQ2a`. */
  _id: string;
  /** Unique name given at creation (never reused, also after revocation). */
  name: string;
  /** SHA-256 of the token, 64 lowercase hex characters (unique). */
  hash: string;
  scopes: Scope[];
  /** Metric-name prefixes the token is limited to; null: every metric. */
  prefixes: string[] | null;
  createdAt: Date;
  /** When the token was revoked; absent while it is valid. */
  revokedAt?: Date;
  /** When the token was last used, to within {@link TOUCH_INTERVAL_MS}; absent before its first use. */
  lastUsedAt?: Date;
}

/** `lastUsedAt` is written at most this often per token (one hour), so using a token costs no write per request. */
export const TOUCH_INTERVAL_MS = 60 * 60 * 1000;

const tokens = (store: Store): Collection<TokenDocument> => store.db.collection<TokenDocument>(TOKENS_COLLECTION);

/** Creates the token indexes (idempotent): `hash` unique (look-up on every new token seen), `name` unique. */
export async function ensureTokenIndexes(store: Store): Promise<void> {
  await tokens(store).createIndexes([
    { key: { hash: 1 }, name: 'hash', unique: true },
    { key: { name: 1 }, name: 'name', unique: true },
  ]);
}

/** Outcome of {@link insertToken}: stored, the name is taken, or the id or hash collided (make a new token and retry). */
export type InsertOutcome = 'inserted' | 'name-taken' | 'collision';

/**
 * Stores a new token document (creating the indexes first).
 * @returns `name-taken` when a token (valid or revoked) already has this name,
 * `collision` when the id or hash is taken (astronomically unlikely; retry with a new token).
 */
export async function insertToken(store: Store, doc: TokenDocument): Promise<InsertOutcome> {
  await ensureTokenIndexes(store);
  try {
    await tokens(store).insertOne(doc);
    return 'inserted';
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
    return (await tokens(store).findOne({ name: doc.name }, { projection: { _id: 1 } })) ? 'name-taken' : 'collision';
  }
}

/** Every token, valid and revoked, oldest first. */
export async function listTokens(store: Store): Promise<TokenDocument[]> {
  return tokens(store).find({}).sort({ createdAt: 1, _id: 1 }).toArray();
}

/** The valid (not revoked) token with this hash, or null. */
export async function findValidToken(store: Store, hash: string): Promise<TokenDocument | null> {
  return tokens(store).findOne({ hash, revokedAt: { $exists: false } });
}

/** Number of valid (not revoked) tokens. */
export async function countValidTokens(store: Store): Promise<number> {
  return tokens(store).countDocuments({ revokedAt: { $exists: false } });
}

/**
 * Sets `lastUsedAt` to `now` unless it was set within {@link TOUCH_INTERVAL_MS}
 * (one conditional update; nothing is written inside the interval).
 */
export async function touchToken(store: Store, id: string, now: Date): Promise<void> {
  await tokens(store).updateOne(
    { _id: id, $or: [{ lastUsedAt: { $exists: false } }, { lastUsedAt: { $lt: new Date(now.getTime() - TOUCH_INTERVAL_MS) } }] },
    { $set: { lastUsedAt: now } },
  );
}

/** Outcome of {@link revokeToken}: the token revoked now, one revoked before, or nothing of that id or name. */
export type RevokeOutcome = { kind: 'revoked'; token: TokenDocument } | { kind: 'already'; token: TokenDocument } | { kind: 'unknown' };

/** Revokes the token whose id or name is `idOrName` (sets `revokedAt`; the document stays for the record). */
export async function revokeToken(store: Store, idOrName: string, now: Date): Promise<RevokeOutcome> {
  const match = { $or: [{ _id: idOrName }, { name: idOrName }] };
  const revoked = await tokens(store).findOneAndUpdate(
    { ...match, revokedAt: { $exists: false } },
    { $set: { revokedAt: now } },
    { returnDocument: 'after' },
  );
  if (revoked) return { kind: 'revoked', token: revoked };
  const existing = await tokens(store).findOne(match);
  return existing ? { kind: 'already', token: existing } : { kind: 'unknown' };
}
