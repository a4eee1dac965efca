import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isEnumType, isInputObjectType, isInterfaceType, isObjectType, isSpecifiedScalarType } from 'graphql';
import { printSortedSchema, schema } from '../../src/graphql/schema.ts';

describe('schema/schema.graphql', () => {
  it('is the schema printed from the code (run `npm run schema:print` after changing the schema)', () => {
    const checkedIn = readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(checkedIn).toBe(`${printSortedSchema()}\n`);
  });

  it('describes every type, field, argument and enum value', () => {
    const undocumented: string[] = [];
    const need = (what: string, description: string | null | undefined) => {
      if (!description?.trim()) undocumented.push(what);
    };
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith('__') || isSpecifiedScalarType(type)) continue;
      need(type.name, type.description);
      if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
        for (const field of Object.values(type.getFields())) {
          need(`${type.name}.${field.name}`, field.description);
          for (const arg of 'args' in field ? field.args : []) need(`${type.name}.${field.name}(${arg.name})`, arg.description);
        }
      }
      if (isEnumType(type)) for (const value of type.getValues()) need(`${type.name}.${value.name}`, value.description);
    }
    expect(undocumented).toEqual([]);
  });
});
