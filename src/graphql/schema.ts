import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.ts';
import './tag.ts';
import './statistics.ts';
import './chart.ts';
import './bucket.ts';
import './aggregate.ts';
import './series.ts';
import './metric.ts';
import './record.ts';
import './delete.ts';
import './rollup.ts';
import './live.ts';
import './retention.ts';

/** The executable GraphQL schema, built code-first from the modules above. */
export const schema = builder.toSchema();

/** The schema in SDL with types and fields sorted, as checked in at `schema/schema.graphql`. */
export function printSortedSchema(): string {
  return printSchema(lexicographicSortSchema(schema));
}
