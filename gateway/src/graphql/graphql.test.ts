// The GraphQL schema against the REST schemas it mirrors, the scalars' limits, and which REST code an input error
// of a document gets. No server: the schema and functions alone.
import { readFileSync } from 'node:fs';
import {
  type GraphQLInputObjectType,
  GraphQLNonNull,
  type GraphQLObjectType,
  getNamedType,
  isLeafType,
  Kind,
  parseValue as literal,
  parse,
  specifiedRules,
  validate,
  valueFromAST,
} from 'graphql';
import { consoleActionSchemas, consoleSchemas } from '../schemas/console.ts';
import { inputErrorCode } from './errors.ts';
import { armor } from './limits.ts';
import { scalars } from './scalars.ts';
import { createSchema } from './server.ts';

const schema = createSchema();

describe('the schema mirrors the REST shapes', () => {
  /**
   * Input fields a shared input type carries for one of its mutations only: WebhookEndpointInput.overlapSeconds is
   * rotateWebhookSecret's (additive: the argument type stays v0.1.0's; the other mutations' schemas refuse it).
   */
  const SHARED_INPUT_ONLY: Record<string, string[]> = {
    deleteWebhookEndpoint: ['overlapSeconds'],
    sendTestWebhook: ['overlapSeconds'],
  };

  it('has one mutation per action type, whose input has the action fields, required alike', () => {
    const mutation = schema.getMutationType()!;
    expect(Object.keys(mutation.getFields()).sort()).toEqual(Object.keys(consoleActionSchemas).sort());
    for (const [type, actionSchema] of Object.entries(consoleActionSchemas)) {
      const argument = mutation.getFields()[type]!.args.find((a) => a.name === 'input')!;
      expect(argument.type).toBeInstanceOf(GraphQLNonNull);
      const input = getNamedType(argument.type) as GraphQLInputObjectType;
      const fields = input.getFields();
      const properties = Object.keys(actionSchema.properties as object).filter((p) => p !== 'type');
      const required = (actionSchema.required as string[]).filter((p) => p !== 'type');
      const own = Object.keys(fields).filter((f) => !SHARED_INPUT_ONLY[type]?.includes(f));
      expect({ type, fields: own.sort() }).toEqual({ type, fields: properties.sort() });
      expect({
        type,
        required: Object.values(fields)
          .filter((f) => f.type instanceof GraphQLNonNull)
          .map((f) => f.name)
          .sort(),
      }).toEqual({ type, required: required.sort() });
    }
  });

  /** Leaf fields GraphQL adds to REST's shapes (additive, CONTRACT section 11). */
  const GRAPHQL_ONLY: Record<string, string[]> = {
    // Whether the caller joined the organization (acceptMembership); REST's shape stays the document's.
    DeveloperOrganization: ['joined'],
    // The member's e-mail, from identity-admission (DeveloperEmails), and whether the member joined; REST's snapshot
    // stays as the document says.
    DeveloperMember: ['email', 'joined'],
    // Game clocks and test players (CONTRACT section 11.2): GraphQL, the export and webhooks only.
    DeveloperEvent: ['gameTime'],
    DeveloperPlayer: ['test'],
  };

  it('gives each output type exactly the REST fields, plus nested objects and the GraphQL-only fields', () => {
    for (const name of [
      'DeveloperAccess',
      'DeveloperSnapshot',
      'DeveloperOrganization',
      'DeveloperProject',
      'DeveloperGame',
      'DeveloperKey',
      'DeveloperMember',
      'DeveloperRule',
      'DeveloperPlayer',
      'DeveloperEvent',
      'DeveloperActionResult',
    ]) {
      const type = schema.getType(name) as GraphQLObjectType;
      const restFields = Object.keys((consoleSchemas[name] as { properties: object }).properties).sort();
      // Lists of the snapshot and the snapshot's limits are REST fields too; nested links are extra.
      const own = Object.values(type.getFields())
        .filter((f) => isLeafType(getNamedType(f.type)) || name === 'DeveloperSnapshot')
        .filter((f) => !GRAPHQL_ONLY[name]?.includes(f.name))
        .map((f) => f.name)
        .sort();
      expect({ name, fields: own }).toEqual({ name, fields: restFields });
    }
  });

  const docs = readFileSync(new URL('../../../docs/graphql.md', import.meta.url), 'utf8');

  it("docs/graphql.md's example operations are valid within the limits", () => {
    const examples = [...docs.matchAll(/```graphql\n([\s\S]*?)```/g)]
      .map((match) => match[1]!)
      .filter((block) => !block.includes('schema.graphql') && !block.startsWith('# The developer console'));
    expect(examples.length).toBeGreaterThanOrEqual(8);
    const rules = [...specifiedRules, ...armor().validationRules];
    for (const example of examples) {
      expect({ example, errors: validate(schema, parse(example), rules).map((e) => e.message) }).toEqual({
        example,
        errors: [],
      });
    }
  });
});

describe('scalars refuse values outside the spec', () => {
  it('UUID', () => {
    for (const ok of [
      '6f1e8c1a-1111-4111-8111-111111111111',
      '00000000-0000-0000-0000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
    ]) {
      expect(scalars.UUID.parseValue(ok)).toBe(ok);
    }
    for (const bad of ['6f1e8c1a-1111-9111-8111-111111111111', '6f1e8c1a-1111-4111-c111-111111111111', 'x', 5, null]) {
      expect(() => scalars.UUID.parseValue(bad)).toThrow(/Must be a UUID/);
    }
    expect(() => scalars.UUID.parseLiteral(literal('5'))).toThrow(/Must be a UUID/);
  });

  it('Credits and PositiveCredits', () => {
    expect(scalars.Credits.parseValue(0)).toBe(0);
    expect(scalars.Credits.parseValue(1_000_000_000_000)).toBe(1_000_000_000_000);
    expect(scalars.PositiveCredits.parseValue(1)).toBe(1);
    for (const bad of [-1, 1_000_000_000_001, 1.5, '5', Number.NaN, Number.POSITIVE_INFINITY, null]) {
      expect(() => scalars.Credits.parseValue(bad)).toThrow(/Must be an integer from 0/);
    }
    expect(() => scalars.PositiveCredits.parseValue(0)).toThrow(/Must be an integer from 1/);
    expect(scalars.Credits.parseLiteral(literal('1000000000000'))).toBe(1_000_000_000_000);
    for (const bad of ['1000000000001', '99999999999999999999', '1.0', '1e3', '"5"', '-1']) {
      expect(() => scalars.Credits.parseLiteral(literal(bad))).toThrow(/Must be an integer/);
    }
  });

  it('DateTime', () => {
    expect(scalars.DateTime.parseValue('2024-02-29T23:59:59.123+01:00')).toBe('2024-02-29T23:59:59.123+01:00');
    for (const bad of ['2023-02-29T00:00:00Z', '2024-01-01T00:00:00', '2024-01-01 00:00:00Z', 1]) {
      expect(() => scalars.DateTime.parseValue(bad)).toThrow(/RFC 3339/);
    }
  });

  it('in the schema: a literal out of range does not coerce', () => {
    const input = schema.getType('FundOrganizationInput') as GraphQLInputObjectType;
    const value = (amount: string) =>
      valueFromAST(
        {
          kind: Kind.OBJECT,
          fields: [
            {
              kind: Kind.OBJECT_FIELD,
              name: { kind: Kind.NAME, value: 'organizationId' },
              value: { kind: Kind.STRING, value: '6f1e8c1a-1111-4111-8111-111111111111' },
            },
            {
              kind: Kind.OBJECT_FIELD,
              name: { kind: Kind.NAME, value: 'amountCredits' },
              value: { kind: Kind.INT, value: amount },
            },
          ],
        },
        input,
      );
    expect(value('5')).toEqual({ organizationId: '6f1e8c1a-1111-4111-8111-111111111111', amountCredits: 5 });
    expect(value('0')).toBeUndefined();
  });
});

describe('the REST code of an input error', () => {
  /** The offset of the first occurrence of `marker` in the document. */
  const at = (document: string, marker: string) => {
    const offset = document.indexOf(marker);
    if (offset < 0) throw new Error(`no ${marker}`);
    return offset;
  };
  const code = (document: string, marker?: string, operationName?: string) =>
    inputErrorCode(parse(document), operationName, marker === undefined ? undefined : at(document, marker));

  it('is invalid_action anywhere in a mutation', () => {
    expect(code('mutation { createOrganization(input: { name: 5 }) { id } }', '5')).toBe('invalid_action');
    expect(code('mutation M($i: Nope!) { createOrganization(input: $i) { id } }', 'Nope')).toBe('invalid_action');
    expect(code('mutation { createOrganization(input: {}) { id } }')).toBe('invalid_action');
  });

  it('is INVALID_RECORD_QUERY in the arguments, variables and fragments of records', () => {
    const document = `query Q($first: Int, $gameId: UUID) {
      access { mode }
      records(kind: players, first: $first, gameId: $gameId) { ...Page }
    }
    fragment Page on DeveloperRecordConnection { kind edges { cursor } }`;
    expect(code(document, 'kind: players')).toBe('INVALID_RECORD_QUERY');
    expect(code(document, '$gameId: UUID')).toBe('INVALID_RECORD_QUERY');
    expect(code(document, 'edges { cursor }')).toBe('INVALID_RECORD_QUERY');
    expect(code(document, 'access')).toBe('INVALID_REQUEST');
  });

  it('is INVALID_REQUEST elsewhere in a query, or without a location', () => {
    expect(code('{ snapshot { nope } }', 'nope')).toBe('INVALID_REQUEST');
    expect(code('query Q($x: Int) { access { mode } }', '$x')).toBe('INVALID_REQUEST');
    expect(code('{ records(kind: players) { kind } }')).toBe('INVALID_REQUEST');
  });

  it('follows the operation the error is in, or the one requested', () => {
    const document = 'query A { records(kind: nope) { kind } } mutation B { revokeKey(input: {}) { id } }';
    expect(code(document, 'nope')).toBe('INVALID_RECORD_QUERY');
    expect(code(document, 'revokeKey')).toBe('invalid_action');
    expect(
      code('fragment F on Query { access { mode } } mutation M { revokeKey(input: {}) { id } }', 'access', 'M'),
    ).toBe('invalid_action');
  });
});
