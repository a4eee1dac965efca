/**
 * GraphQL Code Generator's outputs are checked in: this test generates them in memory
 * from `codegen.ts` and compares them with the files (run `npm run codegen` after
 * changing the schema or an operation). It also keeps the typed client bundleable for
 * the browser: `src/client/` imports nothing but itself, `graphql` and types.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from '@graphql-codegen/cli';
import { isScalarType, isSpecifiedScalarType } from 'graphql';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import config, { GENERATED_DIR, SCALARS } from '../../codegen.ts';
import { schema } from '../../src/graphql/schema.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every file under `dir` (relative to the repository root, `/`-separated). */
function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)).split('\\').join('/'));
}

describe('codegen.ts outputs', () => {
  it('are the checked-in files (run `npm run codegen` when this fails)', async () => {
    // Not in watch mode, `generate` resolves with the outputs (its declared type adds `any`).
    const outputs: { filename: string; content: string }[] = await generate({ ...config, cwd: ROOT, silent: true }, false);
    const generated = new Map(outputs.map((output) => [relative(ROOT, join(ROOT, output.filename)).split('\\').join('/'), output.content]));
    expect(generated.has('schema/schema.graphql')).toBe(true);
    for (const [file, content] of generated) expect(readFileSync(join(ROOT, file), 'utf8'), file).toBe(content);
    // Nothing left over from an operation that was removed or renamed.
    const expected = [...generated.keys()].filter((file) => file.startsWith(GENERATED_DIR)).sort();
    expect(filesUnder(GENERATED_DIR).sort()).toEqual(expected);
  });

  it('map every custom scalar of the schema to a TypeScript type', () => {
    const custom = Object.values(schema.getTypeMap())
      .filter((type) => isScalarType(type) && !isSpecifiedScalarType(type))
      .map((type) => type.name)
      .sort();
    expect(custom.length).toBeGreaterThan(0);
    expect(Object.keys(SCALARS).sort()).toEqual(custom);
  });
});

describe('src/client', () => {
  it('imports only its own modules, graphql and type packages (so it bundles for the browser)', () => {
    const allowed = new Set(['graphql', '@graphql-typed-document-node/core']);
    const outside: string[] = [];
    for (const file of filesUnder('src/client').filter((name) => name.endsWith('.ts'))) {
      const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        if (fileName.startsWith('./') || fileName.startsWith('../')) {
          const target = relative(ROOT, join(ROOT, file, '..', fileName))
            .split('\\')
            .join('/');
          if (!target.startsWith('src/client/')) outside.push(`${file} -> ${fileName}`);
        } else if (!allowed.has(fileName)) outside.push(`${file} -> ${fileName}`);
      }
    }
    expect(outside).toEqual([]);
  });
});
