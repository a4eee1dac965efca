import SchemaBuilder, { type ArgBuilder as PothosArgBuilder } from '@pothos/core';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import type { Context } from './context.ts';
import { DateTimeScalar, SafeIntScalar } from './scalars.ts';

/** The builder's type parameters: context and scalar shapes. */
export interface BuilderTypes {
  Context: Context;
  /** Fields are non-null unless they say `nullable: true`. */
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
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
  plugins: [DataloaderPlugin],
});

builder.addScalarType('DateTime', DateTimeScalar);
builder.addScalarType('SafeInt', SafeIntScalar);
builder.queryType({ description: 'Discovery of metrics and series, and time-bucketed statistics.' });
builder.mutationType({ description: 'Recording readings.' });
