// POST /graphql in /openapi.json: the HTTP envelope of the GraphQL console (request and response bodies of the
// GraphQL-over-HTTP convention). The operations themselves are described by the GraphQL schema (schema.graphql,
// docs/graphql.md), not here.
import { type OpenApiFragment, TOO_MANY_REQUESTS_HEADERS } from '../openapi.ts';
import { strictObject } from '../schemas/common.ts';
import { type JsonSchema, nullable, ref } from '../schemas/json-schema.ts';

/** An object keyed by GraphQL names (variables by name, response keys by field name or alias), values free. */
const byName = (description: string): JsonSchema => ({
  type: 'object',
  description,
  additionalProperties: false,
  patternProperties: { '^[_A-Za-z][_0-9A-Za-z]*$': {} },
});

const GraphQLRequest = strictObject(
  {
    query: { type: 'string', minLength: 1, description: 'One GraphQL document (at most 2,000 tokens).' },
    variables: nullable(byName("The operation's variables by name.")),
    operationName: nullable({ type: 'string' }),
    extensions: nullable(byName('Request extensions (none are used).')),
  },
  ['variables', 'operationName', 'extensions'],
);

const GraphQLError = strictObject(
  {
    message: { type: 'string' },
    locations: {
      type: 'array',
      items: strictObject({ line: { type: 'integer', minimum: 1 }, column: { type: 'integer', minimum: 1 } }),
    },
    path: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
    extensions: strictObject(
      {
        code: { type: 'string', minLength: 1, description: "REST's error code for the same call." },
        status: { type: 'integer', minimum: 400, maximum: 599, description: "REST's HTTP status for the same call." },
      },
      [],
    ),
  },
  ['locations', 'path'],
);

const GraphQLResponse: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    data: nullable(byName('The selected fields by response key, shaped by the query.')),
    errors: { type: 'array', minItems: 1, items: ref('GraphQLError') },
  },
  // data, errors or both.
  minProperties: 1,
};

// Every refusal before GraphQL runs answers a GraphQLResponse with `errors` only, with the status it names.
const refused = (description: string) => ({
  description,
  content: { 'application/json': { schema: ref('GraphQLResponse') } },
});

export const graphqlOpenApi: OpenApiFragment = {
  schemas: { GraphQLRequest, GraphQLError, GraphQLResponse },
  paths: {
    '/graphql': {
      post: {
        operationId: 'graphql',
        summary: 'The developer console over GraphQL: access, snapshot, records and one mutation per console action.',
        description:
          'The schema and examples are in docs/graphql.md (introspection: on for the embedded development default, off on a deployment; GRAPHQL_INTROSPECTION=true|false overrides both). ' +
          'Every error carries extensions.code and extensions.status equal to the REST answer for the same call. ' +
          'A request GraphQL refuses before running it answers that status; a request that ran answers 200 with ' +
          'its field errors beside the data.',
        tags: ['developer', 'graphql'],
        security: [{ developerSession: [] }],
        requestBody: {
          required: true,
          description: 'One GraphQL request (no batches); application/json; at most 16,384 bytes.',
          content: { 'application/json': { schema: ref('GraphQLRequest') } },
        },
        responses: {
          '200': {
            description:
              'The request ran: data, and the errors of fields that failed (with their REST code and status).',
            content: { 'application/json': { schema: ref('GraphQLResponse') } },
          },
          '400': refused(
            'INVALID_REQUEST (not JSON, not a GraphQL request, a syntax error, a limit exceeded, introspection off), ' +
              'invalid_action (a mutation whose input GraphQL refuses), INVALID_RECORD_QUERY (records arguments).',
          ),
          '401': refused('UNAUTHORIZED: no or invalid developer session token.'),
          '403': refused('INVALID_SESSION_ORIGIN, EMAIL_VERIFICATION_REQUIRED, DEVELOPER_INVITATION_REQUIRED.'),
          '413': refused('PAYLOAD_TOO_LARGE: body over 16,384 bytes.'),
          '415': refused('INVALID_CONTENT_TYPE: Content-Type is not application/json.'),
          '429': {
            ...refused(
              "TOO_MANY_REQUESTS: past the developer's limits (rate, requests in flight, the operation's cost, " +
                'simulateRule in flight); nothing ran.',
            ),
            headers: TOO_MANY_REQUESTS_HEADERS,
          },
          '503': refused('PLATFORM_DISABLED, AUTH_UNAVAILABLE (identity store or platform switch unreadable).'),
        },
      },
    },
  },
};
