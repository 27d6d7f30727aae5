// Every type, field, argument, enum value and mutation of the served schema is described: GraphQL tools
// (GraphiQL, Apollo Sandbox, codegen) show these words, and docs/reference/graphql.md is generated from them.
import { describe, expect, it } from '@jest/globals';
import { isEnumType, isInputObjectType, isInterfaceType, isObjectType } from 'graphql';
import { createSchema } from './server.ts';

const BUILT_IN_SCALARS = new Set(['String', 'Int', 'Float', 'Boolean', 'ID']);

function undescribed(): string[] {
  const missing: string[] = [];
  for (const type of Object.values(createSchema().getTypeMap())) {
    if (type.name.startsWith('__') || BUILT_IN_SCALARS.has(type.name)) continue;
    if (!type.description?.trim()) missing.push(type.name);
    if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (!field.description?.trim()) missing.push(`${type.name}.${field.name}`);
        for (const arg of 'args' in field ? field.args : []) {
          if (!arg.description?.trim()) missing.push(`${type.name}.${field.name}(${arg.name})`);
        }
      }
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) {
        if (!value.description?.trim()) missing.push(`${type.name}.${value.name}`);
      }
    }
  }
  return missing;
}

describe('the GraphQL schema', () => {
  it('describes every type, field, argument, enum value and mutation', () => {
    expect(undescribed()).toEqual([]);
  });
});
