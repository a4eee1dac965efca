/**
 * Prints the code-first schema as SDL to `schema/schema.graphql` (types and fields
 * sorted, so diffs stay small). Run with `npm run schema:print`; a test fails when the
 * checked-in file differs from the code.
 */
import { writeFileSync } from 'node:fs';
import { printSortedSchema } from './src/graphql/schema.ts';

const target = new URL('./schema/schema.graphql', import.meta.url);
writeFileSync(target, `${printSortedSchema()}\n`);
console.log(`Wrote ${target.pathname}`);
