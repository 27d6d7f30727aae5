// The linking endpoints in /openapi.json (CONTRACT sections 2 and 6): link intents for game servers, inspection and
// approval for native apps, player reads. The schemas are the ones the links edge validates requests with and its
// tests validate responses with.
import { linkSchemas } from '#runtime/contracts/link-shapes.ts';
import { type OpenApiFragment, RETRY_AFTER_HEADER } from '../openapi.ts';
import { dataEnvelope } from './common.ts';
import { type JsonSchema, ref } from './json-schema.ts';

function errors(codes: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, description] of Object.entries(codes)) {
    out[status] = { $ref: `#/components/responses/Error${status}`, description };
  }
  return out;
}

function ok(schemaName: string, description: string): Record<string, unknown> {
  return { '200': { description, content: { 'application/json': { schema: dataEnvelope(schemaName) } } } };
}

function body(schemaName: string, description: string): Record<string, unknown> {
  return { required: true, description, content: { 'application/json': { schema: ref(schemaName) } } };
}

const secretKeyErrors = {
  '401': 'invalid_key: missing or malformed bearer, unknown or revoked key.',
  '403': 'secret_key_required: a public key.',
};

// The native admission envelope: its error object carries one extra field, `minBuild`, with CLIENT_UPDATE_REQUIRED.
// Named schemas and named responses, so that client generators make one model of it rather than one per status
// and route.
const nativeSchemas: Record<string, JsonSchema> = {
  NativeError: {
    description:
      'A native admission or link failure: `code` and `message` as in ApiError, and `minBuild` with ' +
      'CLIENT_UPDATE_REQUIRED.',
    type: 'object',
    additionalProperties: false,
    required: ['code', 'message'],
    properties: {
      code: { type: 'string', minLength: 1 },
      message: { type: 'string' },
      minBuild: {
        type: 'integer',
        minimum: 1,
        description: 'Only with CLIENT_UPDATE_REQUIRED: the lowest X-Client-Build admitted (NATIVE_MIN_BUILD).',
      },
    },
  },
  NativeErrorEnvelope: {
    type: 'object',
    additionalProperties: false,
    required: ['error'],
    properties: { error: ref('NativeError') },
  },
};

const NATIVE_ERROR_STATUSES: Record<string, string> = {
  '401': 'Missing or invalid native session token.',
  '403': 'Native admission denied (country, account, client build, device verification).',
  '409': 'Expired or used link token, a link conflict, or a device permit of another account.',
  '503': 'Platform disabled, or a dependency temporarily unavailable.',
};

/** `#/components/responses/NativeError<status>`: the native envelope, a 503 with Retry-After. */
const nativeResponses: Record<string, unknown> = Object.fromEntries(
  Object.entries(NATIVE_ERROR_STATUSES).map(([status, description]) => [
    `NativeError${status}`,
    {
      description,
      ...(status === '503' ? { headers: { 'Retry-After': RETRY_AFTER_HEADER } } : {}),
      content: { 'application/json': { schema: ref('NativeErrorEnvelope') } },
    },
  ]),
);

const nativeError = (status: string, description: string) => ({
  $ref: `#/components/responses/NativeError${status}`,
  description,
});

function nativeErrors(afterUnknown: string, more: Record<string, string>): Record<string, unknown> {
  return {
    '400': {
      $ref: '#/components/responses/Error400',
      description:
        'INVALID_REQUEST (not JSON), invalid_link (linkToken missing, not a string of 32..200, unknown field).',
    },
    '401': nativeError('401', 'UNAUTHORIZED, INVALID_TOKEN, INVALID_TOKEN_PAYLOAD.'),
    '403': nativeError(
      '403',
      'GEO_BLOCKED (checked before the link token is looked at), ACCOUNT_DISABLED, CLIENT_UPDATE_REQUIRED (minBuild), DEVICE_VERIFICATION_REQUIRED.',
    ),
    '404': { $ref: '#/components/responses/Error404', description: 'invalid_link: no intent has this token.' },
    '409': nativeError(
      '409',
      `invalid_link: the token expired or was used; ${more['409']} DEVICE_ACCOUNT_CONFLICT: the device permit belongs to another account.`,
    ),
    '413': { $ref: '#/components/responses/Error413', description: 'PAYLOAD_TOO_LARGE: body over 16,384 bytes.' },
    '415': {
      $ref: '#/components/responses/Error415',
      description: 'INVALID_CONTENT_TYPE: Content-Type is not application/json.',
    },
    '503': nativeError(
      '503',
      `PLATFORM_DISABLED; ACCOUNT_STATUS_UNAVAILABLE, DEVICE_AUTH_UNAVAILABLE (identity); retry_later (the ledger is unreachable or did not answer in time: the message says "Nothing was changed." when that is known, otherwise the outcome is unknown; ${afterUnknown}).`,
    ),
  };
}

const playerRead = (operationId: string, summary: string, parameters: unknown[]) => ({
  get: {
    operationId,
    summary,
    tags: ['game-sdk'],
    security: [{ gameSecretKey: [] }],
    parameters,
    responses: {
      ...ok('GamePlayer', 'The player.'),
      ...errors({
        ...(operationId === 'getPlayerByExternalId'
          ? {
              '400':
                'INVALID_PLAYER: externalPlayerId missing, repeated, empty, over 200 characters or with control characters; another query parameter.',
            }
          : {}),
        ...secretKeyErrors,
        '404': "not_found: no such player in the key's game (players of other games included).",
        '503': 'PLATFORM_DISABLED; retry_later (the ledger is unreachable).',
      }),
    },
  },
});

export const linksOpenApi: OpenApiFragment = {
  schemas: { ...(linkSchemas as unknown as Record<string, JsonSchema>), ...nativeSchemas },
  responses: nativeResponses,
  paths: {
    '/api/game-sdk/v2/link-intents': {
      post: {
        operationId: 'createLinkIntent',
        summary:
          "Finds or creates the game's player for externalPlayerId and issues a one-time link token, valid for 10 " +
          'minutes, for the player to approve in the native app. Only the token hash is stored.',
        tags: ['game-sdk'],
        security: [{ gameSecretKey: [] }],
        requestBody: body('CreateLinkIntent', 'The player; unknown fields rejected; at most 16,384 bytes.'),
        responses: {
          ...ok('LinkIntentResult', 'The intent: linkToken is shown this once.'),
          ...errors({
            '400': 'INVALID_REQUEST (not JSON), INVALID_PLAYER (schema, unknown field, externalPlayerId rules).',
            ...secretKeyErrors,
            '409': 'already_linked: the player is linked already.',
            '413': 'PAYLOAD_TOO_LARGE: body over 16,384 bytes.',
            '415': 'INVALID_CONTENT_TYPE: Content-Type is not application/json.',
            '503': 'PLATFORM_DISABLED; retry_later (the ledger is unreachable or did not answer in time).',
          }),
        },
      },
    },
    '/api/game-sdk/v2/players/{playerId}': playerRead('getPlayer', "A player of the key's game by id.", [
      { name: 'playerId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
    ]),
    '/api/game-sdk/v2/players': playerRead('getPlayerByExternalId', "A player of the key's game by its in-game id.", [
      {
        name: 'externalPlayerId',
        in: 'query',
        required: true,
        description: 'Exactly one; no other query parameter is accepted.',
        schema: linkSchemas.CreateLinkIntent.properties.externalPlayerId,
      },
    ]),
    '/api/native/v1/link-intents/inspect': {
      post: {
        operationId: 'inspectLinkIntent',
        summary: 'What a link token would link (game, player, expiry); does not consume it.',
        tags: ['native'],
        security: [{ nativeSession: [] }],
        parameters: nativeHeaders(),
        requestBody: body('InspectLinkIntent', 'The token; unknown fields rejected.'),
        responses: {
          ...ok('LinkInspection', 'The pending intent.'),
          ...nativeErrors('inspecting changes nothing, so retry', {
            '409': 'already_linked: the player was linked meanwhile;',
          }),
        },
      },
    },
    '/api/native/v1/link-intents/approve': {
      post: {
        operationId: 'approveLinkIntent',
        summary:
          "Consumes the token and links its player to the session's account, in one transaction; of concurrent " +
          'approvals of one token exactly one succeeds.',
        tags: ['native'],
        security: [{ nativeSession: [] }],
        parameters: nativeHeaders(),
        requestBody: body('ApproveLinkIntent', 'The token; unknown fields rejected.'),
        responses: {
          ...ok('LinkApproval', 'Linked.'),
          ...nativeErrors(
            'the player may have been linked: retry with the same token; a 409 invalid_link then says the token is ' +
              'used or expired, and the game server reads the player (GET /api/game-sdk/v2/players/{playerId}) to ' +
              'see whether it is linked',
            {
              '409': 'already_linked: the player is linked, or this account is linked to another player of the game;',
            },
          ),
        },
      },
    },
  },
};

function nativeHeaders(): unknown[] {
  return [
    {
      name: 'X-Client-Country',
      in: 'header',
      required: false,
      description: 'ISO 3166-1 alpha-2, set by the trusted edge; missing or unsupported: 403 GEO_BLOCKED.',
      schema: { type: 'string' },
    },
    {
      name: 'X-Client-Build',
      in: 'header',
      required: false,
      description: 'Integer; missing or below NATIVE_MIN_BUILD (when above 0): 403 CLIENT_UPDATE_REQUIRED.',
      schema: { type: 'string' },
    },
    {
      name: 'X-Client-Capabilities',
      in: 'header',
      required: false,
      description: 'Comma-separated; challenge-v1 in enforce mode.',
      schema: { type: 'string' },
    },
  ];
}
