import SchemaBuilder, { type ArgBuilder as PothosArgBuilder } from '@pothos/core';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import type { Context } from './context.ts';
import { authScopes, forbidden, type AuthScopes } from './scopes.ts';
import { DateTimeScalar, SafeIntScalar, TimeScalar, type TimeInput } from './scalars.ts';

/** The builder's type parameters: context and scalar shapes. */
export interface BuilderTypes {
  Context: Context;
  /** Scopes fields require in `authScopes` (see `scopes.ts`); all listed scopes must hold. */
  AuthScopes: AuthScopes;
  DefaultAuthStrategy: 'all';
  /** Fields are non-null unless they say `nullable: true`. */
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    Time: { Input: TimeInput; Output: string };
    SafeInt: { Input: number; Output: number };
  };
}

/** Pothos' resolved schema types of {@link builder}, for helpers that build arguments. */
export type SchemaTypes = PothosSchemaTypes.ExtendDefaultTypes<BuilderTypes>;

/** The argument builder (`t.arg`) of {@link builder}'s fields. */
export type ArgBuilder = PothosArgBuilder<SchemaTypes>;

/** The Pothos schema builder: context, scalars and plugins only; types live in their own modules. */
export const builder = new SchemaBuilder<BuilderTypes>({
  defaultFieldNullability: false,
  // Scope auth first, so its checks run before any other plugin's resolver wrapper.
  plugins: [ScopeAuthPlugin, DataloaderPlugin],
  scopeAuth: {
    defaultStrategy: 'all',
    authScopes,
    unauthorizedError: (_parent, ctx, _info, result) => forbidden(ctx, result.failure),
  },
});

builder.addScalarType('DateTime', DateTimeScalar);
builder.addScalarType('Time', TimeScalar);
builder.addScalarType('SafeInt', SafeIntScalar);
builder.queryType({ description: 'Discovery of metrics and series, and time-bucketed statistics (scope `read`).' });
builder.subscriptionType({
  description: 'Live answers pushed over Server-Sent Events as readings arrive (scope `read`; see docs/live-updates.md).',
});
builder.mutationType({ description: 'Recording readings (scope `write`), and changing or deleting metrics and series (scope `admin`).' });
