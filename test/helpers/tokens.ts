/**
 * API tokens for the tests of an app with `auth: 'tokens'`: made from a list of names,
 * scopes and metric prefixes, and each used once before a test looks at the database.
 */
import { expect } from 'vitest';
import { createApiToken } from '../../src/auth/manage.ts';
import type { Scope } from '../../src/model/scopes.ts';
import type { Store } from '../../src/storage/store.ts';
import type { TestApp } from './app.ts';

/** A token to make: its name, its one scope and its metric-name prefixes (empty: every metric). */
export type TokenSpec = readonly [name: string, scope: Scope, prefixes: readonly string[]];

/**
 * Creates and stores one token per spec, one after another in the list's order.
 * @returns each secret token (the `Bearer` value) by its name, in the list's order.
 * @throws TokenSpecError (from `createApiToken`) for a bad name or prefix, or a name
 * given twice or already used in `store`.
 */
export async function createTokens<const Specs extends readonly TokenSpec[]>(
  store: Store,
  specs: Specs,
): Promise<Record<Specs[number][0], string>> {
  const tokens = {} as Record<Specs[number][0], string>;
  for (const [name, scope, prefixes] of specs) {
    tokens[name as Specs[number][0]] = (await createApiToken(store, { name, scopes: [scope], prefixes: [...prefixes] })).token;
  }
  return tokens;
}

/**
 * Sends `{ __typename }` through `t` once with each token, in order, and expects no
 * errors. A token's first use records its `lastUsedAt`: done here, it neither counts as
 * a write nor changes a database snapshot later.
 * @throws a failed `expect` when a request is answered with errors.
 */
export async function useTokensOnce(t: TestApp, tokens: Record<string, string>): Promise<void> {
  for (const token of Object.values(tokens)) expect((await t.graphql('{ __typename }', {}, { token })).errors).toBeUndefined();
}

/**
 * The tokens of a write route's tests, made with {@link createTokens} and used once with
 * {@link useTokensOnce}: `admin`, `writer` (`write`, every metric), `reader` (`read`) and
 * `name` (`write`, only metrics starting with `prefix`).
 * @returns each secret token by its name.
 */
export async function createWriteRouteTokens<const Name extends string>(
  t: TestApp,
  name: Name,
  prefix: string,
): Promise<Record<'admin' | 'writer' | 'reader' | Name, string>> {
  const tokens = await createTokens(t.store, [
    ['admin', 'admin', []],
    ['writer', 'write', []],
    ['reader', 'read', []],
    [name, 'write', [prefix]],
  ]);
  await useTokensOnce(t, tokens);
  return tokens;
}
