/**
 * GraphQL Code Generator's configuration (`npm run codegen`, or `npx graphql-codegen`;
 * offline: the schema comes from the code, the documents from files in the repository).
 *
 * - `schema/schema.graphql`: the code-first Pothos schema printed as SDL, types and
 *   fields sorted so diffs stay small (the same text as `printSortedSchema()`).
 * - `src/client/generated/`: typed documents (the client preset, "Client preset" in
 *   GraphQL Code Generator's documentation) for every operation in `DOCUMENTS`: result
 *   and variable types, and each operation as a `TypedDocumentString`, a `String` that
 *   carries its types. The module imports types only, so it bundles for the browser.
 *
 * `test/api/codegen.test.ts` fails when either output differs from what this
 * configuration generates.
 */
import type { CodegenConfig } from '@graphql-codegen/cli';
import { printSortedSchema } from './src/graphql/schema.ts';

/**
 * TypeScript types of the custom scalars as they travel in JSON (`input`: what a client
 * sends in variables; `output`: what it receives). With `strictScalars` a scalar missing
 * here fails the generation instead of becoming `unknown`.
 * - `DateTime`: an RFC 3339 string; answers are UTC with milliseconds (`2001-01-05T14:30:00.000Z`).
 * - `SafeInt`: an integer up to 2^53 - 1, a JSON number.
 * - `Time`: a query bound, epoch milliseconds or a date(-time) string; input only (the
 *   server never returns one).
 */
export const SCALARS = {
  DateTime: 'string',
  SafeInt: 'number',
  Time: { input: 'number | string', output: 'never' },
} as const;

/**
 * The operations typed: the saved examples, and every `.graphql` file under `src/` and
 * `scripts/` (the importer's and the load test's operations; a dashboard adds its own).
 * `.graphql` files rather than `graphql()` calls in `src/**\/*.ts`: plucking tags from
 * every TypeScript file parses each one and takes seconds, reading these takes milliseconds.
 */
export const DOCUMENTS = ['schema/examples/*.graphql', 'src/**/*.graphql', 'scripts/**/*.graphql'];

/** Where the typed documents are written (checked in). */
export const GENERATED_DIR = 'src/client/generated/';

/** The schema as SDL, built from the code: no server needs to run. */
const SDL = printSortedSchema();

const config: CodegenConfig = {
  schema: SDL,
  documents: DOCUMENTS,
  // Imports between generated files end in `.ts`, as everywhere in this repository.
  importExtension: '.ts',
  generates: {
    'schema/schema.graphql': {
      // The SDL as `printSortedSchema()` prints it, with a final newline. (The schema-ast
      // plugin prints the same text but drops the final newline.)
      plugins: [{ add: { content: `${SDL}\n` } }],
    },
    [GENERATED_DIR]: {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        // Documents as strings: nothing to print, a browser bundle carries the query text only.
        documentMode: 'string',
        scalars: SCALARS,
        strictScalars: true,
        // Enums as string unions (no runtime objects), type-only imports; types readonly,
        // so readonly arrays may be sent and answers are not changed by accident.
        enumsAsTypes: true,
        immutableTypes: true,
        useTypeImports: true,
        // Answers as the server sends them: no `__typename` unless selected, a nullable field present as `null`.
        skipTypename: true,
        avoidOptionals: { field: true },
      },
    },
  },
};

export default config;
